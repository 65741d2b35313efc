"""Per-session and per-log aggregates that the TUI and the report read.

State keeps summaries and (path, offset, length) pointers, never message bodies: memory grows with turns,
not with bytes. It is mutated by one thread at a time (the engine holds a lock around `apply`).

Parking: a session whose transcript has been read to its end and is done (`State.park`; the engine decides
when: every fully read transcript after a report's drain, one unmodified for `PARK_IDLE_S` live) keeps what
the surfaces read and drops the machinery that would extend its analysis (payload lanes, branch marks, the
replay's per-call registries, commit facts, context pointers). Anything that needs that machinery again (its
file grows, an event recording of one of its turns arrives) rebuilds it from its file (`State.unpark`), the
way a truncated transcript is re-read. A report of a history read with parking equals one read without
(`tests/test_parking.py`).
"""

from __future__ import annotations

import bisect
import itertools
import sys
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import orjson

from core.analysis.pipeline import RECORD_HANDLERS, SESSION_ANALYZERS, RecordHandler, SessionAnalyzer
from core.kernel.stats import LogStats
from core.model import (
    CONTINUITY_EVENT,
    CloseLine,
    ContinuityLine,
    LogEvent,
    LoggedDecision,
    Problem,
    Record,
    SessionHeader,
    Sidecar,
    TranscriptEntry,
    Turn,
    Where,
)
from core.timeutil import any_ms, now_ms, parse_iso_ms

#: A transcript diagnostic and a log line describe the same call when kind, reason and count agree and
#: their times are this close (the diagnostic is stamped just before the log line is written).
ATTRIBUTION_WINDOW_MS = 5_000
_T = TypeVar("_T")
MAX_PROBLEMS = 1000
#: A live dashboard parks a session (`State.park`) once its transcript was read to the end and has not been
#: modified for this long: months of finished history then cost what the surfaces show, not the machinery
#: that would extend them. A report parks every fully read transcript (nothing is read after its drain).
PARK_IDLE_S = 600.0
#: The formats whose sessions can be parked: a transcript whose session is rebuilt by re-reading that one file.
#: (Claude Code and mux sessions are assembled by record handlers from several files: never parked.)
PARKABLE_FORMATS = frozenset({"senpi-transcript", "pi-transcript"})
Parse = Callable[[str, int, int, bytes], Iterable[Record]]


@dataclass(slots=True)
class EntryNode:
    """What state remembers of one transcript entry: its place in the tree and where to re-read it."""

    id: str
    parent_id: str | None
    type: str
    where: Where
    turn_index: int | None = None


@dataclass
class SessionState:
    """One transcript: its header, its entry tree (ids and pointers only) and its turns."""

    key: str  # the transcript path
    session_id: str
    cwd: str | None = None
    header: SessionHeader | None = None
    turns: list[Turn] = field(default_factory=list)
    nodes: dict[str, EntryNode] = field(default_factory=dict)
    branch: list[str] = field(default_factory=list)  # entry ids from the root to the current leaf
    analyzers: dict[str, SessionAnalyzer] = field(default_factory=dict)
    sidecar: dict[str, Any] | None = None
    sidecar_where: Where | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    entries: int = 0
    parked: int | None = None  # parked (`State.park`): the byte offset its transcript was read to; else None

    def analyzer(self, name: str) -> SessionAnalyzer | None:
        return self.analyzers.get(name)


class LogState:
    """The continuity and close lines read from the logs, in reading order, with their aggregates."""

    def __init__(self) -> None:
        self.continuity: list[ContinuityLine] = []
        self.closes: list[CloseLine] = []
        self.stats = LogStats()
        self.other_events: dict[str, int] = {}
        self.provider_errors: int = 0


