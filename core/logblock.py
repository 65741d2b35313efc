"""Log records in block form: what a format adapter hands the state for a block of complete log lines.

One `LogBlock` carries the continuity and close lines of up to ~1 MiB of a log (the tailer's read size) as
arrays and runs, the other events as counts and the bad lines as problems: the columnar store
(`core.kernel.logcols`) appends it a column at a time and the aggregates (`core.kernel.stats`) take it a run at
a time. The sentinels below are the store's too (its byte layout is documented there).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from itertools import repeat

from core.model import CloseLine, ContinuityLine, LogEvent, Problem, Record, Where
from core.timeutil import iso_ms

NO_TIME = -(2**63)
NO_COUNT = -(2**63)
BIG_COUNT = -(2**63) + 1
NO_SESSION = -1
COUNT_MIN = -(2**63) + 2
COUNT_MAX = 2**63 - 1


@dataclass(slots=True)
class LogBlock:
    """The continuity and close lines of one block of a log, as a format adapter hands them to the state.

    Rows are in line order. Continuity rows come as runs of equal (kind, reason) (`runs`): the aggregates are
    made per run. Each row's (kind, reason) is a small code into `pairs` (`codes`: one byte a row while the
    table has at most 256 pairs), which the columns translate to their own codes in one C pass. Per-row values
    are arrays (times, counts, line numbers, offsets, lengths) or, for session ids, a list (None when no row
    names one). Other events are counted by name; bad lines are problems. `texts` and `big_counts` are sparse,
    by row of the block."""

    path: str
    runs: list[tuple[str, str, int]] = field(default_factory=list)
    #: each continuity row's code in `pairs` (bytes-like while the table fits a byte, else an array of 'H')
    codes: bytearray | bytes | array[int] = field(default_factory=bytearray)
    #: code -> (kind, reason)
    pairs: list[tuple[str, str]] = field(default_factory=list)
    _pair_codes: dict[tuple[str, str], int] = field(default_factory=dict, repr=False, compare=False)
    ts: array[int] = field(default_factory=lambda: array("q"))
    count: array[int] = field(default_factory=lambda: array("q"))
    sessions: list[str | None] | None = None
    line: array[int] = field(default_factory=lambda: array("I"))  # the columns' types (`core.kernel.logcols`)
    offset: array[int] = field(default_factory=lambda: array("Q"))
    length: array[int] = field(default_factory=lambda: array("I"))
    texts: dict[int, str] = field(default_factory=dict)
    big_counts: dict[int, int] = field(default_factory=dict)
    # closes
    close_ts: array[int] = field(default_factory=lambda: array("q"))
    close_reasons: list[str] = field(default_factory=list)
    close_sessions: list[str | None] | None = None
    close_line: array[int] = field(default_factory=lambda: array("I"))
    close_offset: array[int] = field(default_factory=lambda: array("Q"))
    close_length: array[int] = field(default_factory=lambda: array("I"))
    close_texts: dict[int, str] = field(default_factory=dict)
    #: other events: event name -> lines
    other: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    #: records of any other type, in order (a log adapter makes none; kept so nothing is ever dropped)
    records: list[Record] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return len(self.ts)

    # ------------------------------------------------------------------ building (the adapters' exact path)
    def add_continuity(self, line: ContinuityLine) -> None:
        """One continuity line, as the per-line parser made it (the exact path)."""
        row = len(self.ts)
        runs = self.runs
        if runs and runs[-1][0] == line.kind and runs[-1][1] == line.reason:
            runs[-1] = (line.kind, line.reason, runs[-1][2] + 1)
        else:
            runs.append((line.kind, line.reason, 1))
        self._append_code(self.pair_code(line.kind, line.reason))
        self.ts.append(NO_TIME if line.ts_ms is None else line.ts_ms)
        self.count.append(count_cell(line.count, row, self.big_counts))
        if line.session_id is not None and self.sessions is None:
            self.sessions = [None] * row
        if self.sessions is not None:
            self.sessions.append(line.session_id)
        where = line.where
        self.line = _put(self.line, where.line)
        self.offset = _put(self.offset, where.offset)
        self.length = _put(self.length, where.length)
        if not canonical(line.ts, line.ts_ms):
            self.texts[row] = line.ts

    def pair_code(self, kind: str, reason: str) -> int:
        """The code of (kind, reason) in this block's `pairs` (added when new)."""
        pair = (kind, reason)
        index = self._pair_codes
        if len(index) != len(self.pairs):
            index.clear()
            index.update((p, code) for code, p in enumerate(self.pairs))
        code = index.get(pair)
        if code is None:
            code = index[pair] = len(self.pairs)
            self.pairs.append(pair)
        return code

    def _append_code(self, code: int) -> None:
        codes = self.codes
        if code > 255 and not isinstance(codes, array):
            codes = self.codes = array("H", iter(codes))  # iter: array("H", bytes) would reread the raw bytes
        if isinstance(codes, bytes):
            codes = self.codes = bytearray(codes)
        codes.append(code)

    def kind_reason(self, row: int) -> tuple[str, str]:
        return self.pairs[self.codes[row]]

    def add_close(self, line: CloseLine) -> None:
        row = len(self.close_ts)
        self.close_ts.append(NO_TIME if line.ts_ms is None else line.ts_ms)
        self.close_reasons.append(line.reason)
        if line.session_id is not None and self.close_sessions is None:
            self.close_sessions = [None] * row
        if self.close_sessions is not None:
            self.close_sessions.append(line.session_id)
        where = line.where
        self.close_line = _put(self.close_line, where.line)
        self.close_offset = _put(self.close_offset, where.offset)
        self.close_length = _put(self.close_length, where.length)
        if not canonical(line.ts, line.ts_ms):
            self.close_texts[row] = line.ts

    def add_other(self, event: str, n: int = 1) -> None:
        self.other[event] = self.other.get(event, 0) + n

    def add(self, record: Record) -> None:
        """One record of a log line, whatever its type (the exact path)."""
        if isinstance(record, ContinuityLine):
            self.add_continuity(record)
        elif isinstance(record, CloseLine):
            self.add_close(record)
        elif isinstance(record, LogEvent):
            self.add_other(record.event)
        elif isinstance(record, Problem):
            self.problems.append(record)
        else:
            self.records.append(record)

    def _extend_codes(self, codes: bytearray | bytes | array[int]) -> None:
        mine = self.codes
        if isinstance(mine, array) or isinstance(codes, array):
            if not isinstance(mine, array):
                mine = self.codes = array("H", iter(mine))
            mine.extend(codes)
        else:
            if isinstance(mine, bytes):
                mine = self.codes = bytearray(mine)
            mine.extend(codes)

    def as_records(self, path: str | None = None) -> list[Record]:
        """The block's lines back as records, in line order (other events as `LogEvent`s without their data,
        at the end): what `parse` gave line by line, for tests and tools that compare the two paths."""
        path = self.path if path is None else path
        located: list[tuple[int, Record]] = []
        for row in range(len(self.ts)):
            kind, reason = self.kind_reason(row)
            ms = None if self.ts[row] == NO_TIME else self.ts[row]
            count: int | None = self.count[row]
            if count == NO_COUNT:
                count = None
            elif count == BIG_COUNT:
                count = self.big_counts[row]
            text = self.texts.get(row) or iso_ms(ms) or ""
            where = Where(path, self.line[row], self.offset[row], self.length[row])
            session = self.sessions[row] if self.sessions is not None else None
            located.append((where.line, ContinuityLine(where, text, ms, kind, reason, count, session)))
        for row in range(len(self.close_ts)):
            ms = None if self.close_ts[row] == NO_TIME else self.close_ts[row]
            text = self.close_texts.get(row) or iso_ms(ms) or ""
            where = Where(path, self.close_line[row], self.close_offset[row], self.close_length[row])
            session = self.close_sessions[row] if self.close_sessions is not None else None
            located.append((where.line, CloseLine(where, text, ms, self.close_reasons[row], session)))
        for problem in self.problems:
            located.append((problem.line or 0, problem))
        located.sort(key=lambda item: item[0])
        out = [record for _, record in located]
        for event, n in self.other.items():
            out.extend(LogEvent(Where(path, 0, 0), "", "", None, "", event, {}) for _ in range(n))
        return out

    def extend(self, other: LogBlock) -> None:
        """Append `other` (the next lines of the same file) to this block; runs join at the seam."""
        base, cbase = len(self.ts), len(self.close_ts)
        if other.runs:
            if self.runs and self.runs[-1][:2] == other.runs[0][:2]:
                kind, reason, n = self.runs[-1]
                self.runs[-1] = (kind, reason, n + other.runs[0][2])
                self.runs.extend(other.runs[1:])
            else:
                self.runs.extend(other.runs)
        if other.pairs == self.pairs:
            self._extend_codes(other.codes)
        else:
            remap = [self.pair_code(kind, reason) for kind, reason in other.pairs]
            self._extend_codes(bytes(map(remap.__getitem__, other.codes)) if max(remap, default=0) < 256
                               else array("H", map(remap.__getitem__, other.codes)))  # fmt: skip
        self.ts.extend(other.ts)
        self.count.extend(other.count)
        self.sessions = _join_ids(self.sessions, base, other.sessions, len(other.ts))
        self.line = _join(self.line, other.line)
        self.offset = _join(self.offset, other.offset)
        self.length = _join(self.length, other.length)
        self.texts.update({base + k: v for k, v in other.texts.items()})
        self.big_counts.update({base + k: v for k, v in other.big_counts.items()})
        self.close_ts.extend(other.close_ts)
        self.close_reasons.extend(other.close_reasons)
        self.close_sessions = _join_ids(self.close_sessions, cbase, other.close_sessions, len(other.close_ts))
        self.close_line = _join(self.close_line, other.close_line)
        self.close_offset = _join(self.close_offset, other.close_offset)
        self.close_length = _join(self.close_length, other.close_length)
        self.close_texts.update({cbase + k: v for k, v in other.close_texts.items()})
        for event, n in other.other.items():
            self.add_other(event, n)
        self.problems.extend(other.problems)


def _put(column: array[int], value: int) -> array[int]:
    """Append, to a wider copy when the value does not fit (a line number past 2**32, say)."""
    try:
        column.append(value)
    except OverflowError:
        column = array("q", column)
        column.append(value)
    return column


def _join(column: array[int], more: array[int]) -> array[int]:
    if column.typecode != more.typecode:
        column = array("q", column)
        more = array("q", more)
    column.extend(more)
    return column


def _join_ids(
    mine: list[str | None] | None, n_mine: int, theirs: list[str | None] | None, n_theirs: int
) -> list[str | None] | None:
    if mine is None and theirs is None:
        return None
    out = mine if mine is not None else [None] * n_mine
    out.extend(theirs if theirs is not None else repeat(None, n_theirs))
    return out


def count_cell(value: int | None, row: int, big: dict[int, int]) -> int:
    if value is None:
        return NO_COUNT
    if COUNT_MIN <= value <= COUNT_MAX:
        return value
    big[row] = value
    return BIG_COUNT


def canonical(text: str, ms: int | None) -> bool:
    """Whether `text` is exactly what the columns give back for it (`iso_ms` of its time): then it is not kept."""
    return ms is not None and iso_ms(ms) == text
