"""Below 100 columns the Waste pane gives way to Rates and Directives; the status line then carries the waste
figure, so the first screen at 80x24 still says what re-writing cache cost (issue 14's "first screen")."""

from __future__ import annotations

from pathlib import Path

import pytest
from realdata import copy_set
from tui_fixtures import FROZEN, wait_loaded

from core.engine import Engine
from core.report import build_report
from tui.app import ContinuityApp
from tui.widgets.status import StatusLine
from tui.widgets.waste import WastePane, usd


@pytest.mark.parametrize(("size", "in_status"), [((80, 24), True), ((160, 45), False)])
async def test_the_waste_figure_is_on_the_first_screen(tmp_path: Path, size: tuple[int, int], in_status: bool) -> None:
    copy_set("cc-marot-spotter", tmp_path / "cc")
    engine = Engine([tmp_path / "cc"])
    engine.drain()
    excess = build_report(engine)["waste"]["cost_usd"]["excess"]
    app = ContinuityApp(Engine([tmp_path / "cc"]), live=False, clock=lambda: FROZEN)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot, app, timeout=30)
        await pilot.pause()
        line = app.query_one(StatusLine).compose_line().plain
        pane = app.query_one(WastePane)
        assert pane.display is not in_status
        assert (f"waste {usd(excess)} of $" in line) is in_status, line
