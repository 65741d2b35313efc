"""`m` in the turn view zooms what has focus, after Tab and after `r` too (issue 18 item 8).

After one Tab the focus is on the summary scroller, which Textual's containers refuse to maximize, so `m` did
nothing; a JSON side zoomed without its box (and so without the title naming the side).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_fixtures import FROZEN, wait_for, wait_loaded, write_agent

from core.engine import Engine
from tui.app import ContinuityApp
from tui.screens.detail import DetailScreen


@pytest.fixture
def app(tmp_path: Path) -> ContinuityApp:
    root = tmp_path / "agent"
    write_agent(root)
    return ContinuityApp(Engine([root]), live=False, clock=lambda: FROZEN)


def _zoomed(app: ContinuityApp) -> str | None:
    widget = app.screen.maximized
    return None if widget is None else widget.id


@pytest.mark.parametrize("size", [(160, 45), (120, 36), (80, 24)])
async def test_m_zooms_after_tab_and_after_r(app: ContinuityApp, size: tuple[int, int]) -> None:
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("home", "r", "enter")
        assert isinstance(app.screen, DetailScreen)
        await pilot.press("m")
        assert _zoomed(app) == "commit-box"
        assert app.screen.maximized is not None and app.screen.maximized.region.height >= size[1] - 2
        await pilot.press("m")
        assert _zoomed(app) is None
        await pilot.press("tab")
        assert app.screen.focused is not None and app.screen.focused.id == "detail-summary"
        await pilot.press("m")
        assert _zoomed(app) == "detail-summary"
        assert app.screen.maximized is not None and app.screen.maximized.region.height >= size[1] - 2
        await pilot.press("escape")  # Esc restores the zoom first, the view stays
        assert _zoomed(app) is None and isinstance(app.screen, DetailScreen)
        await pilot.press("tab", "m")
        assert _zoomed(app) == "capture-box"
        await pilot.press("m", "tab", "tab", "r")  # from the summary's focus, on to the next rewritten turn
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen) and app.screen.is_current)
        await pilot.pause(0.1)
        await pilot.press("m")
        assert _zoomed(app) == "commit-box"
        await pilot.press("escape", "escape")
        assert not isinstance(app.screen, DetailScreen)
