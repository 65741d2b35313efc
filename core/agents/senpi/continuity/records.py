"""senpi's records from outside one transcript: restart sidecars (judged against their session's newest branch
mark) and log lines that name a session (`sessionId`: build-profile evidence for that session)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from core.agents.senpi.continuity.replay import VerdictReplay
from core.agents.senpi.formats.sidecar import SIDECAR_SUFFIX
from core.agents.senpi.profiles import ProfileTracker
from core.kernel.pipeline import RecordHandler
from core.model import CloseLine, ContinuityLine, Sidecar, TranscriptEntry

if TYPE_CHECKING:
    from core.kernel.pipeline import AgentRef, Session, Store
    from core.kernel.ports import Reread


class SidecarAndLogHandler(RecordHandler):
    """Sidecars (restart verdicts) and log lines carrying a session id (build evidence)."""

    handles = (Sidecar, ContinuityLine, CloseLine, TranscriptEntry)

    def __init__(self, agent: AgentRef, reread: Reread) -> None:
        super().__init__(agent, reread)
        self.pending_sidecars: dict[str, Sidecar] = {}
        self._ids: dict[str, Session] = {}
        self._indexed = -1

    def _by_id(self, state: Store, session_id: str) -> Session | None:
        """Session by senpi session id; the index is rebuilt only when sessions were added (O(1) per line)."""
        session = self._ids.get(session_id)
        if session is not None and state.sessions.get(session.key) is not session:
            session = None  # forgotten (truncated, replaced, rebuilt from a parked state): index again
            self._indexed = -1
        if session is None and self._indexed != len(state.sessions):
            self._indexed = len(state.sessions)
            self._ids = {s.session_id: s for s in state.sessions.values()}
            session = self._ids.get(session_id)
        return session

    def on_record(self, state: Store, record: Any) -> None:
        if isinstance(record, Sidecar):
            key = record.where.path[: -len(SIDECAR_SUFFIX)] if record.where.path.endswith(SIDECAR_SUFFIX) else None
            session = state.sessions.get(key) if key else None
            sid = record.data.get("sessionId")
            if session is None and isinstance(sid, str):
                session = self._by_id(state, sid)
            if session is None:
                if key:
                    self.pending_sidecars[key] = record
                return
            self._apply(session, record)
        elif isinstance(record, ContinuityLine | CloseLine):
            if record.session_id is None:
                return
            session = self._by_id(state, record.session_id)
            tracker = session.analyzer(ProfileTracker) if session is not None else None
            if tracker is not None:
                tracker.log_line_with_session_id()
        elif isinstance(record, TranscriptEntry) and self.pending_sidecars:
            waiting = self.pending_sidecars.pop(record.where.path, None)
            if waiting is not None:
                session = state.sessions.get(record.where.path)
                if session is not None:
                    self._apply(session, waiting)

    def on_log_sessions(self, state: Store, named: Mapping[str, int]) -> None:
        for session_id, lines in named.items():
            session = self._by_id(state, session_id)
            tracker = session.analyzer(ProfileTracker) if session is not None else None
            if tracker is not None:
                tracker.log_line_with_session_id(lines)

    @staticmethod
    def _apply(session: Session, record: Sidecar) -> None:
        session.sidecar = record
        replay = session.analyzer(VerdictReplay)
        if replay is not None:
            replay.update_sidecar_verdict()
