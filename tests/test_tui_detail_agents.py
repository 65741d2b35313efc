"""Enter on a call of an agent that records no streamed capture (Codex, Claude Code, pi, mux) shows that call's
line as written and says why there is nothing to compare, instead of senpi's capture rule: a Codex call read
"the transcript line changed since it was read", a pi call "inferred: the commit minus thinking timing", and the
empty blocks promised a replay, fingerprints and a commit check that never come for these agents."""

from __future__ import annotations

from pathlib import Path

import pytest
from realdata import copy_set
from tui_fixtures import FROZEN, wait_for, wait_loaded

from core.engine import Engine
from tui.app import ContinuityApp
from tui.screens.detail import DetailScreen
from tui.widgets.json_view import JsonView

CASES = {"codex": "codex", "cc-oneryalcin-fasthooks": "claude-code", "pi": "pi"}
"""Agents whose calls have no capture at all: the call's line is shown as written."""


def _copy(name: str, tmp_path: Path) -> Path:
    return copy_set(name, tmp_path / name)


def _text(view: JsonView) -> str:
    return "\n".join(line.text for line in view.lines)


@pytest.mark.parametrize("name", sorted(CASES))
async def test_enter_on_a_call_shows_its_line_and_says_why_no_diff(name: str, tmp_path: Path) -> None:
    agent = CASES[name]
    app = ContinuityApp(Engine([_copy(name, tmp_path)]), live=False, clock=lambda: FROZEN)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_loaded(pilot, app, timeout=30)
        await pilot.press("enter")
        assert isinstance(app.screen, DetailScreen)
        screen = app.screen
        commit_view = screen.query_one("#commit", JsonView)
        assert await wait_for(pilot, lambda: "loading" not in _text(commit_view), timeout=10)
        title = str(screen.query_one("#commit-box").border_title)
        assert title.startswith("call · line ") and title.endswith(" as written"), title
        line = int(title.removeprefix("call · line ").split()[0].replace(",", ""))
        assert line == screen.turn.where.line
        assert sum(1 for row in commit_view.lines if row.kind != "note") > 3  # the record itself, unfolded
        capture = _text(screen.query_one("#capture", JsonView))
        assert f"{agent} records no streamed capture" in capture
        assert "changed since it was read" not in capture and "inferred" not in capture
        summary = "\n".join(
            str(screen.query_one(f"#{block}").render()) for block in ("decision", "payload", "diff", "fingerprints")
        )
        assert "no capture-vs-commit check" in summary
        assert "replay not available" not in summary and "yet" not in summary
        await pilot.press("escape")
        assert not isinstance(app.screen, DetailScreen)


async def test_enter_on_a_mux_row_shows_the_merged_committed_row(tmp_path: Path) -> None:
    """mux compares partial.json with the committed row; once partial.json is gone the row is shown merged."""
    app = ContinuityApp(Engine([_copy("mux", tmp_path)]), live=False, clock=lambda: FROZEN)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_loaded(pilot, app, timeout=30)
        await pilot.press("enter")
        assert isinstance(app.screen, DetailScreen)
        screen = app.screen
        commit_view = screen.query_one("#commit", JsonView)
        assert await wait_for(pilot, lambda: "loading" not in _text(commit_view), timeout=10)
        assert str(screen.query_one("#commit-box").border_title) == "commit · chat.jsonl row, parts merged"
        assert sum(1 for row in commit_view.lines if row.kind != "note") > 3
        assert "changed since it was read" not in _text(screen.query_one("#capture", JsonView))
        diff = str(screen.query_one("#diff").render())
        assert "records no streamed capture" not in diff  # mux does record one (partial.json)
