"""Log lines in the store: the decision log's rows as per-chunk column BLOBs, with their vocabularies, the
aggregates a report reads (counts, streaks, peak), and the queryable daily counts.

What is stored is the state's log half (`core.state.LogState`): the continuity and close rows in the byte
layout `core.kernel.logcols` documents, one BLOB per column per chunk (`log_columns`: the little-endian array
`ContinuityRows.chunk_blobs` gives, with its typecode), in chunks of at most `CHUNK_ROWS` rows of one
generation, in row order (`log_chunks`, with the sparse side tables of the chunk); the vocabularies the codes
stand for (`log_vocab`, only ever appended); the streaks the aggregates finished since the last transaction
(`log_streaks`) and the rest of the aggregates (`log_state`: counts, the open run, the peak, the other events).
Loading is one `frombytes` per column per chunk and a few thousand small records: no line is parsed again.

The files that feed the log aggregates (`Adapter.log_aggregates`: `session.log` and its `.1`, `compaction.log`)
are stored together or not at all: the aggregates are one fold over all of them. Only a history with one
decision log is stored (the rows of two would interleave in the order the polls read them), and only while
this run saw no generation of them appear or go (lines read before a rotation carry their old path; the
family is read again at the next start: at most 10 MiB for senpi's two generations).

`decisions_daily` and `closes_daily` (lines per UTC day, kind and reason) are for a user's queries; nothing
reads them back.
"""

from __future__ import annotations

import sqlite3
import sys
import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from core.index.codec import Corrupt, check_strings, deflate, inflate, pack, plain
from core.index.files import write_stream
from core.index.livelog import OrderFree
from core.index.views import decode_view, read_view
from core.kernel.logcols import CHUNK_TYPES, LAYOUT_VERSION
from core.kernel.stats import Peak, Streak, Streaks
from core.logblock import NO_TIME
from core.sources.tail import StreamSnap

if TYPE_CHECKING:
    from core.engine import Engine
    from core.state import LogState

__all__ = ["CHUNK_ROWS", "LIVE_EVERY_S", "LoadedLog", "LogWrite", "LogWriter", "StoredStreaks", "read_log"]

CHUNK_ROWS = 16_384
"""Rows of one chunk at most (~690 KB of continuity columns): the last chunk of a generation is written again
while it fills, so a live log's many small polls make few chunks; loading costs one `frombytes` a column a
chunk (the 1.1M-line log: 67 chunks)."""
LIVE_EVERY_S = 2.0
"""A dashboard writes the log at most this often (a busy log polls many times a second): a crash loses at most
the rows of the last two seconds, which are read again."""
VOCABS = ("kinds", "reasons", "sessions", "files")
TABLES = ("continuity", "closes")
DAY_MS = 86_400_000
_TYPECODES = frozenset("BHIQbhilqL")


class _Head(msgspec.Struct):
    """`log_state.data`: the aggregates besides the streaks, and the files the rows were read from."""

    events: int
    by_kind: dict[str, int]
    by_reason: dict[str, dict[str, int]]
    closes: dict[str, int]
    run: Streak | None
    peak: Peak | None
    last_ms: int | None
    other_events: dict[str, int]
    provider_errors: int
    streams: list[str]
    streaks: int
    """How many streaks `log_streaks` holds (written in the same transaction): counted without inflating them, which
    a report whose stored view fits never does (the 1.1M-line log's 56,000: ~0.03 s of its second report)."""


class _Chunk(msgspec.Struct):
    """One `log_chunks` row: rows [first_row, first_row + rows) and closes likewise, of one generation."""

    seq: int
    logical: str
    number: int
    first_row: int
    first_close: int
    rows: int
    closes: int


