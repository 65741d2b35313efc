"""session.log a block at a time: msgspec typed decoding, with the exact per-line parser for every other line.

A senpi log is ~95 % continuity and close lines of one fixed shape (`ts, level, event, kind, reason[, count]
[, sessionId]`, compact, `toISOString` times). For those the cost that matters is per line: `orjson.loads` into
a dict, the typed checks, a record and its `Where` took ~9 µs of Python per line (0.45× jq on a 1.1M-line log);
msgspec decodes the fields into a typed `Struct` in ~0.4 µs (review §1), and everything after the decode is a
C pass over the block's lines (`map`, `compress`, `bytes.translate`, one regex for the runs): Python work is
per block and per run of equal lines, not per line.

Exactness is kept by construction, not by sampling:

- the `Struct` forbids unknown fields, so a line it accepts holds only fields it decoded and validated
  (msgspec checks UTF-8 and numbers only in the fields it decodes: ``"\\xff"`` or ``1e999`` in a skipped
  field pass msgspec and fail orjson, so nothing may be skipped). Such a line has no nesting at all, so the
  depth rule (`core.formats.base.MAX_DEPTH`) cannot apply to it;
- each line is decoded alone (`decode_lines` takes two objects on one line, or one object over two lines);
- `event` is one of the two decision events, `kind`/`reason`/`level` are `Literal` vocabularies (a decoded
  value is then a shared string), `count` an int, `sessionId` a string: a mistyped, missing or unknown value
  fails the decode;
- every line the decoder refuses (other events, a blank line, bad JSON, an odd type, a value not in the
  vocabulary yet), and every decision line without its kind or reason, goes to the adapter's exact per-line
  `parse` (~9 µs), in its place; a valid decision line refused for an unknown `level`/`kind`/`reason` teaches
  the vocabulary (the decoder is rebuilt for the next block, up to `VOCAB_CAP` values a field, then that field
  is decoded as any string);
- a time in the canonical form (`YYYY-MM-DDTHH:MM:SS.mmmZ`, checked for the whole block at once) is converted
  from tables of its parts (the hour by `parse_iso_ms`, then minutes-seconds and milliseconds: all checked
  values); any other form goes through `parse_iso_ms` itself and is kept as text (`core.logblock`); a count
  outside int64 takes the exact path.

`tests/test_typed_log.py` checks the two paths give identical records and problems on hostile lines and at every
block boundary.
"""

from __future__ import annotations

import operator
import re
import struct
from array import array
from collections.abc import Callable
from itertools import accumulate, compress, repeat
from typing import Any, Literal

import msgspec

from core.logblock import BIG_COUNT, NO_COUNT, NO_TIME, LogBlock, canonical
from core.model import CLOSE_EVENT, CONTINUITY_EVENT, CloseLine, ContinuityLine, LogEvent, Problem, Record
from core.timeutil import canonical_ms_column, iso_ms, parse_iso_ms

#: A field's vocabulary stops growing here; past it the field is decoded as any string (a log that names
#: thousands of reasons is not senpi's; it is still read exactly, only without the shared strings).
VOCAB_CAP = 200
_SEEDS: dict[str, tuple[str, ...]] = {
    "level": ("info", "warn", "debug", "error"),
    "kind": ("delta", "flatten", "fork", "bootstrap", "disabled", "failed"),
    # senpi's 35 sanitized reasons (`SANITIZED_REASONS`, senpi-formats §2.4): a log of them is read without a
    # refused line to learn from
    "reason": (
        "prefix_matched", "registry_miss", "idle_ttl", "capacity", "model_selected", "thinking_level_selected",
        "bound_account_token_expiring", "account_changed", "model_changed", "toolset_changed",
        "system_prompt_changed", "assistant_stream_diverged", "sent_stream_diverged", "options_changed",
        "history_rolled_back", "assistant_rewritten", "transcript_missing", "cross_root_unsupported",
        "branch_diverged", "branch_boundary_unavailable", "branch_resume", "tainted_compaction", "tainted_fork",
        "tainted_abort", "tainted_assistant_provenance_unverified", "resume_initialization_failed",
        "resume_initialization_aborted", "resume_mode_off", "query_failed", "turn_attribution_failed",
        "abort_timeout", "extensions_removed", "session_shutdown", "timeout_retry", "other",
    ),
}  # fmt: skip
_NONE_TO_NO_COUNT = {None: NO_COUNT}
_TRIPLE = operator.attrgetter("event", "kind", "reason")
_TS = operator.attrgetter("ts")
_REASON = operator.attrgetter("reason")
_COUNT = operator.attrgetter("count")
_SESSION = operator.attrgetter("sessionId")
_RUN = re.compile(rb"(.)\1*", re.S)
_STRETCH = 256
#: what a line's (event, kind, reason) is for the block: a continuity row, a close row, or neither (refused,
#: or a decision line without its kind/reason: the exact path words the problem)
_CONT, _CLOSE, _OTHER = 1, 2, 0
Parse = Callable[[str, int, int, bytes], list[Record]]


