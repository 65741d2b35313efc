"""The Rates pane's re-send share is formatted once, from the exact ratio, like the reports: spotter's 6 of 573
calls is 1.047 %; rounded to the report's 4 decimals first (0.0105) and then to one, the pane said 1.1 % where
the Markdown said 1.0 %."""

from __future__ import annotations

import re
from pathlib import Path

from realdata import copy_set
from textual.content import Content
from tui_fixtures import FROZEN, wait_loaded

from core.engine import Engine
from core.report import build_report
from tui.app import ContinuityApp
from tui.widgets.rates import RatesPane


async def test_rates_share_equals_the_reports(tmp_path: Path) -> None:
    copy_set("cc-marot-spotter", tmp_path / "cc")
    engine = Engine([tmp_path / "cc"])
    engine.drain()
    calls = build_report(engine)["calls"]
    resends = calls["by_kind"]["re-send"] + calls["by_kind"]["fork"] + calls["by_kind"]["flatten"]
    exact = resends / (calls["total"] - calls["by_kind"]["aborted"])
    assert f"{exact * 100:.1f}" != f"{round(exact, 4) * 100:.1f}"  # the case that double rounding got wrong
    app = ContinuityApp(Engine([tmp_path / "cc"]), live=False, clock=lambda: FROZEN)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_loaded(pilot, app, timeout=30)
        subtitle = Content.from_markup(app.query_one(RatesPane).border_subtitle).plain
        shown = re.search(r"resend ([\d.]+)%", subtitle)
        assert shown is not None, subtitle
        assert shown.group(1) == f"{exact * 100:.1f}", subtitle
