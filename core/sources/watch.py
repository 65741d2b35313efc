"""Wake the tailer when something changes on disk; what changed is a hint, never something to rely on.

Design (reference textual-practice §6):

* Watch **directories**, never files: an inotify watch on a file goes deaf after an atomic replace
  (write-temp + rename), which is exactly how sidecars and some transcripts are written.
* Ignore event kinds and paths beyond a cheap relevance filter: an event means "poll now", and the reading
  never depends on which event fired (rotation arrives as an unordered ``{added, deleted}`` set; inferring
  order from it would be wrong). The changed paths are kept as *hints* (``take_hints``): a poll re-stats
  those first instead of thousands of finished files, and still re-stats everything when the hints are
  unknown, name a path it does not know, or every ``COLD_SURVEY_S``.
* The caller's ``wait(timeout)`` is the heartbeat: polling-mode backends (WSL, network filesystems) miss
  events, and the timeout makes sure a poll still happens.
* A watch on a directory that is deleted and recreated silently stops reporting, so each thread re-arms
  itself when a watched directory's identity changes (checked at every rust timeout, about once a second).
* Stopping is a ``threading.Event`` passed as watchfiles' ``stop_event``: the Rust loop checks it every
  ``step`` ms, so ``close()`` returns promptly and leaves no thread behind.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # watchfiles (and the Rust extension with it) loads only when a watcher starts: `report` never
    from watchfiles import Change

__all__ = ["MAX_HINTS", "DirWatcher"]


def _log() -> Any:
    """This module's logger, on first use: importing `logging` is ~10 ms CPU of every start-up, and only a
    failing watch writes to it."""
    import logging

    return logging.getLogger(__name__)


MAX_HINTS = 4096
"""Changed paths remembered between two polls; beyond that the poll re-stats everything anyway."""

_Ident = tuple[int, int] | None


def _ident(path: str) -> _Ident:
    """(st_dev, st_ino) of a directory, None when it is gone: a changed identity means the watch is stale."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


