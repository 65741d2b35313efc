"""Pilot tests of the dashboard: every key, the drill-down round trip, live appends, export, filters."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.command import CommandPalette
from tui_fixtures import (
    FROZEN,
    continuity_line,
    screen_output,
    wait_for,
    wait_loaded,
    write_agent,
)

from core.engine import Engine
from tui.app import ContinuityApp
from tui.screens.detail import DetailScreen
from tui.screens.help import HelpScreen
from tui.screens.problems import ProblemsScreen
from tui.view import is_rewritten
from tui.widgets.json_view import JsonView
from tui.widgets.payload_graph import PayloadGraph
from tui.widgets.rates import RatesPane
from tui.widgets.sessions import SessionList
from tui.widgets.turn_table import TurnTable


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    root = tmp_path / "agent"
    write_agent(root)
    return root


def make_app(paths: list[Path], *, live: bool = False, watch: bool = False, **kw: object) -> ContinuityApp:
    engine = Engine(paths, watch=watch)
    return ContinuityApp(engine, live=live, clock=(lambda: FROZEN) if not live else time.time, **kw)  # type: ignore[arg-type]


def rewritten_rows(app: ContinuityApp) -> list[int]:
    """Table indices of the rewritten turns (the fixture has two, judged by core's commit analysis)."""
    t = app.query_one(TurnTable)
    return [i for i in range(t.row_count) if is_rewritten(t.row_at(i))]


def table(app: ContinuityApp) -> TurnTable:
    return app.query_one(TurnTable)


async def test_first_frame_shows_every_pane(agent: Path) -> None:
    app = make_app([agent])
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_loaded(pilot, app)
        assert table(app).row_count == 18
        _raw, lines = screen_output(app)
        text = "\n".join(lines)
        for title in ("Rates", "Directives", "Payload", "Sessions", "Turns"):
            assert title in text
        assert "flatten" in text and "prefix_matched" in text
        assert "1 problem" in text  # the broken log line
        assert "3 files" in text


async def test_cursor_keys(agent: Path) -> None:
    app = make_app([agent])
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot, app)
        t = table(app)
        assert t.cursor == 17 and app.following
        await pilot.press("k")
        assert t.cursor == 16 and not app.following  # moving up pauses the tail
        await pilot.press("up", "up")
        assert t.cursor == 14
        await pilot.press("j")
        assert t.cursor == 15
        await pilot.press("down")
        assert t.cursor == 16
        await pilot.press("home")
        assert t.cursor == 0
        await pilot.press("pagedown")
        assert t.cursor > 1
        await pilot.press("pageup")
        assert t.cursor == 0
        await pilot.press("end")
        assert t.cursor == 17 and app.following  # End resumes following


async def test_enter_and_escape_return_to_the_same_row(agent: Path) -> None:
    app = make_app([agent])
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("home", "j", "j", "j")
        t = table(app)
        row, cursor, scroll = t.current, t.cursor, t.scroll_offset
        await pilot.press("enter")
        assert isinstance(app.screen, DetailScreen)
        assert app.screen.turn is row
        await wait_for(pilot, lambda: "loading" not in app.screen.query_one("#commit", JsonView).lines[0].text)
        await pilot.press("escape")
        assert not isinstance(app.screen, DetailScreen)
        assert t.current is row and t.cursor == cursor and t.scroll_offset == scroll


async def test_r_and_shift_r_jump_between_rewritten_turns(agent: Path) -> None:
    app = make_app([agent])
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot, app)
        marked = rewritten_rows(app)
        assert len(marked) == 2
        await pilot.press("home")
        await pilot.press("r")
        assert table(app).cursor == marked[0]
        assert not app.following
        await pilot.press("r")
        assert table(app).cursor == marked[1]
        await pilot.press("r")  # none after the last: wraps around to the first, like an editor's search
        assert table(app).cursor == marked[0]
        await pilot.press("R")  # and backwards from the first to the last
        assert table(app).cursor == marked[1]
        await pilot.press("R")
        assert table(app).cursor == marked[0]
        await pilot.press("enter")
        screen = app.screen
        assert isinstance(screen, DetailScreen)
        await wait_for(pilot, lambda: screen.query_one("#commit", JsonView).changed != {})
        _raw, lines = screen_output(app)
        text = "\n".join(lines)
        assert ".content[0].startedAt" in text and "REWRITTEN" in text
        assert "startedAt" in text and "endedAt" in text  # the committed message, read back from disk
        await pilot.press("escape")


