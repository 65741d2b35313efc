"""Decisions over time as a bounded series of buckets: counts by kind per time slice.

The JSON carries the log's decisions as aggregates, not one entry per line (a busy log has hundreds of
thousands), so the timeline the HTML draws is bucketed here: at most `MAX_BUCKETS` slices of a round width
(1 s … 1 d), each with a count per kind. It is added to the report as `continuity.timeline` (a new field).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core.model import KINDS
from core.timeutil import iso_ms

MAX_BUCKETS = 120
_WIDTHS_MS = (
    1_000, 2_000, 5_000, 10_000, 15_000, 30_000,
    60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000,
    3_600_000, 7_200_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000,
)  # fmt: skip


def bucket_width(span_ms: int, max_buckets: int = MAX_BUCKETS) -> int:
    """The smallest round width that fits `span_ms` into `max_buckets` slices."""
    for width in _WIDTHS_MS:
        if span_ms < width * max_buckets:
            return width
    days = _WIDTHS_MS[-1]
    return days * (span_ms // (days * max_buckets) + 1)


def timeline(events: Iterable[tuple[int | None, str]], max_buckets: int = MAX_BUCKETS) -> dict[str, Any] | None:
    """(epoch ms, kind) pairs -> `{start, end, bucket_ms, kinds, buckets}`; None when nothing has a time.

    `buckets[i][j]` counts events of `kinds[j]` in `[start + i*bucket_ms, start + (i+1)*bucket_ms)`;
    the five kinds always come first, then any other kind seen.
    """
    timed = [(ms, kind) for ms, kind in events if ms is not None]
    if not timed:
        return None
    first = min(ms for ms, _ in timed)
    last = max(ms for ms, _ in timed)
    width = bucket_width(last - first, max_buckets)
    start = first - first % width
    count = (last - start) // width + 1
    kinds = list(KINDS)
    kinds.extend(sorted({kind for _, kind in timed} - set(kinds)))
    column = {kind: i for i, kind in enumerate(kinds)}
    buckets = [[0] * len(kinds) for _ in range(count)]
    for ms, kind in timed:
        buckets[(ms - start) // width][column[kind]] += 1
    return {
        "start": iso_ms(start),
        "end": iso_ms(start + count * width),
        "bucket_ms": width,
        "kinds": kinds,
        "buckets": buckets,
    }
