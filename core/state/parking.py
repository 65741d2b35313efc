"""Parking: a finished session keeps what the surfaces read and drops the machinery that would extend it.

A session whose transcript has been read to its end and is done (`State.park`; the engine decides when: every
fully read transcript after a report's drain, one unmodified for `PARK_IDLE_S` live) keeps what the surfaces
read and drops the machinery that would extend its analysis (payload lanes, branch marks, the replay's
per-call registries, commit facts, context pointers). Anything that needs that machinery again (its file
grows, an event recording of one of its turns arrives) rebuilds it from its file (`State.unpark`), the way a
truncated transcript is re-read. A report of a history read with parking equals one read without
(`tests/test_parking.py`). Only sessions of formats that declare it can be parked (`Adapter.parkable`: one
file is the session's whole history).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from core.model import Problem, Record

if TYPE_CHECKING:
    from core.agents.base import Agent
    from core.kernel.ports import Reread
    from core.state.session import SessionState

#: A live dashboard parks a session (`State.park`) once its transcript was read to the end and has not been
#: modified for this long: months of finished history then cost what the surfaces show, not the machinery
#: that would extend them. A report parks every fully read transcript (nothing is read after its drain).
PARK_IDLE_S = 600.0
Parse = Callable[[str, int, int, bytes], Iterable[Record]]


class Parking:
    """The parking part of `State`."""

    sessions: dict[str, SessionState]
    reread: Reread
    version: int
    _wakes: set[str]
    if TYPE_CHECKING:  # provided by `State`

        def session_for(self, key: str, session_id: str | None, agent: Agent) -> SessionState: ...

        def reset_session(self, key: str) -> None: ...

        def apply(self, record: Record, agent: Agent) -> None: ...

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
            analyzer.park(session)
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
            self._wakes.add(key)

    def take_wakes(self) -> list[tuple[str, int]]:
        """(session key, end offset it was read to) of every parked session woken since the last call."""
        if not self._wakes:
            return []
        out = []
        for key in sorted(self._wakes):
            session = self.sessions.get(key)
            if session is not None and session.parked is not None:
                out.append((key, session.parked))
        self._wakes.clear()
        return out

    def unpark(self, key: str, parse: Parse, end: int, max_line: int) -> None:
        """Rebuild a parked session: forget it, then apply its transcript's first `end` bytes again, line by line,
        exactly as the tailer delivered them (the same correctness path as a truncated transcript's re-read).

        The session keeps its place among the sessions (reports list ties in that order) and its sidecar (a
        restart binding read from another file, judged again once the file is re-read: `rebuilt`), what its
        analyzers took from other files (`adopt`: the build evidence log lines gave it), and its event
        recordings (`RecordingMatcher.forget_session`). Problems of the re-read lines are not added again: they
        were reported when the lines were first read.
        """
        session = self.sessions.get(key)
        if session is None or session.parked is None:
            return
        order = list(self.sessions)
        agent = session.agent
        carried = list(session.analyzers.items())
        self.reset_session(key)
        # evidence other files gave (log lines naming the session): before its entries, as a cold read has it
        fresh = self.session_for(key, session.session_id, agent)
        for cls, analyzer in carried:
            target = fresh.analyzers.get(cls)
            if target is not None:
                target.adopt(analyzer)
        data = self.reread.head(key, end)
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
                        self.apply(record, agent)
            pos = nl + 1
        rebuilt = self.sessions.get(key)
        if rebuilt is not None:
            if session.sidecar is not None:  # put back what another file gave it, as a live run had it
                rebuilt.sidecar = session.sidecar
                for analyzer in rebuilt.each_analyzer():
                    analyzer.rebuilt(rebuilt)
            rank = {k: i for i, k in enumerate(order)}
            ordered = sorted(self.sessions.items(), key=lambda kv: rank.get(kv[0], len(rank)))
            self.sessions.clear()  # in place: readers may hold the dict
            self.sessions.update(ordered)
        self.version += 1
