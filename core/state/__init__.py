"""The holder the surfaces read: per-session and per-log aggregates, fed records in reading order.

State keeps summaries and (path, offset, length) pointers, never message bodies: memory grows with turns,
not with bytes. It is mutated by one thread at a time (the engine holds a lock around `apply`). It parses
nothing and opens no file: a record arrives with the agent whose file it came from, the session it belongs to
gets that agent's analyzers (and only those), and anything read again goes through the re-read port the
engine gave it (`core.kernel.ports.Reread`), which it hands on to every analyzer and handler it makes.

- `session`: one session (`SessionState`);
- `tree`: a pi-family transcript's entry tree and branch switches;
- `attribution`: which logged decision belongs to which call, incremental and as a cold replay;
- `parking`: finished sessions drop their machinery and are rebuilt from their file when needed.
"""

from __future__ import annotations

from collections import Counter, deque
from typing import TYPE_CHECKING

from core.kernel.logcols import CloseRows, ContinuityRows, LogColumns
from core.kernel.stats import LogStats
from core.logblock import LogBlock
from core.model import CloseLine, ContinuityLine, LogEvent, Problem, Record, SessionHeader, TranscriptEntry, Turn
from core.state.attribution import ATTRIBUTION_WINDOW_MS, Attribution, _ByTime
from core.state.logview import LogView, ViewSink
from core.state.parking import PARK_IDLE_S, Parking
from core.state.session import SessionState
from core.state.tree import Tree
from core.timeutil import now_ms

if TYPE_CHECKING:
    from core.agents.base import Agent
    from core.kernel.logpart import LogPart
    from core.kernel.pipeline import RecordHandler
    from core.kernel.ports import Reread

__all__ = ["ATTRIBUTION_WINDOW_MS", "MAX_PROBLEMS", "PARK_IDLE_S", "LogState", "SessionState", "State"]

MAX_PROBLEMS = 1000


class LogState:
    """The continuity and close lines read from the logs, in reading order, as columns (`core.kernel.logcols`),
    with their aggregates."""

    def __init__(self) -> None:
        self.columns = LogColumns()
        self.continuity: ContinuityRows = self.columns.continuity
        self.closes: CloseRows = self.columns.closes
        self.stats = LogStats(rows=self.continuity)
        self.other_events: dict[str, int] = {}
        self.provider_errors: int = 0
        #: the report aggregates of these rows stored by the index, and where a report hands the ones it builds
        #: (`core.state.logview`)
        self.view: LogView | None = None
        self.view_sink: ViewSink | None = None

    def count_other(self, event: str, n: int = 1) -> None:
        self.other_events[event] = self.other_events.get(event, 0) + n
        if event == "provider_error":
            self.provider_errors += n


