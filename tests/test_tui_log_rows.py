"""The logs-only turn table (`tui.view.RowIndex` over `tui.logrows.LogRowView`): rows in time order, undated rows
where they were read, ties in reading order; a live tail appended in time order after an out-of-order read is
read past the end of the order as itself, not copied into it."""

from __future__ import annotations

import random
from types import SimpleNamespace

from core.kernel.logcols import LogColumns
from core.model import ContinuityLine, Where
from tui.view import RowIndex


def _expected(times: list[int | None]) -> list[int]:
    eff, last = [], 0
    for ms in times:
        if ms is not None:
            last = max(last, ms)
        eff.append(last if ms is None else ms)
    return sorted(range(len(times)), key=eff.__getitem__)


def test_log_rows_in_time_order_with_an_in_order_tail_read_past_the_order() -> None:
    rng = random.Random(3)
    for _ in range(20):
        cols = LogColumns()
        state = SimpleNamespace(sessions={}, log=SimpleNamespace(continuity=cols.continuity))
        index = RowIndex()
        times: list[int | None] = []
        newest = 0
        for step in range(rng.randrange(2, 8)):
            for _ in range(rng.randrange(1, 30)):
                if step == 0 or rng.random() < 0.2:  # out of order (the first read, and now and then)
                    ms = rng.choice([None, rng.randrange(0, 10_000)])
                else:  # a live tail: no older than anything read
                    ms = rng.choice([None, newest + rng.randrange(0, 50)])
                if ms is not None:
                    newest = max(newest, ms)
                i = len(times)
                times.append(ms)
                cols.continuity.append_line(ContinuityLine(Where("/l", i + 1, i, 1), "", ms, "fork", "r", i))
            index.update(state)  # type: ignore[arg-type]
            shown = [row.count for row in index.rows()]
            assert shown == _expected(times)
