"""A few SVG snapshots of the real screens (pytest-textual-snapshot); update with `--snapshot-update`.

The app runs on the fixed fixture with `live=False` and a frozen clock, so the screens are byte-stable.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from tui_fixtures import FROZEN, wait_for, wait_loaded, write_agent

from core.engine import Engine
from tui.app import ContinuityApp
from tui.widgets.json_view import JsonView


@pytest.fixture
def app(tmp_path: Path) -> ContinuityApp:
    root = tmp_path / "agent"
    write_agent(root)
    return ContinuityApp(Engine([root]), live=False, clock=lambda: FROZEN)


def loaded(app: ContinuityApp, *keys: str) -> Callable[[Any], Awaitable[None]]:
    async def run_before(pilot: Any) -> None:
        await wait_loaded(pilot, app)
        if keys:
            await pilot.press(*keys)
        if "enter" in keys:
            await wait_for(pilot, lambda: "loading" not in app.screen.query_one("#commit", JsonView).lines[0].text)
        await pilot.pause()

    return run_before


def test_main_screen_120x36(snap_compare: Any, app: ContinuityApp) -> None:
    assert snap_compare(app, terminal_size=(120, 36), run_before=loaded(app))


def test_main_screen_80x24(snap_compare: Any, app: ContinuityApp) -> None:
    assert snap_compare(app, terminal_size=(80, 24), run_before=loaded(app))


def test_turn_detail(snap_compare: Any, app: ContinuityApp) -> None:
    assert snap_compare(app, terminal_size=(120, 36), run_before=loaded(app, "home", "j", "j", "enter"))


def test_help(snap_compare: Any, app: ContinuityApp) -> None:
    assert snap_compare(app, terminal_size=(100, 40), run_before=loaded(app, "question_mark"))
