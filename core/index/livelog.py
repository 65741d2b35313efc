"""When a dashboard may keep its log lines in the store: only while the order it meets them in decides nothing.

A dashboard reads newest-first and live (`core.sources.tail.Sources`: half of each poll for the logs, half for
the transcripts, most recently modified first), so a cold start meets a log's lines and the transcripts in an
order of its own, and a warm start meets the stored lines before everything. Two things depend on that order:

- **build evidence** (`SidecarAndLogHandler`): a log line naming a session credits it only when the session
  exists as the line is read;
- **pairing** (`core.state.attribution`): a call's logged decision takes the nearest waiting log line of the
  same kind, reason and count, greedily in reading order.

(Close lines pair by a rule that does not depend on the order, `ClosePairing.restored`; compaction and other
events are counts.) Neither can happen when no log line names a session the state holds and no call logged a
decision whose kind and reason any log line has: then every order gives the same state, and the stored lines
are exactly what a cold start builds from them. `OrderFree.why_not` says which of the two stands in the way;
the dashboard's writer stops storing the log (and drops it) the moment one does, and a warm start checks it
again once its backfill is read (`Index.commit` in `live` mode), reading everything cold when it fails.

A history whose log lines name its own transcripts' sessions (senpi from 2026.9.29) or pair with their calls
is read again at every start, as before: storing it needs a model of the dashboard's cold order (what
`core.sources.order` is for a report's drain).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.state import State

__all__ = ["OrderFree"]


class OrderFree:
    """`why_not(state)`: a walk of every call's logged decision (a turn's `logged` may be set after the turn is
    made, so nothing is cached): ~10 ms a 100,000 calls, asked at most every `LIVE_EVERY_S` and when a
    backfill is read."""

    @staticmethod
    def why_not(state: State) -> str | None:
        """None when the order log lines are read in decides nothing in `state`, else why it may."""
        sessions = state.sessions
        if not sessions:
            return None
        named = state.log.columns.sessions.values
        if named:
            ids = {session.session_id for session in sessions.values()}
            for session_id in named:
                if session_id in ids:
                    return f"log lines name session {session_id[:18]}, which a transcript holds"
        by_reason = state.log.stats.by_reason
        if not by_reason:
            return None
        for key, session in sessions.items():
            for turn in session.turns:
                logged = turn.logged
                if logged is not None and by_reason.get(logged.reason, {}).get(logged.kind):
                    name = key.rsplit("/", 1)[-1][:40]
                    return f"a call of {name} logged a {logged.kind}/{logged.reason} decision that log lines have"
        return None
