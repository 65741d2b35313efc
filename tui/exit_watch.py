"""The dashboard ends when told to or when its terminal is gone, whatever state it is in.

The review found a `--demo` dashboard whose tmux session was killed still running 40 minutes later, and then
deaf to SIGTERM: a handler that only runs inside the event loop (`loop.add_signal_handler`) runs only when the
loop does. So:

* SIGTERM and SIGHUP are caught with `signal.signal`, whose handler runs in the main thread between two
  bytecodes or when a blocked system call is interrupted (PEP 475 retries it after the handler), event loop or
  not. It asks the app to quit the way `q` does (terminal restored, workers stopped, exit 0).
* A watch thread checks every `CHECK_S` that the terminal is still there: after a hangup (the pty's other end
  closed: `tmux kill-session`, a closed terminal window, a dropped ssh session) `isatty` turns false, and the
  dashboard quits as on SIGHUP, even when no signal came.
* A quit asked for and not done within `GRACE_S` (a loop that is stuck, a write to a terminal that never
  returns) ends the process: the terminal modes are reset as far as it still listens, then `os._exit` with
  128 + the signal (143 SIGTERM, 129 SIGHUP or a lost terminal). A second signal ends it at once; after a
  clean quit (while the engine closes its files and worker pool) the signals' default action is back.
* After a quit asked for by a signal or a lost terminal, the rest of the exit once the app unmounted
  (Textual's driver teardown, the engine closing its files and pool) gets `AFTER_S`; then the process ends the same way.
  Textual's output thread dies on the first write to a terminal that hung up (EIO), its queue fills, and the
  driver's `close` then blocks for ever putting its stop marker: the review's dashboard after `tmux
  kill-session` (the battery's row at load 10-13: > 30 s; 11 minutes here until SIGKILL), with the signal
  handlers already given back.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType

__all__ = ["AFTER_S", "CHECK_S", "GRACE_S", "ExitWatch"]

CHECK_S = 0.5
"""How often the watch thread looks at the terminal (one `isatty` call: nothing measurable)."""
GRACE_S = 5.0
"""Time a quit gets to finish cleanly (2.1-3.9 s with 100k lines on screen, measured by the review)."""
AFTER_S = 15.0
"""Time the exit gets after the app unmounted: the driver's teardown and closing the engine and index take well
under a second (quitting writes nothing to the index); a process still there after this is stuck."""
#: leave the alternate screen, show the cursor, stop mouse reporting, reset colours: what a clean quit does
_RESTORE = b"\x1b[?1049l\x1b[?25h\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l\x1b[0m"


class ExitWatch:
    """Installed once by the live dashboard; `quit` is the app's own clean exit (called in the loop's thread)."""

    def __init__(
        self,
        quit: Callable[[], None],
        call_soon: Callable[[Callable[[], None]], object],
        *,
        tty_fd: int | None = None,
        grace_s: float = GRACE_S,
        check_s: float = CHECK_S,
        after_s: float = AFTER_S,
    ) -> None:
        self._quit = quit
        self._call_soon = call_soon
        self._fd = tty_fd if tty_fd is not None else _tty_fd()
        self._grace = grace_s
        self._check = check_s
        self._after = after_s
        self._asked: float | None = None  # when a quit was asked for (monotonic)
        self._unmounted: float | None = None  # when the app quit cleanly (monotonic): the rest of the exit runs
        self._code = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._previous: dict[int, object] = {}

    def start(self) -> None:
        for name in ("SIGTERM", "SIGHUP"):
            sig = getattr(signal, name, None)
            if sig is not None:
                with contextlib.suppress(ValueError, OSError):  # not the main thread (tests): the watch still runs
                    self._previous[sig] = signal.signal(sig, self._on_signal)
        self._thread = threading.Thread(target=self._watch, name="exit-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """The app quit cleanly: no forcing from the grace period (what follows, closing the engine's files
        and pool, takes its time; the SQLite index was written as the polls read, so quitting saves nothing),
        and the signals' previous handling back (the default: a signal from now on ends the process).
        When the quit was asked for (a signal, a terminal gone) the watch stays, a daemon thread: a process still
        running `AFTER_S` later is stuck, and ends. (A quit by key ends the watch: an app in a test, too.)"""
        if self._asked is None:
            self._stop.set()
        elif self._unmounted is None:
            self._unmounted = time.monotonic()
        for sig, previous in self._previous.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(sig, previous)  # type: ignore[arg-type]
        self._previous.clear()

    # ------------------------------------------------------------------ triggers

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        if self._asked is not None or self._unmounted is not None or self._stop.is_set():
            self._force(128 + signum)  # asked twice, or after the app is gone (closing): now
        self.ask(128 + signum)

    def ask(self, code: int) -> None:
        """Quit cleanly; if that has not happened within the grace period, the watch thread ends the process."""
        if self._asked is None:
            self._asked, self._code = time.monotonic(), code
        with contextlib.suppress(RuntimeError):  # the loop is closed already: the process is on its way out
            self._call_soon(self._quit)

    def _watch(self) -> None:
        while not self._stop.wait(self._check):
            if self._unmounted is not None:
                if time.monotonic() - self._unmounted >= self._after:
                    self._force(self._code)  # the exit after a clean quit is stuck (see the module docstring)
                continue
            if self._asked is None and self._fd is not None and not _alive(self._fd):
                self.ask(128 + int(getattr(signal, "SIGHUP", 1)))  # the terminal hung up: as a SIGHUP would
            if self._asked is not None and time.monotonic() - self._asked >= self._grace:
                self._force(self._code)

    def close(self) -> None:
        """End the watch thread (tests; a real process ends with it, a daemon)."""
        self._stop.set()

    def _force(self, code: int) -> None:
        if self._fd is not None and _alive(self._fd):
            with contextlib.suppress(OSError):
                os.write(self._fd, _RESTORE)
        os._exit(code)


def _tty_fd() -> int | None:
    """The descriptor the dashboard draws on, when it is a terminal."""
    for stream in (sys.__stdout__, sys.__stdin__):
        with contextlib.suppress(AttributeError, ValueError, OSError):
            fd = stream.fileno()  # type: ignore[union-attr]
            if os.isatty(fd):
                return fd
    return None


def _alive(fd: int) -> bool:
    """False once the terminal behind `fd` hung up (its other end closed: `isatty` is false from then on)."""
    try:
        return os.isatty(fd)
    except OSError:
        return False
