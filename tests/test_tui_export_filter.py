"""The export honours the active filter and says what it included (issue 18 item 12, export).

It applied the session but not the `/` filter, and the toast did not say which.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tui_fixtures import FROZEN, SID_A, wait_for, wait_loaded, write_agent

from core.engine import Engine
from tui.app import ContinuityApp
from tui.widgets.turn_table import TurnTable


@pytest.fixture
def app(tmp_path: Path) -> ContinuityApp:
    root = tmp_path / "agent"
    write_agent(root)
    return ContinuityApp(Engine([root]), live=False, clock=lambda: FROZEN, export_dir=tmp_path / "out")


def _exported(app: ContinuityApp) -> dict:
    paths = getattr(app, "last_export", None)
    assert paths
    return json.loads(next(p for p in paths if p.suffix == ".json").read_text())


def _toasts(app: ContinuityApp) -> str:
    return "\n".join(n.message for n in app._notifications)


@pytest.mark.parametrize("size", [(160, 45), (80, 24)])
async def test_export_takes_the_filter_and_says_so(app: ContinuityApp, size: tuple[int, int]) -> None:
    async with app.run_test(size=size, notifications=True) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("slash", *"kind:flatten", "enter")
        await pilot.pause(0.3)
        shown = app.main.query_one(TurnTable).row_count  # what the table shows is what the export takes
        await pilot.press("e")
        assert await wait_for(pilot, lambda: bool(getattr(app, "last_export", None)), timeout=10)
        report = _exported(app)
        kinds = {t["logged"]["kind"] for t in report["turns"]}
        assert kinds == {"flatten"} and len(report["turns"]) == shown == 2
        assert report["selection"]["filter"] == "kind:flatten"
        assert report["continuity"]["events"] == 18  # the log's counts are not filtered, and the toast says so
        assert "included 2 of 18 turns, 1 session (filter kind:flatten)" in _toasts(app)
        assert "decision counts cover all 18 lines" in _toasts(app)
        md = next(p for p in app.last_export if p.suffix == ".md").read_text()
        assert "turns matching `kind:flatten`" in md


async def test_export_of_a_session_and_a_filter(app: ContinuityApp) -> None:
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("ctrl+p", *f"Session {SID_A[:8]}")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.row_filter.session_id == SID_A)
        await pilot.press("slash", *"is:rewritten", "enter", "e")
        assert await wait_for(pilot, lambda: bool(getattr(app, "last_export", None)), timeout=10)
        report = _exported(app)
        assert {t["session"] for t in report["turns"]} == {SID_A} and len(report["turns"]) == 2
        assert report["selection"]["session"] == SID_A and report["selection"]["filter"] == "is:rewritten"
        assert f"(session {SID_A[:8]}, filter is:rewritten)" in _toasts(app)
