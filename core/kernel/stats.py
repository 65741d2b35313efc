"""Aggregates over the continuity and close lines of the logs: counts, reasons, streaks, peak, rates.

Everything here is O(1) per *run* of equal lines: a block of a log arrives as runs of equal (kind, reason)
(`core.kernel.logcols.LogBlock`), and counts, streaks and the peak are updated once per run (a 1.1M-line log
has ~200,000 runs), the per-line values read from the block's arrays in C. One line at a time
(`add_continuity`) gives the same aggregates: it is a run of one. Rates read the newest rows of the columns.
"""

from __future__ import annotations

import operator
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import groupby, islice
from typing import overload

from msgspec import Struct, field

from core.kernel.logcols import ContinuityRows, LogColumns
from core.logblock import BIG_COUNT, COUNT_MAX, COUNT_MIN, NO_COUNT, NO_TIME, LogBlock, canonical
from core.model import KINDS, RESEND_KINDS, CloseLine, ContinuityLine
from core.timeutil import iso_ms

RATE_WINDOW_MS = 10 * 60_000
PEAK_KINDS = frozenset({"flatten", "fork", "bootstrap"})
RECENT_ROWS = 100_000
"""Rates look at most this many of the newest dated lines (a bound on the work of one repaint)."""


class Streak(Struct):
    """A maximal run of consecutive continuity lines with one (kind, reason).

    For the log's streaks `start`/`end` hold the first and last line's `ts` only when it is not the canonical
    form of `start_ms`/`end_ms` (an odd or unusable time), else "": a block's runs are made without formatting a
    time (176,000 runs on the 1.1M-line log); `start_text` gives the text either way."""

    kind: str
    reason: str
    length: int
    start_ms: int | None
    end_ms: int | None
    start: str
    end: str
    count_first: int | None
    count_last: int | None

    def start_text(self) -> str:
        return self.start or iso_ms(self.start_ms) or ""


class Peak(Struct):
    value: int
    at: str
    at_ms: int | None
    kind: str


