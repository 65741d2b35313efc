"""Reading from a pipe: `continuity-tui report -` and `… | continuity-tui -` (issue 18 item 12, pipe input).

`report -` said "-: no such file"; there was no way to pipe into the dashboard. Both now spool stdin to a temp
file (removed afterwards); the dashboard reads the keyboard from the terminal and shows the pipe as it grows.
"""

from __future__ import annotations

import contextlib
import json
import os
import pty
import shlex
import subprocess
import sys
import time
from pathlib import Path

from test_tui_process import ROOT, _read_until

from core.demo.bundle import demo_source

TRANSCRIPT = next((demo_source() / "sessions").glob("*/*019fdb7e*.jsonl"))


def _run(args: list[str], data: bytes, tmp: Path) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "TMPDIR": str(tmp), "HOME": str(tmp)}
    return subprocess.run([sys.executable, "-m", "tui.cli", *args], input=data, capture_output=True, cwd=ROOT,
                          env=env, timeout=120, check=False)  # fmt: skip


def test_report_reads_stdin(tmp_path: Path) -> None:
    done = _run(["report", "-"], TRANSCRIPT.read_bytes(), tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert len(report["turns"]) == 21 and report["sources"][0]["format"] == "senpi-transcript"
    assert not list(tmp_path.glob("continuity-stdin-*")), "the spool was left behind"
    md = _run(["report", "-", "--format", "md"], (demo_source() / "logs" / "session.log").read_bytes(), tmp_path)
    assert md.returncode == 0 and md.stdout.startswith(b"# Continuity report\n\n**")


def test_report_of_an_empty_pipe_is_a_clear_error(tmp_path: Path) -> None:
    done = _run(["report", "-"], b"", tmp_path)
    assert done.returncode == 2
    assert done.stderr.decode().startswith("continuity-tui: -: nothing readable")
    assert not list(tmp_path.glob("continuity-stdin-*"))


def test_the_dashboard_reads_a_growing_pipe_and_the_keyboard(tmp_path: Path) -> None:
    lines = TRANSCRIPT.read_bytes().splitlines(keepends=True)
    first, rest = tmp_path / "first.jsonl", tmp_path / "rest.jsonl"
    first.write_bytes(b"".join(lines[:20]))
    rest.write_bytes(b"".join(lines[20:]))
    producer = f"(cat {shlex.quote(str(first))}; sleep 3; cat {shlex.quote(str(rest))}; sleep 30)"
    command = f"{producer} | {shlex.quote(sys.executable)} -m tui.cli - --no-cache"
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update({"TERM": "xterm-256color", "COLUMNS": "120", "LINES": "36", "TMPDIR": str(tmp_path),
                           "HOME": str(tmp_path)})  # fmt: skip
        os.chdir(ROOT)
        os.execv("/bin/sh", ["/bin/sh", "-c", command])
    try:
        shown = _read_until(fd, b"stdin copied to", timeout=40)
        assert b"stdin copied to" in shown
        assert list(tmp_path.glob("continuity-stdin-*/stdin"))
        grown = _read_until(fd, b"21 turns", timeout=30)
        assert b"21 turns" in grown, "the rest of the pipe never reached the screen"
        os.write(fd, b"?")  # the keyboard reaches the app: its help opens
        assert b"Keys" in _read_until(fd, b"Keys", timeout=10)
        os.write(fd, b"\x1b")
        time.sleep(0.3)
        os.write(fd, b"q")
        _read_until(fd, b"\x1b[?1049l", timeout=15)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and list(tmp_path.glob("continuity-stdin-*")):
            time.sleep(0.1)
        assert not list(tmp_path.glob("continuity-stdin-*")), "the spool was left behind"
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(os.getpgid(pid), 9)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        os.close(fd)
