"""Decisions over time as a bounded sequence: consecutive decisions grouped, counts by kind per group.

The JSON carries the log's decisions as aggregates, not one entry per line (a busy log has hundreds of
thousands), so the timeline the HTML draws is prepared here and added as `continuity.timeline` (a new
field). The axis is the order of the decisions, not wall-clock time: agent logs are bursts separated by
hours or days, and a time axis would squeeze every burst into one bar, while the sequence keeps streaks
visible. Each group records when it started and ended, so the drawing can mark the gaps between bursts.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from itertools import compress, groupby, repeat
from typing import Any

from core.kernel.logcols import ContinuityRows
from core.logblock import NO_TIME, LogBlock
from core.model import KINDS
from core.timeutil import iso_ms

MAX_GROUPS = 480


def timeline(
    events: Iterable[tuple[int | None, str]], max_groups: int = MAX_GROUPS, order: tuple[str, ...] = KINDS
) -> dict[str, Any] | None:
    """(epoch ms or None, kind) in reading order -> `{kinds, group_size, starts, ends, counts}`; None if empty.

    `counts[i][j]` counts decisions of `kinds[j]` in the i-th run of `group_size` consecutive decisions (the
    last run may be shorter); `starts[i]` / `ends[i]` are the first and last known times in it. The kinds of
    `order` always come first (senpi's five for log lines, every call kind for calls), then any other kind seen.
    """
    items = list(events)
    if not items:
        return None
    size = -(-len(items) // max_groups)
    kinds = list(order)
    kinds.extend(sorted({kind for _, kind in items} - set(kinds)))
    column = {kind: i for i, kind in enumerate(kinds)}
    starts: list[str | None] = []
    ends: list[str | None] = []
    counts: list[list[int]] = []
    for first in range(0, len(items), size):
        chunk = items[first : first + size]
        row = [0] * len(kinds)
        for _, kind in chunk:
            row[column[kind]] += 1
        times = [ms for ms, _ in chunk if ms is not None]
        starts.append(iso_ms(min(times)) if times else None)
        ends.append(iso_ms(max(times)) if times else None)
        counts.append(row)
    return {"kinds": kinds, "group_size": size, "starts": starts, "ends": ends, "counts": counts}


def timeline_rows(
    rows: ContinuityRows, keep: list[bool] | None = None, max_groups: int = MAX_GROUPS
) -> dict[str, Any] | None:
    """`timeline` over the continuity columns (the rows `keep` selects, else all), group by group in C: the
    same document as `timeline` of the rows' (time, kind) pairs."""
    ts, codes = rows.ts, rows.kind
    if keep is not None:
        ts = array("q", compress(ts, keep))
        codes = array(codes.typecode, compress(codes, keep))
    n = len(ts)
    if not n:
        return None
    size = -(-n // max_groups)
    names = rows.kinds.values
    present = sorted(set(codes))
    kinds = list(KINDS)
    kinds.extend(sorted({names[code] for code in present} - set(kinds)))
    column = {name: i for i, name in enumerate(kinds)}
    used = [(code, column[names[code]]) for code in present]
    starts: list[str | None] = []
    ends: list[str | None] = []
    counts: list[list[int]] = []
    # one-byte codes are counted as bytes (a C byte count, ~20x faster than `array.count`'s per-item compare)
    packed: bytes | array[int] = codes.tobytes() if codes.itemsize == 1 else codes
    needles: list[tuple[bytes | int, int]] = [(bytes((c,)) if codes.itemsize == 1 else c, at) for c, at in used]
    for first in range(0, n, size):
        group = packed[first : first + size]
        row = [0] * len(kinds)
        for needle, at in needles:
            row[at] += group.count(needle)  # type: ignore[arg-type]
        times = ts[first : first + size]
        newest = max(times)
        if newest == NO_TIME:
            starts.append(None)
            ends.append(None)
        else:
            oldest = min(times)
            if oldest == NO_TIME:
                oldest = min(filter(NO_TIME.__ne__, times))
            starts.append(iso_ms(oldest))
            ends.append(iso_ms(newest))
        counts.append(row)
    return {"kinds": kinds, "group_size": size, "starts": starts, "ends": ends, "counts": counts}


def select_rows(rows: ContinuityRows, keep: list[bool]) -> LogBlock:
    """The rows `keep` selects as one block (runs recomputed over them): what a windowed report aggregates."""
    block = LogBlock("")
    kinds, reasons = rows.kinds.values, rows.reasons.values
    selected = list(compress(range(len(rows)), keep))
    pairs = zip(compress(rows.kind, keep), compress(rows.reason, keep), strict=True)
    block.runs = [(kinds[k], reasons[r], len(list(g))) for (k, r), g in groupby(pairs)]
    for kind, reason, n in block.runs:
        code = block.pair_code(kind, reason)
        if code > 255 and not isinstance(block.codes, array):
            block.codes = array("H", iter(block.codes))  # iter: array("H", bytes) would reread the raw bytes
        block.codes.extend(repeat(code, n) if isinstance(block.codes, array) else bytes((code,)) * n)
    block.ts = array("q", compress(rows.ts, keep))
    block.count = array("q", compress(rows.count, keep))
    block.big_counts = {i: rows.big_counts[row] for i, row in enumerate(selected) if row in rows.big_counts}
    block.texts = {i: rows.texts[row] for i, row in enumerate(selected) if row in rows.texts}
    return block
