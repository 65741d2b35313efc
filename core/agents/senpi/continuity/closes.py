"""Which `claude_sdk_oauth_session_close` line belongs to which call: senpi closes a live entry inside the call
that replaces it, so a close pairs with the call whose window holds it and whose decision writes that reason.

senpi writes a close line from the call that replaces a live entry (senpi-formats §2.8, §4.6): the decision's
observed reason before the flatten (`assistant_rewritten`, …), `other` (raw `"reattach"`) before a reattach or
fork, and the pump error's cause when every attempt failed. It does so after the call started (the assistant's
`timestamp`): right away for a decision, at the failure for a failed call, and always before the call's
continuity observation (the diagnostic's `timestamp`). The other closes (the idle reaper, a thinking-level
switch, a model switch, shutdown) happen between calls and pair with none.

A close pairs with a call when exactly one call's window holds it (the call's first `START_WINDOW_MS`, the whole
call up to its observation for a failure) and that call's logged decision writes its reason; a close naming a
session (2026.9.29+) only looks at that session's calls. Old builds' lines name no session: when two sessions'
calls were open at once and both could have written it, it pairs with neither (`where they pair`); a shutdown or
reaper `other` of another session within the first two seconds of a fork is the one line it can take for the
fork's own (only the earliest close of a decision is its own: senpi writes one at a call's start). The rule
depends only on the set of lines and calls, not on the order they are read in, so a live read, a cold read
and a resumed index agree. Kept per call in `SenpiCall.closes`, per line in the close table's
`matched` (row -> session id, call index: the report's `continuity.closes_paired`).

Close lines are read from the log's columns (`core.kernel.logcols.CloseRows`), not as records: a block of a log
is applied without a record per line, and lines read before any session (a cold read meets the logs first) are
still evidence once the calls arrive. The handler takes the rows appended since it last looked whenever it hears
of new close rows (`on_log_closes`) and before each record it is given; a row's index is its key.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Any

from core.agents.senpi.facts import senpi_call
from core.agents.senpi.profiles import API_ID, TERMINAL_REASONS
from core.kernel.pipeline import RecordHandler
from core.model import TranscriptEntry, Turn

if TYPE_CHECKING:
    from core.kernel.logcols import CloseRows
    from core.kernel.pipeline import AgentRef, Session, Store
    from core.kernel.ports import Reread

#: a call longer than this is not looked at for closes (a failure's close comes at its end; no real call streams
#: for half an hour)
MAX_WINDOW_MS = 30 * 60_000
#: senpi decides, closes and only then starts the query: a call's start close is stamped within milliseconds of the
#: assistant's `timestamp` (1-4 ms in the simulator, the same millisecond in senpi-live). Two seconds of slack, and
#: no more, so a session's shutdown or reaper line a few seconds into another session's call is not taken for it
START_WINDOW_MS = 2_000
Call = tuple[str, int]  # (session key, turn index)
Close = tuple[int, str, str | None]  # (ts_ms, reason, session id) of one close row


def expected_reasons(turn: Turn) -> frozenset[str]:
    """The close reasons a call's own start (or failure) writes, from its logged decision (senpi-formats §4.6)."""
    logged = turn.logged
    if logged is None:
        return frozenset()
    if logged.kind == "failed" or (logged.kind == "flatten" and logged.count is None):
        return TERMINAL_REASONS  # the pump error's cause, closed before the terminal observation
    if logged.kind in ("flatten", "bootstrap"):
        return frozenset({logged.reason, "registry_miss"})  # `observedReason ?? "registry_miss"`
    if logged.kind in ("fork", "reattach"):
        return frozenset({"other"})  # raw "reattach"
    return frozenset()


