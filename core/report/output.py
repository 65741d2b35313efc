"""Where a report goes: a file that is never half-written, or standard output that may close under us.

* A file is written to a hidden temporary name in the same directory (`.name.<random>.tmp`, which discovery
  skips: dot-files are never candidates), flushed to disk, then renamed over the target. A full disk or any
  other write error removes the temporary file and leaves the target as it was (absent, or the previous
  report): never a 0-byte or truncated report that looks like a real one.
* Standard output: a reader that went away (`report | head -c 10`, `check | head -0`) is `ClosedPipe`, which
  the command ends quietly on with exit 141, what a shell reports for a tool killed by SIGPIPE (`cat`, `grep`),
  so `set -o pipefail` scripts see the usual code. A closed descriptor (`report >&-`), `/dev/full` and other
  write errors are `OutputError`: one line on stderr and exit 1.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

__all__ = ["EXIT_CLOSED_PIPE", "ClosedPipe", "OutputError", "quiet_stdout", "write_file", "write_stdout"]

EXIT_CLOSED_PIPE = 128 + 13
"""128 + SIGPIPE: the status a shell gives a tool the kernel stopped for writing to a closed pipe."""

Writer = Callable[[IO[bytes]], None]


class OutputError(Exception):
    """The report could not be written (disk full, a closed or unwritable output); the message is one line."""


class ClosedPipe(Exception):
    """The reader of standard output went away before the report was written: nothing to say to anyone."""


def _umask() -> int:
    """The process umask without changing it (`os.umask` sets it, which another thread could observe)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def write_file(path: Path, write: Writer) -> None:
    """Write `path` through a temporary file and a rename; raise `OutputError` and leave nothing behind.

    A target that exists and is not a regular file (`-o /dev/null`, a FIFO, a terminal) is written in place: a
    rename would replace the device node with a file (it did: `report -o /dev/null` as root turned the
    machine's /dev/null into a regular file that every later redirect appended to)."""
    try:
        special = not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        special = False  # absent (or unreadable): the temporary file and the rename say what is wrong
    if special:
        _write_in_place(path, write)
        return
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = _temporary(directory, path.name)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {_why(exc)}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            mode = os.stat(path).st_mode & 0o7777  # a report written again keeps the mode it was given
        except OSError:
            mode = 0o666 & ~_umask()  # what `open(path, "w")` would have made
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OutputError(f"cannot write {path}: {_why(exc)}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _temporary(directory: Path, name: str) -> tuple[int, str]:
    """A new file `.NAME.<random>.tmp` in `directory`, created by this call alone (O_EXCL, mode 0600), as
    `tempfile.mkstemp` makes one: without importing tempfile, whose shutil, bz2, lzma and random were ~6 ms of
    every report written to a file."""
    for _ in range(100):
        tmp = os.path.join(directory, f".{name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary name", str(directory))


def _write_in_place(path: Path, write: Writer) -> None:
    """A device or FIFO target: opened for writing as it is (never created, never truncated, never renamed)."""
    try:
        with open(path, "ab") as fh:
            write(fh)
            fh.flush()
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {_why(exc)}") from None


@contextlib.contextmanager
def _stdout_errors() -> Iterator[None]:
    try:
        yield
    except BrokenPipeError:
        raise ClosedPipe from None
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            raise ClosedPipe from None
        if exc.errno == errno.EBADF:
            raise OutputError("cannot write: standard output is closed") from None
        raise OutputError(f"cannot write to standard output: {_why(exc)}") from None


def write_stdout(write: Writer) -> None:
    """Write to standard output (bytes where it has a buffer); `ClosedPipe` or `OutputError` on failure."""
    out = sys.stdout
    if out is None:  # started with fd 1 closed: Python sets sys.stdout to None
        raise OutputError("cannot write: standard output is closed")
    with _stdout_errors():
        buffer = getattr(out, "buffer", None)
        if buffer is None:  # a text-only stdout (a redirect in tests)
            import io

            text = io.BytesIO()
            write(text)
            out.write(text.getvalue().decode("utf-8"))
            out.flush()
            return
        out.flush()
        write(buffer)
        buffer.flush()


def print_lines(lines: list[str]) -> None:
    """`print` each line to standard output, with `write_stdout`'s errors."""
    out = sys.stdout
    if out is None:
        raise OutputError("cannot write: standard output is closed")
    with _stdout_errors():
        for line in lines:
            out.write(line + "\n")
        out.flush()


def quiet_stdout() -> None:
    """After a closed pipe: point fd 1 at /dev/null, so the interpreter's own flush at exit raises nothing
    (Python would print "Exception ignored … BrokenPipeError" for the bytes still buffered)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