class _Lenient(msgspec.Struct, forbid_unknown_fields=True):
    """The same shape with plain strings: what a refused decision line would have taught the vocabulary."""

    ts: str
    level: str
    event: str
    kind: str | None = None
    reason: str | None = None
    count: int | None = None
    sessionId: str | None = None


_LENIENT = msgspec.json.Decoder(_Lenient)


class _Refused:
    """The place of a line the decoder refused (its records come from the exact path)."""

    __slots__ = ()
    ts = level = event = kind = reason = count = sessionId = None


REFUSED = _Refused()


class _Hours(dict[bytes, int]):
    """``YYYY-MM-DDTHH`` -> epoch ms of that hour, checked by `parse_iso_ms` and by printing it back."""

    def __missing__(self, key: bytes) -> int:
        text = key.decode("ascii", "replace")
        ms = parse_iso_ms(text + ":00:00.000Z")
        if ms is None or (iso_ms(ms) or "")[:13] != text:
            raise KeyError(key)
        if len(self) > 100_000:
            self.clear()
        self[key] = ms
        return ms


_MINUTE_SECOND = {f"{m:02d}:{s:02d}".encode(): (m * 60 + s) * 1000 for m in range(60) for s in range(60)}
_MILLI = {f"{i:03d}".encode(): i for i in range(1000)}


