"""Per-session and per-log aggregates that the TUI and the report read.

State keeps summaries and (path, offset, length) pointers, never message bodies: memory grows with turns,
not with bytes. It is mutated by one thread at a time (the engine holds a lock around `apply`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import orjson

from core.analysis.pipeline import RECORD_HANDLERS, SESSION_ANALYZERS, RecordHandler, SessionAnalyzer
from core.analysis.stats import LogStats
from core.model import (
    CONTINUITY_EVENT,
    CloseLine,
    ContinuityLine,
    LogEvent,
    LoggedDecision,
    Problem,
    Record,
    SessionHeader,
    TranscriptEntry,
    Turn,
    Where,
)
from core.timeutil import any_ms, now_ms, parse_iso_ms

#: A transcript diagnostic and a log line describe the same call when kind, reason and count agree and
#: their times are this close (the diagnostic is stamped just before the log line is written).
ATTRIBUTION_WINDOW_MS = 5_000
MAX_PROBLEMS = 1000


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
        # attribution: (kind, reason, count) -> indices of log lines / (session key, turn index) not yet matched
        self._unmatched_lines: dict[tuple[str, str, int | None], list[int]] = {}
        self._unmatched_turns: dict[tuple[str, str, int | None], list[tuple[str, int]]] = {}

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
        for turns in self._unmatched_turns.values():
            turns[:] = [t for t in turns if t[0] != key]
        for index, line in enumerate(self.log.continuity):
            if line.matched_session == session.session_id:
                line.matched_session = None
                line.matched_turn = None
                self._unmatched_lines.setdefault(_key(line.kind, line.reason, line.count), []).append(index)
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
        node = EntryNode(entry_id, parent, entry.type, entry.where)
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
            model=_str(msg.get("model")),
            provider=_str(msg.get("provider")),
            api=_str(msg.get("api")),
            stop_reason=_str(msg.get("stopReason")),
            logged=logged_decision(msg),
            tokens=tokens_of(msg),
        )
        session.turns.append(turn)
        if turn.logged is not None:
            self._attribute_turn(session, turn)
        return turn

    # ------------------------------------------------------------------ attribution
    def _add_continuity(self, line: ContinuityLine) -> None:
        index = len(self.log.continuity)
        self.log.continuity.append(line)
        self.log.stats.add_continuity(line)
        key = _key(line.kind, line.reason, line.count)
        waiting = self._unmatched_turns.get(key)
        if waiting:
            best = self._nearest_turn(waiting, line)
            if best is not None:
                waiting.remove(best)
                self._link(line, index, self.sessions[best[0]], best[1])
                return
        self._unmatched_lines.setdefault(key, []).append(index)

    def _attribute_turn(self, session: SessionState, turn: Turn) -> None:
        assert turn.logged is not None
        key = _key(turn.logged.kind, turn.logged.reason, turn.logged.count)
        candidates = self._unmatched_lines.get(key)
        if candidates:
            best_i: int | None = None
            best_gap: int | None = None
            for i in candidates:
                line = self.log.continuity[i]
                if line.session_id is not None and line.session_id != session.session_id:
                    continue
                gap = _gap(line.ts_ms, turn.logged.ts_ms or turn.ts_ms)
                if gap is not None and gap <= ATTRIBUTION_WINDOW_MS and (best_gap is None or gap < best_gap):
                    best_i, best_gap = i, gap
            if best_i is not None:
                candidates.remove(best_i)
                self._link(self.log.continuity[best_i], best_i, session, turn.index)
                return
        self._unmatched_turns.setdefault(key, []).append((session.key, turn.index))

    def _nearest_turn(self, waiting: list[tuple[str, int]], line: ContinuityLine) -> tuple[str, int] | None:
        best: tuple[str, int] | None = None
        best_gap: int | None = None
        for key, index in waiting:
            session = self.sessions.get(key)
            if session is None or index >= len(session.turns):
                continue
            if line.session_id is not None and line.session_id != session.session_id:
                continue
            turn = session.turns[index]
            gap = _gap(line.ts_ms, (turn.logged.ts_ms if turn.logged else None) or turn.ts_ms)
            if gap is not None and gap <= ATTRIBUTION_WINDOW_MS and (best_gap is None or gap < best_gap):
                best, best_gap = (key, index), gap
        return best

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


def _key(kind: str, reason: str, count: int | None) -> tuple[str, str, int | None]:
    return (kind, reason, count)


def _gap(a: int | None, b: int | None) -> int | None:
    if a is None or b is None:
        return None
    return abs(a - b)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


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
            kind=kind,
            reason=reason,
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
