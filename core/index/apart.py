"""After a report's drain that read the transcripts apart (`core.session_pool`): what depends on the order the
files were read in, put as a cold drain has it, with the index's own checked machinery (a run that read the
transcripts first met the files in another order, as a run resumed from the index does). The engine is handed
`settle` (`Engine(settle_apart=...)`): the engine's layer is below the index's."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.engine import Engine
    from core.session_pool import Adopted


def settle(engine: Engine, adopted: Adopted, chunk: int) -> bool:
    """After the drain: what depends on the order files are read in, as a cold drain of `chunk`-byte polls has
    it (the sessions' order, log lines paired with calls), or False when this run cannot give it (a log line a
    cold drain credits to a session read apart as build evidence): then read everything cold."""
    from core.agents.senpi.profiles import ProfileTracker
    from core.index.run import _cold_session_order, _log_credits
    from core.sources.order import DrainOrder
    from core.state.attribution import cold_pairs

    state = engine.state
    for key in adopted.sessions:
        session = state.sessions.get(key)
        tracker = session.analyzer(ProfileTracker) if session is not None else None
        if tracker is not None and tracker.evidence.session_id_lines:
            return False  # rebuilt (a recording woke it) and credited after: a cold drain read those lines first
    layout = engine.sources.layout()
    sizes = {logical: sum(size for _, size in gens) for logical, gens in layout}
    cold = DrainOrder(layout, chunk)
    warm = DrainOrder(layout, chunk, {logical: sizes.get(logical, 0) for logical in adopted.streams})
    kept = {key: s for key in adopted.sessions if (s := state.sessions.get(key)) is not None}
    _, reason = _log_credits(engine, cold, warm, {}, kept, dict.fromkeys(adopted.sessions, (0, 0)))
    if reason is not None:
        return False
    _cold_session_order(engine, cold)
    if any(turn.logged is not None for session in state.sessions.values() for turn in session.turns):
        state.adopt_pairs(cold_pairs(state, layout, chunk))
    return True
