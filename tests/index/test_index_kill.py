"""kill -9 at any moment of a run leaves a store the next run uses or discards, never a wrong report.

A real `report` process is killed at a random moment of its run (while it reads, writes a transaction, settles
or renders), the history sometimes grows, and the next run (itself killed, sometimes) must report exactly
what a cold run reports on the same bytes. Every transaction is all or nothing (SQLite's journal), and what
was not committed is read again."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.index_support import cold, many_sessions, report
from tests.report_helpers import Transcript, log_line

STEPS = 4


def _spawn(root: Path, out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "report", str(root), "--format", "json", "-o", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ},
    )  # fmt: skip


def _grow(root: Path, step: int, rng: random.Random) -> None:
    """A new finished session and its log lines; or the log alone."""
    if rng.random() < 0.7:
        sid = f"0198f0a1-aaaa-7bbb-8ccc-{step:012d}"
        later = Transcript(sid, "/home/dev/grow")
        later.user(900 + step * 10, "more")
        later.assistant(901 + step * 10, "bootstrap", "registry_miss", 1, payload_bytes=300)
        folder = root / "sessions" / f"--grow-{step}--"
        folder.mkdir()
        (folder / f"2026-08-04T03-00-0{step}-000Z_{sid}.jsonl").write_text(later.text())
    with (root / "logs" / "session.log").open("a") as fh:
        fh.write(log_line(901 + step * 10, "bootstrap", "registry_miss", 1) + "\n")


@pytest.mark.parametrize("seed", range(3))
def test_kill_9_at_a_random_moment_never_gives_a_wrong_report(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = many_sessions(tmp_path, 6)
    started = time.monotonic()
    expected = cold([root], tmp_path)
    duration = max(0.3, time.monotonic() - started) * 3  # a child process starts cold and shares the machine
    for step in range(STEPS):
        child = _spawn(root, tmp_path / f"killed-{step}.json")
        time.sleep(rng.uniform(0.0, duration))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        if rng.random() < 0.5:
            _grow(root, step, rng)
            expected = cold([root], tmp_path)
        assert report([root], tmp_path) == expected, f"seed {seed}, step {step}"
    assert report([root], tmp_path) == expected