class State(Attribution, Tree, Parking):
    """Everything the surfaces read. `apply` takes records in reading order, each with its file's agent."""

    def __init__(self, reread: Reread) -> None:
        self.reread = reread
        self.log = LogState()
        self.sessions: dict[str, SessionState] = {}
        self.problems: deque[Problem] = deque(maxlen=MAX_PROBLEMS)
        self.problems_total = 0
        #: every problem ever added, by the file it names (the kept deque is capped; metrics count per format)
        self.problems_by_path: Counter[str] = Counter()
        #: each agent's record handlers (by agent name), made when its first record arrives
        self.handlers: dict[str, list[RecordHandler]] = {}
        self.version = 0  # bumps on every change: the UI repaints only when it moved
        # attribution: (kind, reason, count) -> log line indices / (session key, turn index) not yet matched,
        # ordered by time (only dated ones: an undated line or turn can never be within the window)
        self._unmatched_lines: dict[tuple[str, str, int | None], _ByTime[int]] = {}
        self._unmatched_turns: dict[tuple[str, str, int | None], _ByTime[tuple[str, int]]] = {}
        self._wakes: set[str] = set()  # parked sessions a record arrived for that needs their machinery
        self._turns_waiting = 0  # calls in `_unmatched_turns`
        self._indexed = 0  # continuity rows indexed for attribution (`Attribution._index_lines`)

    # ------------------------------------------------------------------ ingestion
    def apply(self, record: Record, agent: Agent) -> None:
        """One record of a file of `agent`'s: aggregated here, then given to that agent's record handlers."""
        self.version += 1
        if isinstance(record, ContinuityLine):
            self.log.continuity.append_line(record)
            self.log.stats.add_continuity(record)
            self._lines_arrived()
            if record.session_id is None or not self.sessions:
                return  # a log line reaches handlers only when it names a session and sessions exist
        elif isinstance(record, TranscriptEntry):
            self._add_entry(record, agent)
        elif isinstance(record, CloseLine):
            self.log.closes.append_line(record)
            self.log.stats.add_close(record)
            self._closes_arrived(agent)
            if record.session_id is None or not self.sessions:
                return
        elif isinstance(record, LogEvent):
            self.log.count_other(record.event)
            return  # counted here; no handler takes other log events
        elif isinstance(record, SessionHeader):
            self._add_header(record, agent)
        elif isinstance(record, Problem):
            self.add_problem(record)
            return  # a problem is the state's alone
        for handler in self._handlers(agent):
            if isinstance(record, handler.handles):
                handler.on_record(self, record)

    def apply_block(self, block: LogBlock, agent: Agent) -> None:
        """A block of a log of `agent`'s (`Adapter.parse_block`): what `apply` does for each of its records, a
        column and a run at a time. Handlers hear which sessions its lines name (`RecordHandler.on_log_sessions`)."""
        self.version += 1
        log = self.log
        if block.runs:
            log.continuity.append_block(block)
            log.stats.add_block(block)
            self._lines_arrived()
        if block.close_ts:
            log.closes.append_block(block)
            log.stats.add_closes(block.close_reasons)
            self._closes_arrived(agent)
        for event, n in block.other.items():
            log.count_other(event, n)
        for problem in block.problems:
            self.add_problem(problem)
        named = _named_sessions(block) if self.sessions else None
        if named:
            for handler in self._handlers(agent):
                handler.on_log_sessions(self, named)
        for record in block.records:
            self.apply(record, agent)

    def _closes_arrived(self, agent: Agent) -> None:
        """Close rows were appended: handlers that pair them read the new rows (`RecordHandler.on_log_closes`).
        Before any session there is nothing to pair them with: they are read when the first record reaches the
        handlers (a log-only run never imports an analysis)."""
        if self.sessions:
            for handler in self._handlers(agent):
                handler.on_log_closes(self)

    def apply_range(self, part: LogPart, agent: Agent, line_base: int) -> None:
        """A byte range of a log read by a worker (`core.pool.parse_range`), right after the lines already
        applied: what `apply_block` does for each of its blocks, with the range's columns, counts and streaks
        merged at once. `line_base`: the lines of the file before the range."""
        self.version += 1
        log = self.log
        vocab = part.vocabularies
        log.continuity.extend_translated(part.continuity, part.continuity_extras, vocab, line_base)
        closes = len(log.closes)
        log.closes.extend_translated(part.closes, part.closes_extras, vocab, line_base)
        log.stats.merge(part.stats)
        if len(log.closes) > closes:
            self._closes_arrived(agent)
        for event, n in part.other.items():
            log.count_other(event, n)
        for problem in part.problems:
            if problem.line is not None:
                problem.line += line_base
            self.add_problem(problem)
        if part.named and self.sessions:
            for handler in self._handlers(agent):
                handler.on_log_sessions(self, part.named)
        self._lines_arrived()

    def _handlers(self, agent: Agent) -> list[RecordHandler]:
        """`agent`'s record handlers, made (and its analysis imported) when the first record that may concern
        them arrives: a log-only run never imports an analysis."""
        handlers = self.handlers.get(agent.name)
        if handlers is None:
            handlers = self.handlers[agent.name] = [cls(agent, self.reread) for cls in agent.load().record_handlers]
        return handlers

    def adopt_session(self, session: SessionState) -> None:
        """A parked session loaded from the persistent index (`core.index`), as if its transcript had just been
        read and parked: its calls with a logged decision wait for their log lines, and its agent's record
        handlers note what they would have kept of its records (`RecordHandler.restored`)."""
        self.sessions[session.key] = session
        for turn in session.turns:
            turn.log_line = None
            if turn.logged is not None:
                self._attribute_turn(session, turn)
        for handler in self._handlers(session.agent):
            handler.restored(self, session)
        self.version += 1

    def add_problem(self, problem: Problem) -> None:
        if problem.ts_ms is None:
            problem.ts_ms = now_ms()
        self.problems.append(problem)
        self.problems_total += 1
        self.problems_by_path[problem.path] += 1
        self.version += 1

    def reset_session(self, key: str) -> None:
        """A transcript was truncated or replaced: forget it; its new content is read from the start."""
        session = self.sessions.pop(key, None)
        if session is None:
            return
        for handler in self.handlers.get(session.agent.name, ()):
            handler.forget_session(session)  # what a handler keeps by session key would point into it
        self._forget_attribution(key, session.session_id)
        self.version += 1

    # ------------------------------------------------------------------ sessions
    def session_for(self, key: str, session_id: str | None, agent: Agent) -> SessionState:
        """The session keyed `key`, made with `agent`'s analyzers (in its order) when it is new."""
        session = self.sessions.get(key)
        if session is None:
            spec = agent.load()
            session = SessionState(key=key, session_id=session_id or key, agent=agent)
            session.profile = agent.rules.describe() if agent.rules is not None else None
            session.facts = spec.session_facts() if spec.session_facts is not None else None
            for cls in spec.session_analyzers:
                session.analyzers[cls] = cls(session, self.reread)
            self.sessions[key] = session
        return session

    # ------------------------------------------------------------------ reading
    def settle(self) -> None:
        """Before a surface reads: each record handler decides what only the files read together tell (which
        session made a call a resumed session copied). Cheap when nothing changed."""
        for handlers in self.handlers.values():
            for handler in handlers:
                handler.settle(self)

    def polled(self) -> None:
        """The records of one poll were applied: each record handler finishes what it put off (`polled`)."""
        for handlers in self.handlers.values():
            for handler in handlers:
                handler.polled(self)

    def all_turns(self) -> list[Turn]:
        """Every turn, in session then time order (the report's order)."""
        out: list[Turn] = []
        for session in self.sessions.values():
            out.extend(session.turns)
        return out


def _named_sessions(block: LogBlock) -> Counter[str]:
    """Session id -> lines of the block (continuity and close) that name it."""
    named: Counter[str] = Counter()
    for ids in (block.sessions, block.close_sessions):
        if ids is not None:
            named.update(ids)
    named.pop(None, None)  # type: ignore[call-overload]
    return named
