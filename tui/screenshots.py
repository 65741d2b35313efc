"""Regenerate `screenshots/` from the demo: SVGs, and PNGs where `rsvg-convert` is installed.

    python -m tui.screenshots                 # writes screenshots/*.svg (+ *.png)
    python -m tui.screenshots --out /tmp/shots

The app runs headless (`run_test`) with a frozen clock, read once (`live=False`), so two runs give
byte-identical SVGs and the README always shows the app as it is. The main screen (160×45 and 80×24) and a
rewritten senpi turn's drill-down (`r`, Enter: its startedAt/endedAt diff) are what `continuity-tui --demo`
shows ten seconds in: the demo writer's schedule played up to 10 s into a fixed dir under the temp dir (named
on screen by the demo bar, as in the demo). The directive pane, help, and at 120×36 one session chosen with a
search lit up are shot on the demo once every agent has written everything (`--source DIR`: on that dir).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.demo.live import LiveDemo
from core.engine import Engine
from core.model import Turn
from tui.app import ContinuityApp
from tui.demo_dir import DemoDir
from tui.widgets.directives import DirectivePane
from tui.widgets.json_view import JsonView
from tui.widgets.turn_table import TurnTable

FROZEN = 1_796_000_000.0  # a fixed wall clock (2026-11-30) after the demo's newest line
BIG = (160, 45)
MIDDLE = (120, 36)
SMALL = (80, 24)


FIRST_SCREEN_S = 10.0  # the README's promise: what the demo shows ten seconds in


def played(name: str, until: float | None) -> tuple[DemoDir, LiveDemo]:
    """The demo's writes up to `until` wall seconds (None: all of them) in `$TMPDIR/continuity-screenshots/<name>`:
    a fixed path, so the demo bar reads the same in every run."""
    from core.demo.live import LiveDemo, plans

    path = Path(tempfile.gettempdir()) / "continuity-screenshots" / name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    writer = LiveDemo(path, plans(), until=until)
    writer.play_until(float("inf") if until is None else until)
    return DemoDir(path, kept=False), writer


async def settle(pilot: Any, app: ContinuityApp, predicate: Callable[[], bool] | None = None) -> None:
    """Wait until the worker read everything (and `predicate` holds), then let the screen repaint."""
    for _ in range(400):
        loaded = app.loaded.is_set() and app.snapshot.version == app.engine.state.version
        if loaded and (predicate is None or predicate()):
            break
        await pilot.pause(0.05)
    await pilot.pause(0.3)


def _diff_turn(table: TurnTable) -> int | None:
    """The first rewritten turn whose diff names thinking timing: the incident the demo tells."""
    fallback = None
    for i in range(table.row_count):
        row = table.row_at(i)
        if not isinstance(row, Turn) or not row.rewritten:
            continue
        fallback = i if fallback is None else fallback
        if row.commit is not None and any("startedAt" in c.path for c in row.commit.diff):
            return i
    return fallback


async def shoot(out: Path, source: Path | None = None) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    first_dir, first_writer = played("first-screen", FIRST_SCREEN_S)
    if source is None:
        source = played("complete", None)[0].path

    def app() -> ContinuityApp:
        return ContinuityApp(Engine([source]), live=False, clock=lambda: FROZEN)

    def demo_app() -> ContinuityApp:
        return ContinuityApp(Engine([first_dir.path]), live=False, clock=lambda: FROZEN, demo_writer=first_writer,
                             demo_dir=first_dir)  # fmt: skip

    def save(a: ContinuityApp, name: str) -> None:
        a.save_screenshot(filename=f"{name}.svg", path=str(out))
        written.append(out / f"{name}.svg")

    first = demo_app()
    async with first.run_test(size=BIG) as pilot:
        await settle(pilot, first)
        save(first, "main")
        table = first.main.query_one(TurnTable)
        target = _diff_turn(table)
        if target is not None:
            first.following = False
            table.move_to(target)
        await pilot.pause(0.2)
        await pilot.press("enter")
        await settle(pilot, first, lambda: "loading" not in first.screen.query_one("#commit", JsonView).lines[0].text)
        save(first, "detail")
        await pilot.press("escape")
        await pilot.press("question_mark")
        await pilot.pause(0.2)
        save(first, "help")
        first.engine.close()

    second = app()
    async with second.run_test(size=(120, 30)) as pilot:
        await settle(pilot, second)
        second.main.maximize(second.main.query_one(DirectivePane))
        await pilot.pause(0.2)
        save(second, "directives")
        second.engine.close()

    third = demo_app()
    async with third.run_test(size=SMALL) as pilot:
        await settle(pilot, third)
        save(third, "main-80x24")
        third.engine.close()

    fourth = app()
    async with fourth.run_test(size=MIDDLE) as pilot:  # a search lit up, and a session chosen
        await settle(pilot, fourth)
        summary = max(fourth.snapshot.sessions, key=lambda s: s.rewritten)
        fourth._set_session(summary.key, summary.session_id)
        await pilot.press("home", "ctrl+f", *"idle", "enter")
        await pilot.pause(0.3)
        save(fourth, "search-120x36")
        fourth.engine.close()
    return written


def to_png(svgs: list[Path]) -> list[Path]:
    """PNG copies for viewing and for renderers that do not show SVG (needs `rsvg-convert`)."""
    converter = shutil.which("rsvg-convert")
    if converter is None:
        print("rsvg-convert not found (Debian: apt-get install librsvg2-bin); SVGs only", file=sys.stderr)
        return []
    pngs = []
    for svg in svgs:
        png = svg.with_suffix(".png")
        # Rich pads cells with no-break spaces; rsvg-convert draws a leading one with no width, which shifts
        # right-aligned numbers left. Plain spaces under xml:space="preserve" render as the terminal shows.
        text = svg.read_text(encoding="utf-8").replace("&#160;", " ").replace("<svg ", '<svg xml:space="preserve" ', 1)
        with tempfile.NamedTemporaryFile("w", suffix=".svg", encoding="utf-8", delete=False) as tmp:
            tmp.write(text)
        try:
            subprocess.run([converter, tmp.name, "-o", str(png)], check=True)
        finally:
            os.unlink(tmp.name)
        pngs.append(png)
    return pngs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tui.screenshots", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "screenshots")
    parser.add_argument(
        "--source", type=Path, default=None, help="dir for the directives/help/search shots (default: the whole demo)"
    )
    args = parser.parse_args(argv)
    svgs = asyncio.run(shoot(args.out, args.source))
    for path in [*svgs, *to_png(svgs)]:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
