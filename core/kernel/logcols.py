"""Log lines as columns: the continuity and close lines of every log read, in reading order, as arrays.

A months-long ``session.log`` has millions of decision lines. As objects (a record, its `Where`, its time
string, its ints, an attribution entry) they cost ~545 B each (1.1M lines: 631 MB peak, review §1); as columns
they cost 24 B (continuity) and 21 B (close) a line at their starting widths, are appended a block at a time
(one ``extend`` per column per ~1 MiB of log), are aggregated per run of equal lines (`core.kernel.stats`), and
are stored and loaded as plain bytes by the persistent index. A line is made into an object only when something shows it
(`ContinuityRows.__getitem__`: the dashboard's visible rows, a report turn's matched line).

Byte layout (version `LAYOUT_VERSION`)
======================================

A store has two tables, **continuity** (one row per ``claude_sdk_oauth_session_continuity`` line) and **closes**
(one row per ``claude_sdk_oauth_session_close`` line), each in reading order (the order a cold read delivers
lines: `core.engine`), and four vocabularies. A row's index in its table never changes while the store lives;
``Turn.log_line`` is a continuity row index.

Every column is an `array.array` of fixed-width integers. The BLOB of column ``c`` for rows ``[a, b)`` is
``c[a:b].tobytes()`` in **little-endian** byte order (`chunk_blobs`; a big-endian host swaps on the way in and
out), so a chunk is ``b - a`` times the column's width, and loading it back is one ``frombytes`` per column
(`extend_blobs`), no parsing. Columns start as narrow as what agents write lets them and widen (``B`` -> ``H``
-> ``I`` -> ``Q``, ``b`` -> ``h`` -> ``i`` -> ``q``) the first time a value does not fit; a chunk records the
typecode it was written with (`CHUNK_TYPES` lists the starting ones) and a loader converts or widens as needed.

continuity (24 bytes a row at the starting widths)::

    column   type  bytes  value
    ts       q     8      epoch milliseconds; NO_TIME (-2**63) when the line's ``ts`` is not a usable time
    kind     B     1      code in ``kinds`` (widens to H, I)
    reason   B     1      code in ``reasons`` (widens to H, I)
    count    h     2      the line's ``count``; NO_COUNT (-2**63) when absent or not an integer, BIG_COUNT
                          (-2**63 + 1) when it does not fit (the value is in ``big_counts``); widens to i, q (a
                          line without a count makes it q at once)
    session  b     1      code in ``sessions`` (the line's ``sessionId``), -1 when it names none (widens to h, i)
    file     B     1      code in ``files``: the path the line was read from (a rotated generation has its own)
    line     I     4      1-based line number in that file generation (widens to Q)
    offset   I     4      byte offset of the line's first byte in that file (widens to Q past 4 GiB)
    length   H     2      the line's length in bytes, without its newline (widens to I, Q)

closes (21 bytes a row): ``ts, reason, session, file, line, offset, length``, as above.

Why narrow: a live dashboard keeps every decision line, and the columns are nearly all it grows by. At the
old fixed widths (42 B a row) a 5,000 lines/s tail grew the engine ~44 B a line against a 50 B target for
the whole dashboard; senpi's lines have small counts, a few hundred sessions at most per log, a handful of
files, lines under 64 KiB and logs under 4 GiB, so the narrow widths hold them and a widening (one copy of
the column, at most three a column) is rare.

Vocabularies are lists of strings; a code is a position and never changes (they only grow). ``kinds`` starts
with senpi's five kinds in display order (`core.model.KINDS`: codes 0-4); ``reasons`` is shared by both tables.
A loader restores the vocabularies before the chunks that use them.

Two sparse side tables keep what a fixed-width column cannot, per table, by row index: ``texts`` (the line's
``ts`` string when it is not the canonical ``YYYY-MM-DDTHH:MM:SS.mmmZ`` form of its time: only an odd or
unusable time; ordering ties between streaks read it) and ``big_counts``. They are empty for what agents write.
Attribution (which call a line was paired with) is kept beside the columns (`matched`), not in them: it is
derived from the calls (`Turn.log_line`) and rebuilt with them.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, Iterable, Iterator
from itertools import compress, repeat

from core.logblock import BIG_COUNT, NO_COUNT, NO_SESSION, NO_TIME, LogBlock, canonical, count_cell
from core.model import KINDS, CloseLine, ContinuityLine, Where
from core.timeutil import iso_ms

LAYOUT_VERSION = 1
_BIG_ENDIAN = sys.byteorder == "big"

#: the typecode each column starts with (code, line and length columns widen; see the module doc)
CHUNK_TYPES: dict[str, dict[str, str]] = {
    "continuity": {"ts": "q", "kind": "B", "reason": "B", "count": "h", "session": "b", "file": "B", "line": "I",
                   "offset": "I", "length": "H"},
    "closes": {"ts": "q", "reason": "B", "session": "b", "file": "B", "line": "I", "offset": "I", "length": "H"},
}  # fmt: skip
_WIDER = {"B": "H", "H": "I", "I": "Q", "b": "h", "h": "i", "i": "q"}


class Vocab:
    """Strings to small stable codes (a code is the string's position; the list only grows)."""

    __slots__ = ("codes", "values")

    def __init__(self, values: Iterable[str] = ()) -> None:
        self.values: list[str] = []
        self.codes: dict[str | None, int] = {}
        for value in values:
            self.code(value)

    def __len__(self) -> int:
        return len(self.values)

    def code(self, value: str) -> int:
        code = self.codes.get(value)
        if code is None:
            code = self.codes[value] = len(self.values)
            self.values.append(sys.intern(value) if len(value) <= 128 else value)
        return code


class SessionVocab(Vocab):
    """Session ids; None (a line that names no session) is code -1."""

    def __init__(self) -> None:
        super().__init__()
        self.codes[None] = NO_SESSION

    def encode(self, ids: list[str | None]) -> array[int]:
        codes = self.codes
        try:
            return array("i", map(codes.__getitem__, ids))
        except KeyError:
            return array("i", [codes[i] if i in codes else self.code(i) for i in ids])  # type: ignore[arg-type]


def _mapped(typecode: str, func: Callable[[int], int], column: array[int]) -> array[int] | list[int]:
    """`func` of each value, made in one C pass into an array of `typecode` (a list when a value does not fit
    it: `_Table._extend` widens). A million-row part's session and line columns took ~0.3 s through a list
    and `array.extend`; straight into an array they take ~0.05 s."""
    try:
        return array(typecode, map(func, column))
    except OverflowError:
        return list(map(func, column))


def _plus(column: array[int], base: int) -> array[int] | list[int]:
    """`base` added to every row (a part's line numbers moved by the lines before it): one addition of big
    integers whose 4-byte lanes are the rows, when every sum provably fits its lane (the top byte of each value
    bounds it: a carry never crosses a lane), else a pass per row. A million-row part: ~25 ms against ~170 ms."""
    n = len(column)
    if column.typecode == "I" and n and not _BIG_ENDIAN:
        raw = column.tobytes()
        if ((max(raw[3::4]) + 1) << 24) + base <= 1 << 32:
            ones = int.from_bytes(b"\1\0\0\0" * n, "little")
            out = array("I")
            out.frombytes((int.from_bytes(raw, "little") + base * ones).to_bytes(4 * n, "little"))
            return out
    return _mapped(column.typecode, base.__add__, column)


_NONE_BYTE = bytes(255 if i == 255 else 0 for i in range(256))  # a code's upper bytes: 255 for -1, else 0


_SIGNED = {"b": 1, "h": 2, "i": 4, "q": 8}
_UNSIGNED = {"B": 1, "H": 2, "I": 4, "Q": 8}
_SIGN_FILL = bytes(255 if i >= 128 else 0 for i in range(256))  # the upper bytes of a value whose top byte is i


def converted(values: array[int], typecode: str) -> array[int] | None:
    """`values` as an array of `typecode` by strided byte copies of their little-endian lanes, or None when a
    value does not fit it. A block's arrays come at their own widths (counts int64, offsets uint64) and the
    columns start narrower: ``array(typecode, values)`` converts through a Python int and an argument parse per
    value (+4 % of a 16 MB report's instructions, callgrind); a copy per byte lane is C passes over the block.
    Only between two signed or two unsigned typecodes of a little-endian host; anything else is the caller's
    (`_Table._extend` converts it value by value)."""
    src = values.typecode
    signed = src in _SIGNED
    widths = _SIGNED if signed else _UNSIGNED
    have, want = widths.get(src), widths.get(typecode)
    if have is None or want is None or _BIG_ENDIAN:
        raise ValueError(f"no lane copy from {src} to {typecode}")
    n = len(values)
    raw = values.tobytes()
    out = bytearray(want * n)
    if want < have:
        fill = raw[want - 1 :: have].translate(_SIGN_FILL) if signed else bytes(n)
        if any(raw[k::have] != fill for k in range(want, have)):
            return None  # a dropped byte holds part of the value
    elif signed:  # a wider signed lane: its upper bytes are the sign's
        fill = raw[have - 1 :: have].translate(_SIGN_FILL)
        for k in range(have, want):
            out[k::want] = fill
    for k in range(min(have, want)):
        out[k::want] = raw[k::have]
    result = array(typecode)
    result.frombytes(out)
    return result


def _lane_copy(src: str, dst: str) -> bool:
    """Whether `converted` takes `src` to `dst`."""
    return not _BIG_ENDIAN and ((src in _SIGNED and dst in _SIGNED) or (src in _UNSIGNED and dst in _UNSIGNED))


def _sessions_through(table: list[int], column: array[int]) -> array[int] | list[int]:
    """Session codes (`NO_SESSION` for none) through `table`, each byte of the result one `bytes.translate` of
    the codes' low byte, when the part names fewer than 255 sessions (a code is then its low byte, 255 is
    NO_SESSION, and every upper byte is 255 for NO_SESSION, else 0); else a pass per row. A million-row part:
    ~10 ms against ~160 ms."""
    n = len(column)
    width = _SIGNED.get(column.typecode)
    if width is not None and n and len(table) < 255 and not _BIG_ENDIAN:
        raw = column.tobytes()
        low = raw[0::width]
        high = low.translate(_NONE_BYTE)
        codes_here = bytes(range(min(len(table), 128 if width == 1 else 255)))  # a 'b' byte past 127 is < 0
        if all(raw[k::width] == high for k in range(1, width)) and not low.translate(None, codes_here + b"\xff"):
            words = array("i", [*table, *[0] * (255 - len(table)), NO_SESSION]).tobytes()
            out = bytearray(4 * n)
            for k in range(4):
                out[k::4] = low.translate(words[k::4])
            codes = array("i")
            codes.frombytes(out)
            return codes
    return _mapped(column.typecode, [*table, NO_SESSION].__getitem__, column)


_TOP_FF = bytes(1 if i == 255 else 0 for i in range(256))
_SIGN = bytes(1 if i >= 128 else 0 for i in range(256))


def named_mask(codes: array[int]) -> bytes | None:
    """One byte a row of a session column, 1 where the row names a session (not `NO_SESSION`), from the codes'
    bytes in C passes (a million rows: ~10 ms, where a pass over the rows' values takes ~60 ms); None when the
    column's bytes cannot say it (not signed little-endian codes, or a negative code other than -1)."""
    width = _SIGNED.get(codes.typecode)
    if width is None or _BIG_ENDIAN:
        return None
    raw = codes.tobytes()
    top = raw[width - 1 :: width]
    negative = top.translate(_TOP_FF)  # -1 is the only negative code a store writes
    if top.translate(_SIGN) != negative:
        return None  # a negative code whose top byte is not 255
    k = negative.count(1)
    if k and any(bytes(compress(raw[i::width], negative)).count(255) != k for i in range(width - 1)):
        return None
    return negative.translate(_FLIP)


_FLIP = bytes((1, 0)) + bytes(254)


# ---------------------------------------------------------------------------------------------- the tables
class _Table:
    """Columns shared by both tables (time, reason, session, where), and their BLOB form."""

    _types: dict[str, str]

    def __init__(self, files: Vocab, reasons: Vocab, sessions: SessionVocab) -> None:
        self.files = files
        self.reasons = reasons
        self.sessions = sessions
        for name, typecode in self._types.items():
            setattr(self, name, array(typecode))
        self.texts: dict[int, str] = {}

    ts: array[int]
    reason: array[int]
    session: array[int]
    file: array[int]
    line: array[int]
    offset: array[int]
    length: array[int]

    def __len__(self) -> int:
        return len(self.ts)

    def _extend(self, name: str, values: Iterable[int] | array[int]) -> None:
        """Append to a column, widening it when a value does not fit its type."""
        column: array[int] = getattr(self, name)
        if isinstance(values, array) and values.typecode != column.typecode:
            if _lane_copy(values.typecode, column.typecode):
                narrow = converted(values, column.typecode)
                values = list(values) if narrow is None else narrow  # a list: the widening below
            else:
                try:
                    values = array(column.typecode, values)
                except OverflowError:
                    values = list(values)
        elif not isinstance(values, array | list | tuple):
            values = list(values)  # an iterator cannot be taken again after an overflow consumed part of it
        size = len(column)
        try:
            column.extend(values)  # type: ignore[arg-type]
        except OverflowError:
            # `array.extend` keeps the values before the one that did not fit: drop them, or the widened column
            # holds them twice (a block whose reason codes cross 255 shifted every later row's reason)
            del column[size:]
            values = list(values)
            while True:
                column = array(_WIDER[column.typecode], column)
                try:
                    column.extend(values)
                    break
                except OverflowError:
                    del column[size:]
            setattr(self, name, column)

    def _codes(self, name: str, vocab: Vocab, values: list[str]) -> None:
        """Append the codes of `values` (one C pass when they are all known and the column is one byte)."""
        column: array[int] = getattr(self, name)
        codes = vocab.codes
        try:
            encoded = list(map(codes.__getitem__, values))
        except KeyError:
            encoded = [vocab.code(value) for value in values]
        if column.typecode == "B":
            try:
                column.frombytes(bytes(encoded))
                return
            except ValueError:  # a code past 255: the column widens
                pass
        self._extend(name, encoded)

    def _translate(self, name: str, table: list[int], codes: bytearray | bytes | array[int]) -> None:
        """Append `table[c]` for each block code `c` (one `bytes.translate` while everything fits a byte)."""
        column: array[int] = getattr(self, name)
        # byte codes index the first 256 entries (a block may know more pairs: 600 reasons, a numbered log)
        if column.typecode == "B" and not isinstance(codes, array) and max(table[:256], default=0) < 256:
            column.frombytes(codes.translate(bytes(table[:256]).ljust(256, b"\0")))
        else:
            self._extend(name, map(table.__getitem__, codes))

    def _fill(self, name: str, code: int, n: int) -> None:
        column: array[int] = getattr(self, name)
        if column.typecode == "B" and code < 256:
            column.frombytes(bytes((code,)) * n)
        else:
            self._extend(name, repeat(code, n))

    def _where(self, path: str, line: array[int], offset: array[int], length: array[int]) -> None:
        self._fill("file", self.files.code(path), len(line))
        self._extend("line", line)
        self._extend("offset", offset)
        self._extend("length", length)

    def _place(self, row: int, session_id: str | None, where: Where, ts: str, ts_ms: int | None) -> None:
        """One line's session, where and time text (kept when not canonical): how each table's `append_line` ends."""
        self._extend("session", (NO_SESSION if session_id is None else self.sessions.code(session_id),))
        self._fill("file", self.files.code(where.path), 1)
        self._extend("line", (where.line,))
        self._extend("offset", (where.offset,))
        self._extend("length", (where.length,))
        if not canonical(ts, ts_ms):
            self.texts[row] = ts

    def where(self, row: int) -> Where:
        return Where(self.files.values[self.file[row]], self.line[row], self.offset[row], self.length[row])

    def ms(self, row: int) -> int | None:
        value = self.ts[row]
        return None if value == NO_TIME else value

    def text(self, row: int) -> str:
        """The line's `ts` as written (the canonical form of its time unless kept in `texts`)."""
        kept = self.texts.get(row)
        if kept is not None:
            return kept
        return iso_ms(self.ms(row)) or ""

    def session_id(self, row: int) -> str | None:
        code = self.session[row]
        return None if code == NO_SESSION else self.sessions.values[code]

    # ------------------------------------------------------------------ BLOBs (see the module doc)
    def chunk_blobs(self, start: int, end: int) -> dict[str, tuple[str, bytes]]:
        """Rows [start, end) as {column: (typecode, little-endian bytes)}."""
        out = {}
        for name in self._types:
            column: array[int] = getattr(self, name)[start:end]
            if _BIG_ENDIAN:
                column.byteswap()
            out[name] = (column.typecode, column.tobytes())
        return out

    def extend_blobs(self, blobs: dict[str, tuple[str, bytes]]) -> tuple[int, int]:
        """Append rows stored by `chunk_blobs` (vocabularies restored first); returns their row range."""
        start = len(self)
        for name in self._types:
            typecode, data = blobs[name]
            own: array[int] = getattr(self, name)
            if own.typecode == typecode and not _BIG_ENDIAN:
                own.frombytes(data)  # appended in place: one copy (a chunk array and an extend were two, ~25 ms
                continue  # of loading the 1.1M-line log's 27 MB of columns)
            column = array(typecode)
            column.frombytes(data)
            if _BIG_ENDIAN:
                column.byteswap()
            self._extend(name, column)
        return start, len(self)

    def extend_translated(
        self,
        blobs: dict[str, tuple[str, bytes]],
        extras: dict[str, dict[int, object]],
        vocabularies: dict[str, list[str]],
        line_base: int,
    ) -> tuple[int, int]:
        """Append rows another store wrote (`chunk_blobs`, with its `vocabularies`): each code column through a
        table from that store's codes to this one's (one `bytes.translate` for one-byte columns), line numbers
        moved by `line_base` (the lines before the part). Returns the rows' range here."""
        start = len(self)
        own = {"kind": getattr(self, "kinds", None), "reason": self.reasons, "session": self.sessions,
               "file": self.files}  # fmt: skip
        for name in self._types:
            typecode, data = blobs[name]
            column = array(typecode)
            column.frombytes(data)
            if _BIG_ENDIAN:
                column.byteswap()
            vocab = own.get(name)
            if vocab is not None:
                table = [vocab.code(value) for value in vocabularies[name + "s"]]
                if not table or table == list(range(len(table))):
                    self._extend(name, column)  # no row names one, or the codes are this store's already
                elif name == "session":
                    self._extend(name, _sessions_through(table, column))
                elif typecode == "B" and getattr(self, name).typecode == "B" and max(table[:256], default=0) < 256:
                    getattr(self, name).frombytes(column.tobytes().translate(bytes(table[:256]).ljust(256, b"\0")))
                else:
                    self._extend(name, _mapped(column.typecode, table.__getitem__, column))
                continue
            if name == "line" and line_base:
                self._extend(name, _plus(column, line_base))
                continue
            self._extend(name, column)
        self.extend_extras(start, extras)
        return start, len(self)

    def chunk_extras(self, start: int, end: int) -> dict[str, dict[int, object]]:
        """The sparse side tables of rows [start, end), keyed by row - start (JSON-ready with str keys)."""
        return {"texts": {k - start: v for k, v in self.texts.items() if start <= k < end}}

    def extend_extras(self, start: int, extras: dict[str, dict[int, object]]) -> None:
        """Restore `chunk_extras` for rows appended at `start` (keys may be ints or their decimal strings)."""
        self.texts.update({start + int(k): str(v) for k, v in extras.get("texts", {}).items()})


class ContinuityRows(_Table):
    """The continuity table (see the module doc). Indexing makes the row's `ContinuityLine` on demand."""

    _types = CHUNK_TYPES["continuity"]
    kind: array[int]
    count: array[int]

    def __init__(self, files: Vocab, reasons: Vocab, sessions: SessionVocab, kinds: Vocab) -> None:
        super().__init__(files, reasons, sessions)
        self.kinds = kinds
        self.big_counts: dict[int, int] = {}
        #: row -> (session id, turn index) of the call attribution paired it with
        self.matched: dict[int, tuple[str, int]] = {}

    def append_line(self, line: ContinuityLine) -> int:
        """One line from the exact per-line path; returns its row."""
        row = len(self.ts)
        self._extend("ts", (NO_TIME if line.ts_ms is None else line.ts_ms,))
        self._fill("kind", self.kinds.code(line.kind), 1)
        self._fill("reason", self.reasons.code(line.reason), 1)
        self._extend("count", (count_cell(line.count, row, self.big_counts),))
        self._place(row, line.session_id, line.where, line.ts, line.ts_ms)
        return row

    def append_block(self, block: LogBlock) -> int:
        """A block's continuity rows; returns the first one's row index."""
        start = len(self.ts)
        n = len(block.ts)
        if not n:
            return start
        self._extend("ts", block.ts)
        self._translate("kind", [self.kinds.code(kind) for kind, _ in block.pairs], block.codes)
        self._translate("reason", [self.reasons.code(reason) for _, reason in block.pairs], block.codes)
        self._extend("count", block.count)
        if block.sessions is None:
            self._extend("session", array("i", (NO_SESSION,)) * n)
        else:
            self._extend("session", self.sessions.encode(block.sessions))
        self._where(block.path, block.line, block.offset, block.length)
        if block.texts:
            self.texts.update({start + k: v for k, v in block.texts.items()})
        if block.big_counts:
            self.big_counts.update({start + k: v for k, v in block.big_counts.items()})
        return start

    def kind_of(self, row: int) -> str:
        return self.kinds.values[self.kind[row]]

    def reason_of(self, row: int) -> str:
        return self.reasons.values[self.reason[row]]

    def count_of(self, row: int) -> int | None:
        value = self.count[row]
        if value == NO_COUNT:
            return None
        if value == BIG_COUNT:
            return self.big_counts[row]
        return value

    def key(self, row: int) -> tuple[str, str, int | None]:
        """(kind, reason, count): what attribution pairs a line with a call by."""
        return (self.kind_of(row), self.reason_of(row), self.count_of(row))

    def __getitem__(self, row: int) -> ContinuityLine:
        if row < 0:
            row += len(self.ts)
        if not 0 <= row < len(self.ts):
            raise IndexError(row)
        matched = self.matched.get(row)
        return ContinuityLine(
            self.where(row), self.text(row), self.ms(row), self.kind_of(row), self.reason_of(row),
            self.count_of(row), self.session_id(row), matched[0] if matched else None, matched[1] if matched else None,
        )  # fmt: skip

    def __iter__(self) -> Iterator[ContinuityLine]:
        return (self[i] for i in range(len(self.ts)))

    def chunk_extras(self, start: int, end: int) -> dict[str, dict[int, object]]:
        extras = super().chunk_extras(start, end)
        extras["big_counts"] = {k - start: v for k, v in self.big_counts.items() if start <= k < end}
        return extras

    def extend_extras(self, start: int, extras: dict[str, dict[int, object]]) -> None:
        super().extend_extras(start, extras)
        self.big_counts.update({start + int(k): int(v) for k, v in extras.get("big_counts", {}).items()})  # type: ignore[call-overload]


class CloseRows(_Table):
    """The close table (see the module doc)."""

    _types = CHUNK_TYPES["closes"]

    def __init__(self, files: Vocab, reasons: Vocab, sessions: SessionVocab) -> None:
        super().__init__(files, reasons, sessions)
        #: row -> (session id, turn index) of the call that wrote it (senpi's close pairing), beside the columns
        self.matched: dict[int, tuple[str, int]] = {}

    def append_line(self, line: CloseLine) -> int:
        row = len(self.ts)
        self._extend("ts", (NO_TIME if line.ts_ms is None else line.ts_ms,))
        self._fill("reason", self.reasons.code(line.reason), 1)
        self._place(row, line.session_id, line.where, line.ts, line.ts_ms)
        return row

    def append_block(self, block: LogBlock) -> int:
        start = len(self.ts)
        n = len(block.close_ts)
        if not n:
            return start
        self._extend("ts", block.close_ts)
        self._codes("reason", self.reasons, block.close_reasons)
        if block.close_sessions is None:
            self._extend("session", array("i", (NO_SESSION,)) * n)
        else:
            self._extend("session", self.sessions.encode(block.close_sessions))
        self._where(block.path, block.close_line, block.close_offset, block.close_length)
        if block.close_texts:
            self.texts.update({start + k: v for k, v in block.close_texts.items()})
        return start

    def reason_of(self, row: int) -> str:
        return self.reasons.values[self.reason[row]]

    def __getitem__(self, row: int) -> CloseLine:
        if row < 0:
            row += len(self.ts)
        if not 0 <= row < len(self.ts):
            raise IndexError(row)
        session, turn = self.matched.get(row, (None, None))
        return CloseLine(
            self.where(row), self.text(row), self.ms(row), self.reason_of(row), self.session_id(row), session, turn
        )

    def __iter__(self) -> Iterator[CloseLine]:
        return (self[i] for i in range(len(self.ts)))


class LogColumns:
    """Both tables and their shared vocabularies: the log half of the state (`core.state.LogState`)."""

    def __init__(self) -> None:
        self.kinds = Vocab(KINDS)
        self.reasons = Vocab()
        self.sessions = SessionVocab()
        self.files = Vocab()
        self.continuity = ContinuityRows(self.files, self.reasons, self.sessions, self.kinds)
        self.closes = CloseRows(self.files, self.reasons, self.sessions)

    def vocabularies(self) -> dict[str, list[str]]:
        """What a loader restores before any chunk (`restore_vocabularies`)."""
        return {
            "kinds": list(self.kinds.values),
            "reasons": list(self.reasons.values),
            "sessions": list(self.sessions.values),
            "files": list(self.files.values),
        }

    def restore_vocabularies(self, vocabularies: dict[str, list[str]]) -> None:
        """Adopt saved vocabularies; the store's own must be a prefix of them (a fresh store's always is)."""
        for name in ("kinds", "reasons", "sessions", "files"):
            vocab: Vocab = getattr(self, name)
            saved = vocabularies[name]
            if saved[: len(vocab.values)] != vocab.values:
                raise ValueError(f"{name}: the saved vocabulary does not extend this store's")
            for value in saved[len(vocab.values) :]:
                vocab.code(value)
