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
are exactly what a cold start builds from them. `OrderFree.why_not` says which of the two stands in the way.

It holds for the finished sessions too, not only for the log: a warm start loads them before its first poll,
so it reads the rest (the log, the active transcripts) in another order than a cold start, and what the log
credits a session read around it with changed (the demo without recordings, its files modified in another
order: session 01a13072's profile said "sessionId on 3 log line(s)" where a cold start says "provider id").
So a dashboard (`Index._live_poll`) asks it once its backfill is read and every `LIVE_EVERY_S` before: a
run that writes drops everything it stored the moment it fails and writes nothing more (the log's writer
also stops on its own, `LogWriter._order_bound`); a warm start reads everything cold when it fails (a
transcript naming the log's sessions appeared since). Once it passes with the backfill read, a warm start
puts its sessions in the order a cold one makes them (`_newest_first_order`).

A history whose log lines name its own transcripts' sessions (senpi from 2026.9.29) or pair with their calls
is read whole at every dashboard start, as before the index: storing it needs a model of the dashboard's cold
order (what `core.sources.order` is for a report's drain; a report stores such histories).
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