class State:
    """Everything the surfaces read. `apply` takes records in reading order."""

    def __init__(self) -> None:
        self.log = LogState()
        self.sessions: dict[str, SessionState] = {}
        self.problems: deque[Problem] = deque(maxlen=MAX_PROBLEMS)
        self.problems_total = 0
        self.handlers: list[RecordHandler] = [factory() for factory in RECORD_HANDLERS]
        self.version = 0  # bumps on every change: the UI repaints only when it moved
        # attribution: (kind, reason, count) -> log line indices / (session key, turn index) not yet matched,
        # ordered by time (only dated ones: an undated line or turn can never be within the window)
        self._unmatched_lines: dict[tuple[str, str, int | None], _ByTime[int]] = {}
        self._unmatched_turns: dict[tuple[str, str, int | None], _ByTime[tuple[str, int]]] = {}
        self._wakes: set[str] = set()  # parked sessions a record arrived for that needs their machinery

    # ------------------------------------------------------------------ ingestion
    def apply(self, record: Record) -> None:
        self.version += 1
        if isinstance(record, ContinuityLine):
            self._add_continuity(record)
        elif isinstance(record, TranscriptEntry):
            self._add_entry(record)
        elif isinstance(record, CloseLine):
            self.log.closes.append(record)
            self.log.stats.add_close(record)
        elif isinstance(record, LogEvent):
            self.log.other_events[record.event] = self.log.other_events.get(record.event, 0) + 1
            if record.event == "provider_error":
                self.log.provider_errors += 1
        elif isinstance(record, SessionHeader):
            self._add_header(record)
        elif isinstance(record, Problem):
            self.add_problem(record)
        for handler in self.handlers:
            if isinstance(record, handler.handles):
                handler.on_record(self, record)

    def add_problem(self, problem: Problem) -> None:
        if problem.ts_ms is None:
            problem.ts_ms = now_ms()
        self.problems.append(problem)
        self.problems_total += 1
        self.version += 1

    def reset_session(self, key: str) -> None:
        """A transcript was truncated or replaced: forget it; its new content is read from the start."""
        session = self.sessions.pop(key, None)
        if session is None:
            return
        for handler in self.handlers:
            forget = getattr(handler, "forget_session", None)
            if forget is not None:
                forget(session)  # what a handler keeps by session key would point into the forgotten session
        for turns in self._unmatched_turns.values():
            turns.discard(lambda t: t[0] == key)
        for index, line in enumerate(self.log.continuity):
            if line.matched_session == session.session_id:
                line.matched_session = None
                line.matched_turn = None
                self._wait_line(line, index)
        self.version += 1

    # ------------------------------------------------------------------ parking
    def park(self, key: str, end: int) -> bool:
        """Drop the incremental machinery of a session whose transcript was read to byte `end` and is done.

        Every analyzer settles what it decides lazily and keeps only what the surfaces read (turn fields,
        per-session summaries, directive ledgers, the profile tracker) and what records from other files may
        still need in place (a restart binding is judged against the newest branch mark; a log line adds build
        evidence); `SessionState.nodes` stays (the drill-down re-reads entries through it). A parked session
        never sees another transcript entry: when its file grows, or an event recording of one of its turns
        arrives (`wake`), it is rebuilt from its file first (`unpark`). True when it was parked now.
        """
        session = self.sessions.get(key)
        if session is None or session.parked is not None or not session.analyzers:
            return False
        for analyzer in session.analyzers.values():
            park = getattr(analyzer, "park", None)
            if park is not None:
                park(session)
        session.parked = end
        return True

    def is_parked(self, key: str) -> bool:
        session = self.sessions.get(key)
        return session is not None and session.parked is not None

    def wake(self, key: str) -> None:
        """A record from another file needs a parked session's machinery (an event recording of one of its
        turns re-judges the commit and re-runs the replay): the engine rebuilds it after the current poll
        (`take_wakes`, `unpark`), and the record waits where the rebuilt session finds it."""
        if self.is_parked(key):
            wakes = getattr(self, "_wakes", None)  # a State pickled before parking existed has none
            if wakes is None:
                wakes = self._wakes = set()
            wakes.add(key)

    def take_wakes(self) -> list[tuple[str, int]]:
        """(session key, end offset it was read to) of every parked session woken since the last call."""
        wakes = getattr(self, "_wakes", None)
        if not wakes:
            return []
        out = []
        for key in sorted(wakes):
            session = self.sessions.get(key)
            if session is not None and session.parked is not None:
                out.append((key, session.parked))
        wakes.clear()
        return out

    def unpark(self, key: str, parse: Parse, end: int, max_line: int) -> None:
        """Rebuild a parked session: forget it, then apply its transcript's first `end` bytes again, line by line,
        exactly as the tailer delivered them (the same correctness path as a truncated transcript's re-read).

        The session keeps its place among the sessions (reports list ties in that order) and its sidecar (a
        restart binding read from another file, applied again after the rebuild as a live run had it), the build
        evidence log lines gave it (`adopt`), and its event recordings (`RecordingMatcher.forget_session`).
        Problems of the re-read lines are not added again: they were reported when the lines were first read.
        """
        session = self.sessions.get(key)
        if session is None or session.parked is None:
            return
        order = list(self.sessions)
        sidecar = Sidecar(session.sidecar_where, session.sidecar) if session.sidecar_where is not None else None
        carried = [(name, analyzer) for name, analyzer in session.analyzers.items() if hasattr(analyzer, "adopt")]
        self.reset_session(key)
        if carried:
            # evidence other files gave (log lines naming the session): before its entries, as a cold read has it
            fresh = self.session_for(key, session.session_id)
            for name, analyzer in carried:
                target = fresh.analyzers.get(name)
                if target is not None:
                    target.adopt(analyzer)  # type: ignore[attr-defined]
        try:
            with open(key, "rb") as fh:
                data = fh.read(end)
        except OSError:
            data = b""
        pos = lineno = 0
        while True:
            nl = data.find(b"\n", pos)
            if nl < 0:
                break
            lineno += 1
            line = data[pos:nl]
            if line and not line.isspace() and len(line) <= max_line:
                for record in parse(key, lineno, pos, line):
                    if not isinstance(record, Problem):
                        self.apply(record)
            pos = nl + 1
        if sidecar is not None and key in self.sessions:
            self.apply(sidecar)
        if key in self.sessions:
            rank = {k: i for i, k in enumerate(order)}
            ordered = sorted(self.sessions.items(), key=lambda kv: rank.get(kv[0], len(rank)))
            self.sessions.clear()  # in place: readers may hold the dict
            self.sessions.update(ordered)
        self.version += 1

    # ------------------------------------------------------------------ sessions
    def session_for(self, key: str, session_id: str | None = None) -> SessionState:
        session = self.sessions.get(key)
        if session is None:
            session = SessionState(key=key, session_id=session_id or key)
            for name, factory in SESSION_ANALYZERS:
                session.analyzers[name] = factory(session)
            self.sessions[key] = session
        return session

    def _add_header(self, header: SessionHeader) -> None:
        session = self.session_for(header.where.path, header.session_id)
        session.session_id = header.session_id
        session.header = header
        session.cwd = header.cwd

    def _add_entry(self, entry: TranscriptEntry) -> None:
        session = self.session_for(entry.where.path)
        session.entries += 1
        # entries without ids (pi v1 files) form a simple chain keyed by line number
        entry_id = f"#{entry.where.line}" if entry.id is None else entry.id
        parent = entry.parent_id
        if parent is None and entry.id is None and session.branch:
            parent = session.branch[-1]
        elif parent is not None:
            known = session.nodes.get(parent)
            if known is not None:
                parent = known.id  # the parent's own id object: one string per entry, not two
        node = EntryNode(entry_id, parent, _name(entry.type), entry.where)
        session.nodes[entry_id] = node
        if session.branch and parent != session.branch[-1]:
            self._switch_branch(session, parent)
        session.branch.append(entry_id)
        self._deliver(session, entry, node, replay=False)

    def _deliver(self, session: SessionState, entry: TranscriptEntry, node: EntryNode, *, replay: bool) -> None:
        turn: Turn | None = None
        if entry.type == "message" and entry.role == "assistant":
            if replay and node.turn_index is not None:
                turn = session.turns[node.turn_index]
            else:
                turn = self._new_turn(session, entry)
                node.turn_index = turn.index
        for analyzer in session.analyzers.values():
            analyzer.on_entry(session, entry, turn)

    def _switch_branch(self, session: SessionState, parent: str | None) -> None:
        """Cut the active branch back to the common ancestor, then replay the path down to `parent`."""
        path: list[str] = []
        cursor = parent
        on_branch = set(session.branch)
        walked: set[str] = set()  # ids repeat in hostile files, so parent links can form a cycle
        while cursor is not None and cursor not in on_branch and cursor not in walked:
            walked.add(cursor)
            path.append(cursor)
            node = session.nodes.get(cursor)
            cursor = node.parent_id if node else None
        keep = session.branch.index(cursor) + 1 if cursor is not None and cursor in on_branch else 0
        del session.branch[keep:]
        for analyzer in session.analyzers.values():
            analyzer.on_branch(session, keep)
        for entry_id in reversed(path):
            node = session.nodes.get(entry_id)
            if node is None:
                continue
            session.branch.append(entry_id)
            replayed = reread_entry(node.where)
            if replayed is not None:
                self._deliver(session, replayed, node, replay=True)

    def _new_turn(self, session: SessionState, entry: TranscriptEntry) -> Turn:
        msg = entry.message or {}
        ts_ms = any_ms(msg.get("timestamp")) or parse_iso_ms(entry.timestamp)
        turn = Turn(
            session=session.session_id,
            index=len(session.turns),
            entry_id=entry.id,
            ts=entry.timestamp,
            ts_ms=ts_ms,
            where=entry.where,
            model=_name(msg.get("model")),
            provider=_name(msg.get("provider")),
            api=_name(msg.get("api")),
            stop_reason=_name(msg.get("stopReason")),
            logged=logged_decision(msg),
            tokens=tokens_of(msg),
        )
        session.turns.append(turn)
        if turn.logged is not None:
            self._attribute_turn(session, turn)
        return turn

    # ------------------------------------------------------------------ attribution
    def _add_continuity(self, line: ContinuityLine) -> None:
        line.kind, line.reason = sys.intern(line.kind), sys.intern(line.reason)  # a few values, on every line
        index = len(self.log.continuity)
        self.log.continuity.append(line)
        self.log.stats.add_continuity(line)
        key = _key(line.kind, line.reason, line.count)
        waiting = self._unmatched_turns.get(key)
        if waiting and line.ts_ms is not None:
            pos = self._nearest_turn(waiting, line)
            if pos is not None:
                key_of_session, turn_index = waiting.pop(pos)
                self._link(line, index, self.sessions[key_of_session], turn_index)
                return
        self._wait_line(line, index)

    def _wait_line(self, line: ContinuityLine, index: int) -> None:
        if line.ts_ms is not None:
            key = _key(line.kind, line.reason, line.count)
            waiting = self._unmatched_lines.get(key)
            if waiting is None:
                waiting = self._unmatched_lines[key] = _ByTime()
            waiting.add(line.ts_ms, index)

    def _attribute_turn(self, session: SessionState, turn: Turn) -> None:
        """Link a turn to the nearest unmatched log line of its (kind, reason, count) within the window.

        Ties go to the line that has waited longest. Only lines within the window are looked at (a time-ordered
        index), so attribution stays O(log n) per turn when a whole log was read before its transcripts."""
        assert turn.logged is not None
        key = _key(turn.logged.kind, turn.logged.reason, turn.logged.count)
        candidates = self._unmatched_lines.get(key)
        at = turn.logged.ts_ms or turn.ts_ms
        if candidates and at is not None:
            best: tuple[int, int, int] | None = None  # (gap, seq, position)
            for pos, ms, seq, i in candidates.near(at):
                line = self.log.continuity[i]
                if line.session_id is not None and line.session_id != session.session_id:
                    continue
                gap = abs(ms - at)
                if best is None or (gap, seq) < best[:2]:
                    best = (gap, seq, pos)
            if best is not None:
                i = candidates.pop(best[2])
                self._link(self.log.continuity[i], i, session, turn.index)
                return
        if at is not None:
            waiting = self._unmatched_turns.get(key)
            if waiting is None:
                waiting = self._unmatched_turns[key] = _ByTime()
            waiting.add(at, (session.key, turn.index))

    def _nearest_turn(self, waiting: _ByTime[tuple[str, int]], line: ContinuityLine) -> int | None:
        """Position in `waiting` of the nearest turn a new log line can be attributed to (ties: the earliest)."""
        assert line.ts_ms is not None
        best: tuple[int, int, int] | None = None  # (gap, seq, position)
        for pos, ms, seq, (key, index) in waiting.near(line.ts_ms):
            session = self.sessions.get(key)
            if session is None or index >= len(session.turns):
                continue
            if line.session_id is not None and line.session_id != session.session_id:
                continue
            gap = abs(ms - line.ts_ms)
            if best is None or (gap, seq) < best[:2]:
                best = (gap, seq, pos)
        return None if best is None else best[2]

    def _link(self, line: ContinuityLine, index: int, session: SessionState, turn_index: int) -> None:
        line.matched_session = session.session_id
        line.matched_turn = turn_index
        session.turns[turn_index].log_line = index

    # ------------------------------------------------------------------ reading
    def all_turns(self) -> list[Turn]:
        """Every turn, in session then time order (the report's order)."""
        out: list[Turn] = []
        for session in self.sessions.values():
            out.extend(session.turns)
        return out