class Streaks:
    """The finished streaks, as columns: a log keeps one for every few dozen lines (56,000 on the 1.1M-line
    log), and as `Streak` objects with their ints they were ~200 B each, long-lived small objects among a live
    read's short-lived ones, where a column is 48 B a streak (appending 100,000 lines to a read log in 400
    polls: RSS +29 -> +14 to 23 B a line, engine alone). They pickle as arrays (a worker's part, the index).
    Indexing or iterating makes `Streak`s; `append` takes one."""

    __slots__ = ("_big", "_codes", "_names", "_texts", "count_first", "count_last", "end_ms", "kind", "length",
                 "reason", "start_ms")  # fmt: skip

    def __init__(self) -> None:
        self._names: list[str] = []
        self._codes: dict[str, int] = {}
        self.kind, self.reason = array("I"), array("I")
        self.length, self.start_ms, self.end_ms = array("q"), array("q"), array("q")
        self.count_first, self.count_last = array("q"), array("q")
        self._texts: dict[int, tuple[str, str]] = {}  # odd start/end texts by index
        self._big: dict[int, tuple[int | None, int | None]] = {}  # counts outside the column, by index

    def _code(self, name: str) -> int:
        code = self._codes.get(name)
        if code is None:
            code = self._codes[name] = len(self._names)
            self._names.append(name)
        return code

    def __len__(self) -> int:
        return len(self.length)

    def append(self, streak: Streak) -> None:
        i = len(self.length)
        self.kind.append(self._code(streak.kind))
        self.reason.append(self._code(streak.reason))
        self.length.append(streak.length)
        self.start_ms.append(NO_TIME if streak.start_ms is None else streak.start_ms)
        self.end_ms.append(NO_TIME if streak.end_ms is None else streak.end_ms)
        first, last = streak.count_first, streak.count_last
        if (first is not None and not COUNT_MIN <= first <= COUNT_MAX) or (
            last is not None and not COUNT_MIN <= last <= COUNT_MAX
        ):
            self._big[i] = (first, last)
            first = last = None
        self.count_first.append(NO_COUNT if first is None else first)
        self.count_last.append(NO_COUNT if last is None else last)
        if streak.start or streak.end:
            self._texts[i] = (streak.start, streak.end)

    def extend(self, streaks: Iterable[Streak]) -> None:
        for streak in streaks:
            self.append(streak)

    @classmethod
    def of(cls, streaks: Iterable[Streak]) -> Streaks:
        out = cls()
        out.extend(streaks)
        return out

    def extend_from(self, other: Streaks, start: int = 0) -> None:
        """Append `other`'s streaks from index `start` on, column by column (a part read apart has ~28,000 of
        the big log's streaks: made into `Streak`s and appended one by one they cost the merge ~0.15 s)."""
        base = len(self.length) - start
        table = [self._code(name) for name in other._names]
        self.kind.extend(array("I", map(table.__getitem__, other.kind[start:])))
        self.reason.extend(array("I", map(table.__getitem__, other.reason[start:])))
        for name in ("length", "start_ms", "end_ms", "count_first", "count_last"):
            getattr(self, name).extend(getattr(other, name)[start:])
        self._texts.update({base + i: texts for i, texts in other._texts.items() if i >= start})
        self._big.update({base + i: counts for i, counts in other._big.items() if i >= start})

    @overload
    def __getitem__(self, i: int) -> Streak: ...

    @overload
    def __getitem__(self, i: slice) -> list[Streak]: ...

    def __getitem__(self, i: int | slice) -> Streak | list[Streak]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self.length)))]
        if i < 0:
            i += len(self.length)
        if not 0 <= i < len(self.length):
            raise IndexError(i)
        names = self._names
        start, end = self._texts.get(i, ("", ""))
        big = self._big.get(i)
        first, last = big if big is not None else (_opt_count(self.count_first[i]), _opt_count(self.count_last[i]))
        return Streak(names[self.kind[i]], names[self.reason[i]], self.length[i], _ms(self.start_ms[i]),
                      _ms(self.end_ms[i]), start, end, first, last)  # fmt: skip

    def __iter__(self) -> Iterator[Streak]:
        return (self[i] for i in range(len(self.length)))

    def table(self, run: Streak | None = None) -> list[StreakRow]:
        """These streaks plus `run` when it qualifies, as `longest_first` orders them, each as a `StreakRow`
        made from the columns in C passes (no `Streak` per streak). The 1.1M-line log's 56,000 streaks: made,
        sorted and read as objects they took ~0.26 s of a report's serial tail, as columns ~0.05 s.

        The order is `longest_first`'s: one int key per streak, ``start - length * 2**65`` (a start, NO_TIME
        taken as 0, spans less than 2**64, so the key orders by length descending, then start), a stable sort,
        then ties of equal key ordered by their start text."""
        cols = self
        if run is not None and _qualifies(run):
            cols = Streaks()
            cols.extend_from(self)
            cols.append(run)
        n = len(cols.length)
        if not n:
            return []
        starts = array("q", map(_NO_TIME_ZERO.get, cols.start_ms, cols.start_ms))
        keys = list(map(operator.sub, starts, map(_LENGTH_SHIFT.__mul__, cols.length)))
        order = sorted(range(n), key=keys.__getitem__)
        names = cols._names
        start_ms = list(map(_NO_TIME_NONE.get, cols.start_ms, cols.start_ms))
        end_ms = list(map(_NO_TIME_NONE.get, cols.end_ms, cols.end_ms))
        first = list(map(_NO_COUNT_NONE.get, cols.count_first, cols.count_first))
        last = list(map(_NO_COUNT_NONE.get, cols.count_last, cols.count_last))
        start_text, end_text = [""] * n, [""] * n
        for i, (a, b) in cols._texts.items():
            start_text[i], end_text[i] = a, b
        for i, (a, b) in cols._big.items():
            first[i], last[i] = a, b
        sorted_keys = list(map(keys.__getitem__, order))
        if any(map(operator.eq, sorted_keys, islice(sorted_keys, 1, None))):
            order = _text_ties(order, sorted_keys, start_text, start_ms)
        return list(
            zip(
                map(names.__getitem__, map(cols.kind.__getitem__, order)),
                map(names.__getitem__, map(cols.reason.__getitem__, order)),
                map(cols.length.__getitem__, order),
                map(start_ms.__getitem__, order),
                map(end_ms.__getitem__, order),
                map(start_text.__getitem__, order),
                map(end_text.__getitem__, order),
                map(first.__getitem__, order),
                map(last.__getitem__, order),
                strict=True,
            )
        )


