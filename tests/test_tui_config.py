"""Settings: the theme is remembered and keys are remapped through a file under the XDG config dir (item 12)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_fixtures import FROZEN, wait_for, wait_loaded, write_agent

from core.engine import Engine
from tui.app import ContinuityApp
from tui.config import Config, config_path, load, save_theme
from tui.screens.help import HelpScreen, help_content
from tui.widgets.turn_table import TurnTable


def test_the_path_follows_xdg_and_the_override(tmp_path: Path) -> None:
    home = Path.home()
    assert config_path({}) == home / ".config" / "continuity-tui" / "config.toml"
    assert config_path({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "continuity-tui" / "config.toml"
    assert (
        config_path({"CONTINUITY_TUI_CONFIG": str(tmp_path / "x.toml"), "XDG_CONFIG_HOME": "/y"}) == tmp_path / "x.toml"
    )


def test_saving_a_theme_keeps_every_other_line(tmp_path: Path) -> None:
    path = tmp_path / "c" / "config.toml"
    assert save_theme(path, "nord") is None  # a new file: the template, with the theme
    assert load(path).theme == "nord" and "# [keys]" in path.read_text()
    path.write_text('# mine\n[keys]\nfilter = "ctrl+l"  # my key\n')
    assert save_theme(path, "gruvbox") is None
    text = path.read_text()
    assert text.startswith('# mine\ntheme = "gruvbox"\n[keys]\nfilter = "ctrl+l"  # my key')
    assert save_theme(path, 'weird "name"') is None
    assert load(path).theme == 'weird "name"' and load(path).keys == {"filter": "ctrl+l"}


def test_a_bad_file_is_said_and_the_defaults_used(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("theme = [broken\n")
    config = load(path)
    assert config.theme is None and "not TOML" in config.problems[0] and str(path) in config.problems[0]
    path.write_text('theme = 3\ncolour = "red"\n[keys]\nfilter = 7\n')
    problems = load(path).problems
    assert any("theme must be a string" in p for p in problems)
    assert any("colour is not a setting" in p for p in problems)
    assert any("keys.filter must be a string" in p for p in problems)
    assert load(tmp_path / "missing.toml") == Config(tmp_path / "missing.toml")


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    root = tmp_path / "agent"
    write_agent(root)
    return root


def _app(agent: Path, config: Config) -> ContinuityApp:
    return ContinuityApp(Engine([agent]), live=False, clock=lambda: FROZEN, config=config)


async def test_a_theme_picked_in_the_palette_is_used_next_time(agent: Path, tmp_path: Path) -> None:
    path = tmp_path / "xdg" / "continuity-tui" / "config.toml"
    app = _app(agent, load(path))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("ctrl+p", *"theme")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause(0.3)
        await pilot.press(*"nord")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.theme == "nord")
        await wait_for(pilot, lambda: path.exists())
    assert load(path).theme == "nord"
    again = _app(agent, load(path))
    async with again.run_test(size=(80, 24)) as pilot:
        await wait_loaded(pilot, again)
        assert again.theme == "nord"


@pytest.mark.parametrize("size", [(160, 45), (80, 24)])
async def test_remapped_keys_work_and_help_shows_them(agent: Path, tmp_path: Path, size: tuple[int, int]) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[keys]\nfilter = "ctrl+l"\nup = "up,i"\nbogus = "z"\ntheme_x = 1\n')
    app = _app(agent, load(path))
    async with app.run_test(size=size, notifications=True) as pilot:
        await wait_loaded(pilot, app)
        toasts = "\n".join(n.message for n in app._notifications)
        assert "bogus: no such action" in toasts and "keys.theme_x must be a string" in toasts
        table = app.main.query_one(TurnTable)
        before = table.cursor
        await pilot.press("i")
        assert table.cursor == before - 1
        await pilot.press("ctrl+l")
        assert app.main.query_one("#filter").has_class("-open")
        await pilot.press("escape")
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = help_content().plain
        assert "/  " in text  # the default help still reads "/" for filter
        shown = " ".join(app.screen.query_one("#help-left").render().plain.split())
        assert "ctrl+l filter turns" in shown and "↑ i" in shown
        assert (
            str(path)
            in " ".join(
                (
                    app.screen.query_one("#help-left").render().plain
                    + app.screen.query_one("#help-right").render().plain
                ).split()
            )
            or size[0] < 140
        )
