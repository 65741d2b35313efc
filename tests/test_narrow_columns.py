"""The log columns start narrow and widen (`core.kernel.logcols`): whatever the values, the rows read back are
the lines that went in, by the exact per-line path, by blocks, through BLOBs and through a part's merge, and
each column ends as wide as its widest value needs (the same typecode whichever way the rows arrived)."""

from __future__ import annotations

import random
from array import array

import pytest

from core.kernel.logcols import _SIGNED, _UNSIGNED, CHUNK_TYPES, LogColumns, converted
from core.logblock import LogBlock
from core.model import CloseLine, ContinuityLine, Where
from core.timeutil import iso_ms

#: a value past each starting width, per column (a line number past 2**32 widens `line` too)
WIDE = {"count": [40_000, 2**31, None, -(2**40)], "length": [70_000, 2**32 + 3], "offset": [2**32 + 7, 2**40],
        "line": [2**32 + 1]}  # fmt: skip


STARTING = {f"{t}.{n}": c for t, names in CHUNK_TYPES.items() for n, c in names.items()}


def lines(rng: random.Random, n: int, *, wide: bool) -> list[ContinuityLine | CloseLine]:
    sessions = rng.choice([3, 127, 128, 300]) if wide else 3
    files = rng.choice([2, 255, 256, 400]) if wide else 2
    out: list[ContinuityLine | CloseLine] = []
    offset = 0
    for i in range(n):
        length = rng.choice(WIDE["length"]) if wide and rng.random() < 0.02 else rng.randint(100, 300)
        where = Where(f"/logs/{rng.randrange(files)}/session.log", i + 1, offset, length)
        if wide and rng.random() < 0.02:
            where.offset = rng.choice(WIDE["offset"])
        if wide and rng.random() < 0.005:
            where.line = rng.choice(WIDE["line"])
        offset += length + 1
        ms = 1_785_800_000_000 + i * 1000
        sid = None if rng.random() < 0.5 else f"s-{rng.randrange(sessions)}"
        if rng.random() < 0.05:
            out.append(CloseLine(where, iso_ms(ms) or "", ms, rng.choice(["idle", "done"]), sid))
            continue
        count: int | None = rng.randint(0, 50)
        if wide and rng.random() < 0.02:
            count = rng.choice(WIDE["count"])
        kind = rng.choice(["delta", "flatten", "fork"])
        out.append(ContinuityLine(where, iso_ms(ms) or "", ms, kind, rng.choice(["a", "b"]), count, sid))
    return out


def by_line(records: list[ContinuityLine | CloseLine]) -> LogColumns:
    cols = LogColumns()
    for record in records:
        if isinstance(record, ContinuityLine):
            cols.continuity.append_line(record)
        else:
            cols.closes.append_line(record)
    return cols


def by_blocks(records: list[ContinuityLine | CloseLine], size: int) -> LogColumns:
    cols = LogColumns()
    for start in range(0, len(records), size):
        blocks: dict[str, LogBlock] = {}
        for record in records[start : start + size]:  # a block is one file's lines
            block = blocks.setdefault(record.where.path, LogBlock(record.where.path))
            block.add(record)
        for block in blocks.values():
            cols.continuity.append_block(block)
            cols.closes.append_block(block)
    return cols


def rows_of(cols: LogColumns) -> tuple[list[ContinuityLine], list[CloseLine]]:
    return list(cols.continuity), list(cols.closes)


def typecodes(cols: LogColumns) -> dict[str, str]:
    return {f"{table}.{name}": getattr(getattr(cols, table), name).typecode for table in CHUNK_TYPES
            for name in CHUNK_TYPES[table]}  # fmt: skip


def test_narrow_lines_keep_the_starting_widths() -> None:
    cols = by_line(lines(random.Random(1), 500, wide=False))
    assert typecodes(cols) == STARTING
    assert sum(getattr(cols.continuity, name).itemsize for name in CHUNK_TYPES["continuity"]) == 24


@pytest.mark.parametrize("seed", range(12))
def test_wide_values_widen_and_read_back_the_same_lines(seed: int) -> None:
    rng = random.Random(seed)
    records = lines(rng, rng.randint(200, 3000), wide=True)
    one = by_line(records)
    want_continuity = [r for r in records if isinstance(r, ContinuityLine)]
    want_closes = [r for r in records if isinstance(r, CloseLine)]
    assert rows_of(one) == (want_continuity, want_closes)
    widened = {name for name, code in typecodes(one).items() if code != STARTING[name]}
    assert {"continuity.count", "continuity.offset", "continuity.length"} <= widened
    # blocks of one file: the same rows only when the files do not interleave, so compare per arrival order
    single = [r for r in records if r.where.path == records[0].where.path]
    assert rows_of(by_blocks(single, rng.choice([7, 100, 5000]))) == rows_of(by_line(single))
    assert typecodes(by_blocks(single, 64)) == typecodes(by_line(single))


