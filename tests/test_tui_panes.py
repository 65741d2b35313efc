"""One registry of panes (`tui.panes.PANES`) is what compose, help and the zoom commands read."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_fixtures import FROZEN, wait_for, wait_loaded, write_agent

from core.engine import Engine
from tui.app import ContinuityApp
from tui.panes import PANES, zoomable
from tui.screens.help import help_content
from tui.widgets.turn_table import TurnPane


@pytest.fixture
def app(tmp_path: Path) -> ContinuityApp:
    root = tmp_path / "agent"
    write_agent(root)
    return ContinuityApp(Engine([root]), live=False, clock=lambda: FROZEN)


def test_help_lists_every_pane() -> None:
    text = " ".join(help_content().plain.split())  # (wrapped to the screen's width)
    for pane in PANES:
        assert pane.title in text and " ".join(pane.help.split()) in text


async def test_compose_and_zoom_follow_the_registry(app: ContinuityApp) -> None:
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_loaded(pilot, app)
        for pane in PANES:
            widget = app.main.query_one(f"#{pane.id}")
            assert isinstance(widget, pane.widget)
            assert widget.allow_maximize == pane.zoomable
            assert widget.border_title
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for pane in zoomable():
            assert f"Zoom {pane.title.lower()}" in titles


@pytest.mark.parametrize("size", [(160, 45), (80, 24)])
async def test_m_zooms_the_turn_table_and_esc_restores(app: ContinuityApp, size: tuple[int, int]) -> None:
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("m")
        assert isinstance(app.main.maximized, TurnPane)
        assert app.main.query_one(TurnPane).region.height >= size[1] - 4
        await pilot.press("m")
        assert app.main.maximized is None
        await pilot.press("m", "escape")
        assert app.main.maximized is None


async def test_zoom_sessions_from_the_palette_when_narrow(app: ContinuityApp) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("ctrl+p", *"Zoom sessions")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.main.maximized is not None)
        assert app.main.maximized is app.main.query_one("#sessions")
        assert app.main.maximized.region.width > 60
