"""Reading from a pipe: `continuity-tui report -` and `… | continuity-tui -`.

Both spool stdin to a temporary file (the engine reads files: it sniffs the format by content, tails growth,
and re-reads a line by offset for the drill-down), and remove it afterwards. The dashboard does what toolong
does with a pipe: stdin is copied to the file while the UI runs on the terminal; here in-process, by moving
the pipe off fd 0 and opening `/dev/tty` there, so Textual's driver reads the keyboard while a thread keeps
appending what the pipe delivers, and the dashboard shows it live (`tail -f session.log | continuity-tui -`).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from msgspec import Struct, field

CHUNK = 64 << 10
STDIN = "-"


class NoTerminal(OSError):
    """The dashboard was given a pipe on stdin and there is no terminal to draw on or read keys from."""


class Spool(Struct, dict=True):
    """stdin copied into `path` (in a temp dir of its own); `cleanup` stops the copy and removes both."""

    path: Path
    copied: int = 0
    done: threading.Event = field(default_factory=threading.Event)
    error: str | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def cleanup(self) -> None:
        import shutil  # (shutil, tempfile and select only for a pipe: every command imports this module)

        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        shutil.rmtree(self.path.parent, ignore_errors=True)


def wants_stdin(paths: list[Path]) -> bool:
    return any(str(path) == STDIN for path in paths)


def replace_stdin(paths: list[Path], spool: Spool) -> list[Path]:
    return [spool.path if str(path) == STDIN else path for path in paths]


def _new_spool() -> Spool:
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="continuity-stdin-"))
    path = folder / "stdin"
    path.touch()
    return Spool(path)


def spool_all(fd: int = 0) -> Spool:
    """Copy everything until end of input (a report reads a finished stream)."""
    spool = _new_spool()
    with open(spool.path, "ab", buffering=0) as out:
        while chunk := os.read(fd, CHUNK):
            out.write(chunk)
            spool.copied += len(chunk)
    spool.done.set()
    return spool


def spool_live(fd: int) -> Spool:
    """Copy in a thread while the dashboard runs; each chunk is on disk at once, so the tail sees it grow."""
    import select

    spool = _new_spool()

    def copy() -> None:
        try:
            with open(spool.path, "ab", buffering=0) as out:
                while not spool._stop.is_set():
                    ready, _, _ = select.select([fd], [], [], 0.2)
                    if not ready:
                        continue
                    chunk = os.read(fd, CHUNK)
                    if not chunk:
                        break
                    out.write(chunk)
                    spool.copied += len(chunk)
        except OSError as err:  # the disk filled, the temp dir went: the dashboard keeps what it has
            spool.error = f"{type(err).__name__}: {err}"
        finally:
            spool.done.set()
            os.close(fd)

    spool._thread = threading.Thread(target=copy, name="stdin-spool", daemon=True)
    spool._thread.start()
    return spool


def take_stdin_for_ui() -> int:
    """Move the pipe off fd 0 and put the terminal there; returns the pipe's new fd (for `spool_live`).

    Raises `NoTerminal` when there is no controlling terminal (CI, cron): then only `report -` can read a pipe.
    """
    try:
        tty = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError as err:
        raise NoTerminal(str(err)) from err
    pipe = os.dup(0)
    os.dup2(tty, 0)
    os.close(tty)
    return pipe