class DirWatcher:
    """One or two daemon threads (recursive roots, flat parents) that set a shared event on any relevant change.

    ``recursive`` directories are the directory roots (new session subdirectories must be seen);
    ``flat`` directories are the parents of single-file roots, watched non-recursively because a file's
    parent may be a huge tree such as the home directory.
    """

    def __init__(
        self,
        recursive: list[str],
        flat: list[str],
        accept: Callable[[str], bool],
        *,
        on_change: Callable[[set[str]], None] | None = None,
        debounce_ms: int = 50,
        step_ms: int = 50,
        rust_timeout_ms: int = 1_000,
        retry_s: float = 1.0,
    ) -> None:
        self._groups = [(sorted(set(recursive)), True), (sorted(set(flat) - set(recursive)), False)]
        self._accept = accept
        #: called in the watch thread with the paths of each batch of changes, before the poller wakes: the
        #: tailer pins new generations of its log families there (`Sources._pin`), whenever the poll comes
        self._on_change = on_change
        # watchfiles yields a batch once no change came for `step` ms, or after `debounce` ms of steady changes:
        # a session appending a line every 50 ms would otherwise wait the whole debounce every time. 50 ms keeps
        # write-to-screen p95 under 250 ms (bench/); a poll after an event costs only the hinted files.
        self._debounce_ms = debounce_ms
        self._step_ms = step_ms
        self._rust_timeout_ms = rust_timeout_ms
        self._retry_s = retry_s
        self._fired = threading.Event()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._hints: set[str] = set()
        self._everything = False  # a change whose paths are unknown (re-arm, failure, too many): hints say nothing
        self._hints_lock = threading.Lock()
        self.last_error: str | None = None
        """The last exception a watch thread survived (shown in diagnostics; the heartbeat keeps tailing)."""

    @property
    def threads(self) -> list[threading.Thread]:
        """The live watch threads (tests assert this is empty after ``close``)."""
        return [t for t in self._threads if t.is_alive()]

    def start(self) -> None:
        """Start the watch threads; a second call is a no-op."""
        if self._threads or self._stop.is_set():
            return
        for dirs, recursive in self._groups:
            if not dirs:
                continue
            t = threading.Thread(
                target=self._run,
                args=(dirs, recursive),
                name=f"sources-watch-{'tree' if recursive else 'flat'}",
                daemon=True,  # never keep the interpreter alive if close() was forgotten
            )
            self._threads.append(t)
            t.start()

    def wait(self, timeout: float) -> bool:
        """Block until a change fired or ``timeout`` passed; True only for a real change.

        The flag is cleared *after* waking, and the caller polls after that: a change that lands between the
        wake-up and the clear happened before the poll, so the poll's re-stat covers it.
        """
        fired = self._fired.wait(max(0.0, timeout))
        self._fired.clear()
        return fired and not self._stop.is_set()

    def take_hints(self) -> set[str] | None:
        """The paths seen changing since the last call, or None when that is not known (a directory moved, the
        watch failed, more than ``MAX_HINTS`` paths).

        A hint is only that: the caller may look at these paths first, but must not rely on them to see every
        change (its own full re-stat remains the guarantee). It spares a poll woken by one appended line from
        re-stat'ing thousands of finished files.
        """
        with self._hints_lock:
            hints, everything = self._hints, self._everything
            self._hints, self._everything = set(), False
        return None if everything else hints

    def _hint(self, paths: set[str] | None) -> None:
        with self._hints_lock:
            if paths is None or self._everything or len(self._hints) + len(paths) > MAX_HINTS:
                self._hints, self._everything = set(), True
            else:
                self._hints |= paths

    def wake(self) -> None:
        """A blocked `wait` returns now, as if a change fired (the caller is told to stop: a dashboard quitting
        must not sleep out its heartbeat; the extra look it may cost is a full survey)."""
        self._fired.set()

    def close(self, join_timeout: float = 5.0) -> None:
        """Stop every thread and wake any waiter. Idempotent."""
        self._stop.set()
        self._fired.set()
        for t in self._threads:
            t.join(join_timeout)

    def _filter(self, _change: Change, path: str) -> bool:
        return self._accept(path)

    def _run(self, dirs: list[str], recursive: bool) -> None:
        """Watch loop; any failure is logged and retried after ``retry_s`` so tailing never depends on it."""
        while not self._stop.is_set():
            present = [d for d in dirs if os.path.isdir(d)]
            if not present:
                self._stop.wait(self._retry_s)
                continue
            idents = {d: _ident(d) for d in present}
            changes_iter: Generator[set[tuple[Change, str]], None, None] | None = None
            try:
                from watchfiles import watch

                changes_iter = watch(
                    *present,
                    watch_filter=self._filter,
                    recursive=recursive,
                    debounce=self._debounce_ms,
                    step=self._step_ms,
                    rust_timeout=self._rust_timeout_ms,
                    yield_on_timeout=True,
                    stop_event=self._stop,
                    raise_interrupt=False,
                    debug=False,
                )
                for changes in changes_iter:
                    if changes:
                        paths = {path for _change, path in changes}
                        self._hint(paths)
                        if self._on_change is not None:
                            try:
                                self._on_change(paths)
                            except Exception as exc:  # a hint's follow-up; the poll's own survey is the guarantee
                                _log().debug("on_change for %d paths failed: %s", len(paths), exc)
                        self._fired.set()
                    if self._stop.is_set():
                        break
                    if any(_ident(d) != i for d, i in idents.items()) or any(
                        os.path.isdir(d) for d in dirs if d not in idents
                    ):
                        self._hint(None)
                        self._fired.set()  # something moved; poll, then re-arm on the new directories
                        break
            except Exception as exc:  # a watch failure must never stop tailing
                self.last_error = f"{type(exc).__name__}: {exc}"
                _log().debug("watch on %s failed: %s", present, self.last_error)
                self._hint(None)
                self._fired.set()
                self._stop.wait(self._retry_s)
            finally:
                if changes_iter is not None:
                    changes_iter.close()  # exits RustNotify's context now, not at garbage collection