# ---------------------------------------------------------------------------------------------- reading
class LoadedLog(msgspec.Struct):
    """What the store holds of the log, put into a fresh state's `LogState` by `install`."""

    streams: list[str]
    vocab: dict[str, list[str]]
    chunks: list[tuple[_Chunk, bytes]]
    """Each chunk with its side tables; its columns are read when installed (`columns`), one chunk at a time
    (the 1.1M-line log's 45 MB of BLOBs are never all held beside the arrays made of them)."""
    columns: Callable[[int, str], dict[str, tuple[str, bytes]]]
    head: _Head
    streaks: StoredStreaks
    rows: int
    closes: int
    next_streak: int
    view: tuple[int, int, int, bytes] | None = None
    """The `log_view` row (rows, closes, events, BLOB): a report's aggregates of these rows (`core.index.views`)."""

    def install(self, log: LogState) -> None:
        """Append the stored rows and aggregates to an empty `LogState`; `Corrupt` when they do not fit."""
        columns = log.columns
        try:
            columns.restore_vocabularies(self.vocab)
        except (ValueError, KeyError) as exc:
            raise Corrupt(f"stored log vocabularies do not fit: {exc}") from None
        # each table in its own row order: the generations' continuity and close rows interleave differently
        decoded = []
        for chunk, extras in self.chunks:
            decoded.append((chunk, plain(inflate(extras))))
        for name, table in (("continuity", log.continuity), ("closes", log.closes)):
            of_closes = name == "closes"
            for chunk, more in sorted(decoded, key=lambda c: c[0].first_close if of_closes else c[0].first_row):
                first, count = (chunk.first_close, chunk.closes) if of_closes else (chunk.first_row, chunk.rows)
                if not count:
                    continue
                if len(table) != first:
                    raise Corrupt("stored log chunks are out of order")
                blobs = self.columns(chunk.seq, name)
                try:
                    start, end = table.extend_blobs(blobs)
                    table.extend_extras(start, more[name])
                except (KeyError, TypeError, ValueError, OverflowError, AttributeError) as exc:
                    raise Corrupt(f"a stored log chunk does not decode: {exc}") from None
                del blobs
                if end - start != count:
                    raise Corrupt("a stored log chunk holds another number of rows than it says")
        _check_columns(log)
        if len(log.continuity) != self.rows or len(log.closes) != self.closes:
            raise Corrupt("the stored log holds another number of rows than it says")
        stats, head = log.stats, self.head
        stats.events = head.events
        stats.by_kind = Counter(head.by_kind)
        stats.by_reason = {reason: Counter(kinds) for reason, kinds in head.by_reason.items()}
        stats.closes = Counter(head.closes)
        stats.streaks = self.streaks  # decoded when first read (`StoredStreaks`)
        stats.run, stats.peak, stats.last_ms = head.run, head.peak, head.last_ms
        log.other_events = dict(head.other_events)
        log.provider_errors = head.provider_errors
        if self.view is not None and self.view[:3] == (self.rows, self.closes, head.events):
            log.view = decode_view(*self.view)


def _check_columns(log: LogState) -> None:
    """Every column as long as its table, every code within its vocabulary: a surface that looks a stored
    code up in its vocabulary never fails."""
    columns = log.columns
    for table, name in ((log.continuity, "continuity"), (log.closes, "closes")):
        n = len(table)
        for column in CHUNK_TYPES[name]:
            if len(getattr(table, column)) != n:
                raise Corrupt(f"a stored log column ({name}.{column}) is not as long as its table")
        if not n:
            continue
        bounds = {"reason": len(columns.reasons), "file": len(columns.files), "session": len(columns.sessions)}
        if name == "continuity":
            bounds["kind"] = len(columns.kinds)
        for column, size in bounds.items():
            if not _within(getattr(table, column), -1 if column == "session" else 0, size):
                raise Corrupt(f"a stored log column ({name}.{column}) names a code its vocabulary has not")


_FEW_CODES = 32
"""Up to this many codes a column is checked by counting each (one C loop a code, ~1 ms a million rows),
beyond it by its min and max (~15 ms each a million rows)."""