class TypedLog:
    """The typed decoder, its vocabularies and its row-shape codes (one per adapter class; they only grow)."""

    def __init__(self, exact: Parse, other: Callable[[str, int, int, bytes], LogEvent | None] | None = None) -> None:
        """`exact` is the adapter's `parse`; `other`, when given, its cheaper exact answer for a line that is
        another event (a `LogEvent` as `parse` would make it, without its data; None: ask `parse`)."""
        self.exact = exact
        self.other = other
        self.vocab: dict[str, list[str]] = {name: list(values) for name, values in _SEEDS.items()}
        self.open: set[str] = set()  # fields past VOCAB_CAP: any string
        self._decode: Callable[[bytes], Any] = self._build()
        self._dirty = False
        self._hours = _Hours()
        # (event, kind, reason) -> code; code -> what the row is and its (kind, reason) for continuity rows
        self._codes: dict[tuple[Any, Any, Any], int] = {}
        self._shape = bytearray()  # code -> _CONT | _CLOSE | _OTHER
        self._pairs: list[tuple[str, str]] = []  # code -> (kind, reason) (('', '') for non-continuity codes)

    def _build(self) -> Callable[[bytes], Any]:
        def field_type(name: str) -> Any:
            if name in self.open:
                return str
            return Literal[tuple(self.vocab[name])]  # type: ignore[valid-type]

        struct_type = msgspec.defstruct(
            "SessionLogLine",
            [
                ("ts", str),
                ("level", field_type("level")),
                ("event", Literal[CONTINUITY_EVENT, CLOSE_EVENT]),
                ("kind", field_type("kind") | None, None),
                ("reason", field_type("reason") | None, None),
                ("count", int | None, None),
                ("sessionId", str | None, None),
            ],
            forbid_unknown_fields=True,
            gc=False,
        )
        return msgspec.json.Decoder(struct_type).decode  # type: ignore[no-any-return]

    def _learn(self, data: bytes) -> None:
        """A decision line the decoder refused and the exact parser accepted: add what it did not know."""
        try:
            line = _LENIENT.decode(data)
        except msgspec.MsgspecError:
            return
        for name in ("level", "kind", "reason"):
            value = getattr(line, name)
            if value is None or name in self.open or value in self.vocab[name]:
                continue
            if len(self.vocab[name]) >= VOCAB_CAP:
                self.open.add(name)
            else:
                self.vocab[name].append(value)
            self._dirty = True

    def _code(self, triple: tuple[Any, Any, Any]) -> int:
        """The code of a row shape, made the first time it is seen (`_codes_of`)."""
        code = len(self._shape)
        event, kind, reason = triple
        if event == CONTINUITY_EVENT and kind is not None and reason is not None:
            shape, pair = _CONT, (kind, reason)
        elif event == CLOSE_EVENT and reason is not None:
            shape, pair = _CLOSE, ("", "")
        else:
            shape, pair = _OTHER, ("", "")
        self._codes[triple] = code
        self._shape.append(shape)
        self._pairs.append(pair)
        return code

    def _codes_of(self, records: list[Any]) -> bytes | None:
        """Each record's shape code, one byte a row (None past 256 shapes: the block then takes the exact path)."""
        codes = self._codes
        triples = list(map(_TRIPLE, records))
        try:
            return bytes(map(codes.__getitem__, triples))
        except KeyError:
            for triple in triples:
                if triple not in codes:
                    self._code(triple)
        except ValueError:
            return None
        if len(self._shape) > 256:
            return None
        return bytes(map(codes.__getitem__, triples))

    # ------------------------------------------------------------------ a block
    def parse_block(self, path: str, lineno: int, offset: int, data: bytes) -> LogBlock:
        """Complete lines (`data` ends with a newline; its first line is `lineno` at `offset`) -> one block.

        A block whose refused decision lines taught the vocabulary is read again with the new decoder: its
        refused lines would otherwise cut it into stretches, each read on its own (the first 1 MiB block of
        the 166 MB bench log: ~460 stretches, ~4x the cost of the block; every worker of the pool paid it)."""
        if self._dirty:
            self._decode, self._dirty = self._build(), False
        block = self._parse_block(path, lineno, offset, data)
        if self._dirty:
            self._decode, self._dirty = self._build(), False
            block = self._parse_block(path, lineno, offset, data)
        return block

    def _parse_block(self, path: str, lineno: int, offset: int, data: bytes) -> LogBlock:
        lines = data.split(b"\n")
        lines.pop()  # after the last newline
        sizes = list(map(len, lines))
        starts = list(accumulate(map(operator.add, sizes, repeat(1)), initial=offset))
        records, refused = self._decode_all(lines)
        codes = self._codes_of(records)
        if codes is None:
            return self._all_exact(path, lineno, starts, lines)
        # the codes of this block fit a byte; the table has 256 entries even once more shapes are known (a block of
        # known ones after the 257th shape raised ValueError, and the dashboard's ingest thread died)
        shapes = codes.translate(bytes(self._shape[:256]).ljust(256, b"\0"))
        # decoded decision lines without their kind/reason are problems: the exact path words them
        if refused or shapes.count(0):
            refused.update(compress(range(len(shapes)), map(operator.not_, shapes)))
        exact = {row: self._exact(path, lineno + row, starts[row], lines[row]) for row in sorted(refused)}
        block = LogBlock(path, pairs=list(self._pairs))
        if any(isinstance(rec, ContinuityLine | CloseLine) for recs in exact.values() for rec in recs):
            # rare (a decision line of an odd shape): decoded stretches and exact lines, appended in line order
            self._segments(block, records, codes, shapes, sorted(refused), exact, lineno, starts, sizes, lines)
            return block
        if not self._fast(block, records, codes, shapes, range(len(records)), lineno, starts, sizes):
            return self._all_exact(path, lineno, starts, lines)
        for recs in exact.values():
            _others(block, recs)
        return block

    def _decode_all(self, lines: list[bytes]) -> tuple[list[Any], set[int]]:
        """Every line decoded in C; a line the decoder refuses is `REFUSED` (and its row in the set)."""
        decode = self._decode
        records: list[Any] = []
        refused: set[int] = set()
        n = len(lines)
        try:
            records.extend(map(decode, lines))
            return records, refused
        except (msgspec.MsgspecError, ValueError):
            refused.add(len(records))
            records.append(REFUSED)
        # after a refused line, go on in stretches (a refusal restarts the map on what is left of its stretch)
        while len(records) < n:
            end = min(n, len(records) + _STRETCH)
            try:
                records.extend(map(decode, lines[len(records) : end]))
            except (msgspec.MsgspecError, ValueError):
                refused.add(len(records))
                records.append(REFUSED)
        return records, refused

    def _exact(self, path: str, lineno: int, offset: int, data: bytes) -> list[Record]:
        """One line through the adapter's exact parser (after the engine's blank-line rule)."""
        if not data or data.isspace():
            return []
        if self.other is not None:
            event = self.other(path, lineno, offset, data)
            if event is not None:
                return [event]
        out = self.exact(path, lineno, offset, data)
        if any(isinstance(rec, ContinuityLine | CloseLine) for rec in out):
            self._learn(data)
        return out

    def _all_exact(self, path: str, lineno: int, starts: list[int], lines: list[bytes]) -> LogBlock:
        block = LogBlock(path)
        for row, data in enumerate(lines):
            for record in self._exact(path, lineno + row, starts[row], data):
                block.add(record)
        return block

    def _segments(self, block: LogBlock, records: list[Any], codes: bytes, shapes: bytes, refused: list[int],
                  exact: dict[int, list[Record]], lineno: int, starts: list[int], sizes: list[int],
                  lines: list[bytes]) -> None:  # fmt: skip
        at = 0
        for bad in [*refused, len(records)]:
            if bad > at:
                part = LogBlock(block.path, pairs=list(self._pairs))
                if not self._fast(part, records, codes, shapes, range(at, bad), lineno, starts, sizes):
                    for row in range(at, bad):
                        for rec in self._exact(block.path, lineno + row, starts[row], lines[row]):
                            block.add(rec)
                else:
                    block.extend(part)
            if bad < len(records):
                for rec in exact[bad]:
                    block.add(rec)
            at = bad + 1

    def _fast(self, block: LogBlock, records: list[Any], codes: bytes, shapes: bytes, rows: range, lineno: int,
              starts: list[int], sizes: list[int]) -> bool:  # fmt: skip
        """Rows `rows` of decoded lines into `block` (their decision rows; others are the caller's). False when
        a count or time cannot be taken as is (the caller then reads the stretch exactly)."""
        if rows.start or rows.stop != len(records):
            part = slice(rows.start, rows.stop)
            records, codes, shapes = records[part], codes[part], shapes[part]
        is_cont = shapes.translate(_IS_CONT)
        is_close = shapes.translate(_IS_CLOSE)
        n_cont, n_close = is_cont.count(1), is_close.count(1)
        if not n_cont and not n_close:
            return True
        if n_cont:
            everything = n_cont == len(records)
            cont = records if everything else list(compress(records, is_cont))
            counts = list(map(_COUNT, cont))
            column = _counts(counts)
            ts = self._times(list(map(_TS, cont)), block.texts, len(block.ts))
            if column is None or ts is None:
                return False
            row_codes = codes if everything else bytes(compress(codes, is_cont))
            pairs = self._pairs
            block.runs.extend((*pairs[m.group()[0]], m.end() - m.start()) for m in _RUN.finditer(row_codes))
            block.codes = row_codes
            block.ts = ts
            block.count = column
            sessions = list(map(_SESSION, cont))
            if sessions.count(None) != len(sessions):
                block.sessions = sessions
            block.line, block.offset, block.length = _where(
                lineno, rows, None if everything else is_cont, starts, sizes
            )
        if n_close:
            closes = list(compress(records, is_close))
            ts = self._times(list(map(_TS, closes)), block.close_texts, 0)
            if ts is None:
                return False
            block.close_ts = ts
            block.close_reasons = list(map(_REASON, closes))
            sessions = list(map(_SESSION, closes))
            if sessions.count(None) != len(sessions):
                block.close_sessions = sessions
            block.close_line, block.close_offset, block.close_length = _where(lineno, rows, is_close, starts, sizes)
        return True

    def _times(self, texts: list[str], kept: dict[int, str], base: int) -> array[int] | None:
        """Epoch ms of each `ts`, exactly as `parse_iso_ms` gives them; odd forms kept as text. Canonical times
        of one 21-year page of months are added up a column at a time (`canonical_ms_column`, ~2.4x faster than
        the hour table below, which takes a block that spans two pages)."""
        column = canonical_ms_column(texts)
        if column is not None:
            return column
        n = len(texts)
        joined = "".join(texts)
        if (
            len(joined) == 24 * n
            and list(map(len, texts)).count(24) == n  # (a 23- and a 25-character time side by side align too)
            and joined[23::24].count("Z") == n
            and joined[19::24].count(".") == n
            and joined[16::24].count(":") == n
            and joined[13::24].count(":") == n
            and "0" not in joined[0::24]
            and joined.isascii()
        ):
            parts = _unpack_times(joined, n)
            try:
                hours = map(self._hours.__getitem__, parts[0::3])
                minutes = map(_MINUTE_SECOND.__getitem__, parts[1::3])
                rest = map(operator.add, minutes, map(_MILLI.__getitem__, parts[2::3]))
                return array("q", map(operator.add, hours, rest))
            except KeyError:
                pass
        out = array("q")
        for i, text in enumerate(texts):
            ms = parse_iso_ms(text)
            out.append(NO_TIME if ms is None else ms)
            if not canonical(text, ms):
                kept[base + i] = text
        return out