StreakRow = tuple[str, str, int, int | None, int | None, str, str, int | None, int | None]
"""(kind, reason, length, start_ms, end_ms, start, end, count_first, count_last): a `Streak`'s fields in order."""
_LENGTH_SHIFT = 1 << 65
_NO_TIME_ZERO = {NO_TIME: 0}
_NO_TIME_NONE: dict[int, int | None] = {NO_TIME: None}
_NO_COUNT_NONE: dict[int, int | None] = {NO_COUNT: None}


def _text_ties(order: list[int], keys: list[int], start_text: list[str], start_ms: list[int | None]) -> list[int]:
    """`order` with each group of equal keys sorted by start text (`Streak.start_text`), stably."""
    out: list[int] = []
    for _, group in groupby(zip(keys, order, strict=True), key=operator.itemgetter(0)):
        tied = [i for _, i in group]
        if len(tied) > 1:
            tied.sort(key=lambda i: start_text[i] or iso_ms(start_ms[i]) or "")
        out.extend(tied)
    return out


class LogStats(Struct, dict=True):
    """The log aggregates. `rows` are the continuity lines they were made from (rates read them); a LogStats
    made without rows keeps its own, fed by `add_continuity`."""

    events: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)
    by_reason: dict[str, Counter[str]] = field(default_factory=dict)
    closes: Counter[str] = field(default_factory=Counter)
    streaks: Streaks = field(default_factory=Streaks)  # finished runs that qualify
    run: Streak | None = None  # the current run (any kind), for "current streak"
    peak: Peak | None = None
    last_ms: int | None = None
    rows: ContinuityRows | None = None
    #: the first run these aggregates ever started (in `streaks`, or `run`, or neither when it was no streak):
    #: what joins the previous part's open run when parts are merged (`merge`)
    first: Streak | None = None
    _owns_rows: bool = False

    def __post_init__(self) -> None:
        if self.rows is None:
            self.rows = LogColumns().continuity
            self._owns_rows = True

    # ------------------------------------------------------------------ one line
    def add_continuity(self, line: ContinuityLine) -> None:
        if self._owns_rows:
            assert self.rows is not None
            self.rows.append_line(line)
        self._count(line.kind, line.reason, 1)
        if line.ts_ms is not None:
            self.last_ms = line.ts_ms if self.last_ms is None else max(self.last_ms, line.ts_ms)
        if line.count is not None and line.kind in PEAK_KINDS and (self.peak is None or line.count > self.peak.value):
            self.peak = Peak(line.count, line.ts, line.ts_ms, line.kind)
        text = "" if canonical(line.ts, line.ts_ms) else line.ts
        run = self.run
        if run is not None and run.kind == line.kind and run.reason == line.reason:
            run.length += 1
            run.end, run.end_ms, run.count_last = text, line.ts_ms, line.count
            return
        self._close_run()
        self.run = Streak(line.kind, line.reason, 1, line.ts_ms, line.ts_ms, text, text, line.count, line.count)
        if self.first is None:
            self.first = self.run

    # ------------------------------------------------------------------ a block, run by run
    def add_block(self, block: LogBlock) -> None:
        """A block's continuity rows (in order, after the ones already counted): the same aggregates as
        `add_continuity` on each of its lines, with Python work per run, not per line (a Streak is made only
        for a run that can be one: not delta, two lines or more; and for the block's last, open run)."""
        runs = block.runs
        if not runs:
            return
        ts, counts, texts, big = block.ts, block.count, block.texts, block.big_counts
        newest = max(ts)
        if newest != NO_TIME:
            self.last_ms = newest if self.last_ms is None else max(self.last_ms, newest)
        totals: dict[tuple[str, str], int] = {}
        streaks = self.streaks
        run = self.run
        peak = self.peak
        last_run = len(runs) - 1
        a = 0
        for i, (kind, reason, n) in enumerate(runs):
            b = a + n
            key = (kind, reason)
            totals[key] = totals.get(key, 0) + n
            if kind in PEAK_KINDS:
                if big and any(a <= row < b for row in big):
                    top_row, value = _biggest(counts, big, a, b)
                else:
                    value = max(counts[a:b]) if n > 1 else counts[a]
                    top_row = -1 if value == NO_COUNT else counts.index(value, a, b)
                if top_row >= 0 and (peak is None or value > peak.value):
                    peak = Peak(value, texts.get(top_row) or iso_ms(ts[top_row]) or "", _ms(ts[top_row]), kind)
            last = b - 1
            if i == 0 and run is not None and run.kind == kind and run.reason == reason:
                run.length += n  # the open run goes on across the seam
                run.end, run.end_ms = texts.get(last, ""), _ms(ts[last])
                run.count_last = _count(counts, big, last)
            elif i < last_run and (n < 2 or kind == "delta") and self.first is not None:
                if run is not None and run.length >= 2 and run.kind != "delta":
                    streaks.append(run)
                run = None  # a run that is no streak and not the last: nothing to keep
            else:
                if run is not None and run.length >= 2 and run.kind != "delta":
                    streaks.append(run)
                run = Streak(kind, reason, n, _ms(ts[a]), _ms(ts[last]), texts.get(a, ""), texts.get(last, ""),
                             _count(counts, big, a), _count(counts, big, last))  # fmt: skip
                if self.first is None:
                    self.first = run
            a = b
        self.run, self.peak = run, peak
        for (kind, reason), n in totals.items():
            self._count(kind, reason, n)

    def _count(self, kind: str, reason: str, n: int) -> None:
        self.events += n
        self.by_kind[kind] += n
        reasons = self.by_reason.get(reason)
        if reasons is None:  # not setdefault: that builds a Counter per call
            reasons = self.by_reason[reason] = Counter()
        reasons[kind] += n

    # ------------------------------------------------------------------ parts read apart (`core.pool`)
    def merge(self, other: LogStats) -> None:
        """Add the aggregates of the lines that come right after these (read apart, from a fresh LogStats):
        counts add, the peak stays the first largest, and this part's open run joins the other's first run
        when they are the same decision (a streak split by the seam is one streak)."""
        self.events += other.events
        self.by_kind.update(other.by_kind)
        for reason, kinds in other.by_reason.items():
            mine = self.by_reason.get(reason)
            if mine is None:
                self.by_reason[reason] = Counter(kinds)
            else:
                mine.update(kinds)
        self.closes.update(other.closes)
        if other.last_ms is not None:
            self.last_ms = other.last_ms if self.last_ms is None else max(self.last_ms, other.last_ms)
        if other.peak is not None and (self.peak is None or other.peak.value > self.peak.value):
            self.peak = other.peak
        first = other.first
        if first is None:
            return  # no decision line in the other part
        if self.first is None:
            self.first = first
        skip = 0
        run = self.run
        if run is not None and run.kind == first.kind and run.reason == first.reason:
            run.length += first.length
            run.end, run.end_ms, run.count_last = first.end, first.end_ms, first.count_last
            if other.run is first:
                return  # the joined run is still open
            if _qualifies(first):
                skip = 1  # the other part's first run closed there as a streak of its own: it is part of this one
            if _qualifies(run):
                self.streaks.append(run)
        elif run is not None and _qualifies(run):
            self.streaks.append(run)
        self.streaks.extend_from(other.streaks, skip)
        self.run = other.run

    # ------------------------------------------------------------------ closes
    def add_close(self, line: CloseLine) -> None:
        self.closes[line.reason] += 1

    def add_closes(self, reasons: Iterable[str]) -> None:
        self.closes.update(reasons)

    # ------------------------------------------------------------------ reading
    def _close_run(self) -> None:
        if self.run is not None and _qualifies(self.run):
            self.streaks.append(self.run)

    def all_streaks(self) -> list[Streak]:
        """Finished runs plus the open one, longest first, then earliest."""
        return longest_first(self.streaks, self.run)

    def streak_table(self) -> list[StreakRow]:
        """`all_streaks` as tuples read straight from the columns, in the same order (`Streaks.table`)."""
        return self.streaks.table(self.run)

    def kinds(self) -> dict[str, int]:
        """All five kinds always, then any other kind seen."""
        out = {kind: self.by_kind.get(kind, 0) for kind in KINDS}
        for kind, n in self.by_kind.items():
            out.setdefault(kind, n)
        return out

    def resend_share(self, digits: int | None = 4) -> float | None:
        """(fork + flatten) / log lines, to `digits` decimals (the report's 4), exact with None (a screen's)."""
        if not self.events:
            return None
        share = sum(self.by_kind[k] for k in RESEND_KINDS) / self.events
        return share if digits is None else round(share, digits)

    def rates_per_minute(self, now_ms: int) -> dict[str, float]:
        """Per-minute rate of each kind over the 10 minutes ending at `now_ms` (the newest `RECENT_ROWS` dated
        lines, walked from the newest back to the first one older than the window)."""
        start = now_ms - RATE_WINDOW_MS
        counts: Counter[int] = Counter()
        rows = self.rows
        assert rows is not None
        ts, kind = rows.ts, rows.kind
        seen = 0
        for row in range(len(ts) - 1, -1, -1):
            ms = ts[row]
            if ms == NO_TIME:
                continue
            seen += 1
            if ms < start or seen > RECENT_ROWS:
                break
            if ms <= now_ms:
                counts[kind[row]] += 1
        minutes = RATE_WINDOW_MS / 60_000
        named = Counter({rows.kinds.values[code]: n for code, n in counts.items()})
        return {k: round(named.get(k, 0) / minutes, 2) for k in self.kinds()}

    def window_end(self, wall_ms: int) -> int:
        """Rates end at wall-clock now while data is live, else at the newest line (historical logs)."""
        if self.last_ms is None or wall_ms - self.last_ms <= RATE_WINDOW_MS:
            return wall_ms
        return self.last_ms


