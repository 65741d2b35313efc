"""The turn table's rows in logs-only mode: a view over the log's columns, not one object per line.

A 1.1M-line log as rows was 1.1M `ContinuityLine`s plus a sort-key tuple each (~700 MB in the dashboard, review
§1). The view holds the columns, a length (the snapshot's), and an order only when the lines did not arrive in
time order; a row is made when it is read (the table's visible rows, a filter's pass) and kept in a small cache,
so the row the cursor is on stays the same object from one snapshot to the next (the table finds it again by
identity).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import overload

from core.kernel.logcols import ContinuityRows
from core.model import ContinuityLine

CACHE_ROWS = 4096
"""Rows kept made (a screen shows < 100; a filter's pass makes every row once and keeps the last ones)."""


class LogRowView(Sequence[ContinuityLine]):
    """Rows 0..n-1 of `rows`, in `order` (indices into the table) when given, else in reading order; positions
    past the end of `order` are rows appended in time order after it was made, read as themselves."""

    def __init__(
        self, rows: ContinuityRows, n: int, order: array[int] | None, cache: dict[int, ContinuityLine]
    ) -> None:
        self._rows = rows
        self._n = n
        self._order = order
        self._cache = cache

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> ContinuityLine: ...

    @overload
    def __getitem__(self, index: slice) -> list[ContinuityLine]: ...

    def __getitem__(self, index: int | slice) -> ContinuityLine | list[ContinuityLine]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._n))]
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError(index)
        order = self._order
        row = index if order is None or index >= len(order) else order[index]  # past the order: reading order
        cache = self._cache
        line = cache.get(row)
        if line is None:
            if len(cache) >= CACHE_ROWS:
                cache.pop(next(iter(cache)))
            line = cache[row] = self._rows[row]
        return line
