"""When a drain delivers each byte: the reading order of `Sources` replayed in plain data.

A report drains its files in polls of `chunk` bytes, round-robin over the streams in discovery order (a stream
cut by the budget is resumed after the others: `Sources._read_round_robin`). Whatever pairs things across files
by the order they are read in (log lines crediting build evidence to the sessions that exist when they are
read) gives a resumed run the same result as a cold one only if it meets them in the same order; this module
says, for a cold drain and for a resumed one (its streams starting at their stored offsets), when each line
arrives, so `core.index` can compare the two without reading anything again.
`tests/index/test_order.py` checks it against real drains at several chunk sizes.
"""

from __future__ import annotations

from collections.abc import Mapping

Layout = list[tuple[str, list[tuple[str, int]]]]
"""`Sources.layout()`: per stream in discovery order, its generations oldest first as (path, size)."""

Arrival = tuple[int, int, int]
"""(poll, visit within the poll, end byte in the stream): arrivals sort in delivery order."""

BEFORE = (-1, -1, -1)
"""The arrival of a byte a resumed run did not read (it was read by the run that stored it)."""


class DrainOrder:
    """Arrival times of a drain of `layout` in polls of `chunk` bytes, each stream starting at `start`."""

    def __init__(self, layout: Layout, chunk: int, start: Mapping[str, int] | None = None) -> None:
        start = start or {}
        self._base: dict[str, tuple[str, int]] = {}  # path -> (logical, stream bytes of the older generations)
        sizes: dict[str, int] = {}
        for logical, gens in layout:
            offset = 0
            for path, size in gens:
                self._base[path] = (logical, offset)
                offset += size
            sizes[logical] = offset
        order = [logical for logical, _ in layout]
        self._start = {logical: min(start.get(logical, 0), sizes[logical]) for logical in order}
        self._stretches: dict[str, list[tuple[int, int, int, int]]] = {logical: [] for logical in order}
        pos = dict(self._start)
        rr, poll = 0, 0
        while order and any(pos[lg] < sizes[lg] for lg in order):
            budget, visit = chunk, 0
            for i in range(len(order)):
                idx = (rr + i) % len(order)
                logical = order[idx]
                if pos[logical] >= sizes[logical]:
                    continue
                take = min(budget, sizes[logical] - pos[logical])
                self._stretches[logical].append((poll, visit, pos[logical], pos[logical] + take))
                visit += 1
                pos[logical] += take
                budget -= take
                if pos[logical] < sizes[logical]:
                    rr = (idx + 1) % len(order) if take else idx
                    break
            poll += 1

    def arrival(self, path: str, offset: int, length: int) -> Arrival | None:
        """When the line at `offset` (of `length` bytes, without its newline) of `path` is delivered: it arrives
        with its newline. `BEFORE` for a line the run did not read; None for a path not in the layout."""
        found = self._base.get(path)
        if found is None:
            return None
        logical, base = found
        end = base + offset + length + 1
        if end <= self._start[logical]:
            return BEFORE
        for poll, visit, first, stop in self._stretches[logical]:
            if first < end <= stop:
                return (poll, visit, end)
        return None

    def stretches(self, logical: str) -> list[tuple[int, int, int, int]]:
        """The (poll, visit, first byte, end byte) reads of stream `logical`, in delivery order (empty for a
        stream not in the layout): which lines of several files a drain delivers before which."""
        return list(self._stretches.get(logical, ()))
