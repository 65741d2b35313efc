"""Jump to the next flatten, re-send or problem (issue 18 item 12), like lnav's e/E and w/W."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_fixtures import FROZEN, wait_loaded, write_agent

from core.engine import Engine
from tui.app import ContinuityApp
from tui.view import row_key, row_kind
from tui.widgets.turn_table import TurnTable


@pytest.fixture
def app(tmp_path: Path) -> ContinuityApp:
    root = tmp_path / "agent"
    write_agent(root)
    return ContinuityApp(Engine([root]), live=False, clock=lambda: FROZEN)


def _indices(table: TurnTable, kinds: set[str]) -> list[int]:
    return [i for i in range(table.row_count) if row_kind(table.row_at(i)) in kinds]


@pytest.mark.parametrize("size", [(160, 45), (120, 36), (80, 24)])
async def test_l_and_w_walk_flattens_and_resends(app: ContinuityApp, size: tuple[int, int]) -> None:
    async with app.run_test(size=size, notifications=True) as pilot:
        await wait_loaded(pilot, app)
        table = app.main.query_one(TurnTable)
        flattens, resends = _indices(table, {"flatten"}), _indices(table, {"fork", "flatten"})
        assert len(flattens) >= 2 and len(resends) > len(flattens)
        await pilot.press("home")  # row 0 (the search starts after the cursor, as in an editor)
        seen = []
        for _ in flattens:
            await pilot.press("l")
            seen.append(table.cursor)
        assert seen == [*(f for f in flattens if f > 0), *(f for f in flattens if f == 0)] and not app.following
        await pilot.press("L")
        assert table.cursor == max(f for f in flattens if f < seen[-1]) if seen[-1] != flattens[0] else flattens[-1]
        await pilot.press("home")
        for expected in (r for r in resends if r > 0):
            await pilot.press("w")
            assert table.cursor == expected
        await pilot.press("w")  # past the last: wraps around, and says so
        assert table.cursor == resends[0]
        assert "wrapped around to the first re-send" in "\n".join(n.message for n in app._notifications)
        await pilot.press("W")
        assert table.cursor == resends[-1]


async def test_x_lands_next_to_the_bad_line_and_names_it(app: ContinuityApp) -> None:
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await wait_loaded(pilot, app)
        table = app.main.query_one(TurnTable)
        snapshot = app.snapshot
        assert snapshot.status.problems_total == 1 and snapshot.problem_rows[0] is not None
        await pilot.press("home", "x")
        assert row_key(table.current) == snapshot.problem_rows[0]
        toast = "\n".join(n.message for n in app._notifications)
        assert "after this call: " in toast and "session.log:4" in toast and "invalid JSON" in toast
        await pilot.press("enter", "x")  # inside a detail too: it opens the call next to the bad line
        assert app.screen.turn is table.current  # type: ignore[attr-defined]


async def test_x_with_no_problem_says_so(tmp_path: Path) -> None:
    root = tmp_path / "agent"
    write_agent(root)
    log = root / "logs" / "session.log"
    log.write_text("".join(line + "\n" for line in log.read_text().splitlines() if "broken" not in line))
    app = ContinuityApp(Engine([root]), live=False, clock=lambda: FROZEN)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_loaded(pilot, app)
        before = app.main.query_one(TurnTable).cursor
        await pilot.press("x")
        assert app.main.query_one(TurnTable).cursor == before
        assert "no problem (p lists them all)" in "\n".join(n.message for n in app._notifications)