def _within(values: array[int], low: int, size: int) -> bool:
    """Every value in [low, size): a byte column by deleting the codes in range (C), a column of few codes by
    counting them, a two-byte one by its bytes (`_within_16`), else by min and max (the 1.1M-line log's seven
    code columns: 0.18 -> ~0.05 s; its 1,000 sessions' two-byte column 0.043 -> ~0.005 s)."""
    if not values:
        return True
    if values.typecode == "B" and low == 0:
        return not values.tobytes().translate(None, bytes(range(min(size, 256))))
    if values.typecode == "b" and low == -1:  # (-1 is the byte 0xFF)
        return not values.tobytes().translate(None, bytes([*range(min(size, 128)), 0xFF]))
    if size - low <= _FEW_CODES:
        return sum(values.count(code) for code in range(low, size)) == len(values)
    if values.itemsize == 2 and low in (-1, 0) and 0 < size <= 0x7FFF and sys.byteorder == "little":
        return _within_16(values.tobytes(), low, size)
    return low <= min(values) and max(values) < size


def _within_16(data: bytes, low: int, size: int) -> bool:
    """Every little-endian 16-bit value of `data` in [low, size) (low 0, or -1 as 0xFFFF), without making an int
    of each (min and max did: ~40 ms for the 1.1M-line log's session column, now ~20 ms). A value is its high
    and its low byte, each tested in C over all of them (`bytes.translate`): a high byte no value in range has
    fails at once; a high byte that is in range only with some low bytes (the last 256 below `size`; 0xFF, whose
    only value in range is -1) is flagged, its low byte flagged when it is not one of those, and a value fails
    when both of its flags meet (the two flag strings as big ints, one AND)."""
    lows, highs = data[0::2], data[1::2]
    top, rest = divmod(size, 256)
    allowed = [*range(top + (1 if rest else 0)), *([0xFF] if low == -1 else [])]
    if highs.translate(None, bytes(allowed)):
        return False
    high_flags, low_flags = bytearray(256), bytearray(256)
    if rest:
        high_flags[top] |= 1
        for byte in range(rest, 256):
            low_flags[byte] |= 1
    if low == -1:
        high_flags[0xFF] |= 2
        for byte in range(0xFF):
            low_flags[byte] |= 2
    flagged = int.from_bytes(highs.translate(high_flags), "little")
    return not (flagged and flagged & int.from_bytes(lows.translate(low_flags), "little"))


