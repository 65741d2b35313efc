"""Help has the dashboard's vocabulary and every part of it is reachable (issue 18 item 9).

It lacked `failed`, the reason names, the `n`/`dir` columns, "logged-only" and the commit title's rule names;
"Keys" was twice in the palette; Kinds needed scrolling at 45 rows.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_fixtures import FROZEN, screen_output, wait_loaded, write_agent

from core.engine import Engine
from tui.app import ContinuityApp
from tui.screens.help import HelpScreen, help_content
from tui.widgets.turn_table import COLUMNS


@pytest.fixture
def app(tmp_path: Path) -> ContinuityApp:
    root = tmp_path / "agent"
    write_agent(root)
    return ContinuityApp(Engine([root]), live=False, clock=lambda: FROZEN)


def test_help_explains_the_words_on_screen() -> None:
    text = help_content().plain
    for word in ("failed", "prefix_matched", "registry_miss", "assistant_rewritten", "idle_ttl", "query_failed",
                 "logged-only", "rule verbatim / projected", "volatile", "pending", "Kinds", "Reasons", "Terms"):  # fmt: skip
        assert word in text, word
    for column in COLUMNS:
        assert f"  {column.title} " in text or f"  {column.title}\n" in text, column.title
        assert column.help and column.help.split()[0] in text


async def test_keys_is_once_in_the_palette(app: ContinuityApp) -> None:
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot, app)
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert titles.count("Keys") == 1


async def _open_help(app: ContinuityApp, pilot: object, size: tuple[int, int]) -> list[str]:
    await wait_loaded(pilot, app)
    await pilot.press("question_mark")  # type: ignore[attr-defined]
    await pilot.pause(0.2)  # type: ignore[attr-defined]
    assert isinstance(app.screen, HelpScreen)
    return screen_output(app)[1]


async def test_kinds_on_the_first_screen_at_160x45(app: ContinuityApp) -> None:
    async with app.run_test(size=(160, 45)) as pilot:
        lines = await _open_help(app, pilot, (160, 45))
        text = "\n".join(lines)
        assert "Kinds" in text and "failed" in text and "Reasons" in text
        assert "↓ more" in lines[-1] or "↓ more" in text


@pytest.mark.parametrize("size", [(120, 36), (80, 24)])
async def test_every_section_is_reachable_with_keys(app: ContinuityApp, size: tuple[int, int]) -> None:
    async with app.run_test(size=size) as pilot:
        lines = await _open_help(app, pilot, size)
        assert "↓ more" in "\n".join(lines)
        seen = "\n".join(lines)
        for _ in range(30):
            await pilot.press("pagedown")
            await pilot.pause(0.02)
            seen += "\n".join(screen_output(app)[1])
        for title in ("Kinds", "Reasons", "Terms", "Turn table columns", "Flags in the turn table"):
            assert title in seen, title
        await pilot.press("home")
        await pilot.press("end")
        await pilot.pause(0.1)
        assert "Esc closes" in "\n".join(screen_output(app)[1]) and "↓ more" not in "\n".join(screen_output(app)[1])
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
