"""Where a report or `check`'s lines go when the output fails: a closed pipe ends quietly with 141 (as a tool
that SIGPIPE stopped), any other write error is one line and exit 1, and no file is ever left half-written.

Each case runs the real command in a child process with the real failure: a pipe whose reader is gone,
fd 1 closed, `/dev/full`, and a file-size limit (`RLIMIT_FSIZE`, how a full disk looks to `write`: the kernel
refuses the bytes past the limit) for `-o`.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from report_helpers import write_agent

from core.report.output import OutputError, write_file

CMD = [sys.executable, "-m", "tui.cli"]
TIMEOUT = 60


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    return write_agent(tmp_path)


def run(args: list[str], **kw: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*CMD, *args], capture_output="stdout" not in kw, timeout=TIMEOUT, **kw)  # type: ignore[call-overload]


def closed_pipe(args: list[str]) -> tuple[int, bytes]:
    """Run with stdout a pipe whose read end is closed before the child writes a byte."""
    read, write = os.pipe()
    os.close(read)
    try:
        proc = subprocess.run([*CMD, *args], stdout=write, stderr=subprocess.PIPE, timeout=TIMEOUT)
    finally:
        os.close(write)
    return proc.returncode, proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["report", "--format", "json"],
        ["report", "--format", "md"],
        ["report", "--format", "html", "--include-text"],
        ["check", "--max-resend-share", "0.9"],
        ["check"],
    ],
    ids=["json", "md", "html", "check-threshold", "check-info"],
)
def test_a_closed_pipe_ends_quietly_with_141(agent: Path, args: list[str]) -> None:
    code, err = closed_pipe([args[0], str(agent), "--no-cache", *args[1:]])
    assert code == 141 and err == b""


def test_head_reading_ten_bytes_of_a_big_report_ends_quietly(agent: Path) -> None:
    """`report | head -c 10` as a shell runs it: the reader leaves after 10 bytes, mid-report."""
    proc = subprocess.Popen(
        [*CMD, "report", str(agent), "--no-cache", "--include-text", "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert len(proc.stdout.read(10)) == 10
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(TIMEOUT) in (0, 141)  # 0 only when the whole report fitted the pipe before it closed
    assert b"Traceback" not in err and err == b""


@pytest.mark.parametrize("command", ["report", "check"])
def test_a_closed_stdout_is_one_line_and_exit_1(agent: Path, command: str) -> None:
    proc = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", *CMD, command, str(agent), "--no-cache"],
        capture_output=False,
        stderr=subprocess.PIPE,
        timeout=TIMEOUT,
    )
    assert proc.returncode == 1
    assert proc.stderr.decode().splitlines() == ["continuity-tui: cannot write: standard output is closed"]


@pytest.mark.parametrize("command", ["report", "check"])
def test_dev_full_is_one_line_and_exit_1(agent: Path, command: str) -> None:
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([*CMD, command, str(agent), "--no-cache"], stdout=full, stderr=subprocess.PIPE,
                              timeout=TIMEOUT)  # fmt: skip
    assert proc.returncode == 1
    lines = proc.stderr.decode().splitlines()
    assert lines == ["continuity-tui: cannot write to standard output: No space left on device"]


def _limited(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@pytest.mark.parametrize("fmt", ["json", "md", "html"])
def test_a_full_disk_under_o_leaves_no_file_and_keeps_the_previous_report(
    agent: Path, tmp_path: Path, fmt: str
) -> None:
    out = tmp_path / "out" / f"r.{fmt}"
    out.parent.mkdir()
    proc = subprocess.run([*CMD, "report", str(agent), "--no-cache", "--format", fmt, "-o", str(out)],
                          capture_output=True, timeout=TIMEOUT, preexec_fn=lambda: _limited(4096))  # fmt: skip
    assert proc.returncode == 1
    (line,) = proc.stderr.decode().splitlines()
    assert line.startswith(f"continuity-tui: cannot write {out}: ") and "Traceback" not in line
    assert list(out.parent.iterdir()) == []  # neither a 0-byte target nor the temporary file
    out.write_bytes(b"previous report")
    proc = subprocess.run([*CMD, "report", str(agent), "--no-cache", "--format", fmt, "-o", str(out)],
                          capture_output=True, timeout=TIMEOUT, preexec_fn=lambda: _limited(4096))  # fmt: skip
    assert proc.returncode == 1 and out.read_bytes() == b"previous report"
    assert [p.name for p in out.parent.iterdir()] == [out.name]


def test_a_full_disk_under_o_dir_leaves_no_file(agent: Path, tmp_path: Path) -> None:
    out = tmp_path / "reports"
    proc = subprocess.run([*CMD, "report", str(agent), "--no-cache", "--format", "json,md,html", "-o", str(out)],
                          capture_output=True, timeout=TIMEOUT, preexec_fn=lambda: _limited(4096))  # fmt: skip
    assert proc.returncode == 1 and len(proc.stderr.decode().splitlines()) == 1
    assert list(out.iterdir()) == []


def test_o_writes_the_whole_report_with_the_usual_mode(agent: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = run(["report", str(agent), "--no-cache", "-o", str(out)])
    assert proc.returncode == 0 and proc.stderr == b""
    assert out.read_bytes().rstrip().endswith(b"}")
    assert out.stat().st_mode & 0o777 == 0o666 & ~_umask()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def _umask() -> int:
    old = os.umask(0)
    os.umask(old)
    return old


def test_write_file_leaves_nothing_when_the_writer_fails(tmp_path: Path) -> None:
    target = tmp_path / "continuity-report.json"

    def broken(fh: object) -> None:
        fh.write(b"half a report")  # type: ignore[attr-defined]
        raise OSError(28, "No space left on device")

    with pytest.raises(OutputError, match="No space left on device"):
        write_file(target, broken)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(KeyboardInterrupt):
        write_file(target, lambda fh: (_ for _ in ()).throw(KeyboardInterrupt))
    assert list(tmp_path.iterdir()) == []


def test_o_onto_a_fifo_writes_into_it_and_leaves_it_a_fifo(agent: Path, tmp_path: Path) -> None:
    """`-o` naming something that is not a regular file (`/dev/null`, a FIFO) writes into it: a rename over it
    would replace the node with a file (it once turned a machine's /dev/null into a regular file)."""
    import stat
    import threading

    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    proc = run(["report", str(agent), "--no-cache", "--format", "json", "-o", str(fifo)])
    reader.join(TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert b'"schema": "continuity.report/1"' in got[0] or b'"schema":"continuity.report/1"' in got[0]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_o_onto_dev_full_is_one_line_and_leaves_the_device(agent: Path) -> None:
    import stat

    proc = run(["report", str(agent), "--no-cache", "-o", "/dev/full"])
    assert proc.returncode == 1
    assert proc.stderr.decode().splitlines() == ["continuity-tui: cannot write /dev/full: No space left on device"]
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