_PAD = 256
_PADDING = "2000-01-01T00:00:00.000Z" * _PAD
_TIME_STRUCTS: dict[int, struct.Struct] = {}


def _unpack_times(joined: str, n: int) -> tuple[bytes, ...]:
    """(hour, minute-second, millisecond) bytes of `n` canonical times, 3 fields a time; the struct for a
    size rounded up to `_PAD` is made once (a format string per block size took ~3 ms to compile)."""
    size = -(-n // _PAD) * _PAD
    unpacker = _TIME_STRUCTS.get(size)
    if unpacker is None:
        if len(_TIME_STRUCTS) > 64:
            _TIME_STRUCTS.clear()
        unpacker = _TIME_STRUCTS[size] = struct.Struct("13sx5sx3sx" * size)
    return unpacker.unpack((joined + _PADDING[: 24 * (size - n)]).encode("ascii"))[: 3 * n]


_IS_CONT = bytes(1 if i == _CONT else 0 for i in range(256))
_IS_CLOSE = bytes(1 if i == _CLOSE else 0 for i in range(256))


def _where(
    lineno: int, rows: range, selected: bytes | None, starts: list[int], sizes: list[int]
) -> tuple[array[int], array[int], array[int]]:
    """Line numbers, offsets and lengths of the `selected` rows of `rows` (all when None), in the columns' types
    (wider when they do not fit): `compress` over slices, not an index lookup per row (~2x faster)."""
    lines: range = range(lineno + rows.start, lineno + rows.stop)
    offsets = starts[rows.start : rows.stop]
    lengths = sizes[rows.start : rows.stop] if rows.start or rows.stop != len(sizes) else sizes
    if selected is not None:
        lines, offsets, lengths = (list(compress(column, selected)) for column in (lines, offsets, lengths))  # type: ignore[assignment]
    try:
        return array("I", lines), array("Q", offsets), array("I", lengths)
    except OverflowError:
        return array("q", lines), array("q", offsets), array("q", lengths)


def _counts(counts: list[int | None]) -> array[int] | None:
    """The count column of decoded lines, or None when one of them does not fit it exactly."""
    try:
        column = array("q", map(_NONE_TO_NO_COUNT.get, counts, counts))
    except OverflowError:
        return None
    if BIG_COUNT in column or column.count(NO_COUNT) != counts.count(None):
        return None  # a real count equal to a sentinel
    return column


def _others(block: LogBlock, records: list[Record]) -> None:
    for record in records:
        if isinstance(record, LogEvent):
            block.add_other(record.event)
        elif isinstance(record, Problem):
            block.problems.append(record)