class _ByTime(Generic[_T]):
    """Items waiting for attribution, sorted by (time, arrival): the ones within the attribution window of a
    given time are found by bisection instead of a scan of everything that waits (a 1 GB history read log
    first made that scan quadratic: a third of the whole run)."""

    __slots__ = ("_items", "_seq")

    def __init__(self) -> None:
        self._items: list[tuple[int, int, _T]] = []
        self._seq = itertools.count()

    def __len__(self) -> int:
        return len(self._items)

    def add(self, ms: int, value: _T) -> None:
        item = (ms, next(self._seq), value)
        items = self._items
        if not items or items[-1][0] <= ms:
            items.append(item)  # the usual case: things arrive in time order (and arrival only grows)
        else:
            # (ms, seq) sorts just before (ms, seq, value); seq is unique, so values are never compared
            items.insert(bisect.bisect_right(items, item[:2]), item)

    def near(self, ms: int) -> list[tuple[int, int, int, _T]]:
        """(position, time, arrival, item) of every item within ATTRIBUTION_WINDOW_MS of `ms`."""
        items = self._items
        lo = bisect.bisect_left(items, (ms - ATTRIBUTION_WINDOW_MS,))
        out = []
        for pos in range(lo, len(items)):
            t, seq, value = items[pos]
            if t > ms + ATTRIBUTION_WINDOW_MS:
                break
            out.append((pos, t, seq, value))
        return out

    def pop(self, pos: int) -> _T:
        return self._items.pop(pos)[2]

    def discard(self, drop: Callable[[_T], bool]) -> None:
        self._items = [item for item in self._items if not drop(item[2])]