class ClosePairing(RecordHandler):
    """Pairs close lines with calls as both arrive (see the module docstring)."""

    handles = (TranscriptEntry,)

    def __init__(self, agent: AgentRef, reread: Reread) -> None:
        super().__init__(agent, reread)
        self._taken = 0  # close rows looked at (`store.log.closes`)
        self._rows: CloseRows | None = None  # the close table they were taken from (a new state restarts the count)
        self._closes: list[tuple[int, int]] = []  # (ts_ms, row), sorted
        self._lines: dict[int, Close] = {}  # row -> what pairing reads of it
        self._windows: list[tuple[int, str, int]] = []  # (start_ms, key, index), sorted
        #: the windows longer than `START_WINDOW_MS` (a failure's, up to `MAX_WINDOW_MS`), also in `_windows`: a close
        #: looks at the calls started in its last 30 minutes only among these, and at the last 2 s among all (a
        #: call of a shorter window cannot hold a close stamped later). It looked at every call of the last 30
        #: minutes: 154,270 `_holds` for the 1,703 closes of the 100 MB corpus read apart, ~8 % of the parent's
        #: serial CPU under cProfile
        self._long: list[tuple[int, str, int]] = []
        self._calls: dict[Call, tuple[int, int, str, frozenset[str]]] = {}  # -> (start, end, session id, reasons)
        self._candidates: dict[int, set[Call]] = {}  # close seq -> calls that could have written it
        self._paired: dict[Call, list[int]] = {}  # call -> seqs of the closes paired with it
        self._pair_of: dict[int, Call] = {}  # close seq -> the call it is paired with
        self._calls_of: dict[str, list[Call]] = {}  # session key -> its calls (a forgotten session drops them)
        self._held: dict[Call, set[int]] = {}  # call -> closes it is a candidate for
        self._dirty: set[int] = set()  # closes whose candidates a forgotten session changed: settled next record

    # ----------------------------------------------------------------- records
    def on_record(self, store: Store, record: Any) -> None:
        if self._dirty:
            for seq in sorted(self._dirty):
                self._settle(store, seq)
            self._dirty.clear()
        self._take_closes(store)
        if isinstance(record, TranscriptEntry) and record.type == "message" and record.role == "assistant":
            session = store.sessions.get(record.where.path)
            node = session.nodes.get(record.id or "") if session is not None else None
            if session is not None and node is not None and node.turn_index is not None:
                self._add_call(store, session, node.turn_index)

    def forget_session(self, session: Session) -> None:
        """Drop the session's calls; the closes they held are settled again at the next record (O(its calls))."""
        for call in self._calls_of.pop(session.key, []):
            self._calls.pop(call, None)
            self._paired.pop(call, None)
            for seq in self._held.pop(call, ()):
                self._candidates[seq].discard(call)
                if self._pair_of.get(seq) == call:
                    del self._pair_of[seq]
                    self._rows.matched.pop(seq, None)  # type: ignore[union-attr]  (a call held it: rows were taken)
                self._dirty.add(seq)
        if len(self._windows) > 2 * len(self._calls) + 64:  # forgotten calls' windows, dropped now and then
            self._windows = [w for w in self._windows if (w[1], w[2]) in self._calls]
            self._long = [w for w in self._long if (w[1], w[2]) in self._calls]

    def on_log_closes(self, store: Store) -> None:
        self._take_closes(store)

    def restored(self, store: Store, session: Session) -> None:
        """A session loaded from the index: its calls wait for their closes like calls just read (the rule does
        not depend on the order calls and lines arrive in, so the pairs are the cold read's)."""
        self._take_closes(store)
        for index in range(len(session.turns)):
            self._add_call(store, session, index)

    # ----------------------------------------------------------------- pairing
    def _take_closes(self, store: Store) -> None:
        """The close rows appended since the last look, each paired (or not) as it is taken."""
        rows = store.log.closes
        if rows is not self._rows:
            self._rows, self._taken = rows, 0
        for row in range(self._taken, len(rows)):
            ms = rows.ms(row)
            if ms is not None:
                self._add_close(store, row, (ms, rows.reason_of(row), rows.session_id(row)))
        self._taken = len(rows)

    def _add_close(self, store: Store, seq: int, line: Close) -> None:
        ts_ms = line[0]
        bisect.insort(self._closes, (ts_ms, seq))
        self._lines[seq] = line
        cands: set[Call] = set()
        recent, long = self._windows, self._long
        lo = bisect.bisect_left(recent, (ts_ms - START_WINDOW_MS,))
        hi = bisect.bisect_right(recent, (ts_ms, "\uffff"))
        long_lo = bisect.bisect_left(long, (ts_ms - MAX_WINDOW_MS,))
        long_hi = bisect.bisect_left(long, (ts_ms - START_WINDOW_MS,))  # the rest of them are in `recent[lo:hi]`
        for _, key, index in long[long_lo:long_hi] + recent[lo:hi]:
            if self._holds((key, index), line, store):
                cands.add((key, index))
                self._held[(key, index)].add(seq)
        self._candidates[seq] = cands
        self._settle(store, seq)

    def _add_call(self, store: Store, session: Session, index: int) -> None:
        turn = session.turns[index]
        call = (session.key, index)
        msg_api = turn.api
        if msg_api != API_ID or turn.logged is None or turn.ts_ms is None or call in self._calls:
            return
        start = turn.ts_ms
        end = max(start, turn.logged.ts_ms if turn.logged.ts_ms is not None else start)
        reasons = expected_reasons(turn)
        if reasons is not TERMINAL_REASONS:
            end = min(end, start + START_WINDOW_MS)  # written at the start
        elif end - start > MAX_WINDOW_MS:
            end = start
        self._calls[call] = (start, end, session.session_id, reasons)
        self._calls_of.setdefault(session.key, []).append(call)
        self._held[call] = set()
        bisect.insort(self._windows, (start, session.key, index))
        if end - start > START_WINDOW_MS:
            bisect.insort(self._long, (start, session.key, index))
        senpi_call(turn).closes = []
        lo = bisect.bisect_left(self._closes, (start,))
        hi = bisect.bisect_right(self._closes, (end, 1 << 62))
        for _, seq in self._closes[lo:hi]:
            if self._holds(call, self._lines[seq], store):
                self._candidates[seq].add(call)
                self._held[call].add(seq)
                self._settle(store, seq)

    def _holds(self, call: Call, line: Close, store: Store) -> bool:
        found = self._calls.get(call)
        if found is None:
            return False
        start, end, session_id, reasons = found
        ts_ms, reason, line_session = line
        # half open: senpi closes before it emits the observation, and a close stamped with the observation's
        # millisecond is the next call's, at its start (the scripted senpi-live run does exactly that)
        inside = start <= ts_ms < end or ts_ms == start
        if not inside or reason not in reasons:
            return False
        return line_session is None or line_session == session_id

    def _settle(self, store: Store, seq: int) -> None:
        """Re-decide one close: a close of its only candidate call, or of none."""
        cands = self._candidates[seq]
        new = next(iter(cands)) if len(cands) == 1 else None
        old = self._pair_of.get(seq)
        if old == new:
            return
        if old is not None:
            del self._pair_of[seq]
            self._paired[old].remove(seq)
            self._publish(store, old)
        self._matched(store).pop(seq, None)
        if new is not None:
            self._pair_of[seq] = new
            self._paired.setdefault(new, []).append(seq)
            self._paired[new].sort(key=lambda s: (self._lines[s][0], s))
            self._publish(store, new)

    def _publish(self, store: Store, call: Call) -> None:
        """The call's closes: a decision writes one close at its start (the earliest that only it can have written;
        a second is another session's, e.g. its shutdown), a failure may write more (a failed resume, the pump)."""
        seqs = self._paired.get(call, [])
        found = self._calls.get(call)
        kept = seqs if found is not None and found[3] is TERMINAL_REASONS else seqs[:1]
        matched = self._matched(store)
        for s in seqs:
            if s in kept and found:
                matched[s] = (found[2], call[1])
            else:
                matched.pop(s, None)
        session = store.sessions.get(call[0])
        if session is None or call[1] >= len(session.turns):
            return
        senpi_call(session.turns[call[1]]).closes = [self._lines[s][1] for s in kept]

    @staticmethod
    def _matched(store: Store) -> dict[int, tuple[str, int]]:
        return store.log.closes.matched
