"""Every key binding is documented in `tui.keys` (so `?` never goes stale), and the less common keys work."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.binding import Binding
from tui_fixtures import FROZEN, wait_for, wait_loaded, write_agent

from core.engine import Engine
from tui.app import ContinuityApp
from tui.keys import KEYS
from tui.screens.detail import DetailScreen
from tui.view import is_rewritten
from tui.widgets.directives import DirectivePane
from tui.widgets.rowlist import RowList
from tui.widgets.turn_table import TurnTable

SHOWN = {"slash": "/", "question_mark": "?", "up": "↑", "down": "↓", "pageup": "PgUp", "pagedown": "PgDn",
         "home": "Home", "end": "End", "enter": "Enter", "escape": "Esc"}  # fmt: skip


def _keys(bindings: list[object]) -> set[str]:
    out: set[str] = set()
    for binding in bindings:
        assert isinstance(binding, Binding)
        out.update(key.strip() for key in binding.key.split(","))
    return out


def test_every_binding_is_in_help() -> None:
    documented = " ".join(k.keys for k in KEYS).split()
    for key in _keys(ContinuityApp.BINDINGS) | _keys(RowList.BINDINGS):
        assert SHOWN.get(key, key) in documented, f"{key!r} is bound but not listed in tui.keys.KEYS"


@pytest.fixture
def app(tmp_path: Path) -> ContinuityApp:
    root = tmp_path / "agent"
    write_agent(root)
    return ContinuityApp(Engine([root]), live=False, clock=lambda: FROZEN)


async def test_r_inside_a_detail_opens_the_next_rewritten_turn(app: ContinuityApp) -> None:
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot, app)
        table = app.query_one(TurnTable)
        rewritten = [i for i in range(table.row_count) if is_rewritten(table.row_at(i))]
        await pilot.press("home", "r", "enter")
        assert isinstance(app.screen, DetailScreen) and app.screen.turn is table.row_at(rewritten[0])
        await pilot.press("r")
        await wait_for(
            pilot, lambda: isinstance(app.screen, DetailScreen) and app.screen.turn is table.row_at(rewritten[1])
        )
        assert app.screen.turn is table.row_at(rewritten[1])  # type: ignore[attr-defined]
        await pilot.press("escape")
        assert not isinstance(app.screen, DetailScreen)
        assert table.cursor == rewritten[1]  # Esc lands where the detail was


async def test_zoom_from_the_palette_and_escape(app: ContinuityApp) -> None:
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("ctrl+p", *"Zoom directive")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.main.maximized is not None)
        assert isinstance(app.main.maximized, DirectivePane)
        await pilot.press("escape")
        assert app.main.maximized is None


async def test_mouse_scroll_up_pauses_following(app: ContinuityApp) -> None:
    async with app.run_test(size=(120, 24)) as pilot:
        await wait_loaded(pilot, app)
        assert app.following
        table = app.query_one(TurnTable)
        table.post_message(events.MouseScrollUp(table, 2, 2, 0, -1, 0, False, False, False))
        await pilot.pause()
        assert not app.following
        await pilot.press("end")
        assert app.following


async def test_palette_picks_a_session(app: ContinuityApp) -> None:
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("ctrl+p", *"Session 0198f0b2")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.row_filter.session_id is not None)
        assert app.row_filter.session_id is not None and app.row_filter.session_id.startswith("0198f0b2")
        assert app.query_one(TurnTable).row_count == 5