def read_log(conn: sqlite3.Connection, scope: int) -> LoadedLog | None:
    """The stored log of a scope, or None (none stored); its rows are read and checked when installed, which
    must happen inside the same read of `conn`."""
    row = conn.execute("SELECT rows, closes, data FROM log_state WHERE scope = ?", (scope,)).fetchone()
    if row is None:
        return None
    rows, closes, data = row
    if not (isinstance(rows, int) and isinstance(closes, int) and isinstance(data, bytes)):
        raise Corrupt("the stored log state is not one")
    try:
        head = msgspec.convert(plain(inflate(data)), _Head)
    except (msgspec.ValidationError, TypeError, ValueError) as exc:
        raise Corrupt(f"the stored log state does not decode: {exc}") from None
    vocab: dict[str, list[str]] = {name: [] for name in VOCABS}
    for name, code, value in conn.execute(
        "SELECT name, code, value FROM log_vocab WHERE scope = ? ORDER BY name, code", (scope,)
    ):
        values = vocab.get(name)
        if values is None or not isinstance(value, str) or code != len(values):
            raise Corrupt("a stored log vocabulary is not one")
        values.append(value)
    chunks = []
    for seq, logical, number, first_row, first_close, n, nc, layout, extras in conn.execute(
        "SELECT seq, logical, number, first_row, first_close, rows, closes, layout, extras FROM log_chunks "
        "WHERE scope = ? ORDER BY first_row, first_close, seq",
        (scope,),
    ):
        ints = (seq, number, first_row, first_close, n, nc)
        if not (isinstance(logical, str) and all(isinstance(v, int) for v in ints) and isinstance(extras, bytes)):
            raise Corrupt("a stored log chunk row is not one")
        if layout != LAYOUT_VERSION:
            raise Corrupt(f"a stored log chunk of layout {layout} (this code reads {LAYOUT_VERSION})")
        chunks.append((_Chunk(seq, logical, number, first_row, first_close, n, nc), extras))
    (stored_columns,) = conn.execute("SELECT count(*) FROM log_columns WHERE scope = ?", (scope,)).fetchone()
    if stored_columns != len(chunks) * sum(len(CHUNK_TYPES[t]) for t in TABLES):
        raise Corrupt("stored log columns belong to no chunk, or a chunk is missing columns")

    def columns(seq: int, table: str) -> dict[str, tuple[str, bytes]]:
        """A chunk's column BLOBs of one table (read inside the same snapshot as the rest: `Index._restore`)."""
        out: dict[str, tuple[str, bytes]] = {}
        for name, typecode, blob in conn.execute(
            "SELECT name, typecode, data FROM log_columns WHERE scope = ? AND seq = ? AND name > ? AND name < ?",
            (scope, seq, f"{table}.", f"{table}/"),  # ('/' follows '.': the names "table.column", by the key)
        ):
            column = str(name).partition(".")[2]
            if column not in CHUNK_TYPES[table]:
                raise Corrupt(f"a stored log column is not one ({name})")
            if not (isinstance(typecode, str) and typecode in _TYPECODES and isinstance(blob, bytes)):
                raise Corrupt(f"a stored log column is not one ({name})")
            out[column] = (typecode, blob)
        if set(out) != set(CHUNK_TYPES[table]):
            raise Corrupt("a stored log chunk is missing columns")
        return out

    blobs: list[bytes] = []
    next_streak = 0
    for seq, blob in conn.execute("SELECT seq, data FROM log_streaks WHERE scope = ? ORDER BY seq", (scope,)):
        if not (isinstance(seq, int) and isinstance(blob, bytes)):
            raise Corrupt("stored streaks are not a BLOB")
        blobs.append(blob)
        next_streak = seq + 1
    if head.streaks < 0 or (head.streaks > 0) != bool(blobs):
        raise Corrupt("the stored streaks are another number than the log state says")
    streaks = StoredStreaks(blobs, head.streaks)
    view = read_view(conn, scope)
    return LoadedLog(head.streams, vocab, chunks, columns, head, streaks, rows, closes, next_streak, view)


_STREAKS = msgspec.msgpack.Decoder(list[Streak])


class StoredStreaks(Streaks):
    """The stored streaks, decoded when first read: a report whose stored view fits its rows reads none (the
    1.1M-line log's 56,000: ~0.15 s of its second report). Streaks finished after them append as to any
    `Streaks`; its length counts both, and the slice of the new ones (what `LogWriter` stores) needs no decoding.
    `Index.settle` decodes them before a report that reads them (`load`: `Corrupt` reads everything cold);
    any other read decodes them first too."""

    __slots__ = ("_blobs", "_stored")

    def __init__(self, blobs: list[bytes], stored: int) -> None:
        super().__init__()
        self._blobs: list[bytes] | None = blobs if stored else None
        self._stored = stored

    @property
    def pending(self) -> bool:
        return self._blobs is not None

    def load(self) -> None:
        """The stored streaks decoded, before the ones appended since; `Corrupt` when they do not decode."""
        if self._blobs is None:
            return
        decoded = [streak for blob in self._blobs for streak in _streaks(inflate(blob))]
        if len(decoded) != self._stored:
            raise Corrupt("the stored streaks are another number than counted")
        full = Streaks.of(decoded)
        full.extend_from(self)
        for name in Streaks.__slots__:
            setattr(self, name, getattr(full, name))
        self._blobs = None

    def __len__(self) -> int:
        return len(self.length) + (self._stored if self._blobs is not None else 0)

    def __getitem__(self, i: Any) -> Any:
        if self._blobs is not None and isinstance(i, slice) and i.step is None and i.stop is None:
            start = i.start or 0
            if start >= self._stored:  # only streaks appended since the load (by index: a slice would come back)
                return [Streaks.__getitem__(self, j) for j in range(start - self._stored, len(self.length))]
        self.load()
        return super().__getitem__(i)

    def __iter__(self) -> Iterator[Streak]:
        self.load()
        return super().__iter__()

    def table(self, run: Streak | None = None) -> Any:
        self.load()
        return super().table(run)  # type: ignore[misc]


