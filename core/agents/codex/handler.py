"""Codex calls into the sessions the surfaces read: one session per rollout file, one `Turn` per call.

The judging is `calls.py`'s (pure); this module only files its results: the session keyed by the rollout's
path with the `session_meta` id, cwd and start, the rules it was judged by (naming the CLI version), and per
call a `Turn` with the tokens, the verdict as the turn's `logged` decision (source `cache`, or `transcript` for
the kinds the rollout's structure decides: compaction, aborted), the evidence in `Turn.cache`, the thread.

A rollout that restarts (a line at offset 0 of a file already read: truncated or replaced) is forgotten and
read again, so nothing is counted twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.agents.codex.calls import CodexCall, RolloutCalls
from core.agents.codex.facts import CodexCallFacts
from core.agents.codex.rollout import CodexLine
from core.kernel.cache_verdict import COMPACTION
from core.kernel.pipeline import RecordHandler
from core.model import ABORTED, LoggedDecision, SessionHeader, Turn

if TYPE_CHECKING:
    from core.kernel.pipeline import AgentRef, Session, Store
    from core.kernel.ports import Reread
    from core.model import Record

#: The provider when `session_meta` names none (0.34-0.47 wrote no `model_provider`; they only spoke to OpenAI).
DEFAULT_PROVIDER = "openai"
API = "openai-responses"
#: Kinds the rollout's structure decides rather than the cache figures.
_STRUCTURAL = frozenset({COMPACTION, ABORTED})


class CodexCalls(RecordHandler):
    """Record handler for `CodexLine`s; owns the Codex sessions in the state."""

    handles = (CodexLine,)

    def __init__(self, agent: AgentRef, reread: Reread) -> None:
        super().__init__(agent, reread)
        self.rollouts: dict[str, RolloutCalls] = {}

    def on_record(self, store: Store, record: Record) -> None:
        if not isinstance(record, CodexLine):
            return
        path = record.where.path
        rollout = self.rollouts.get(path)
        if rollout is not None and record.where.offset == 0 and rollout.lines:
            self._forget(store, path)
            rollout = None
        if rollout is None:
            rollout = self.rollouts[path] = RolloutCalls(path)
        call = rollout.feed(record)
        session = self._session(store, rollout, record)
        if call is not None:
            session.turns.append(_turn(session, rollout, call))
        store.version += 1

    def forget_session(self, session: Session) -> None:
        """The state dropped a session (its rollout was truncated or replaced): it starts again at line 1."""
        self.rollouts.pop(session.key, None)

    def _session(self, store: Store, rollout: RolloutCalls, record: CodexLine) -> Session:
        meta = rollout.meta
        session = store.session_for(rollout.path, meta.session_id, self.agent)
        if record.type == "session_meta" and meta.where is record.where:
            session.session_id = meta.session_id
            session.cwd = meta.cwd
            session.header = SessionHeader(record.where, meta.session_id, None, meta.started, meta.cwd)
            for turn in session.turns:
                turn.session = meta.session_id
            if meta.cli_version and isinstance(session.profile, dict):
                label = f"Codex CLI {meta.cli_version}: verdicts from the prompt cache (128-token blocks)"
                session.profile = {**session.profile, "label": label}
        session.entries += 1
        return session

    def _forget(self, store: Store, path: str) -> None:
        """A rollout restarted: drop its calls (its lines come again from the first)."""
        self.rollouts.pop(path, None)
        session = store.sessions.get(path)
        if session is not None:
            session.turns.clear()
            session.entries = 0


def _turn(session: Session, rollout: RolloutCalls, call: CodexCall) -> Turn:
    meta = rollout.meta
    verdict = call.verdict
    turn = Turn(
        session=session.session_id,
        index=len(session.turns),
        entry_id=f"#{call.where.line}",
        ts=call.timestamp,
        ts_ms=call.ts_ms,
        where=call.where,
        model=call.model,
        provider=meta.provider or DEFAULT_PROVIDER,
        api=API,
    )
    source = "transcript" if verdict.kind in _STRUCTURAL else "cache"
    turn.logged = LoggedDecision(kind=verdict.kind, reason=verdict.reason, count=None, ts_ms=call.ts_ms, source=source)
    turn.tokens = call.tokens
    turn.why = call.why
    turn.cache = verdict.evidence
    turn.thread = meta.thread
    turn.facts = CodexCallFacts(call.turn_id)
    return turn


__all__ = ["CodexCalls"]
