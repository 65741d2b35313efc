"""The dashboard as a real process on a real pty: SIGTERM and SIGHUP quit cleanly, restoring the terminal."""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ALT_SCREEN_OFF = b"\x1b[?1049l"


def _spawn(agent: Path) -> tuple[int, int]:
    pid, fd = pty.fork()
    if pid == 0:  # child: the app, on the pty
        os.environ.update({"TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"})
        os.chdir(ROOT)
        os.execv(sys.executable, [sys.executable, "-m", "tui.cli", str(agent)])
    return pid, fd


def _read_until(fd: int, needle: bytes, timeout: float) -> bytes:
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and needle not in out:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    return out


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_signal_quits_cleanly_and_restores_the_terminal(tmp_path: Path, sig: signal.Signals) -> None:
    agent = tmp_path / "agent"
    (agent / "logs").mkdir(parents=True)
    (agent / "logs" / "session.log").write_text(
        '{"ts":"2026-08-22T09:00:03.412Z","level":"info","event":"claude_sdk_oauth_session_continuity",'
        '"kind":"bootstrap","reason":"registry_miss","count":1}\n'
    )
    pid, fd = _spawn(agent)
    try:
        shown = _read_until(fd, b"Rates", timeout=30)
        assert b"Rates" in shown, "the dashboard never drew"
        time.sleep(0.5)
        os.kill(pid, sig)
        tail = _read_until(fd, ALT_SCREEN_OFF, timeout=15)
        deadline = time.monotonic() + 15
        status = None
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.05)
        assert status is not None and os.WIFEXITED(status), "the process was killed instead of exiting"
        assert os.WEXITSTATUS(status) == 0
        assert ALT_SCREEN_OFF in tail, "the terminal was left in the alternate screen"
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(fd)
