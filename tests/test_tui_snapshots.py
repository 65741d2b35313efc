"""A few SVG snapshots of the real screens (pytest-textual-snapshot); update with `--snapshot-update`.

The app runs on the fixed fixture with `live=False` and a frozen clock, so the screens are byte-stable.
They show what core's analyses compute (payload bytes, flags), so a deliberate change there means looking at
`snapshot_report.html` and re-running with `--snapshot-update`. Sizes stay below the width where the table
adds the free-text "why" column, and the drill-down is covered by Pilot assertions instead of a picture,
to keep the pictures about layout rather than about analysis wording.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from tui_fixtures import FROZEN, wait_loaded, write_agent

from core.engine import Engine
from tui.app import ContinuityApp


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
        await pilot.pause()

    return run_before


def test_main_screen_100x30(snap_compare: Any, app: ContinuityApp) -> None:
    assert snap_compare(app, terminal_size=(100, 30), run_before=loaded(app))


def test_main_screen_80x24(snap_compare: Any, app: ContinuityApp) -> None:
    assert snap_compare(app, terminal_size=(80, 24), run_before=loaded(app))


def test_sessions_pane_and_filter(snap_compare: Any, app: ContinuityApp) -> None:
    keys = ("s", "j", "enter", "slash", *"-kind:delta", "enter")
    assert snap_compare(app, terminal_size=(100, 30), run_before=loaded(app, *keys))


def test_help(snap_compare: Any, app: ContinuityApp) -> None:
    assert snap_compare(app, terminal_size=(100, 40), run_before=loaded(app, "question_mark"))