def _streaks(data: bytes) -> list[Streak]:
    """Stored streaks, decoded straight into `Streak`s (56,000 on the 1.1M-line log: 0.12 -> 0.03 s, no plain
    dicts between); a count beyond 64 bits (packed as an extension) takes the plain path."""
    try:
        return _STREAKS.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, TypeError, ValueError):
        pass
    try:
        return msgspec.convert(plain(data), list[Streak])
    except (msgspec.ValidationError, TypeError, ValueError) as exc:
        raise Corrupt(f"stored streaks do not decode: {exc}") from None


# ---------------------------------------------------------------------------------------------- writing
class LogWrite(msgspec.Struct):
    """One transaction's log writes (`write`), and what this run has written once it committed (`done`)."""

    write: Callable[[sqlite3.Connection], None]
    done: Callable[[], None]


@dataclass
class LogWriter:
    """What this run wrote of the log, so each transaction adds only what is new."""

    live: bool
    streams: list[str] = field(default_factory=list)
    rows: int = 0
    closes: int = 0
    vocab: dict[str, int] = field(default_factory=lambda: dict.fromkeys(VOCABS, 0))
    streaks: int = 0
    next_streak: int = 0
    next_chunk: int = 0
    open: dict[tuple[str, int], _Chunk] = field(default_factory=dict)
    """Per generation, its last chunk: written again with the rows that follow while it has room."""
    next_numbers: dict[str, int] = field(default_factory=dict)
    off: str | None = None
    """Why this run writes no log (and dropped what was stored), or None."""
    written_at: float = float("-inf")
    checked_at: float = float("-inf")
    """When a dashboard's writer last asked whether the reading order decides anything (`_order_bound`)."""

    @classmethod
    def resumed(cls, loaded: LoadedLog, snaps: list[StreamSnap], live: bool) -> LogWriter:
        """A writer that goes on after what was loaded."""
        writer = cls(live, list(loaded.streams), loaded.rows, loaded.closes,
                     {name: len(values) for name, values in loaded.vocab.items()}, len(loaded.streaks),
                     loaded.next_streak, max((c.seq for c, _ in loaded.chunks), default=-1) + 1)  # fmt: skip
        for chunk, _ in loaded.chunks:
            writer.open[(chunk.logical, chunk.number)] = chunk
        writer.next_numbers = {snap.logical: snap.next_number for snap in snaps}
        return writer

    def changes(self, engine: Engine, scope: int | None) -> LogWrite | str | None:
        """This transaction's log writes, "drop" when the stored log must go (and this run stores none), or
        None when there is nothing to write now. Call with the engine's lock."""
        if self.off is not None:
            return None
        group = sorted(lg for lg, adapter in engine.adapters.items() if adapter.log_aggregates)
        if not group:
            return None
        decision = [lg for lg in group if engine.adapters[lg].decision_log]
        if len(decision) > 1:
            return self._off(f"{len(decision)} decision logs (their lines interleave in the order polls read them)")
        if self.streams and any(lg not in group for lg in self.streams):
            return self._off("a log file it held is no longer read")
        log = engine.state.log
        if self.live and time.monotonic() - self.checked_at >= LIVE_EVERY_S and (why := self._order_bound(engine)):
            return why
        if len(log.continuity) == self.rows and len(log.closes) == self.closes and group == self.streams:
            return None
        if self.live and time.monotonic() - self.written_at < LIVE_EVERY_S:
            return None
        if self.live and (why := self._order_bound(engine)):
            return why
        full = frozenset(lg for lg in group if engine.adapters[lg].routine_notices)
        snaps = engine.sources.export_streams(group, full, whole_lines=True)
        clean = {lg: snap for lg, snap in snaps.items() if isinstance(snap, StreamSnap)}
        if len(clean) != len(group):
            return None  # a read or a rotation in flight: next time
        # a file not one whole line of which was read yet is no member (a cold read may not know its format yet)
        clean = {lg: snap for lg, snap in clean.items() if any(gen.pos > 0 for gen in snap.gens)}
        group = [lg for lg in group if lg in clean]
        if not group or any(lg not in group for lg in self.streams):
            return None
        if len(log.continuity) == self.rows and len(log.closes) == self.closes and group == self.streams:
            return None
        for lg, snap in clean.items():
            if self.next_numbers.setdefault(lg, snap.next_number) != snap.next_number:
                return self._off("a log rotated while it was read (its older lines carry their old path)")
        return self._write(engine, scope, group, clean)

    def _order_bound(self, engine: Engine) -> str | None:
        """Drop the stored log (and write none this run) when the order a dashboard meets log lines in may decide
        something (`core.index.livelog`): a next start could not restore them exactly. None while it decides
        nothing."""
        self.checked_at = time.monotonic()
        why = OrderFree.why_not(engine.state)
        return None if why is None else self._off(f"the order a dashboard reads them in decides something: {why}")

    def _off(self, why: str) -> str:
        self.off = why
        return "drop"

    def _write(
        self, engine: Engine, scope: int | None, group: list[str], clean: dict[str, StreamSnap]
    ) -> LogWrite | str:
        log = engine.state.log
        continuity, closes, columns = log.continuity, log.closes, log.columns
        rows, close_rows = len(continuity), len(closes)
        paths = {gen.path: (lg, gen.number) for lg, snap in clean.items() for gen in snap.gens}
        new_vocab = {name: list(getattr(columns, name).values[self.vocab[name] :]) for name in VOCABS}
        problems = [p for p in engine.state.problems if p.path in paths]
        strings = [*paths, *(v for vs in new_vocab.values() for v in vs), *(p.error for p in problems)]
        strings.extend(log.other_events)
        secret = check_strings(strings)
        if secret is not None:
            return self._off(f"it holds a secret ({secret})")
        pieces = self._pieces(continuity, closes, columns.files.values, paths, rows, close_rows)
        if isinstance(pieces, str):
            return self._off(pieces)
        stats = log.stats
        head = _Head(
            stats.events, dict(stats.by_kind), {r: dict(k) for r, k in stats.by_reason.items()}, dict(stats.closes),
            stats.run, stats.peak, stats.last_ms, dict(log.other_events), log.provider_errors, group,
            len(stats.streaks),
        )  # fmt: skip
        head_blob = deflate(pack(msgspec.to_builtins(head)))
        finished = stats.streaks[self.streaks :]
        streak_blob = deflate(pack(msgspec.to_builtins(finished))) if finished else None
        daily = _daily(continuity, closes, columns, (self.rows, rows), (self.closes, close_rows), paths)
        vocab_rows = [(scope, name, self.vocab[name] + i, value)
                      for name, values in new_vocab.items() for i, value in enumerate(values)]  # fmt: skip
        file_stats = {path: engine.stats.get(path) for path in paths}
        chunk_rows = []
        column_rows = []
        for chunk, (a, b), (c, d) in pieces:
            extras = {"continuity": continuity.chunk_extras(a, b), "closes": closes.chunk_extras(c, d)}
            extras_blob = deflate(pack(_text_keys(extras)))
            chunk_rows.append((scope, chunk.seq, chunk.logical, chunk.number, chunk.first_row, chunk.first_close,
                               chunk.rows, chunk.closes, LAYOUT_VERSION, extras_blob))  # fmt: skip
            for table, blobs in (("continuity", continuity.chunk_blobs(a, b)), ("closes", closes.chunk_blobs(c, d))):
                for name, (typecode, data) in blobs.items():
                    column_rows.append((scope, chunk.seq, f"{table}.{name}", typecode, data))
        adapters = {lg: engine.adapters[lg].name for lg in group}
        streak_seq = self.next_streak
        after = (rows, close_rows, len(stats.streaks), {name: len(getattr(columns, name)) for name in VOCABS})
        opened = {(c.logical, c.number): c for c, _, _ in pieces}

        def write(conn: sqlite3.Connection) -> None:
            for lg in group:
                write_stream(conn, scope, clean[lg], "log", adapters[lg], file_stats, problems)
            conn.executemany(
                "INSERT OR REPLACE INTO log_chunks (scope, seq, logical, number, first_row, first_close, rows, "
                "closes, layout, extras) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                chunk_rows,
            )
            conn.executemany(
                "INSERT OR REPLACE INTO log_columns (scope, seq, name, typecode, data) VALUES (?, ?, ?, ?, ?)",
                column_rows,
            )
            conn.executemany("INSERT INTO log_vocab (scope, name, code, value) VALUES (?, ?, ?, ?)", vocab_rows)
            if streak_blob is not None:
                conn.execute(
                    "INSERT INTO log_streaks (scope, seq, data) VALUES (?, ?, ?)", (scope, streak_seq, streak_blob)
                )
            conn.execute(
                "INSERT OR REPLACE INTO log_state (scope, rows, closes, data) VALUES (?, ?, ?, ?)",
                (scope, rows, close_rows, head_blob),
            )
            conn.executemany(
                "INSERT INTO decisions_daily (scope, logical, number, day, kind, reason, lines) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET lines = lines + excluded.lines",
                [(scope, *key, n) for key, n in daily[0].items()],
            )
            conn.executemany(
                "INSERT INTO closes_daily (scope, logical, number, day, reason, lines) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET lines = lines + excluded.lines",
                [(scope, *key, n) for key, n in daily[1].items()],
            )

        def done() -> None:
            self.rows, self.closes, self.streaks, self.vocab = after
            if streak_blob is not None:
                self.next_streak += 1
            self.open.update(opened)
            self.next_chunk = max([self.next_chunk, *(c.seq + 1 for c in opened.values())])
            self.streams = group
            self.written_at = time.monotonic()

        return LogWrite(write, done)

    def _pieces(
        self, continuity: Any, closes: Any, files: list[str], paths: dict[str, tuple[str, int]], rows: int, cl: int
    ) -> list[tuple[_Chunk, tuple[int, int], tuple[int, int]]] | str:
        """The chunks to write for rows [self.rows, rows) and closes [self.closes, cl): a generation's last
        chunk is written again with the rows that follow while it has room, else a new one starts."""
        spans = _by_generation(continuity.file, files, paths, self.rows, rows)
        close_spans = _by_generation(closes.file, files, paths, self.closes, cl)
        if isinstance(spans, str):
            return spans
        if isinstance(close_spans, str):
            return close_spans
        out: list[tuple[_Chunk, tuple[int, int], tuple[int, int]]] = []
        seq = self.next_chunk
        # continuity and close rows of a generation go in the same chunks, generations in reading order
        for gen in dict.fromkeys([g for g, _ in spans] + [g for g, _ in close_spans]):
            a, b = spans_of(spans, gen, rows)
            c, d = spans_of(close_spans, gen, cl)
            last = self.open.get(gen)
            if last is not None and last.first_row + last.rows == a and last.first_close + last.closes == c:
                if last.rows + (b - a) <= CHUNK_ROWS and last.closes + (d - c) <= CHUNK_ROWS:
                    a, c = last.first_row, last.first_close  # the open chunk again, with its new rows
                    chunk_seq: int | None = last.seq
                else:
                    chunk_seq = None
            else:
                chunk_seq = None
            while True:
                b2, d2 = min(b, a + CHUNK_ROWS), min(d, c + CHUNK_ROWS)
                if chunk_seq is None:
                    chunk_seq, seq = seq, seq + 1
                out.append((_Chunk(chunk_seq, gen[0], gen[1], a, c, b2 - a, d2 - c), (a, b2), (c, d2)))
                if b2 >= b and d2 >= d:
                    break
                a, c, chunk_seq = b2, d2, None
        return out


