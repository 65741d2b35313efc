"""The dashboard and the persistent index: finished sessions are written as they are parked (each poll ends with
one transaction), the next start loads them before its first poll, and quitting writes nothing.
`ContinuityApp.run` is replaced by a stand-in that polls like the ingest worker, so nothing here depends on a
terminal or on timing; the last test drives the real app (Pilot)."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from core.index import cache_dir
from core.report import ReportOptions, build_report
from tests.index_support import demo_without_recordings, stored
from tests.report_helpers import T0
from tui import commands
from tui.app import ContinuityApp
from tui.cli import dashboard_parser


def _report(engine: Any) -> dict[str, Any]:
    return json.loads(json.dumps(build_report(engine, ReportOptions(now_ms=T0)), sort_keys=True))


def _finished(root: Path) -> Path:
    """Every file an hour old: a dashboard parks a session unmodified for `PARK_IDLE_S` (then the index has it)."""
    past = time.time() - 3600
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (past, past))
    return root


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Per dashboard run: (the report after its first poll, the report after it read everything)."""
    out: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def run(self: ContinuityApp, *args: Any, **kwargs: Any) -> None:
        self.engine.poll(1)  # the first poll of the ingest worker, with a budget of one byte
        first = _report(self.engine)
        while True:  # what the worker does until the backlog is read
            result = self.engine.poll(self.max_bytes)
            if not result.lines and not result.changed:
                break
        out.append((first, _report(self.engine)))

    monkeypatch.setattr(ContinuityApp, "run", run)
    return out


def _sessions(report: dict[str, Any]) -> list[tuple[str, int]]:
    return sorted((s["id"], s["turns"]) for s in report["sessions"])


def _transcripts_only(tmp_path: Path) -> Path:
    """The demo without recordings or logs: the order a dashboard reads its files in decides nothing, so what it
    read is stored (`core.index.livelog`; with the demo's log, whose lines name the sessions, nothing is)."""
    root = demo_without_recordings(tmp_path)
    shutil.rmtree(root / "logs")
    return _finished(root)


def test_a_second_start_has_the_finished_sessions_at_its_first_poll(
    tmp_path: Path, seen: list[tuple[dict[str, Any], dict[str, Any]]]
) -> None:
    root = _transcripts_only(tmp_path)
    args = dashboard_parser().parse_args([str(root)])
    assert commands.run_dashboard(args) == 0
    assert len(stored("SELECT key FROM sessions")) == 2  # written when parked, not on quit
    assert commands.run_dashboard(args) == 0
    (first_before, first_after), (second_before, second_after) = seen
    assert _sessions(first_before) != _sessions(first_after)  # cold: a poll of one byte reads a line or so
    finished = [(sid, n) for sid, n in _sessions(first_after) if not sid.startswith("01a13072")]  # (ends mid-line)
    assert set(finished) <= set(_sessions(second_before))  # warm: the finished ones are there at once
    # the same state; the dashboard lists its sources in the order it read them (a report sorts them)
    for report in (first_after, second_after):
        report["sources"].sort(key=lambda source: source["path"])
    assert second_after == first_after


def test_quitting_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _finished(demo_without_recordings(tmp_path))
    args = dashboard_parser().parse_args([str(root)])
    monkeypatch.setattr(ContinuityApp, "run", lambda self: self.engine.poll(None))
    assert commands.run_dashboard(args) == 0
    before = stored("SELECT id, key FROM sessions ORDER BY id")
    index = cache_dir() / "index.sqlite3"
    size = index.stat().st_size
    monkeypatch.setattr(ContinuityApp, "run", lambda self: None)  # quit before the worker polled once
    assert commands.run_dashboard(args) == 0
    assert stored("SELECT id, key FROM sessions ORDER BY id") == before and index.stat().st_size == size


def test_no_cache_dashboard_reads_and_writes_no_index(
    tmp_path: Path, seen: list[tuple[dict[str, Any], dict[str, Any]]]
) -> None:
    root = _finished(demo_without_recordings(tmp_path))
    args = dashboard_parser().parse_args([str(root), "--no-cache"])
    assert commands.run_dashboard(args) == 0
    assert not cache_dir().exists() or not any(cache_dir().iterdir())


async def test_a_restored_engine_paints_what_a_cold_one_paints(tmp_path: Path) -> None:
    """The real app (Pilot) on an engine whose index is loaded by its first poll: the same screen."""
    from tui_fixtures import FROZEN, screen_output, wait_loaded
    from tui_fixtures import write_agent as write_tui_agent

    from core.engine import Engine
    from core.index import Index

    root = tmp_path / "agent"
    write_tui_agent(root)
    shutil.rmtree(root / "logs")  # (its log pairs with the calls: the order would decide, nothing be stored)
    _finished(root)
    screens: list[list[str]] = []
    statuses: list[str] = []
    for _ in range(2):
        engine = Engine([root], newest_first=True)
        index = Index.for_engine(engine, volatile=[], mode="live")
        engine.before_first_poll(lambda engine=engine, index=index: index.restore(engine))
        app = ContinuityApp(engine, live=False, clock=lambda: FROZEN)
        async with app.run_test(size=(160, 45)) as pilot:
            await wait_loaded(pilot, app)
            screens.append(screen_output(app)[1])
        statuses.append(index.status)
        index.close()
        engine.close()
    assert statuses[0] == "cold: no index yet" and statuses[1].startswith("warm")
    # the key bar (the last row) is drawn on its own schedule: a loaded machine can leave it blank either time
    assert screens[0][:-1] == screens[1][:-1] and any("Turns" in line for line in screens[1])