@pytest.mark.parametrize("seed", range(6))
def test_blobs_of_any_width_load_into_a_fresh_store(seed: int) -> None:
    rng = random.Random(seed)
    records = lines(rng, 1500, wide=seed % 2 == 1)
    source = by_line(records)
    loaded = LogColumns()
    loaded.restore_vocabularies(source.vocabularies())
    for table in ("continuity", "closes"):
        src, dst = getattr(source, table), getattr(loaded, table)
        for start in range(0, len(src), 400):
            end = min(len(src), start + 400)
            blobs = src.chunk_blobs(start, end)
            if rng.random() < 0.5:  # a chunk an older store wrote at the old fixed widths
                old = {"count": "q", "session": "i", "file": "I", "offset": "Q", "length": "I"}
                for name, (typecode, data) in list(blobs.items()):
                    if name in old and typecode in "BHIbhi":
                        column = array(typecode)
                        column.frombytes(data)
                        blobs[name] = (old[name], array(old[name], column).tobytes())
            dst.extend_blobs(blobs)
            dst.extend_extras(start, src.chunk_extras(start, end))
    assert rows_of(loaded) == rows_of(source)


def test_signed_widths_are_the_signed_typecodes() -> None:
    assert {code: array(code).itemsize for code in _SIGNED} == _SIGNED


@pytest.mark.parametrize("seed", range(6))
def test_a_part_merged_into_a_store_with_other_codes_reads_back_its_lines(seed: int) -> None:
    """`extend_translated` (the pool's merge): codes through this store's vocabularies, lines moved by the
    lines before the part, whatever width either side's columns have."""
    rng = random.Random(seed)
    before = lines(random.Random(seed + 100), 300, wide=seed % 2 == 0)
    part = by_line(lines(rng, 1200, wide=seed % 3 != 0))
    store = by_line(before)
    base = rng.choice([0, 1000, 2**32 - 10])
    vocab = part.vocabularies()
    for table in ("continuity", "closes"):
        src = getattr(part, table)
        getattr(store, table).extend_translated(
            src.chunk_blobs(0, len(src)), src.chunk_extras(0, len(src)), vocab, base
        )
    moved = [(r.where.path, r.where.line + base) for r in [*part.continuity, *part.closes]]
    merged = [*store.continuity][300 - sum(isinstance(r, CloseLine) for r in before) :]
    merged_closes = [*store.closes][sum(isinstance(r, CloseLine) for r in before) :]
    assert [(r.where.path, r.where.line) for r in [*merged, *merged_closes]] == moved
    strip = [(r.ts, r.kind, r.reason, r.count, r.session_id, r.where.offset, r.where.length) for r in part.continuity]
    assert [(r.ts, r.kind, r.reason, r.count, r.session_id, r.where.offset, r.where.length) for r in merged] == strip
    assert [(r.ts, r.reason, r.session_id) for r in merged_closes] == [
        (r.ts, r.reason, r.session_id) for r in part.closes
    ]


@pytest.mark.parametrize("seed", range(40))
def test_lane_copies_equal_the_conversion_value_by_value(seed: int) -> None:
    """`converted` (strided byte copies) gives what ``array(typecode, values)`` gives, and None exactly where
    that raises OverflowError."""
    rng = random.Random(seed)
    widths = rng.choice([_SIGNED, _UNSIGNED])
    src, dst = rng.choice(list(widths)), rng.choice(list(widths))
    bits = 8 * widths[src]
    low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if widths is _SIGNED else (0, 2**bits - 1)
    edge = [low, high, 0, -1, 1, 127, 128, -128, -129, 255, 256, 32767, 32768, -32768, -32769, 2**31, 2**32]
    pool = [v for v in edge if low <= v <= high]
    picks = [rng.choice([rng.choice(pool), rng.randint(low, high), rng.randint(-300, 300)]) for _ in range(400)]
    values = array(src, [v for v in picks if low <= v <= high][: rng.randint(0, 400)])
    if rng.random() < 0.5:  # mostly values that fit, as a block's do
        values = array(src, [v for v in values if -100 <= v <= 100])
    try:
        want: array[int] | None = array(dst, values)
    except OverflowError:
        want = None
    assert converted(values, dst) == want, (src, dst)
