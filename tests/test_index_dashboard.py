"""The dashboard and the persistent index: the saved history is on screen before the first poll, and the index
is saved on a clean quit. `ContinuityApp.run` is replaced by a stand-in that polls like the ingest worker, so
nothing here depends on a terminal or on timing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core import index as index_mod
from core.report import ReportOptions, build_report
from tests.report_helpers import T0, write_agent
from tui import commands
from tui.app import ContinuityApp
from tui.cli import dashboard_parser


def _report(engine: Any) -> str:
    data = build_report(engine, ReportOptions(now_ms=T0))
    return json.dumps(data, sort_keys=True)


@pytest.fixture
def sessions_seen(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Per dashboard run: (the report after its first poll, the report after it read everything)."""
    seen: list[tuple[str, str]] = []

    def run(self: ContinuityApp, *args: Any, **kwargs: Any) -> None:
        self.engine.poll(1)  # the first poll of the ingest worker, with a budget of one byte
        first = _report(self.engine)
        while True:  # what the worker does until the backlog is read
            result = self.engine.poll(self.max_bytes)
            if not result.lines and not result.changed:
                break
        seen.append((first, _report(self.engine)))

    monkeypatch.setattr(ContinuityApp, "run", run)
    return seen


def test_second_dashboard_start_shows_the_saved_history_at_once(
    tmp_path: Path, sessions_seen: list[tuple[str, str]]
) -> None:
    agent = write_agent(tmp_path)
    args = dashboard_parser().parse_args([str(agent)])
    assert commands.run_dashboard(args) == 0
    assert len(list(index_mod.cache_dir().glob("*.index"))) == 1  # saved on the clean quit
    assert commands.run_dashboard(args) == 0
    (first_before, first_after), (second_before, second_after) = sessions_seen
    assert first_before != first_after  # a cold start: a poll of one byte reads a line or so
    assert second_before == first_after == second_after  # a warm one: everything after that same first poll


def test_a_dashboard_quit_before_reading_keeps_the_saved_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = write_agent(tmp_path)
    args = dashboard_parser().parse_args([str(agent)])
    monkeypatch.setattr(ContinuityApp, "run", lambda self: self.engine.poll(None))
    assert commands.run_dashboard(args) == 0
    (saved,) = index_mod.cache_dir().glob("*.index")
    before = saved.read_bytes()
    monkeypatch.setattr(ContinuityApp, "run", lambda self: None)  # quit before the worker polled once
    assert commands.run_dashboard(args) == 0
    assert saved.read_bytes() == before


def test_no_cache_dashboard_reads_and_writes_no_index(tmp_path: Path, sessions_seen: list[tuple[str, str]]) -> None:
    agent = write_agent(tmp_path)
    args = dashboard_parser().parse_args([str(agent), "--no-cache"])
    assert commands.run_dashboard(args) == 0
    assert not index_mod.cache_dir().exists() or not any(index_mod.cache_dir().iterdir())


async def test_a_restored_engine_paints_what_a_cold_one_paints(tmp_path: Path) -> None:
    """The real app (Pilot) on an engine whose index is restored by its first poll: the same screen."""
    from tui_fixtures import FROZEN, screen_output, wait_loaded
    from tui_fixtures import write_agent as write_tui_agent

    from core.engine import Engine
    from core.index import Index

    root = tmp_path / "agent"
    write_tui_agent(root)
    screens: list[list[str]] = []
    for _ in range(2):
        engine = Engine([root], newest_first=True)
        index = Index.for_engine(engine, volatile=[], mode="live")
        engine.before_first_poll(lambda engine=engine, index=index: index.restore(engine))
        app = ContinuityApp(engine, live=False, clock=lambda: FROZEN)
        async with app.run_test(size=(160, 45)) as pilot:
            await wait_loaded(pilot, app)
            screens.append(screen_output(app)[1])
        index.save(engine)
        engine.close()
    assert index.status == "warm"
    assert screens[0] == screens[1] and any("Turns" in line for line in screens[1])
