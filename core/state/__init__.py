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

from core.kernel.stats import LogStats
from core.model import CloseLine, ContinuityLine, LogEvent, Problem, Record, SessionHeader, TranscriptEntry, Turn
from core.state.attribution import ATTRIBUTION_WINDOW_MS, Attribution, _ByTime
from core.state.parking import PARK_IDLE_S, Parking
from core.state.session import SessionState
from core.state.tree import Tree
from core.timeutil import now_ms

if TYPE_CHECKING:
    from core.agents.base import Agent
    from core.kernel.pipeline import RecordHandler
    from core.kernel.ports import Reread

__all__ = ["ATTRIBUTION_WINDOW_MS", "MAX_PROBLEMS", "PARK_IDLE_S", "LogState", "SessionState", "State"]

MAX_PROBLEMS = 1000


class LogState:
    """The continuity and close lines read from the logs, in reading order, with their aggregates."""

    def __init__(self) -> None:
        self.continuity: list[ContinuityLine] = []
        self.closes: list[CloseLine] = []
        self.stats = LogStats()
        self.other_events: dict[str, int] = {}
        self.provider_errors: int = 0


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

    # ------------------------------------------------------------------ ingestion
    def apply(self, record: Record, agent: Agent) -> None:
        """One record of a file of `agent`'s: aggregated here, then given to that agent's record handlers."""
        self.version += 1
        if isinstance(record, ContinuityLine):
            self._add_continuity(record)
        elif isinstance(record, TranscriptEntry):
            self._add_entry(record, agent)
        elif isinstance(record, CloseLine):
            self.log.closes.append(record)
            self.log.stats.add_close(record)
        elif isinstance(record, LogEvent):
            self.log.other_events[record.event] = self.log.other_events.get(record.event, 0) + 1
            if record.event == "provider_error":
                self.log.provider_errors += 1
        elif isinstance(record, SessionHeader):
            self._add_header(record, agent)
        elif isinstance(record, Problem):
            self.add_problem(record)
        handlers = self.handlers.get(agent.name)
        if handlers is None:
            handlers = self.handlers[agent.name] = [cls(agent, self.reread) for cls in agent.load().record_handlers]
        for handler in handlers:
            if isinstance(record, handler.handles):
                handler.on_record(self, record)

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
        for turns in self._unmatched_turns.values():
            turns.discard(lambda t: t[0] == key)
        for index, line in enumerate(self.log.continuity):
            if line.matched_session == session.session_id:
                line.matched_session = None
                line.matched_turn = None
                self._wait_line(line, index)
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
    def all_turns(self) -> list[Turn]:
        """Every turn, in session then time order (the report's order)."""
        out: list[Turn] = []
        for session in self.sessions.values():
            out.extend(session.turns)
        return out
