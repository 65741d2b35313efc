"""kill -9 at any moment of a dashboard run leaves a store the next start uses or discards, never a wrong screen.

A real dashboard process (`continuity-tui PATH`, the Textual app run headless: its real ingest worker, the
index written after each of its polls at its real pace) is killed at a random moment of its start-up, its
backfill or its live wait; the history sometimes grows in between. The next start (in this process, through
the same command, so the same index scope) must show what a dashboard without the index shows."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from core.index import ENV_DIR, cache_dir
from tests.index.test_index_dashboard_logs import _figures, dashboard
from tests.index_support import DEMO, many_sessions, stored
from tests.report_helpers import log_line
from tui import commands
from tui.app import ContinuityApp
from tui.cli import dashboard_parser

KILLS = 4
CHILD = """
import sys
from tui import commands
from tui.app import ContinuityApp
from tui.cli import dashboard_parser
real = ContinuityApp.run
ContinuityApp.run = lambda self, *a, **k: real(self, headless=True)
sys.exit(commands.run_dashboard(dashboard_parser().parse_args(sys.argv[1:])))
"""


def _data(kind: str, tmp_path: Path) -> Path:
    """Data whose reading order decides nothing, so a dashboard stores it: the demo's logs alone (the log's
    rows) or many finished transcripts without a log (parked sessions)."""
    if kind == "log":
        root = tmp_path / "agent"
        shutil.copytree(DEMO / "logs", root / "logs")
        (root / "sessions").mkdir()
    else:
        root = many_sessions(tmp_path, 6)
        shutil.rmtree(root / "logs")
    past = time.time() - 3600  # idle: a dashboard parks (and stores) the finished sessions
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (past, past))
    return root


def _grow(root: Path, step: int) -> None:
    logs = root / "logs"
    if logs.exists():
        with (logs / "session.log").open("a") as fh:
            fh.write(log_line(901 + step * 10, "fork", "capacity", step + 2) + "\n")
    else:
        folder = next(p for p in sorted((root / "sessions").iterdir()) if p.is_dir())
        shutil.copytree(folder, root / "sessions" / f"--grown-{step}--")  # (the same ids: read, not stored)


def _wait_for_a_write(timeout: float) -> None:
    """Until the store holds something a dashboard wrote (a stored log or session)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(sqlite3.Error):
            if stored("SELECT (SELECT count(*) FROM sessions) + (SELECT count(*) FROM log_state)") != [(0,)]:
                return
        time.sleep(0.02)
    raise AssertionError("the dashboard wrote nothing")


def _resumed(root: Path) -> tuple[dict[str, Any], str]:
    """The next start, through the dashboard command (the same index scope as the killed process), its worker
    polling until the backfill is read: its figures and the index's status."""
    import core.index

    out: list[dict[str, Any]] = []
    made: list[Any] = []
    real_run, real_for_engine = ContinuityApp.run, core.index.Index.for_engine

    def run(self: ContinuityApp, *args: Any, **kwargs: Any) -> None:
        left = None
        while True:
            result = self.engine.poll(self.max_bytes)
            now = self.engine.pending_bytes()
            if not result.lines and not result.changed and (now == 0 or (left is not None and now >= left)):
                break
            left = now
        out.append(_figures(self.engine))

    def for_engine(*args: Any, **kwargs: Any) -> Any:
        made.append(real_for_engine(*args, **kwargs))
        return made[-1]

    ContinuityApp.run = run  # type: ignore[method-assign]
    core.index.Index.for_engine = for_engine  # type: ignore[method-assign]
    try:
        assert commands.run_dashboard(dashboard_parser().parse_args([str(root)])) == 0
    finally:
        ContinuityApp.run = real_run  # type: ignore[method-assign]
        core.index.Index.for_engine = real_for_engine  # type: ignore[method-assign]
    return out[0], made[0].status


@pytest.mark.parametrize("kind", ["log", "sessions"])
@pytest.mark.parametrize("seed", range(2))
def test_kill_9_of_a_dashboard_never_gives_a_wrong_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, seed: int
) -> None:
    rng = random.Random(seed)
    root = _data(kind, tmp_path)
    killed = cache_dir()
    span = 0.0
    statuses = []
    for step in range(KILLS):
        spawned = time.monotonic()
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(root)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env={**os.environ},
        )  # fmt: skip
        if not span:
            # the first one is killed as soon as it wrote (a child starts Textual before it reads: seconds on a
            # loaded machine); the others at random moments of twice that, a quarter each: early (before the
            # store is opened), while it writes, while it waits live
            _wait_for_a_write(timeout=60)
            span = 2 * (time.monotonic() - spawned)
        else:
            time.sleep(rng.uniform(step - 1, step) * span / (KILLS - 1))
        child.send_signal(signal.SIGKILL)
        assert child.wait(timeout=60) == -signal.SIGKILL
        if rng.random() < 0.5:
            _grow(root, step)
        # the next start on a copy of what the killed processes left (its own writes would be the next one's)
        check = tmp_path / f"check-{step}"
        if cache_dir().exists():
            shutil.copytree(cache_dir(), check)
        monkeypatch.setenv(ENV_DIR, str(check))
        warm, status = _resumed(root)
        monkeypatch.setenv(ENV_DIR, str(killed))
        statuses.append(status)
        cold, _ = dashboard(root, index=False, budget=512 << 10)
        assert warm == cold, (step, status)
    # the killed processes wrote the store, and some start resumed from what they left
    assert any(status.startswith("warm") for status in statuses), statuses
