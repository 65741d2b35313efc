"""The layout follows the terminal at every resize (issue 18 item 1).

`App.on_resize` used to read `self.size`, which Textual updates only after the subclass handler ran: each
resize applied the previous size (160x45 -> 80x24 showed the Turns header and 0 rows; back to 160x45 gave the
compact layout without the Sessions pane). Every step here is checked against what the screen shows.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_fixtures import FROZEN, screen_output, wait_for, wait_loaded, write_agent

from core.engine import Engine
from tui.app import SHORT, WIDE, ContinuityApp
from tui.screens.detail import DetailScreen
from tui.widgets.payload_graph import PayloadGraph
from tui.widgets.sessions import SessionList
from tui.widgets.turn_table import TurnTable


@pytest.fixture
def app(tmp_path: Path) -> ContinuityApp:
    root = tmp_path / "agent"
    write_agent(root)
    return ContinuityApp(Engine([root]), live=False, clock=lambda: FROZEN)


def _turn_lines(app: ContinuityApp) -> list[str]:
    _raw, lines = screen_output(app)
    return [line for line in lines if "prefix_matched" in line or "registry_miss" in line]


def _assert_layout(app: ContinuityApp, width: int, height: int) -> None:
    main = app.main
    assert main.has_class("-narrow") == (width < WIDE)
    assert main.has_class("-short") == (height < SHORT)
    sessions = app.main.query_one(SessionList)
    assert (sessions.region.width > 0) == (width >= WIDE), "the sessions pane is beside the table only when wide"
    table = app.main.query_one(TurnTable)
    assert table.region.height >= 3, f"the turn table has {table.region.height} rows at {width}x{height}"
    assert len(_turn_lines(app)) >= min(3, table.region.height), "turn rows are on screen"
    graph = app.main.query_one(PayloadGraph)
    assert graph.capacity == max(1, graph.content_region.width - 6)


async def test_every_resize_applies_the_new_size(app: ContinuityApp) -> None:
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_loaded(pilot, app)
        _assert_layout(app, 160, 45)
        for width, height in ((80, 24), (160, 45), (120, 36), (80, 24), (120, 36), (160, 45)):
            await pilot.resize_terminal(width, height)
            await pilot.pause()
            await wait_for(pilot, lambda w=width, h=height: app.size == (w, h))  # type: ignore[misc]
            await pilot.pause(0.05)
            _assert_layout(app, width, height)


async def test_a_resize_under_the_detail_view_reaches_the_dashboard(app: ContinuityApp) -> None:
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("enter")
        assert isinstance(app.screen, DetailScreen)
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.1)
        assert app.screen.has_class("-narrow")
        await pilot.press("escape")
        await pilot.pause(0.1)
        _assert_layout(app, 80, 24)
        await pilot.press("enter")
        await pilot.resize_terminal(160, 45)
        await pilot.pause(0.1)
        assert not app.screen.has_class("-narrow")
        await pilot.press("escape")
        await pilot.pause(0.1)
        _assert_layout(app, 160, 45)
