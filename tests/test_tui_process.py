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


def test_a_dashboard_whose_terminal_went_away_exits(tmp_path: Path) -> None:
    """`tmux kill-session`, a closed terminal window, a dropped ssh session: the pty's other end closes. The
    dashboard must end (the review saw one run on for 40 minutes), then and on a SIGTERM sent after."""
    agent = tmp_path / "agent"
    (agent / "logs").mkdir(parents=True)
    (agent / "logs" / "session.log").write_text(
        '{"ts":"2026-08-22T09:00:03.412Z","level":"info","event":"claude_sdk_oauth_session_continuity",'
        '"kind":"bootstrap","reason":"registry_miss","count":1}\n'
    )
    pid, fd = _spawn(agent)
    try:
        assert b"Rates" in _read_until(fd, b"Rates", timeout=30), "the dashboard never drew"
        os.close(fd)  # the terminal is gone
        fd = -1
        os.kill(pid, signal.SIGTERM)  # and a supervisor's SIGTERM lands in that state
        deadline = time.monotonic() + 20
        done = 0
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.1)
        assert done, "still running 20 s after its terminal went away and a SIGTERM"
        assert os.WIFEXITED(status)  # ended by itself, not killed by the signal's default action
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        if fd >= 0:
            os.close(fd)


WATCHED = """
import os, signal, sys, time
from tui.exit_watch import ExitWatch
read, write = os.pipe()
how = sys.argv[1]
quit = (lambda: watch.stop()) if how == "stuck-exit" else (lambda: None)
watch = ExitWatch(quit, lambda fn: fn(), tty_fd=read if how == "no-terminal" else None, grace_s=0.5, check_s=0.05,
                  after_s=1.0)
watch.start()
if how != "no-terminal":
    os.kill(os.getpid(), signal.SIGTERM)
time.sleep(30)  # a main thread that never gets back to an event loop, or an exit stuck after the app unmounted
sys.exit(7)
"""


@pytest.mark.parametrize("how", ["signal", "no-terminal", "stuck-exit"])
def test_a_quit_that_cannot_finish_still_ends_the_process(how: str) -> None:
    """The app's own quit does nothing here (a stuck loop): SIGTERM, or a descriptor that is no terminal where
    one was, ends the process within the grace period, with 128 + the signal. ``stuck-exit``: the app quits
    (unmounts, the signal handlers given back) and then its exit never ends, as Textual's driver teardown after
    `tmux kill-session` (its output thread died on EIO, and `close` waits on its full queue for ever): the
    process ends `after_s` later all the same."""
    import subprocess

    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", WATCHED, how], cwd=ROOT, capture_output=True, timeout=20)
    assert proc.returncode == (128 + signal.SIGHUP if how == "no-terminal" else 128 + signal.SIGTERM), proc.stderr
    assert time.monotonic() - started < 10
