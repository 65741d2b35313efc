"""senpi `logs/session.log` and `logs/compaction.log`: one compact JSON object per line.

Envelope keys are `ts`, `level`, `event`; every data key is optional (the logger drops keys outside its
allowlist), and newer builds (2026.9.29+) add `sessionId`, older ones never do. Key positions are not relied
on. Continuity and close lines become typed records; every other event, known or not, a generic `LogEvent`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.formats.base import Adapter, exact_block, load_object, opt_int, opt_str
from core.logblock import LogBlock
from core.model import (
    CLOSE_EVENT,
    CONTINUITY_EVENT,
    CloseLine,
    ContinuityLine,
    LogEvent,
    Problem,
    Record,
    Where,
)
from core.timeutil import parse_iso_ms

if TYPE_CHECKING:
    from core.agents.senpi.formats.typed_log import TypedLog

TYPED_MIN_BYTES = 64 * 1024
"""Blocks are parsed line by line until this many bytes have been (one big block, or many small ones: a
live tail's appends), then by the typed decoder: msgspec and the decoder's construction cost ~15 ms once, a
line ~9 µs exactly and ~1 µs typed, so the decoder pays for itself after ~2,000 lines (~300 KB). A live
dashboard started on a small log read every appended line exactly before (5,000 lines/s: ~45 ms of CPU a
second, and each poll's dicts and records made its transient peak ~2.5x the typed one's)."""

#: Events only the compaction logger writes (senpi-formats §2.9); used to tell the two logs apart by content.
COMPACTION_EVENTS = frozenset(
    {
        "speculative_started", "speculative_applied", "speculative_stale", "speculative_invalidated",
        "idle_trigger", "blocking_started", "warm_consumed", "core_route_generated", "skip_cap",
        "skip_breaker", "skip_cursor_mid_turn", "threshold_trigger", "hard_limit_trigger",
        "emergency_prune", "ineffective_counted", "summary_failed", "remote_aborted", "blocking_aborted",
    }
)  # fmt: skip

_ENVELOPE = ("ts", "level", "event")


def _envelope(path: str, lineno: int, offset: int, data: bytes) -> tuple[dict[str, Any], Where] | Problem:
    obj = load_object(path, lineno, offset, data)
    if isinstance(obj, Problem):
        return obj
    get = obj.get
    if not (isinstance(get("ts"), str) and isinstance(get("level"), str) and isinstance(get("event"), str)):
        missing = [key for key in _ENVELOPE if not isinstance(get(key), str)]
        return Problem(path, lineno, offset, f"log line without string {', '.join(missing)}")
    return obj, Where(path, lineno, offset, len(data))


class SessionLogAdapter(Adapter):
    """`session.log`: continuity decisions, closes, compaction, provider errors, queue and other events."""

    name = "senpi-session-log"
    source = "session-log"
    decision_log = True
    blocks = True
    log_aggregates = True
    _typed: TypedLog | None = None
    _exact_bytes = 0  # parsed line by line before the typed decoder was made (`parse_block`)

    def sniff(self, path: str, obj: dict[str, Any]) -> bool:
        return all(isinstance(obj.get(key), str) for key in _ENVELOPE) and (
            obj.get("event") not in COMPACTION_EVENTS or "session.log" in path
        )

    def parse(self, path: str, lineno: int, offset: int, data: bytes) -> list[Record]:
        # The hot path of a log backfill (every line of a months-long session.log): `_envelope` and the
        # `opt_*` helpers inlined, one dict lookup per key; a line they would reject takes the slow path.
        obj = load_object(path, lineno, offset, data)
        if isinstance(obj, Problem):
            return [obj]
        get = obj.get
        ts, level, event, session_id = get("ts"), get("level"), get("event"), get("sessionId")
        if not (isinstance(ts, str) and isinstance(level, str) and isinstance(event, str)):
            missing = [key for key in _ENVELOPE if not isinstance(get(key), str)]
            return [Problem(path, lineno, offset, f"log line without string {', '.join(missing)}")]
        if not isinstance(session_id, str):
            session_id = None
        where = Where(path, lineno, offset, len(data))
        if event == CONTINUITY_EVENT:
            kind, reason = get("kind"), get("reason")
            if not (isinstance(kind, str) and isinstance(reason, str)):
                return [Problem(path, lineno, offset, "continuity line without string kind/reason")]
            count = get("count")
            if not isinstance(count, int) or isinstance(count, bool):
                count = opt_int(obj, "count")
            return [ContinuityLine(where, ts, parse_iso_ms(ts), kind, reason, count, session_id)]
        if event == CLOSE_EVENT:
            reason = get("reason")
            if not isinstance(reason, str):
                return [Problem(path, lineno, offset, "close line without string reason")]
            return [CloseLine(where, ts, parse_iso_ms(ts), reason, session_id)]
        payload = {k: v for k, v in obj.items() if k not in _ENVELOPE}
        return [LogEvent(where, self.source, ts, parse_iso_ms(ts), level, event, payload, session_id)]

    def parse_block(self, path: str, lineno: int, offset: int, data: bytes) -> LogBlock:
        """A block of lines: typed decoding where it is exact, `parse` for every other line (`typed_log`). A small
        block is parsed line by line until `TYPED_MIN_BYTES` have been: the typed decoder costs its import only
        where it pays (a one-line report never makes it)."""
        if self._typed is None and self._exact_bytes + len(data) < TYPED_MIN_BYTES:
            type(self)._exact_bytes += len(data)
            return exact_block(self.parse, path, lineno, offset, data)
        if self._typed is None:
            from core.agents.senpi.formats.typed_log import TypedLog

            type(self)._typed = TypedLog(self.parse, self.other_event)
        assert self._typed is not None
        return self._typed.parse_block(path, lineno, offset, data)

    def other_event(self, path: str, lineno: int, offset: int, data: bytes) -> LogEvent | None:
        """A line that is another event, as `parse` answers it (the event; its data left out): None when the
        line is anything else (a decision or close line, or a bad line: then `parse` words it)."""
        obj = load_object(path, lineno, offset, data)
        if isinstance(obj, Problem):
            return None
        get = obj.get
        ts, level, event = get("ts"), get("level"), get("event")
        if not (isinstance(ts, str) and isinstance(level, str) and isinstance(event, str)):
            return None
        if event in (CONTINUITY_EVENT, CLOSE_EVENT):
            return None
        return LogEvent(Where(path, lineno, offset, len(data)), self.source, ts, None, level, event, {})


class CompactionLogAdapter(SessionLogAdapter):
    """`compaction.log`: same envelope, its own event vocabulary; all events are generic records."""

    name = "senpi-compaction-log"
    source = "compaction-log"
    decision_log = False
    blocks = False

    def sniff(self, path: str, obj: dict[str, Any]) -> bool:
        # The file name wins over the first event: this adapter is tried first, so a session.log that starts
        # with a compaction-vocabulary event must not be claimed (its continuity lines would become generic).
        return all(isinstance(obj.get(key), str) for key in _ENVELOPE) and (
            "compaction.log" in path or (obj.get("event") in COMPACTION_EVENTS and "session.log" not in path)
        )

    def parse(self, path: str, lineno: int, offset: int, data: bytes) -> list[Record]:
        env = _envelope(path, lineno, offset, data)
        if isinstance(env, Problem):
            return [env]
        obj, where = env
        payload = {k: v for k, v in obj.items() if k not in _ENVELOPE}
        ts: str = obj["ts"]
        return [
            LogEvent(
                where, self.source, ts, parse_iso_ms(ts), obj["level"], obj["event"], payload, opt_str(obj, "sessionId")
            )
        ]