def _key(kind: str, reason: str, count: int | None) -> tuple[str, str, int | None]:
    return (kind, reason, count)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _name(value: object) -> str | None:
    """A short string repeated on every turn or entry (model, provider, api, stop reason, entry type): one
    shared object instead of one per line parsed (~1 MB per 100 MB of history)."""
    if not isinstance(value, str):
        return None
    return sys.intern(value) if len(value) <= 128 else value


def logged_decision(msg: dict[str, Any]) -> LoggedDecision | None:
    """The continuity diagnostic persisted on an assistant message (the last one wins)."""
    diagnostics = msg.get("diagnostics")
    if not isinstance(diagnostics, list):
        return None
    found: LoggedDecision | None = None
    for diag in diagnostics:
        if not isinstance(diag, dict) or diag.get("type") != CONTINUITY_EVENT:
            continue
        details = diag.get("details")
        if not isinstance(details, dict):
            continue
        kind, reason = details.get("kind"), details.get("reason")
        if not isinstance(kind, str) or not isinstance(reason, str):
            continue
        found = LoggedDecision(
            kind=sys.intern(kind),
            reason=sys.intern(reason),
            count=_int(details.get("deltaMessages")),
            payload_bytes=_int(details.get("payloadBytes")),
            collapsed_directives=_int(details.get("collapsedDirectives")),
            ts_ms=any_ms(diag.get("timestamp")),
        )
    return found


def tokens_of(msg: dict[str, Any]) -> dict[str, int] | None:
    usage = msg.get("usage")
    if not isinstance(usage, dict):
        return None
    out: dict[str, int] = {}
    for src, dst in (("input", "input"), ("cacheRead", "cache_read"), ("cacheWrite", "cache_write"),
                     ("output", "output")):  # fmt: skip
        value = _int(usage.get(src))
        if value is not None:
            out[dst] = value
    return out or None


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def reread_entry(where: Where) -> TranscriptEntry | None:
    """Re-read one transcript line by offset (drill-down, branch replay). None if the file changed."""
    raw = reread_line(where)
    if raw is None:
        return None
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        return None
    return TranscriptEntry(where, obj["type"], _str(obj.get("id")), _str(obj.get("parentId")),
                           _str(obj.get("timestamp")), obj)  # fmt: skip


def reread_line(where: Where) -> bytes | None:
    try:
        with open(where.path, "rb") as fh:
            fh.seek(where.offset)
            raw = fh.read(where.length) if where.length else fh.readline().rstrip(b"\n")
    except OSError:
        return None
    return raw
