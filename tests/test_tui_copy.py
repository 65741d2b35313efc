"""Copy to the clipboard (issue 18 item 12): the call's why, diff and JSON, the export path; inert and redacted."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import pytest
from tui_fixtures import FROZEN, wait_for, wait_loaded, write_agent

from core.engine import Engine
from tui.app import ContinuityApp
from tui.screens.copy import CopyScreen
from tui.screens.detail import DetailScreen
from tui.view import is_rewritten
from tui.widgets.turn_table import TurnTable

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _app(tmp_path: Path, *, hostile: bool = False) -> ContinuityApp:
    root = tmp_path / "agent"
    write_agent(root, hostile=hostile)
    return ContinuityApp(Engine([root]), live=False, clock=lambda: FROZEN, export_dir=tmp_path / "out")


def _spy(app: ContinuityApp) -> list[str]:
    """What the app writes to the terminal for a copy (the OSC 52 sequence)."""
    written: list[str] = []
    driver = app._driver
    assert driver is not None
    original = driver.write

    def write(data: str) -> None:
        written.append(data)
        original(data)

    driver.write = write  # type: ignore[method-assign]
    return written


async def _copy(pilot: object, app: ContinuityApp, digit_of: str) -> None:
    await pilot.press("c")  # type: ignore[attr-defined]
    assert isinstance(app.screen, CopyScreen)
    key = next(c.key for c in app.screen.choices if c.id == digit_of)
    await pilot.press(key)  # type: ignore[attr-defined]


@pytest.mark.parametrize("size", [(160, 45), (80, 24)])
async def test_copy_the_call_its_diff_and_json(tmp_path: Path, size: tuple[int, int]) -> None:
    app = _app(tmp_path)
    async with app.run_test(size=size, notifications=True) as pilot:
        await wait_loaded(pilot, app)
        written = _spy(app)
        table = app.main.query_one(TurnTable)
        target = next(i for i in range(table.row_count) if is_rewritten(table.row_at(i)))
        app.following = False
        table.move_to(target)
        turn = table.current
        await _copy(pilot, app, "summary")
        assert app.clipboard.startswith(f"session {turn.session} turn {turn.index} at ")
        assert "why " in app.clipboard and "flags       rewritten" in app.clipboard
        osc = [w for w in written if w.startswith("\x1b]52;c;")]
        assert osc and base64.b64decode(osc[-1][7:-1]).decode() == app.clipboard
        await _copy(pilot, app, "diff")
        assert await wait_for(pilot, lambda: ".content[0].startedAt  missing_in_capture  volatile" in app.clipboard)
        await _copy(pilot, app, "commit")
        assert await wait_for(pilot, lambda: app.clipboard.startswith("{"))
        assert json.loads(app.clipboard)["role"] == "assistant"
        await pilot.press("e")
        assert await wait_for(pilot, lambda: app.last_export is not None, timeout=10)
        await _copy(pilot, app, "export")
        assert app.clipboard == str(app.last_export[0].parent)
        await pilot.press("enter")  # in the detail view, c copies that call
        assert isinstance(app.screen, DetailScreen)
        await _copy(pilot, app, "summary")
        assert app.clipboard.startswith(f"session {turn.session} turn {turn.index} ")
        assert "copied summary" in "\n".join(n.message for n in app._notifications)


async def test_copied_text_is_inert_and_redacted(tmp_path: Path) -> None:
    app = _app(tmp_path, hostile=True)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot, app)
        written = _spy(app)
        table = app.main.query_one(TurnTable)
        for index in range(table.row_count):  # every call's summary, with the hostile reasons, models and ids
            app.following = False
            table.move_to(index)
            await _copy(pilot, app, "summary")
            assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", app.clipboard), repr(app.clipboard)
        await pilot.press("c")
        await pilot.press("escape")
        assert not isinstance(app.screen, CopyScreen)
    for data in written:  # each write to the terminal for a copy is one OSC 52 sequence, its payload base64
        if data.startswith("\x1b]52"):
            assert re.fullmatch(r"\x1b\]52;c;[A-Za-z0-9+/=]*\x07", data)


def test_secrets_are_redacted_from_the_clipboard() -> None:
    from tui.clipboard import inert

    assert SECRET not in inert(f"token {SECRET}\nnext line")
    assert inert("a\x1b]2;PWNED\x07b\nc\x1b[31md") == "ab\ncd"
