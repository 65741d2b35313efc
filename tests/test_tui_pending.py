"""Problem counts reconcile between the dashboard, its export and `report` (issue 18 item 7).

On the same folder the dashboard and its export said 5 problems and `report` 6: `report` turns an incomplete
last line (a write in progress, or a torn one) into a problem, the live tail holds it as a partial. The
dashboard now counts it as pending, lists it first on the problems screen, and its export counts it as
`report` does.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from tui_fixtures import screen_output, wait_for, wait_loaded, write_agent

from core.engine import Engine
from tui.app import ContinuityApp
from tui.cli import main as cli
from tui.screens.problems import ProblemsScreen


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    root = tmp_path / "agent"
    write_agent(root)
    with open(root / "logs" / "session.log", "a", encoding="utf-8") as fh:
        fh.write('{"ts": "2026-07-27T01:00:00.000Z", "level": "info", "event": "claude_sdk_oa')  # still being written
    return root


def report_problems(root: Path) -> int:
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli(["report", str(root), "--no-cache"]) == 0
    return int(json.loads(out.getvalue())["problems_total"])


@pytest.mark.parametrize("size", [(160, 45), (80, 24)])
async def test_dashboard_export_and_report_agree(agent: Path, tmp_path: Path, size: tuple[int, int]) -> None:
    assert report_problems(agent) == 2  # the broken line, and the unterminated last one
    app = ContinuityApp(Engine([agent]), live=True, export_dir=tmp_path / "out", heartbeat=0.05)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot, app)
        await wait_for(pilot, lambda: app.snapshot.status.pending == 1)
        assert app.snapshot.status.problems_total == 1
        status = screen_output(app)[1][-2]
        assert "1 problem" in status and "1 pending" in status, status
        await pilot.press("e")
        assert await wait_for(pilot, lambda: bool(getattr(app, "last_export", None)), timeout=10)
        exported = json.loads((tmp_path / "out").glob("*/continuity-report.json").__next__().read_text())
        assert exported["problems_total"] == report_problems(agent) == 2
        assert any("incomplete last line" in p["error"] for p in exported["problems"])
        await pilot.press("p")
        assert isinstance(app.screen, ProblemsScreen)
        await pilot.pause(0.1)
        text = "\n".join(screen_output(app)[1])
        assert "1 pending" in text and "pending " in text and "incomplete last line" in text
        await pilot.press("escape")
        with open(agent / "logs" / "session.log", "a", encoding="utf-8") as fh:
            fh.write('uth_session_close", "reason": "idle_ttl"}\n')  # the write completes: nothing pending
        await wait_for(pilot, lambda: app.snapshot.status.pending == 0, timeout=5)
        assert app.snapshot.status.pending == 0 and app.snapshot.status.problems_total == 1
        assert "pending" not in screen_output(app)[1][-2]