def spans_of(spans: list[tuple[tuple[str, int], tuple[int, int]]], gen: tuple[str, int], end: int) -> tuple[int, int]:
    return next((span for g, span in spans if g == gen), (end, end))


def _by_generation(
    file: array[int], files: list[str], paths: dict[str, tuple[str, int]], start: int, end: int
) -> list[tuple[tuple[str, int], tuple[int, int]]] | str:
    """Rows [start, end) as one span per generation, in row order (a generation's rows are contiguous: its
    file code is the same on every one of them)."""
    out: list[tuple[tuple[str, int], tuple[int, int]]] = []
    row = start
    while row < end:
        code = file[row]
        gen = paths.get(files[code])
        if gen is None:
            return f"log rows of a file no longer read ({files[code]})"
        n = file[row:end].count(code)  # in C; contiguous or not, checked below
        if file[row : row + n].count(code) != n:
            return "a generation's rows are not contiguous"
        if any(g == gen for g, _ in out):
            return "a generation's rows are not contiguous"
        out.append((gen, (row, row + n)))
        row += n
    return out


def _text_keys(extras: dict[str, dict[str, dict[int, object]]]) -> dict[str, dict[str, dict[str, object]]]:
    """The sparse side tables with their row keys as text (`extend_extras` takes either)."""
    return {t: {k: {str(r): v for r, v in m.items()} for k, m in side.items()} for t, side in extras.items()}


