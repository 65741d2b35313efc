"""Attribution: which logged continuity decision (a `session.log` line) belongs to which call, in both forms.

senpi writes each decision twice: as a diagnostic on the assistant message and as a `session.log` line
(older builds without a session id). A transcript diagnostic and a log line describe the same call when kind,
reason and count agree and their times are within `ATTRIBUTION_WINDOW_MS`; they are paired greedily, in
reading order, each taking the nearest waiting partner ((gap, arrival) breaks ties; a line naming a session
only pairs with that session's calls).

The pairing depends on the order things are read in, so it exists twice, side by side:

- incremental (`Attribution`, mixed into `State`): what a live or cold read pairs as lines and turns arrive,
  O(log n) per item through time-ordered waiting lists (`_ByTime`);
- cold replay (`cold_pairs`): what a cold `read_all(chunk)` of the same files would have paired, computed from
  what is in memory; a run resumed from the index puts its pairs as the replay has them (`Index.settle`).
  `tests/index/test_index_order.py` checks the replay against real cold drains.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from core.model import Turn, Where
from core.sources.order import DrainOrder

if TYPE_CHECKING:
    from core.state import LogState, State
    from core.state.session import SessionState

#: A transcript diagnostic and a log line describe the same call when kind, reason and count agree and
#: their times are this close (the diagnostic is stamped just before the log line is written).
ATTRIBUTION_WINDOW_MS = 5_000
_T = TypeVar("_T")
_K = TypeVar("_K", bound=tuple[Any, ...])


class Attribution:
    """The incremental pairing, as part of `State` (which owns `log`, `sessions` and the waiting lists).

    Log lines are columns (`core.kernel.logcols.ContinuityRows`); a line is indexed for attribution (paired
    with a waiting call, or put in the time-ordered waiting list of its key) only when a call can need it: at
    once while calls are waiting, else when the next call that logged a decision arrives (or a session is
    reset). The lines are taken in arrival order either way, so the pairing is the eager one, and a log read
    with no transcript (the 1.1M-line log: 1.04M lines) builds no index at all (−122 B a line, review §1)."""

    log: LogState
    sessions: dict[str, SessionState]
    _unmatched_lines: dict[tuple[str, str, int | None], _ByTime[int]]
    _unmatched_turns: dict[tuple[str, str, int | None], _ByTime[tuple[str, int]]]
    _turns_waiting: int
    _indexed: int

    def _lines_arrived(self) -> None:
        """New continuity rows were appended: index them now if calls wait for lines, else later."""
        if self._turns_waiting:
            self._index_lines()

    def _index_lines(self) -> None:
        """Index every continuity row that arrived since the last time, in arrival order."""
        rows = self.log.continuity
        end = len(rows)
        for row in range(self._indexed, end):
            self._line_arrives(row)
        self._indexed = end

    def _line_arrives(self, row: int) -> None:
        rows = self.log.continuity
        ms = rows.ms(row)
        if ms is not None and self._turns_waiting:
            key = rows.key(row)
            waiting = self._unmatched_turns.get(key)
            if waiting:
                pos = self._nearest_turn(waiting, ms, rows.session_id(row))
                if pos is not None:
                    key_of_session, turn_index = waiting.pop(pos)
                    self._turns_waiting -= 1
                    self._link(row, self.sessions[key_of_session], turn_index)
                    return
        self._wait_line(row)

    def _wait_line(self, row: int) -> None:
        rows = self.log.continuity
        ms = rows.ms(row)
        if ms is not None:
            key = rows.key(row)
            waiting = self._unmatched_lines.get(key)
            if waiting is None:
                waiting = self._unmatched_lines[key] = _ByTime()
            waiting.add(ms, row)

    def _attribute_turn(self, session: SessionState, turn: Turn) -> None:
        """Link a turn to the nearest unmatched log line of its (kind, reason, count) within the window.

        Ties go to the line that has waited longest. Only lines within the window are looked at (a time-ordered
        index), so attribution stays O(log n) per turn when a whole log was read before its transcripts."""
        assert turn.logged is not None
        self._index_lines()
        rows = self.log.continuity
        key = _key(turn.logged.kind, turn.logged.reason, turn.logged.count)
        candidates = self._unmatched_lines.get(key)
        at = turn.logged.ts_ms or turn.ts_ms
        if candidates and at is not None:
            best: tuple[int, int, int] | None = None  # (gap, seq, position)
            for pos, ms, seq, i in candidates.near(at):
                named = rows.session_id(i)
                if named is not None and named != session.session_id:
                    continue
                gap = abs(ms - at)
                if best is None or (gap, seq) < best[:2]:
                    best = (gap, seq, pos)
            if best is not None:
                i = candidates.pop(best[2])
                self._link(i, session, turn.index)
                return
        if at is not None:
            waiting = self._unmatched_turns.get(key)
            if waiting is None:
                waiting = self._unmatched_turns[key] = _ByTime()
            waiting.add(at, (session.key, turn.index))
            self._turns_waiting += 1

    def _nearest_turn(self, waiting: _ByTime[tuple[str, int]], at: int, named: str | None) -> int | None:
        """Position in `waiting` of the nearest turn a new log line can be attributed to (ties: the earliest)."""
        best: tuple[int, int, int] | None = None  # (gap, seq, position)
        for pos, ms, seq, (key, index) in waiting.near(at):
            session = self.sessions.get(key)
            if session is None or index >= len(session.turns):
                continue
            if named is not None and named != session.session_id:
                continue
            gap = abs(ms - at)
            if best is None or (gap, seq) < best[:2]:
                best = (gap, seq, pos)
        return None if best is None else best[2]

    def _link(self, row: int, session: SessionState, turn_index: int) -> None:
        self.log.continuity.matched[row] = (session.session_id, turn_index)
        session.turns[turn_index].log_line = row

    def _forget_attribution(self, key: str, session_id: str) -> None:
        """A session is forgotten (`State.reset_session`): its waiting calls go, its lines wait again."""
        self._index_lines()  # first: the lines that arrived before keep their place in the waiting order
        for turns in self._unmatched_turns.values():
            turns.discard(lambda t: t[0] == key)
        self._turns_waiting = sum(len(turns) for turns in self._unmatched_turns.values())
        matched = self.log.continuity.matched
        for row in sorted(row for row, (sid, _) in matched.items() if sid == session_id):
            del matched[row]
            self._wait_line(row)

    def adopt_pairs(self, pairs: dict[tuple[str, int], int]) -> None:
        """Pair logged decisions with calls as given ((session key, turn index) -> continuity row: what
        `cold_pairs` says a cold drain pairs), replacing the incremental pairing; what is left unpaired waits
        again. A run resumed from the persistent index (`core.index`) met the files in another order."""
        rows = self.log.continuity
        rows.matched.clear()
        self._unmatched_lines.clear()
        self._unmatched_turns.clear()
        self._turns_waiting = 0
        self._indexed = 0  # no line indexed: a later call indexes them all, in arrival order (`_index_lines`)
        calls = False
        for key, session in self.sessions.items():
            for turn in session.turns:
                turn.log_line = None
                row = pairs.get((key, turn.index))
                if row is not None and 0 <= row < len(rows):
                    self._link(row, session, turn.index)
                elif turn.logged is not None and (at := turn.logged.ts_ms or turn.ts_ms) is not None:
                    key_ = _key(turn.logged.kind, turn.logged.reason, turn.logged.count)
                    self._unmatched_turns.setdefault(key_, _ByTime()).add(at, (key, turn.index))
                    self._turns_waiting += 1
                calls = calls or turn.logged is not None
        if calls:  # the lines left unpaired wait (a log with no such call is indexed only when one arrives)
            matched = rows.matched
            for row in range(len(rows)):
                if row not in matched:
                    self._wait_line(row)
            self._indexed = len(rows)


class _ByTime(Generic[_T]):
    """Items waiting for attribution, sorted by (time, arrival): the ones within the attribution window of a
    given time are found by bisection instead of a scan of everything that waits (a 1 GB history read log
    first made that scan quadratic: a third of the whole run)."""

    __slots__ = ("_items", "_seq")

    def __init__(self) -> None:
        self._items: list[tuple[int, int, _T]] = []
        self._seq = itertools.count()

    def __len__(self) -> int:
        return len(self._items)

    def add(self, ms: int, value: _T) -> None:
        item = (ms, next(self._seq), value)
        items = self._items
        if not items or items[-1][0] <= ms:
            items.append(item)  # the usual case: things arrive in time order (and arrival only grows)
        else:
            # (ms, seq) sorts just before (ms, seq, value); seq is unique, so values are never compared
            items.insert(bisect.bisect_right(items, item[:2]), item)

    def near(self, ms: int) -> list[tuple[int, int, int, _T]]:
        """(position, time, arrival, item) of every item within ATTRIBUTION_WINDOW_MS of `ms`."""
        items = self._items
        lo = bisect.bisect_left(items, (ms - ATTRIBUTION_WINDOW_MS,))
        out = []
        for pos in range(lo, len(items)):
            t, seq, value = items[pos]
            if t > ms + ATTRIBUTION_WINDOW_MS:
                break
            out.append((pos, t, seq, value))
        return out

    def pop(self, pos: int) -> _T:
        return self._items.pop(pos)[2]

    def discard(self, drop: Callable[[_T], bool]) -> None:
        self._items = [item for item in self._items if not drop(item[2])]


def _key(kind: str, reason: str, count: int | None) -> tuple[str, str, int | None]:
    return (kind, reason, count)


def cold_pairs(state: State, layout: list[tuple[str, list[tuple[str, int]]]], chunk: int) -> dict[tuple[str, int], int]:
    """(session key, turn index) -> log line index, as a cold `read_all(chunk)` of the same files pairs them.

    Replays two things in plain data: the order a cold drain delivers lines in (`DrainOrder`: `Sources`
    round-robin over the streams in discovery order, each poll `chunk` bytes, a stream cut by the budget resumed
    after the others)
    and the greedy pairing of `State` (a line takes the nearest waiting turn, a turn the nearest waiting line,
    (gap, arrival) breaking ties; a line naming a session only pairs with that session's turns).
    `tests/test_index.py` checks it against real cold drains at several chunk sizes.
    """
    drain = DrainOrder(layout, chunk)  # when a cold drain delivers each line (a cold drain reads every byte)

    def arrival(where: Where) -> tuple[int, int, int] | None:
        return drain.arrival(where.path, where.offset, where.length)

    events: list[tuple[tuple[int, int, int], int, Any]] = []
    rows = state.log.continuity
    for i in _pairable_rows(state):
        at = arrival(rows.where(i))
        if at is not None:
            events.append((at, 0, i))
    for key, session in state.sessions.items():
        for turn in session.turns:
            at = arrival(turn.where)
            if at is not None and turn.logged is not None:
                events.append((at, 1, (key, turn.index)))
    events.sort(key=lambda e: e[0])
    seq = itertools.count()
    waiting_lines: dict[tuple[str, str, int | None], list[tuple[int, int, int]]] = {}
    waiting_turns: dict[tuple[str, str, int | None], list[tuple[int, int, tuple[str, int]]]] = {}
    pairs: dict[tuple[str, int], int] = {}
    for _, kind, item in events:
        if kind == 0:
            line_ms = rows.ms(item)
            if line_ms is None:
                continue
            key = rows.key(item)
            named = rows.session_id(item)
            turns = waiting_turns.get(key, [])
            best: tuple[int, int, int] | None = None
            for pos_, (ms, s, (skey, _index)) in _near(turns, line_ms):
                if named is not None and named != state.sessions[skey].session_id:
                    continue
                if best is None or (abs(ms - line_ms), s) < best[:2]:
                    best = (abs(ms - line_ms), s, pos_)
            if best is not None:
                skey, index = turns.pop(best[2])[2]
                pairs[(skey, index)] = item
            else:
                bisect.insort(waiting_lines.setdefault(key, []), (line_ms, next(seq), item))
        else:
            skey, index = item
            session = state.sessions[skey]
            turn = session.turns[index]
            assert turn.logged is not None
            key = (turn.logged.kind, turn.logged.reason, turn.logged.count)
            at = turn.logged.ts_ms or turn.ts_ms
            if at is None:
                continue
            waiting = waiting_lines.get(key, [])
            best = None
            for pos_, (ms, s, i) in _near(waiting, at):
                named = rows.session_id(i)
                if named is not None and named != session.session_id:
                    continue
                if best is None or (abs(ms - at), s) < best[:2]:
                    best = (abs(ms - at), s, pos_)
            if best is not None:
                pairs[item] = waiting.pop(best[2])[2]
            else:
                bisect.insort(waiting_turns.setdefault(key, []), (at, next(seq), item))
    return pairs


def _pairable_rows(state: State) -> list[int]:
    """The continuity rows whose (kind, reason, count) some call logged: no other row can pair with a call, nor
    change which rows and calls pair (it waits in a list of its own key, which no call reads). Found on the code
    columns in C passes, then checked row by row (the 1.1M-line log beside a few calls: ~0.15 s, where placing
    every row in the cold drain's order took ~13 s)."""
    rows = state.log.continuity
    wanted = {
        (turn.logged.kind, turn.logged.reason, turn.logged.count)
        for session in state.sessions.values()
        for turn in session.turns
        if turn.logged is not None
    }
    kinds = {name: code for code, name in enumerate(rows.kinds.values)}
    reasons = {name: code for code, name in enumerate(rows.reasons.values)}
    codes = {(kinds[kind], reasons[reason]) for kind, reason, _ in wanted if kind in kinds and reason in reasons}
    if not codes:
        return []
    near = itertools.compress(range(len(rows)), map(codes.__contains__, zip(rows.kind, rows.reason, strict=True)))
    return [row for row in near if rows.key(row) in wanted]


def _near(items: list[_K], ms: int) -> list[tuple[int, _K]]:
    """(position, item) of the items (time-first tuples, sorted) within the attribution window of `ms`."""
    lo = bisect.bisect_left(items, (ms - ATTRIBUTION_WINDOW_MS,))
    out = []
    for pos in range(lo, len(items)):
        if items[pos][0] > ms + ATTRIBUTION_WINDOW_MS:
            break
        out.append((pos, items[pos]))
    return out