async def test_filter_bar(agent: Path) -> None:
    app = make_app([agent])
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("slash")
        for ch in "kind:flatten":
            await pilot.press(ch)
        await pilot.press("enter")
        t = table(app)
        assert t.row_count == 2
        assert all(t.row_at(i).kind == "flatten" for i in range(t.row_count))
        await pilot.press("slash", "backspace", *"fork", "escape")  # Esc restores the previous filter
        assert t.row_count == 2 and app.row_filter.text == "kind:flatten"
        await pilot.press("escape")  # Esc on the table clears it
        assert t.row_count == 18 and not app.row_filter.active
        await pilot.press("slash", *"-kind:delta session:0198f0a1", "enter")
        assert t.row_count == 4  # session A: its first flatten, then fork, flatten, fork


async def test_sessions_pane_limits_the_table(agent: Path) -> None:
    app = make_app([agent])
    async with app.run_test(size=(100, 36)) as pilot:
        await wait_loaded(pilot, app)
        sessions = app.query_one(SessionList)
        assert not sessions.display or not sessions.has_class("-open")
        await pilot.press("s")
        assert sessions.has_focus and sessions.has_class("-open")
        await pilot.press("j", "enter")  # the most recently active session first: A (shop)
        assert table(app).row_count == 13
        assert app.row_filter.session_id is not None and app.row_filter.session_id.endswith("0a")
        assert not sessions.has_class("-open") and table(app).has_focus
        await pilot.press("s", "home", "enter")  # back to all sessions
        assert table(app).row_count == 18


async def test_follow_toggle(agent: Path) -> None:
    app = make_app([agent])
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot, app)
        assert app.following
        await pilot.press("f")
        assert not app.following
        _raw, lines = screen_output(app)
        assert any("PAUSED" in line for line in lines)
        await pilot.press("home", "f")
        assert app.following and table(app).cursor == 17


async def test_export_writes_three_files_and_names_them(agent: Path, tmp_path: Path) -> None:
    out = tmp_path / "exports"
    app = make_app([agent], export_dir=out)
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("e")
        await wait_for(pilot, lambda: getattr(app, "last_export", None) is not None)
        paths = app.last_export
        assert sorted(p.suffix for p in paths) == [".html", ".json", ".md"]
        assert all(p.exists() and p.stat().st_size > 0 for p in paths)
        messages = [n.message for n in app._notifications]
        assert any("continuity-report.json" in m and "continuity-report.md" in m for m in messages)


async def test_help_lists_every_key(agent: Path) -> None:
    from tui.keys import KEYS

    app = make_app([agent])
    async with app.run_test(size=(120, 45)) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        _raw, lines = screen_output(app)
        text = "\n".join(lines)
        for key in KEYS:
            assert key.keys in text, key
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_command_palette_runs_the_same_actions(agent: Path) -> None:
    app = make_app([agent])
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot, app)
        marked = rewritten_rows(app)
        await pilot.press("home")
        await pilot.press("ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"Next rewritten turn")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: table(app).cursor == marked[0])
        assert table(app).cursor == marked[0]


async def test_problems_view_newest_first(agent: Path) -> None:
    app = make_app([agent])
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("p")
        assert isinstance(app.screen, ProblemsScreen)
        _raw, lines = screen_output(app)
        text = "\n".join(lines)
        assert "logs/session.log:4" in text and "invalid JSON" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, ProblemsScreen)


async def test_b_switches_the_graph_metric(agent: Path) -> None:
    app = make_app([agent])
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot, app)
        graph = app.query_one(PayloadGraph)
        first = graph.data.metric
        await pilot.press("b")
        assert graph.data.metric != first
        await pilot.press("b")
        assert graph.data.metric == first


async def test_q_quits(agent: Path) -> None:
    app = make_app([agent])
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


async def test_appending_to_session_log_changes_the_rates_pane(agent: Path) -> None:
    app = make_app([agent], live=True, watch=True)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await wait_loaded(pilot, app)
            rates = app.query_one(RatesPane)
            before = rates.border_subtitle
            assert rates.rates is not None and rates.rates.kinds["flatten"] == 2  # the calls
            assert rates.rates.log_events == 18
            with (agent / "logs" / "session.log").open("a") as fh:  # a decision no transcript holds (yet)
                fh.write(continuity_line(1_785_800_900_000, "flatten", "assistant_rewritten", 20))
            assert await wait_for(pilot, lambda: rates.rates is not None and rates.rates.log_events == 19)
            await pilot.pause()
            assert rates.border_subtitle != before and rates.rates.kinds["flatten"] == 2
            _raw, lines = screen_output(app)
            assert any("log" in line and "of 19" in line for line in lines[:14]), lines[:14]
    finally:
        app.engine.close()


async def test_empty_directory_says_waiting_for_files(tmp_path: Path) -> None:
    empty = tmp_path / "logs"
    empty.mkdir()
    app = make_app([empty])
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_loaded(pilot, app)
        _raw, lines = screen_output(app)
        assert any("waiting for files" in line for line in lines)
        assert any("no turns yet" in line for line in lines)
