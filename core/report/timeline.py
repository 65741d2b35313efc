"""Decisions over time as a bounded sequence: consecutive decisions grouped, counts by kind per group.

The JSON carries the log's decisions as aggregates, not one entry per line (a busy log has hundreds of
thousands), so the timeline the HTML draws is prepared here and added as `continuity.timeline` (a new
field). The axis is the order of the decisions, not wall-clock time: agent logs are bursts separated by
hours or days, and a time axis would squeeze every burst into one bar, while the sequence keeps streaks
visible. Each group records when it started and ended, so the drawing can mark the gaps between bursts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

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
