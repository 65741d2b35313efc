"""Find the files continuity-tui understands under the paths a user gives it.

Two jobs live here, both pure stdlib:

* ``resolve_roots`` turns what a user typed (``~/.senpi/agent/logs``, an agent dir, a sessions dir, one file)
  into the directories and files to scan. A ``logs/`` dir is useless on its own for the continuity question
  (the transcripts live in the sibling ``sessions/``), so it pulls that sibling in.
* ``discover`` / ``Scanner`` list every candidate file under those roots. ``Scanner`` is the incremental form
  ``Sources.poll`` uses on every call: it re-lists a directory only when the directory's mtime changed
  (an entry was added, removed or renamed), so a rescan of a big sessions tree costs one ``stat`` per
  directory instead of a full walk.

Ordering matters to the tailer: for a log family the old generation ``X.log.1`` must be read before ``X.log``
(see ``order_key``), so the sort puts them together with ``.1`` first.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from msgspec import Struct, field

__all__ = [
    "MAX_FILES",
    "Scanner",
    "SourceError",
    "discover",
    "is_candidate_name",
    "logical_of",
    "order_key",
    "resolve_roots",
    "rotated_of",
]


MAX_FILES = 20_000
"""Hard cap on candidate files per scan: a mistaken root (``/``, ``~``) must not walk the whole disk. What it
leaves out is counted (``Scanner.left_out``) and said in the reports and the status line."""

COUNT_BEYOND = 10
"""Past the cap, the walk goes on only to count what is left out, up to this many times the cap (a mistaken
root still stops): beyond that ``left_out`` is a lower bound (``counted_all`` False)."""

ROTATED_SUFFIX = ".1"
LOCK_SUFFIX = ".rotate-lock"
_CANDIDATE_SUFFIXES = (".log", ".log.1", ".jsonl", ".json")

# A directory whose mtime is this recent is re-listed even when the mtime looks unchanged: mtimes come from a
# coarse kernel clock (a few ms on Linux, up to 2 s on some filesystems), so two creations within one tick
# leave the mtime equal to what we recorded after the first.
_RECENT_WINDOW_S = 2.0
# Belt and braces for filesystems that do not update directory mtimes reliably (some network mounts).
_FULL_RESCAN_S = 30.0


class SourceError(Exception):
    """A root the user named cannot be used (it does not exist). Raised at start-up, never while tailing."""

    def __init__(self, path: Path | str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = Path(path)
        self.message = message


def is_candidate_name(name: str) -> bool:
    """True for the file names any format adapter may want.

    ``*.rotate-lock`` is excluded explicitly: senpi's rotation lock (``session.log.rotate-lock``) is noise
    (reference senpi-newer §4.1). Dot-files are excluded because atomic writers use hidden temp names
    (e.g. the sidecar's ``.<basename>-<uuid>.tmp``) that vanish a moment later.
    """
    if name.startswith(".") or name.endswith(LOCK_SUFFIX):
        return False
    return name.endswith(_CANDIDATE_SUFFIXES)


def logical_of(path: str) -> str:
    """The stable stream identity of a file: ``X.log.1`` belongs to the ``X.log`` stream, others to themselves."""
    if path.endswith(".log" + ROTATED_SUFFIX):
        return path[: -len(ROTATED_SUFFIX)]
    return path


def rotated_of(logical: str) -> str | None:
    """The old-generation path of a log family (``X.log`` -> ``X.log.1``), None for files that never rotate."""
    return logical + ROTATED_SUFFIX if logical.endswith(".log") else None


def order_key(path: str) -> tuple[str, int]:
    """Sort key putting ``X.log.1`` immediately before ``X.log`` (old generation first), otherwise by path."""
    if path.endswith(".log" + ROTATED_SUFFIX):
        return (path[: -len(ROTATED_SUFFIX)], 0)
    if path.endswith(".log"):
        return (path, 1)
    return (path, 0)


def _abs(path: Path | str) -> str:
    """Absolute and normalised, but symlinks kept: the user's spelling of a path is what they recognise."""
    return os.path.abspath(os.path.expanduser(os.fspath(path)))


#: Directories beside ``logs/`` in an agent dir that hold what the logs alone cannot say.
AGENT_SIBLINGS = ("sessions", "events")


def resolve_roots(paths: list[Path]) -> list[Path]:
    """Expand user-given paths into the roots to scan, in order, without duplicates.

    * ``…/logs`` -> itself and the siblings ``…/sessions`` (the transcripts answer the question) and
      ``…/events`` (saved agent event recordings, the capture-vs-commit evidence) when they exist.
    * an agent dir (contains ``logs/`` or ``sessions/``) -> those of ``logs``, ``sessions``, ``events`` that exist.
    * a sessions dir, any other dir, or a single file -> itself.

    Raises ``SourceError`` for a path that does not exist: a typo should fail loudly at start-up rather than
    show an empty dashboard.
    """
    out: list[Path] = []
    seen: set[str] = set()

    def add(p: str) -> None:
        if p not in seen:
            seen.add(p)
            out.append(Path(p))

    for raw in paths:
        p = _abs(raw)
        if not os.path.exists(p):
            raise SourceError(raw, "does not exist")
        if not os.path.isdir(p):
            add(p)
            continue
        logs, sessions = os.path.join(p, "logs"), os.path.join(p, "sessions")
        if os.path.basename(p) == "logs":
            add(p)
            for name in AGENT_SIBLINGS:
                sibling = os.path.join(os.path.dirname(p), name)
                if os.path.isdir(sibling):
                    add(sibling)
        elif os.path.isdir(logs) or os.path.isdir(sessions):
            for name in ("logs", *AGENT_SIBLINGS):
                sub = os.path.join(p, name)
                if os.path.isdir(sub):
                    add(sub)
        else:
            add(p)
    return out


class _DirCache(Struct):
    """What one directory listing produced, reused while the directory's mtime does not change."""

    mtime_ns: int
    subdirs: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


class Scanner:
    """Incremental candidate-file lister over a fixed set of roots.

    Directory roots are walked recursively (dot-dirs skipped, symlinked dirs followed once: a visited set of
    ``(st_dev, st_ino)`` breaks loops). File roots are returned as themselves when they exist, whatever their
    name, because the user asked for them explicitly. At most ``max_files`` paths are returned; ``capped``
    says the cap was hit.
    """

    def __init__(self, roots: list[Path], *, max_files: int | None = None) -> None:
        self.roots = [_abs(r) for r in roots]
        self.max_files = MAX_FILES if max_files is None else max_files
        self.capped = False
        self.left_out = 0
        """Candidate files the last scan found beyond the cap (not tailed)."""
        self.counted_all = True
        """False when the count of ``left_out`` stopped at ``COUNT_BEYOND`` times the cap."""
        self.found = 0
        """Candidate files the last scan returned (at most the cap)."""
        self._cache: dict[str, _DirCache] = {}
        self._last_full = 0.0
        self._warned_cap = False

    def scan(self) -> list[str]:
        """Return every candidate file now present, sorted by ``order_key``."""
        now = time.time()
        full = now - self._last_full >= _FULL_RESCAN_S
        if full:
            self._last_full = now
        new_cache: dict[str, _DirCache] = {}
        visited: set[tuple[int, int]] = set()
        found: dict[str, None] = {}  # ordered set
        self.capped = False
        self.left_out = 0
        self.counted_all = True
        for root in self.roots:
            try:
                st = os.stat(root)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                self._walk(root, now, full, new_cache, visited, found)
            else:
                self._add(found, root)
            if not self.counted_all:
                break
        self._cache = new_cache
        self.found = len(found)
        if self.capped and not self._warned_cap:
            self._warned_cap = True
            import logging  # (on first use: the logging package is ~10 ms CPU of every start-up)

            logging.getLogger(__name__).warning(
                "source scan capped at %d files; %d more are not tailed", self.max_files, self.left_out
            )
        paths = list(found)
        paths.sort(key=order_key)
        return paths

    def _walk(
        self,
        root: str,
        now: float,
        full: bool,
        new_cache: dict[str, _DirCache],
        visited: set[tuple[int, int]],
        found: dict[str, None],
    ) -> None:
        """Depth-first walk with an explicit stack (deep trees must not hit the recursion limit)."""
        stack = [root]
        while stack:
            d = stack.pop()
            try:
                st = os.stat(d)
            except OSError:
                continue
            key = (st.st_dev, st.st_ino)
            if key in visited:  # symlink loop, or the same dir reached twice
                continue
            visited.add(key)
            entry = self._cache.get(d)
            recent = now - st.st_mtime < _RECENT_WINDOW_S
            if full or entry is None or entry.mtime_ns != st.st_mtime_ns or recent:
                entry = self._list(d, st.st_mtime_ns)
            new_cache[d] = entry
            for f in entry.files:
                if not self._add(found, f):
                    return
            stack.extend(reversed(entry.subdirs))

    def _add(self, found: dict[str, None], path: str) -> bool:
        """Add ``path``, or count it as left out past the cap (``capped``); False once counting stops too."""
        if path not in found:
            if len(found) >= self.max_files:
                self.capped = True
                self.left_out += 1
                if self.left_out >= COUNT_BEYOND * self.max_files:
                    self.counted_all = False
                    return False
                return True
            found[path] = None
        return True

    @staticmethod
    def _list(d: str, mtime_ns: int) -> _DirCache:
        """One ``scandir`` of ``d``: candidate files and non-hidden subdirectories (symlinks followed)."""
        entry = _DirCache(mtime_ns)
        try:
            with os.scandir(d) as it:
                items = sorted(it, key=lambda e: e.name)
        except OSError:
            return entry
        for e in items:
            try:
                if e.is_dir():
                    if not e.name.startswith("."):
                        entry.subdirs.append(e.path)
                elif is_candidate_name(e.name) and (e.is_file() or _special(e)):
                    # a FIFO, socket or device under a candidate name is listed too: the tailer stats it (never
                    # opens it) and reports it as a Problem instead of it being silently absent
                    entry.files.append(e.path)
            except OSError:
                # A candidate that cannot even be stat'ed (a symlink loop: ELOOP) is tailed anyway, so the
                # tailer reports why it cannot be read instead of the file silently not existing.
                if is_candidate_name(e.name):
                    entry.files.append(e.path)
        return entry


def _special(entry: os.DirEntry[str]) -> bool:
    """A FIFO, socket or device (directly or behind a symlink); False for a dangling symlink (nothing there)."""
    try:
        mode = entry.stat().st_mode
    except FileNotFoundError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode)


def discover(roots: list[Path]) -> list[Path]:
    """Every candidate file under ``roots`` (see ``Scanner``), ``X.log.1`` before ``X.log``, then by path."""
    return [Path(p) for p in Scanner(roots).scan()]
