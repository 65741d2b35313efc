"""The demo names its data dir on screen and removes it on exit unless --demo-dir was given (issue 18 item 11).

It wrote a new temp dir per run, never named and never removed (~1.8 MB each). Run as a real process on a pty.
"""

from __future__ import annotations

import os
import pty
import re
import signal
import sys
import time
from pathlib import Path

import pytest
from test_tui_process import ROOT, _read_until

from tui.cli import main
from tui.demo_dir import MARKER, DemoDirError, prepare


def _spawn(args: list[str], tmp: Path) -> tuple[int, int]:
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update({"TERM": "xterm-256color", "COLUMNS": "160", "LINES": "45", "TMPDIR": str(tmp),
                           "HOME": str(tmp)})  # fmt: skip
        os.chdir(ROOT)
        os.execv(sys.executable, [sys.executable, "-m", "tui.cli", *args])
    return pid, fd


def _quit(pid: int, fd: int) -> int:
    os.write(fd, b"q")
    _read_until(fd, b"\x1b[?1049l", timeout=15)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.WEXITSTATUS(status)
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError("the demo did not quit")


def _plain(screen: bytes) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.decode("utf-8", "replace"))


def test_the_temp_demo_dir_is_named_and_removed(tmp_path: Path) -> None:
    pid, fd = _spawn(["--demo", "--no-cache"], tmp_path)
    try:
        shown = _read_until(fd, b"removed on exit", timeout=40)
        assert b"removed on exit" in shown, "the demo bar never drew"
        found = [p for p in tmp_path.iterdir() if p.name.startswith("continuity-demo-")]
        assert len(found) == 1 and (found[0] / "agent").is_dir()
        assert found[0].name in _plain(shown)
        assert _quit(pid, fd) == 0
        assert not found[0].exists(), "the temp demo dir was left behind"
    finally:
        os.close(fd)


def test_demo_dir_is_kept_and_reused(tmp_path: Path) -> None:
    chosen = tmp_path / "my demo"
    for _run in range(2):  # the second run starts the marked dir over instead of appending to it
        pid, fd = _spawn(["--demo-dir", str(chosen), "--no-cache"], tmp_path)
        try:
            shown = _read_until(fd, b"kept on exit", timeout=40)
            assert b"kept on exit" in shown
            assert _quit(pid, fd) == 0
        finally:
            os.close(fd)
        assert (chosen / MARKER).is_file() and chosen.is_dir()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("continuity-demo-")]


def test_a_dir_with_other_files_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(DemoDirError):
        prepare(tmp_path)
    assert main(["--demo-dir", str(tmp_path)]) == 2
    assert "not empty" in capsys.readouterr().err
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert main(["--demo", str(tmp_path)]) == 2  # a PATH with --demo is a usage error, not silently ignored