def _daily(
    continuity: Any, closes: Any, columns: Any, rows: tuple[int, int], cl: tuple[int, int],
    paths: dict[str, tuple[str, int]],
) -> tuple[Counter[Any], Counter[Any]]:  # fmt: skip
    """Lines per (stream, generation, UTC day, kind, reason) of the new continuity rows, and per (…, day,
    reason) of the new close rows."""
    files, kinds, reasons = columns.files.values, columns.kinds.values, columns.reasons.values
    days: dict[int, str] = {}

    def day(ms: int) -> str:
        key = -1 if ms == NO_TIME else ms // DAY_MS
        text = days.get(key)
        if text is None:
            text = days[key] = "" if key < 0 else time.strftime("%Y-%m-%d", time.gmtime(key * 86_400))
        return text

    gens = {code: paths[path] for code, path in enumerate(files) if path in paths}
    a, b = rows
    decisions: Counter[Any] = Counter()
    for (code, d, kind, reason), n in Counter(
        zip(
            continuity.file[a:b],
            map(day, continuity.ts[a:b]),
            continuity.kind[a:b],
            continuity.reason[a:b],
            strict=True,
        )
    ).items():
        decisions[(*gens[code], d, kinds[kind], reasons[reason])] += n
    c, e = cl
    ends: Counter[Any] = Counter()
    for (code, d, reason), n in Counter(
        zip(closes.file[c:e], map(day, closes.ts[c:e]), closes.reason[c:e], strict=True)
    ).items():
        ends[(*gens[code], d, reasons[reason])] += n
    return decisions, ends