def _ties_by_text(runs: list[Streak]) -> list[Streak]:
    """Streaks of equal length and start time, ordered by their start text (the order has always been
    (-length, start time, start text)); the text is formatted only for such ties."""
    out: list[Streak] = []
    for _, group in groupby(runs, key=lambda s: (s.length, s.start_ms if s.start_ms is not None else 0)):
        tied = list(group)
        if len(tied) > 1:
            tied.sort(key=Streak.start_text)
        out.extend(tied)
    return out


def _opt_count(value: int) -> int | None:
    return None if value == NO_COUNT else value


def _qualifies(run: Streak) -> bool:
    return run.kind != "delta" and run.length >= 2


def _ms(value: int) -> int | None:
    return None if value == NO_TIME else value


def _count(counts: object, big: dict[int, int], row: int) -> int | None:
    value = counts[row]  # type: ignore[index]
    if value == NO_COUNT:
        return None
    if value == BIG_COUNT:
        return big[row]
    return value  # type: ignore[no-any-return]


def _biggest(counts: object, big: dict[int, int], a: int, b: int) -> tuple[int, int]:
    """(row, value) of the first largest count in rows [a, b) when some do not fit the column (rare)."""
    best_row, best = -1, 0
    for row in range(a, b):
        value = _count(counts, big, row)
        if value is not None and (best_row < 0 or value > best):
            best_row, best = row, value
    return best_row, best


def longest_first(finished: Iterable[Streak], run: Streak | None) -> list[Streak]:
    """The finished runs plus the open one if it qualifies, longest first, then earliest, ties by their start text
    (the contract's order for `continuity.streaks` and `calls.streaks`)."""
    runs = list(finished)
    if run is not None and _qualifies(run):
        runs.append(run)
    runs.sort(key=lambda s: (-s.length, s.start_ms if s.start_ms is not None else 0))
    return _ties_by_text(runs)


qualifies = _qualifies
