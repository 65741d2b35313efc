"""The dashboard shows no secret: every one of the review's 26 kinds, on every screen a user can reach.

Reports have redacted secrets since issue 17; the screen showed them as written (turn detail, field diff,
committed JSON, problems, session cwd, rates, status). The fixture writes every kind into every free-text
place the data offers (message and thinking text, the model, the cwd, continuity kinds and reasons, an error
line, a bad line) and, one kind per directory, into file names (the Problems screen and the `x` toast name
them). The app is driven by key presses through every pane and screen, and each screen's full repaint is
searched for every kind's secret part.
"""

from __future__ import annotations

from pathlib import Path

from report_helpers import write_agent
from secret_kinds import KINDS
from tui_fixtures import FROZEN, screen_output, wait_for, wait_loaded

from core.engine import Engine
from core.model import Turn
from tui.app import ContinuityApp
from tui.screens.copy import CopyScreen
from tui.screens.detail import DetailScreen
from tui.screens.problems import ProblemsScreen
from tui.widgets.json_view import JsonView
from tui.widgets.turn_table import TurnTable

ALL = " ; ".join(text for text, _core, _kind in KINDS.values())


def _agent(tmp_path: Path) -> Path:
    agent = write_agent(tmp_path, extra=f" {ALL} ", secret=ALL, folder_extra="")
    # one kind per directory and file name (a name holds no `/` and 255 bytes at most): a bad line each
    for i, (text, _core, _kind) in enumerate(KINDS.values()):
        if "/" in text or len(text.encode()) > 200:
            continue
        folder = agent / "sessions" / f"--k{i} {text}--"
        folder.mkdir()
        (folder / f"{text}.jsonl").write_text(f'{{"type":"session","version":3,"id":"s{i}"}}\n{{broken {text}\n')
    return agent


def _leaks(text: str) -> list[str]:
    """The kinds of which 12 characters of the secret part show: a pane clips its cells, and a clipped secret
    is still a leak."""
    return [name for name, (_written, core, _kind) in KINDS.items() if core[:12] in text]


class Seen:
    """Every screen state the test reached, and what leaked on each."""

    def __init__(self, app: ContinuityApp) -> None:
        self.app = app
        self.leaks: dict[str, list[str]] = {}
        self.redacted = 0
        self.opened = 0  # turn details opened
        self.problems_screen = False

    def look(self, where: str, *extra: str) -> None:
        _raw, lines = screen_output(self.app)
        text = "\n".join([*lines, *extra])
        self.redacted += text.count("[REDACTED:")
        found = _leaks(text)
        if found:
            self.leaks[where] = found


async def every_screen(tmp_path: Path) -> Seen:
    """Drive the app over the fixture through every pane and screen; what each showed (the battery runs it too:
    `bench/battery.py`, case `dashboard-secrets`)."""
    agent = _agent(tmp_path)
    app = ContinuityApp(Engine([agent]), live=False, clock=lambda: FROZEN, export_dir=tmp_path / "exports")
    async with app.run_test(size=(220, 120), notifications=True) as pilot:
        await wait_loaded(pilot, app)
        seen = Seen(app)
        seen.look("main screen")
        for key in ("s", "b", "m"):  # sessions pane, payload graph metric, zoom
            await pilot.press(key)
            await pilot.pause()
            seen.look(f"main screen after {key}")
            if key == "m":
                await pilot.press("m")
        await pilot.press("escape")
        table = app.query_one(TurnTable)
        for i in range(table.row_count):
            table.move_to(i)
            row = table.current
            await pilot.press("x")  # the toast names the bad line after this call, with its file
            await pilot.pause(0.05)
            seen.look(f"row {i} x toast")
            if not isinstance(row, Turn):
                continue
            await pilot.press("enter")
            if not isinstance(app.screen, DetailScreen):
                continue
            await wait_for(pilot, lambda: len(app.screen.query_one("#commit", JsonView).lines) > 3)
            views = [v.lines for v in app.screen.query(JsonView)]
            seen.look(f"detail of row {i}", *(f"{line.key} {line.text}" for lines in views for line in lines))
            seen.opened += 1
            await pilot.press("c")  # the copy menu names paths
            await pilot.pause(0.05)
            if isinstance(app.screen, CopyScreen):
                seen.look(f"copy menu of row {i}")
                await pilot.press("escape")
            await pilot.press("escape")
        await pilot.press("p")
        seen.problems_screen = isinstance(app.screen, ProblemsScreen)
        await pilot.pause()
        seen.look("problems")
        await pilot.press("escape", "e")
        await wait_for(pilot, lambda: getattr(app, "last_export", None) is not None)
        await pilot.pause(0.2)
        seen.look("export notification")
    return seen


async def test_no_secret_reaches_any_screen(tmp_path: Path) -> None:
    seen = await every_screen(tmp_path)
    assert seen.opened >= 5 and seen.problems_screen
    assert seen.leaks == {}
    assert seen.redacted > 50  # the probe can fail: the kinds are on the screens, as `[REDACTED:<kind>]`


def test_the_tui_shows_data_only_through_the_redacting_display() -> None:
    """`core.sanitize.display` makes text inert but keeps secrets (the reports redact before it): a pane that
    imported it would show them. The TUI takes `core.report.redact.shown` instead."""
    import ast

    root = Path(__file__).resolve().parent.parent / "tui"
    offenders = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            imported = node.names if isinstance(node, ast.ImportFrom) and node.module == "core.sanitize" else []
            if any(alias.name == "display" for alias in imported):
                offenders.append(str(path.relative_to(root)))
    assert offenders == []
