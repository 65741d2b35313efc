"""Search with highlight and n/N (issue 18 item 12): the filter hides rows, the search marks them."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_fixtures import FROZEN, screen_output, wait_loaded, write_agent

from core.engine import Engine
from tui.app import ContinuityApp
from tui.view import row_reason
from tui.widgets.turn_table import MARK, MATCH_STYLE, TurnTable


@pytest.fixture
def app(tmp_path: Path) -> ContinuityApp:
    root = tmp_path / "agent"
    write_agent(root)
    return ContinuityApp(Engine([root]), live=False, clock=lambda: FROZEN)


@pytest.mark.parametrize("size", [(160, 45), (120, 36), (80, 24)])
async def test_search_marks_walks_and_clears(app: ContinuityApp, size: tuple[int, int]) -> None:
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot, app)
        table = app.main.query_one(TurnTable)
        total = table.row_count
        hits = [i for i in range(total) if "rewritten" in (row_reason(table.row_at(i)) or "")]
        await pilot.press("home", "ctrl+f", *"rewritten", "enter")
        assert table.row_count == total, "a search hides nothing"
        assert table.matches == len(hits) and table.cursor == hits[0]
        _raw, lines = screen_output(app)
        assert any(f"│{MARK}" in line for line in lines)
        assert f"{len(hits)} matches" in lines[-2]
        content = table.render_row(hits[0], table.scrollable_content_region.width)
        spans = [span for span in content.spans if str(span.style) == MATCH_STYLE]
        assert spans and content.plain[spans[0].start : spans[0].end] == "rewritten"
        await pilot.press("n")
        assert table.cursor == hits[1]
        await pilot.press("N", "N")
        assert table.cursor == hits[-1]  # wrapped around
        await pilot.press("escape")
        assert app.search is None and table.matches == 0
        _raw, lines = screen_output(app)
        assert not any(f"│{MARK}" in line for line in lines)


async def test_search_and_filter_together(app: ContinuityApp) -> None:
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await wait_loaded(pilot, app)
        table = app.main.query_one(TurnTable)
        await pilot.press("slash", *"-kind:delta", "enter")
        await pilot.pause(0.3)
        shown = table.row_count
        await pilot.press("ctrl+f", *"kind:fork", "enter")
        assert table.row_count == shown and 0 < table.matches < shown
        await pilot.press("escape")  # first Esc: the search goes, the filter stays
        assert app.search is None and app.row_filter.active
        await pilot.press("escape")
        assert not app.row_filter.active
        await pilot.press("n")
        assert "no search: ctrl+f searches" in "\n".join(n.message for n in app._notifications)
