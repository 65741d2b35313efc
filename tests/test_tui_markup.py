"""Markup and terminal control sequences inside log data render as plain text, everywhere.

The fixture puts `[/x]`, `[link=…]`, `[$v]`, `[b]`, an OSC title sequence, SGR colours, BEL and `ESC c`
into kinds, reasons, a cwd, a model name, message text, a file name and a session id. Every screen is
rendered the way the terminal would receive it (the compositor's full update), and the test checks both:
the markup shows up literally in the plain text, and nothing but Textual's own CSI sequences reaches the
terminal (no OSC, no BEL, no ESC c, and not the word the OSC would have put in the title).
"""

from __future__ import annotations

import re
from pathlib import Path

from tui_fixtures import FROZEN, screen_output, wait_for, wait_loaded, write_agent

from core.engine import Engine
from tui.app import ContinuityApp
from tui.screens.detail import DetailScreen
from tui.screens.problems import ProblemsScreen
from tui.widgets.json_view import JsonView
from tui.widgets.turn_table import TurnTable

# Textual's own output: CSI sequences (cursor moves, SGR colours, modes). Anything else is a leak.
TEXTUAL_CSI = re.compile(r"\x1b\[[0-9;:?<=>]*[ -/]*[@-~]")
MARKUP = ("[/x]", "[link=https://evil.example]", "[$v]", "[b]bold")


def assert_inert(app: ContinuityApp, where: str, expect: tuple[str, ...] = MARKUP) -> str:
    raw, lines = screen_output(app)
    leftover = TEXTUAL_CSI.sub("", raw)
    assert "\x1b" not in leftover, (
        f"{where}: a raw escape reached the terminal: {leftover[leftover.index(chr(27)) :][:40]!r}"
    )
    assert "\x07" not in raw and "\x9b" not in raw, f"{where}: BEL or C1 CSI reached the terminal"
    assert "PWNED" not in raw, f"{where}: the OSC payload survived"
    text = "\n".join(lines)
    for literal in expect:
        assert literal in text, f"{where}: {literal!r} is not shown literally"
    return text


async def test_hostile_strings_are_plain_text_in_every_pane(tmp_path: Path) -> None:
    root = tmp_path / "agent"
    write_agent(root, hostile=True)
    out = tmp_path / "exports[/x]"
    app = ContinuityApp(Engine([root]), live=False, clock=lambda: FROZEN, export_dir=out)
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        await wait_loaded(pilot, app)
        table = app.query_one(TurnTable)
        assert table.row_count >= 18
        # main screen: rates (hostile kind and reason), sessions (hostile cwd), table (hostile reasons)
        assert_inert(app, "main screen")
        # the status line shows the typed filter as data
        await pilot.press("slash", *"[/x]", "enter")
        assert_inert(app, "filter", ("[/x]",))
        await pilot.press("escape")
        # drill-down: hostile model in the title, hostile text in the committed JSON
        index = table.find(lambda row: "rewritten " in str(getattr(row, "why", "")) or row.index == 3, forward=False)
        table.move_to(index if index is not None else 3)
        await pilot.press("home")
        for _ in range(40):
            row = table.current
            if getattr(row, "index", None) == 3 and getattr(row, "session", "").endswith("0a"):
                break
            await pilot.press("j")
        await pilot.press("enter")
        assert isinstance(app.screen, DetailScreen)
        await wait_for(pilot, lambda: len(app.screen.query_one("#commit", JsonView).lines) > 3)
        assert_inert(app, "detail", ("[/x]", "[$v]", "[link=https://evil.example]"))
        await pilot.press("escape")
        # problems: a file whose name carries the payload, and a bad line that does
        await pilot.press("p")
        assert isinstance(app.screen, ProblemsScreen)
        assert_inert(app, "problems", ("[$v] [b]bold", "x.jsonl:2"))
        await pilot.press("escape")
        # notifications: the export names a directory with markup in it
        await pilot.press("e")
        await wait_for(pilot, lambda: getattr(app, "last_export", None) is not None)
        await pilot.pause(0.2)
        assert_inert(app, "export notification", ("exports[/x]",))
        # help and palette have no data, but must render too
        await pilot.press("question_mark")
        assert_inert(app, "help", ())
        await pilot.press("escape", "ctrl+p")
        await pilot.pause(0.3)
        assert_inert(app, "palette", ())
