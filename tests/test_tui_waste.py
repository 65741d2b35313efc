"""The dashboard's waste surfaces (issue 14): the Waste pane (all sessions, then the current one), the Sessions
pane's waste column, and a call's detail (expected vs actual read, the gap against the lifetime, the cause),
driven by key presses on the fixture whose answers `tests/test_waste.py` works out."""

from __future__ import annotations

from pathlib import Path

import orjson
from textual.content import Content
from textual.widgets import Static
from tui_fixtures import FROZEN, wait_for, wait_loaded

from core.engine import Engine
from tests.test_agent_claude_code import SID
from tests.test_waste import causes_log, project
from tui.app import ContinuityApp
from tui.screens.detail import DetailScreen
from tui.widgets.sessions import SessionList
from tui.widgets.turn_table import TurnTable
from tui.widgets.waste import WastePane


def make_app(tmp_path: Path) -> ContinuityApp:
    causes_log().write(project(tmp_path) / f"{SID}.jsonl")
    return ContinuityApp(Engine([tmp_path / ".claude" / "projects"]), live=False, clock=lambda: FROZEN)


def plain(markup: str) -> str:
    return Content.from_markup(markup).plain


def pane_text(app: ContinuityApp) -> str:
    pane = app.main.query_one(WastePane)
    return "\n".join(line.plain for line in pane.lines(pane.content_region.width, pane.content_region.height))


async def test_the_waste_pane_shows_tokens_and_dollars_by_cause(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_loaded(pilot, app)
        await wait_for(pilot, lambda: app.main.query_one(WastePane).totals is not None)
        pane = app.main.query_one(WastePane)
        assert plain(pane.border_title).startswith("Waste · $0.34 of $"), pane.border_title
        text = pane_text(app)
        assert text.startswith("all 60,000 tok in 3 calls · 70%")
        lines = text.splitlines()
        assert lines[1].split() == ["missed", "21,500", "36%", "$0.12"]
        assert lines[2].split() == ["expired", "20,500", "34%", "$0.12"]
        assert lines[3].split() == ["rewritten", "18,000", "30%", "$0.10"]
        assert lines[4].startswith("now 2ff46cd5 60,000 $0.34")
        row = app.main.query_one(SessionList).render_row(1, 40).plain
        assert row.rstrip().endswith("$0.34")


async def test_the_waste_pane_fits_26_columns(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot, app)
        await wait_for(pilot, lambda: app.main.query_one(WastePane).totals is not None)
        pane = app.main.query_one(WastePane)
        width = pane.content_region.width
        assert width >= 20
        text = pane_text(app)
        assert all(len(line) <= width for line in text.splitlines()), text
        assert text.splitlines()[1].split() == ["missed", "22K", "$0.12"]
        assert plain(pane.border_title) == "Waste · $0.34" and plain(pane.border_subtitle).startswith("of $")


async def test_a_calls_detail_gives_expected_and_actual_read_the_gap_and_the_cause(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_loaded(pilot, app)
        table = app.main.query_one(TurnTable)
        await pilot.press("home")
        expired = next(i for i, row in enumerate(table.rows) if getattr(row, "entry_id", None) == "msg_3")
        table.move_to(expired)
        await pilot.press("enter")
        assert isinstance(app.screen, DetailScreen)
        text = app.screen.query_one("#decision", Static).render().plain  # type: ignore[union-attr]
        assert "expected read 20,500 · read 0 · write 21,000" in text
        assert "gap        6 min of a 5 min lifetime" in text
        assert "excess     20,500 tokens · $0.1179 beyond cache hits · cache_expired" in text
        await pilot.press("escape")


async def test_the_waste_pane_follows_a_growing_transcript(tmp_path: Path) -> None:
    """The live figure: a call appended to the session file adds its excess (the cache miss: 21,500 tokens)."""
    log = causes_log()
    path = project(tmp_path) / f"{SID}.jsonl"
    head = next(i for i, line in enumerate(log.lines) if line.get("message", {}).get("content") == "go on")
    rest = log.lines[head:]
    log.lines = log.lines[:head]
    log.write(path)
    app = ContinuityApp(Engine([tmp_path / ".claude" / "projects"], watch=True), live=True)
    try:
        async with app.run_test(size=(160, 45)) as pilot:
            await wait_loaded(pilot, app)
            pane = app.main.query_one(WastePane)
            assert await wait_for(pilot, lambda: pane.totals is not None and pane.totals.stats.excess == 38_500)
            with path.open("ab") as fh:
                fh.write(b"".join(orjson.dumps(line) + b"\n" for line in rest))
            assert await wait_for(pilot, lambda: pane.totals is not None and pane.totals.stats.excess == 60_000)
            await pilot.pause()
            assert "all 60,000 tok in 3 calls" in pane_text(app)
    finally:
        app.engine.close()


async def test_the_top_band_at_80x24_keeps_rates_and_directives(tmp_path: Path) -> None:
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot, app)
        await wait_for(pilot, lambda: app.main.query_one(WastePane).totals is not None)
        await pilot.pause()
        assert app.main.query_one(WastePane).display is False
        assert app.main.query_one("#directives").region.width >= 20
