"""Tail many files at once and hand out only complete lines, surviving rotation, truncation and replacement.

Vocabulary:

* A **stream** is what a consumer thinks of as "one log": its ``logical`` path. ``session.log`` and its
  rotated ``session.log.1`` are one stream (senpi keeps exactly one old generation, renamed at 5 MiB:
  reference senpi-formats §2.1); every other file is its own stream.
* A **generation** is one file (one inode's content from offset 0) of a stream. A new generation starts on
  rotation, replacement (new inode at the path, or the head of the file changed), truncation and
  recreation. Line numbers and offsets count within a generation.

How a change is recognised (``poll`` never trusts watch events, it re-stats):

* Each generation keeps its ``(st_dev, st_ino)`` and its first 256 bytes as it read them. It keeps
  its file descriptor open where that matters (log families always; other files in a small LRU), which
  both pins the inode (it cannot be reused while open) and lets us read what was written before a rename
  or an unlink.
* Same inode at the path, size below our offset -> **truncated**. Same inode, head bytes changed ->
  **replaced** (rewritten in place). A different inode at the path -> the old generation is drained from its
  descriptor to EOF, then **replaced** (or, for a log family whose old inode now sits at ``X.log.1``,
  **rotated**: no reset, just the next generation). Path gone -> drained, then **deleted**; a file at that
  path later -> **recreated**.
* Within a stream generations are read strictly in order: a newer one is not read until every older one
  has been read up to the size seen in this poll. That gives "rest of session.log.1 before the new
  session.log", and at start-up "session.log.1 before session.log".

Known limits (documented rather than hidden): a file truncated and regrown past our offset with an identical
first 256 bytes is not detected; a rotation chain that replaces ``.1`` twice between two polls loses the
generation in the middle unless we held its descriptor.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .discover import Scanner, is_candidate_name, logical_of, rotated_of
from .watch import DirWatcher

__all__ = ["HEAD_BYTES", "FileBatch", "FileStat", "GenSnap", "Line", "Notice", "Sources", "StreamSnap"]

HEAD_BYTES = 256
"""Bytes of a generation's head kept to recognise it: enough to differ between two JSONL files (timestamps,
ids), small enough to re-read after every read."""

_MAX_TOMBSTONES = 1024
"""Streams remembered after all their files disappeared (see ``Sources._prune``)."""

HOT_S = 300.0
"""A stream modified this recently is re-stat'ed on every poll; older ("cold") ones only when a watch event
names them, or on a full survey (see ``Sources.poll``)."""

COLD_SURVEY_S = 120.0
"""Belt and braces for a watcher that misses an event: everything is re-stat'ed at least this often (and on
every poll while the watcher is failing), a slice per poll (``Sources._roll``), and the directories are walked
for new files this often. One pass over thousands of files after an idle stretch costs ~0.1 s per thousand
files on the benchmark machine (cold caches), so it cannot run every few seconds within an idle budget of 2 %
CPU: at 120 s it is ~1 % for 3,500 files, spread evenly rather than in one burst."""

NOTICE_KINDS = frozenset(
    {"truncated", "replaced", "deleted", "rotated", "recreated", "unreadable", "oversized_line", "not_a_file"}
)


@dataclass(slots=True)
class Line:
    """One complete line of a file generation."""

    lineno: int
    """1-based line number within the file generation (skipped oversized lines count too)."""
    offset: int
    """Byte offset of the line's first byte in that generation: a drill-down re-reads it with ``pread``."""
    data: bytes
    """The line without its trailing ``b"\\n"``. A trailing ``b"\\r"`` is kept (callers strip); invalid UTF-8
    is kept as is, because decoding is the format adapters' job."""


@dataclass(slots=True)
class Block:
    """Consecutive complete lines of a file generation, in one piece (a tailer made with ``blocks=True``).

    What a read of ``read_chunk`` bytes holds between its first and last newline, when no line in it can be
    oversized: one slice instead of a ``Line`` and a ``bytes`` per line (a log adapter decodes it whole). The
    first line of a read (the one that completes a held partial) and a flushed tail still come as ``Line``."""

    lineno: int
    """The first line's 1-based number; line ``i`` of the block is ``lineno + i``."""
    offset: int
    """Byte offset of the first line's first byte."""
    data: bytes
    """The lines, each with its ``b"\\n"`` (so ``data`` ends with one and ``data.count(b"\\n")`` are its lines)."""
    lines: int


@dataclass(slots=True)
class Notice:
    """Something about a file the user should know, which is not a line (never an exception)."""

    kind: str
    """One of ``NOTICE_KINDS``."""
    path: str
    message: str
    """One human line, e.g. ``session.log truncated (size 120 < offset 4096); reading from 0``."""
    lineno: int | None = None
    offset: int | None = None


@dataclass(slots=True)
class FileBatch:
    """What one ``poll`` read from one generation of one stream, in file order."""

    path: str
    """Absolute path the lines came from, as it is NOW (a rotated generation reports ``…/session.log.1``)."""
    logical: str
    """Stable stream identity: ``…/logs/session.log`` for both ``session.log`` and ``session.log.1``."""
    generation: int
    """Increments each time the stream starts a new file (rotation, replace, truncate, recreate)."""
    lines: list[Line | Block] = field(default_factory=list)
    """Complete lines in file order; ``Block`` items only from a tailer made with ``blocks=True``."""
    notices: list[Notice] = field(default_factory=list)


@dataclass(slots=True)
class HeldPartial:
    """An unterminated line the tailer still holds: where it starts and how long it is so far."""

    path: str
    lineno: int
    offset: int
    size: int


@dataclass(slots=True)
class FileStat:
    """Progress of one known file, for a status bar or a diagnostics pane (as of the last ``poll``)."""

    path: str
    logical: str
    bytes_read: int
    lines_read: int
    size: int | None
    exists: bool
    error: str | None


TAIL_CHECK_BYTES = 4096
"""Bytes just before a saved offset that a restore re-reads and compares (see ``Sources.restore_state``)."""


@dataclass(slots=True)
class GenSnap:
    """One generation's reading position and identity, saved so a later process can resume exactly there.

    Plain data (picklable, no descriptor): what ``_Gen`` holds, plus digests of the bytes it was read from so
    a restore can tell "only appended to" from "rewritten" without reading the file again.
    """

    number: int
    path: str
    dev: int
    ino: int
    current: bool
    sig: tuple[int, int, int] | None
    size: int
    pos: int
    line_start: int
    lineno: int
    partial: bytes
    skipping: bool
    head: bytes
    flushed_at: int
    tail: bytes
    """Digest of the up to ``TAIL_CHECK_BYTES`` bytes before ``pos``."""
    prefix: bytes | None
    """Digest of every byte before ``pos``, for formats whose writer rewrites files in place (else None)."""


@dataclass(slots=True)
class StreamSnap:
    """A stream's generations (oldest first) and numbering, as ``Sources.export_state`` saw them."""

    logical: str
    next_number: int
    gens: list[GenSnap]


def _digest_range(fd: int, start: int, end: int) -> bytes | None:
    """blake2b of the bytes [start, end) of ``fd``; None when the file no longer holds them all."""
    h = hashlib.blake2b(digest_size=16)
    pos = start
    while pos < end:
        try:
            chunk = os.pread(fd, min(1 << 20, end - pos), pos)
        except OSError:
            return None
        if not chunk:
            return None
        h.update(chunk)
        pos += len(chunk)
    return h.digest()


def _gen_digests(fd: int, pos: int, full: bool) -> tuple[bytes, bytes | None] | None:
    """(tail digest, prefix digest or None) of the bytes before ``pos``; None if they cannot be read."""
    tail = _digest_range(fd, max(0, pos - TAIL_CHECK_BYTES), pos)
    if tail is None:
        return None
    if not full:
        return tail, None
    prefix = _digest_range(fd, 0, pos)
    return None if prefix is None else (tail, prefix)


def _open_readonly(path: str) -> int:
    """Open for reading without blocking: a FIFO named ``x.log`` would otherwise hang ``poll`` forever.

    A module-level indirection so tests can simulate ``EACCES`` (they run as root, where ``chmod 000`` does
    not stop a read).
    """
    return os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))


def _name(path: str) -> str:
    return os.path.basename(path) or path


class _Gen:
    """Reading state of one generation: descriptor, identity, offsets, and the held partial line."""

    __slots__ = (
        "current",
        "dev",
        "farewell",
        "fd",
        "flushed_at",
        "gone",
        "head",
        "held",
        "ino",
        "line_start",
        "lineno",
        "number",
        "partial",
        "path",
        "pos",
        "sig",
        "size",
        "skipping",
    )

    def __init__(self, number: int, path: str, st: os.stat_result, current: bool) -> None:
        self.number = number
        self.path = path
        self.dev, self.ino = st.st_dev, st.st_ino
        self.current = current  # lives at the logical path (as opposed to X.log.1, or nowhere)
        self.gone = False  # no longer at any path: drain the descriptor, then drop
        self.fd: int | None = None
        # what the survey that found it saw: the next survey of an unchanged file then stops at the sig check
        # (None would make the first full survey after a backfill "see" thousands of changes at once)
        self.sig: tuple[int, int, int] | None = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        self.size = st.st_size  # readable size seen by the last survey: reads stop there
        self.flushed_at = -1  # pos at which the partial was last flushed (flush at most once per EOF)
        # Notices wait here until the stream's reading reaches this generation (``held``: why it starts) or
        # has drained it (``farewell``: it was deleted), so a budget-limited poll never reports a reset
        # before the last lines of the generation it ends.
        self.held: list[tuple[str, str]] = []
        self.farewell = False
        self.reset()

    def reset(self) -> None:
        """Back to offset 0 on the same inode (truncation, in-place rewrite)."""
        self.pos = 0  # bytes consumed from the file (complete lines + held partial/skipped bytes)
        self.line_start = 0  # offset of the first byte of the line being assembled
        self.lineno = 0  # lines completed so far
        self.partial = bytearray()
        self.skipping = False  # inside an oversized line: discard until its newline
        self.head = b""  # the first HEAD_BYTES of this generation, from the reads themselves
        self.flushed_at = -1

    def close(self) -> None:
        if self.fd is not None:
            try:
                os.close(self.fd)
            finally:
                self.fd = None


class _Stream:
    """All generations of one logical file, plus the bookkeeping that makes notices fire once."""

    __slots__ = ("errors", "gens", "logical", "members", "mtime_ns", "next_number", "pending_reason", "rot", "seen")

    def __init__(self, logical: str) -> None:
        self.logical = logical
        self.rot = rotated_of(logical)
        # Stat order: the logical path FIRST, then .1. A rotation between the two stats then shows the current
        # generation at .1 (a plain rotation) instead of hiding the generation that was renamed in between.
        self.members = [logical] if self.rot is None else [logical, self.rot]
        self.gens: list[_Gen] = []
        self.next_number = 0
        self.pending_reason: str | None = None  # notice for the next generation to appear at the logical path
        self.errors: dict[str, str] = {}  # path -> last error reported (report each distinct error once)
        self.seen: dict[str, int | None] = {}  # path -> size at the last survey (absent: file missing)
        self.mtime_ns = 0  # newest modification time of its files at the last survey (newest-first reading)

    @property
    def family(self) -> bool:
        return self.rot is not None

    def new_number(self) -> int:
        n = self.next_number
        self.next_number += 1
        return n

    def last_number(self) -> int:
        return max(0, self.next_number - 1)


def _shown(s: _Stream) -> tuple[object, ...]:
    """What a ``FileStat`` of this stream is made of (a change means the next snapshot must be rebuilt)."""
    return (tuple(s.seen.items()), tuple(s.errors.items()), tuple((g.path, g.gone, g.pos, g.lineno) for g in s.gens))


def _is_hot(s: _Stream, hot_ns: int) -> bool:
    """A stream every heartbeat re-stats: modified since ``hot_ns``, or not settled (no file yet, an error, a
    replacement pending)."""
    return s.mtime_ns >= hot_ns or not s.gens or bool(s.errors) or s.pending_reason is not None


def _idle(s: _Stream) -> bool:
    """Nothing to do for the read phase: every generation current, read to its size, nothing held or owed.

    ``_read_stream`` on such a stream only touches the LRU (an unchanged file is not "used", so it should not)."""
    return all(g.current and not g.gone and g.pos >= g.size and not g.held for g in s.gens)


class _Out:
    """Collects this poll's batches, one per (stream, generation), in the order they were first touched."""

    def __init__(self) -> None:
        self._batches: dict[tuple[str, int], FileBatch] = {}
        self._visits: dict[tuple[str, int], int] = {}  # (stream, generation) -> when reading reached it

    def visit(self, s: _Stream, g: _Gen) -> None:
        self._visits.setdefault((s.logical, g.number), len(self._visits))

    def batch(self, s: _Stream, number: int, path: str) -> FileBatch:
        key = (s.logical, number)
        b = self._batches.get(key)
        if b is None:
            b = self._batches[key] = FileBatch(path=path, logical=s.logical, generation=number, lines=[], notices=[])
        else:
            b.path = path
        return b

    def notice(self, s: _Stream, number: int, path: str, kind: str, message: str, **kw: int | None) -> None:
        self.batch(s, number, path).notices.append(Notice(kind, path, message, **kw))

    def has_lines(self) -> bool:
        return any(b.lines for b in self._batches.values())

    def touched(self) -> bool:
        """Anything read or noticed in this poll (else a file list snapshot would come out the same)."""
        return bool(self._batches)

    def result(self) -> list[FileBatch]:
        """Streams in the order first touched; within a stream, generations in the order reading reached them.

        Not by generation number: a generation restarted after a newer one appeared (an old file truncated or
        rewritten while the new one waits) gets the higher number but is still read first. Generations
        reading did not reach (only a survey notice) come last, by number.
        """
        rank: dict[str, int] = {}
        for logical, _number in self._batches:
            rank.setdefault(logical, len(rank))

        def order(k: tuple[str, int]) -> tuple[int, int, int]:
            visit = self._visits.get(k)
            return (rank[k[0]], 0, visit) if visit is not None else (rank[k[0]], 1, k[1])

        keys = sorted(self._batches, key=order)
        return [b for k in keys if (b := self._batches[k]).lines or b.notices]


class Sources:
    """The facade: discover files under ``roots``, tail them all, report complete lines and notices.

    One thread calls ``poll``/``wait`` (a worker); ``files``/``pending_bytes`` may be read from any thread
    (they describe the state at the end of the last poll; another thread's read waits for a poll in progress);
    ``close`` may be called from any thread.
    """

    def __init__(
        self,
        roots: list[Path],
        *,
        max_line_bytes: int = 64 * 1024 * 1024,
        read_chunk: int = 1 << 20,
        max_open: int = 128,
        newest_first: bool = False,
        blocks: bool = False,
    ) -> None:
        """``max_open`` caps descriptors held for non-rotating files (LRU); log families always keep theirs.

        ``newest_first`` changes only the order a budget-limited ``poll`` serves streams in: most recently
        modified first, instead of round-robin in discovery order. A dashboard wants that: the session being
        written now (and the last ones) are on screen after the first small poll while history fills in behind,
        and a live file, being the newest, is never queued behind a backlog. A report drains everything
        anyway and keeps discovery order, which is the order its ``sources`` list promises.

        ``blocks``: a read's complete lines after its first come as one ``Block`` instead of a ``Line`` each.
        """
        if max_line_bytes < 1 or read_chunk < 1:
            raise ValueError("max_line_bytes and read_chunk must be positive")
        self.roots = [os.path.abspath(os.fspath(r)) for r in roots]
        self.max_line_bytes = max_line_bytes
        self.read_chunk = read_chunk
        self.max_open = max(1, max_open)
        self.newest_first = newest_first
        self.blocks = blocks
        self._dir_roots = [r for r in self.roots if os.path.isdir(r)]
        # A root that is not a directory (a file, or missing) is tracked by path even while absent.
        self._file_roots = [r for r in self.roots if r not in self._dir_roots]
        self._roots_set = {logical_of(r) for r in self._file_roots}
        self._scanner = Scanner([Path(r) for r in self._dir_roots])
        self._streams: dict[str, _Stream] = {}
        self._order: list[str] = []  # logical paths in discovery order
        self._rank: dict[str, int] = {}  # logical path -> its position in ``_order``
        self._rr = 0  # round-robin start, so a budget-limited poll does not starve the later streams
        self._lru: OrderedDict[int, _Gen] = OrderedDict()  # non-family generations holding a descriptor
        self._lock = threading.Lock()
        self._closed = False
        self._wake = threading.Event()
        self._watcher: DirWatcher | None = None
        self._stats: list[FileStat] = []
        self._pending = 0
        self._dirty = True  # something a FileStat shows may have changed since the last snapshot
        self._stale: set[str] = set()  # which of ``files``/``file_count``/``pending_bytes`` are behind the polls
        self._count = 0
        self.generation = 0
        """Bumps whenever ``files`` / ``pending_bytes`` may have changed: a reader can skip its own recount."""
        self._fired = True  # a watch event (or no watcher) since the last full survey: survey everything
        self._last_full = float("-inf")
        self._hot: dict[str, None] = {}  # streams a heartbeat re-stats (an ordered set, chosen at full surveys)
        self._busy: set[str] = set()  # streams that may have something to read (see ``_idle``)
        self._roll_at = 0  # the next stream in ``_order`` the rolling survey re-stats (see ``_roll``)
        self._rolled_at = 0.0
        self._roll_credit = 0.0  # streams owed to the rolling survey, carried between polls

    # ------------------------------------------------------------------ public API

    @property
    def files(self) -> list[FileStat]:
        """One entry per known file, as of the last ``poll``.

        Counted on demand, and only when a poll changed something since: a backfill polls hundreds of times a
        second, and the list walks every stream (thousands of files)."""
        with self._lock:
            if "files" in self._stale:
                self._snapshot()
            return list(self._stats)

    def file_count(self) -> int:
        """How many known files exist now: ``sum(f.exists for f in files)``, without building the list."""
        with self._lock:
            if "count" in self._stale:
                self._count = sum(len(s.seen) for s in self._streams.values())
                self._stale.discard("count")
            return self._count

    def pending_bytes(self) -> int:
        """Bytes on disk not read yet (size - offset, summed), as of the last ``poll``: backfill progress."""
        with self._lock:
            if "pending" in self._stale:
                # An idle stream (``_idle``) owes nothing, and every stream that is not idle is in ``_busy`` once a
                # full survey has looked at each: summing over those alone spares a live poll a walk of every
                # stream (thousands at 1 GB, ~2 ms per snapshot).
                streams = (
                    self._streams.values()
                    if self._last_full == float("-inf")
                    else [s for lg in self._busy if (s := self._streams.get(lg)) is not None]
                )
                self._pending = sum(max(0, g.size - g.pos) for s in streams for g in s.gens)
                self._stale.discard("pending")
            return self._pending

    def held_partials(self) -> list[HeldPartial]:
        """Per generation, the unterminated bytes after its last newline (a write in progress, or a torn one).

        They are not lines yet and ``poll`` never returns them; a snapshot (the report) names them so a
        partial write at the end of a file is shown, never silently absent.
        """
        with self._lock:
            return [
                HeldPartial(g.path, g.lineno + 1, g.line_start, len(g.partial))
                for stream in self._streams.values()
                for g in stream.gens
                if g.partial
            ]

    @property
    def capped(self) -> bool:
        """True when the last scan hit the file cap (``discover.MAX_FILES``) and some files are not tailed."""
        return self._scanner.capped

    def poll(self, max_bytes: int | None = None) -> list[FileBatch]:
        """Rescan for new files (cheap), then read every file from its saved offset; return only COMPLETE lines.

        ``max_bytes`` bounds the bytes read in this call (backpressure); the rest is read by the next call.
        Never raises for a file problem: those come back as ``Notice``s.
        """
        with self._lock:
            if self._closed:
                return []
            out = _Out()
            now = time.monotonic()
            watcher = self._watcher
            blind = watcher is None or watcher.last_error is not None or not watcher.threads
            hints = watcher.take_hints() if watcher is not None else None
            hinted: list[str] = []
            if hints:
                hinted = list(dict.fromkeys(logical_of(p) for p in hints))
            full = (
                blind
                or self._last_full == float("-inf")  # the first poll
                or (self._fired and hints is None)  # an event whose paths are unknown
                or any(lg not in self._streams for lg in hinted)  # a new file, a directory: rescan
            )
            periodic = full or now - self._last_full >= COLD_SURVEY_S
            if full:
                # everything: no (working) watcher, a change whose paths are unknown or new
                self._fired = False
                self._last_full = self._rolled_at = now
                self._roll_credit = 0.0
                self._rescan()
                hot = time.time_ns() - int(HOT_S * 1e9)
                self._hot = {}
                for logical in self._order:
                    st = self._streams[logical]
                    self._survey(st, out)
                    if _is_hot(st, hot):
                        self._hot[logical] = None
            else:
                # A watch that works fires for any change, so re-stat only the paths it named and what is being
                # written now (the heartbeat exists for backends that miss events); the thousands of finished
                # transcripts are re-stat'ed a slice per poll (``_roll``). Nothing here walks every stream:
                # after an idle second that walk alone costs tens of ms (cold caches).
                # A watch event names the paths that changed: those first (cold or not), then the hot ones.
                self._fired = False
                if periodic:
                    # the slow heartbeat that catches a file the watcher missed: look for new files
                    self._last_full = now
                    known = len(self._order)
                    self._rescan()
                    for logical in self._order[known:]:
                        self._survey(self._streams[logical], out)
                        self._hot[logical] = None
                for logical in hinted:
                    self._survey(self._streams[logical], out)
                    self._hot.setdefault(logical)
                for logical in self._hot:
                    if (st := self._streams.get(logical)) is not None:
                        self._survey(st, out)
                self._roll(now, out)
            budget = sys.maxsize if max_bytes is None else max(0, max_bytes)
            if self.newest_first:
                self._read_newest_first(out, budget)
            else:
                self._read_round_robin(out, budget)
            self._evict()
            if periodic:
                self._prune()
            if self._dirty or out.touched():
                self._stale = {"files", "count", "pending"}
                self._dirty = False
                self.generation += 1
            return out.result()

    def _roll(self, now: float, out: _Out) -> None:
        """Re-stat the next slice of all streams, sized so each is re-stat'ed at least every ``COLD_SURVEY_S``.

        This is the belt-and-braces survey for changes a watcher missed, spread over the heartbeats instead of
        one pass over thousands of files every two minutes (~0.1 s of CPU at 3,500 files: enough, landing in
        a 10 s window, to double a quiet dashboard's CPU). It also keeps the hot set current: a stream found
        cold again leaves it, one found hot (modified behind the watcher's back) joins it.
        """
        n = len(self._order)
        if n == 0:
            return
        if COLD_SURVEY_S <= 0:
            count = n
        else:
            self._roll_credit = min(float(n), self._roll_credit + n * (now - self._rolled_at) / COLD_SURVEY_S)
            count = int(self._roll_credit)
            self._roll_credit -= count
        self._rolled_at = now
        hot = time.time_ns() - int(HOT_S * 1e9)
        for _ in range(count):
            if self._roll_at >= len(self._order):
                self._roll_at = 0
            logical = self._order[self._roll_at]
            self._roll_at += 1
            st = self._streams[logical]
            self._survey(st, out)
            if _is_hot(st, hot):
                self._hot[logical] = None
            else:
                self._hot.pop(logical, None)

    def _read_round_robin(self, out: _Out, budget: int) -> None:
        n = len(self._order)
        for i in range(n):
            idx = (self._rr + i) % n
            s = self._streams[self._order[idx]]
            if _idle(s):
                continue
            before = budget
            budget, exhausted = self._read_stream(s, out, budget)
            if exhausted:
                # Next poll starts with the stream after the one that got bytes this time, so one huge
                # backlog cannot starve live files; a stream that got nothing goes first next time.
                self._rr = (idx + 1) % n if budget < before else idx
                break

    def _read_newest_first(self, out: _Out, budget: int) -> None:
        """Most recently modified stream first; a stream cut short by the budget is still the newest next time.

        Rotating logs (``session.log``) are the exception: every session appends to them, so they are always
        "newest", yet what is unread in them is mostly history. They get half of each poll's budget, and the
        transcripts newest first the other half (either side leaves what it does not need to the other). The
        sessions being written now are on screen after a poll or two, the log's rates fill in over the next
        polls, and neither ever waits for the other's backlog. Sorts are stable: streams modified in the same
        nanosecond keep discovery order.
        """
        busy = [s for lg in self._busy if (s := self._streams.get(lg)) is not None and not _idle(s)]
        self._busy = {s.logical for s in busy}
        rank = self._rank
        logs = sorted((s for s in busy if s.family), key=lambda s: (-s.mtime_ns, rank[s.logical]))
        files = sorted((s for s in busy if not s.family), key=lambda s: (-s.mtime_ns, rank[s.logical]))
        if not logs or not files:
            self._read_in_order(logs or files, out, budget)
            return
        half = budget // 2
        left, _ = self._read_in_order(logs, out, half, finish_line=False)
        left, _ = self._read_in_order(files, out, budget - half + left)
        if left > 0:
            self._read_in_order(logs, out, left)

    def _read_in_order(
        self, streams: list[_Stream], out: _Out, budget: int, *, finish_line: bool = True
    ) -> tuple[int, bool]:
        """Serve ``streams`` in order until the budget runs out; (budget left, whether it ran out)."""
        for s in streams:
            budget, exhausted = self._read_stream(s, out, budget)
            if exhausted:
                # A poll that hands out no complete line looks idle to its caller (a line longer than the
                # budget, e.g. a huge tool result): finish the line in progress, a chunk at a time.
                while finish_line and not out.has_lines() and any(g.fd is not None and g.pos < g.size for g in s.gens):
                    self._read_stream(s, out, self.read_chunk)
                return 0, True
        return budget, False

    def start_watching(self) -> None:
        """Start watchfiles threads on the directory roots (recursive) and the parents of file roots (flat)."""
        with self._lock:
            if self._closed or self._watcher is not None:
                return
            parents = sorted({os.path.dirname(r) for r in self._file_roots})
            wanted = {m for r in self._file_roots for m in _Stream(logical_of(r)).members}
            flat_only = set(parents) - set(self._dir_roots)

            def accept(path: str) -> bool:
                # Cheap relevance filter: skip the rotate-lock, temp files and other noise so they do not
                # wake the poller. In a file root's parent only that file's family counts; under a directory
                # root any candidate name, and directories (a new session subdir is worth a rescan).
                if path in wanted:
                    return True
                if os.path.dirname(path) in flat_only:
                    return False
                name = os.path.basename(path)
                return is_candidate_name(name) or (not name.startswith(".") and os.path.isdir(path))

            self._watcher = DirWatcher(list(self._dir_roots), parents, accept)
            self._watcher.start()

    def wait(self, timeout: float) -> bool:
        """Block until a filesystem event under the watched dirs or ``timeout`` (heartbeat). True if an event fired.

        Without ``start_watching`` this is a plain interruptible sleep (``close`` wakes it).
        """
        w = self._watcher
        if w is not None:
            fired = w.wait(timeout)
            if fired:
                self._fired = True
            return fired
        self._wake.wait(max(0.0, timeout))
        return False

    def close(self) -> None:
        """Stop the watch threads, close every descriptor. Idempotent; safe from another thread.

        The watcher is stopped first (outside the lock) so a blocked ``wait`` returns at once; descriptors
        are closed under the lock so a ``poll`` in progress never reads from a closed (or reused) fd.
        """
        self._wake.set()
        if self._watcher is not None:
            self._watcher.close()
        with self._lock:
            if not self._closed:
                self._closed = True
                for s in self._streams.values():
                    for g in s.gens:
                        g.close()
                self._lru.clear()
            w = self._watcher
        if w is not None:
            w.close()  # idempotent; covers a start_watching that raced with this close

    def __enter__(self) -> Sources:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ discovery

    def _rescan(self) -> None:
        paths = [*self._scanner.scan(), *self._file_roots]
        for p in paths:
            logical = logical_of(p)
            if logical not in self._streams:
                self._streams[logical] = _Stream(logical)
                self._rank[logical] = len(self._order)
                self._order.append(logical)
                self._dirty = True

    def _prune(self) -> None:
        """Forget the oldest streams whose files are all gone, beyond ``_MAX_TOMBSTONES``.

        A stream is kept after deletion so a recreation can be announced as such; in a sessions tree where
        transcripts come and go that would grow without bound (and cost a ``stat`` per poll each).
        """
        gone = [
            lg for lg in self._order if not (s := self._streams[lg]).gens and not s.seen and lg not in self._roots_set
        ]
        excess = len(gone) - _MAX_TOMBSTONES
        if excess <= 0:
            return
        drop = set(gone[:excess])
        self._dirty = True
        for lg in drop:
            del self._streams[lg]
        self._order = [lg for lg in self._order if lg not in drop]
        self._rank = {lg: i for i, lg in enumerate(self._order)}
        self._busy -= drop
        self._hot = {lg: None for lg in self._hot if lg not in drop}
        self._rr = 0

    # ------------------------------------------------------------------ phase 1: stat, match, notice

    def _survey(self, s: _Stream, out: _Out) -> None:
        """Stat the stream's paths, match generations to them by inode, detect every transition, emit notices.

        Reads nothing but the head fingerprint; the budget-limited reading happens in ``_read_stream``.
        """
        self._survey_one(s, out)
        if not _idle(s):
            self._busy.add(s.logical)

    def _survey_one(self, s: _Stream, out: _Out) -> None:
        if s.rot is None and len(s.gens) == 1 and not s.errors and s.pending_reason is None:
            # The common case, thousands of times per poll: one file, one generation, nothing wrong. The same
            # steps as below, without the bookkeeping that only rotation and replacement need.
            g = s.gens[0]
            try:
                st = os.stat(s.logical)
            except OSError:
                st = None
            if (
                st is not None
                and g.current
                and not g.gone
                and st.st_ino == g.ino
                and st.st_dev == g.dev
                and stat.S_ISREG(st.st_mode)
            ):
                s.seen[s.logical] = st.st_size
                s.mtime_ns = st.st_mtime_ns
                g.path = s.logical
                self._check_same_inode(s, g, st, out)
                return
        before = _shown(s)
        self._survey_all(s, out)
        if _shown(s) != before:
            self._dirty = True

    def _survey_all(self, s: _Stream, out: _Out) -> None:
        sts: dict[str, os.stat_result] = {}
        blind = False
        for m in s.members:
            try:
                st = os.stat(m)
            except (FileNotFoundError, NotADirectoryError):
                s.seen.pop(m, None)
                s.errors.pop(m, None)
                continue
            except OSError as exc:
                s.seen.pop(m, None)
                self._error(s, out, m, "unreadable", f"{_name(m)} cannot be inspected: {exc.strerror or exc}")
                blind = True
                continue
            if not stat.S_ISREG(st.st_mode):
                s.seen.pop(m, None)
                what = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
                self._error(s, out, m, "not_a_file", f"{_name(m)} is {what}; skipped")
                continue
            if s.errors.get(m, "").startswith("not_a_file"):
                s.errors.pop(m, None)
            sts[m] = st
            s.seen[m] = st.st_size
        if sts:
            s.mtime_ns = max(st.st_mtime_ns for st in sts.values())
        if blind:
            # stat failed for a reason other than absence (EACCES on a parent dir, EIO, ...): we cannot tell
            # what happened, so change nothing. Calling it "deleted" would re-read everything from 0 later.
            return
        # If one inode is at both paths (hard-link rotation), the logical path wins: reversed() inserts it last.
        at: dict[tuple[int, int], str] = {(sts[m].st_dev, sts[m].st_ino): m for m in reversed(s.members) if m in sts}

        for g in s.gens:
            if g.gone:
                continue
            loc = at.get((g.dev, g.ino))
            if loc is None:
                self._gone(s, g, out, sts)
                continue
            if g.current and loc != s.logical:
                g.current = False
                out.notice(
                    s,
                    g.number,
                    loc,
                    "rotated",
                    f"{_name(s.logical)} rotated to {_name(loc)}; reading the rest of the old generation first",
                )
            elif loc == s.logical:
                g.current = True
            g.path = loc
            self._check_same_inode(s, g, sts[loc], out)

        known = {(g.dev, g.ino) for g in s.gens if not g.gone}
        # Unknown .1 before unknown logical: at start-up, or after a rotation we never saw, the .1 file is older.
        for m in reversed(s.members):
            st = sts.get(m)
            if st is None or (st.st_dev, st.st_ino) in known:
                continue
            is_current = m == s.logical
            if is_current and any(g.current for g in s.gens):
                continue  # cannot happen with a consistent stat pair; be safe rather than double-read
            g = _Gen(s.new_number(), m, st, is_current)
            s.gens.append(g)
            known.add((g.dev, g.ino))
            if s.pending_reason is not None:
                # the first generation seen after the current one vanished, even at X.log.1 (the new file
                # rotated before we looked): the reset happened before it
                reason, s.pending_reason = s.pending_reason, None
                msg = "replaced by a new file" if reason == "replaced" else "recreated"
                g.held.append((reason, f"{_name(s.logical)} {msg}; reading from 0"))
            if s.family:
                # Pin the inode now: if it rotates and is deleted before we get to read it, the fd still reads.
                self._open(s, g, out)

    def _gone(self, s: _Stream, g: _Gen, out: _Out, sts: dict[str, os.stat_result]) -> None:
        """A generation is at none of the stream's paths: deleted, replaced, or an old .1 removed by rotation."""
        g.gone = True
        was_current, g.current = g.current, False
        if g.fd is not None:
            try:
                g.size = os.fstat(g.fd).st_size  # what was written before the unlink/rename is still readable
            except OSError:
                g.size = g.pos
        else:
            g.size = g.pos
        if not was_current:
            return  # an old generation leaving .1 is ordinary rotation, nothing to tell
        if s.logical in sts:
            s.pending_reason = "replaced"
        else:
            s.pending_reason = "recreated"
            if not s.errors.get(s.logical, "").startswith("not_a_file"):
                g.farewell = True

    def _check_same_inode(self, s: _Stream, g: _Gen, st: os.stat_result, out: _Out) -> None:
        """Same inode as before: detect truncation (size < offset) and in-place rewrites (head changed)."""
        g.size = st.st_size
        sig = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if sig == g.sig:
            return
        g.sig = sig
        self._dirty = True
        if st.st_size < g.pos:
            self._restart(
                s,
                g,
                out,
                "truncated",
                f"{_name(g.path)} truncated (size {st.st_size} < offset {g.pos}); reading from 0"
                + (f"; {len(g.partial)} unterminated bytes dropped" if g.partial else ""),
            )
        elif g.fd is not None and g.head and not self._head_matches(g):
            self._restart(s, g, out, "replaced", f"{_name(g.path)} rewritten in place (head changed); reading from 0")

    def _restart(self, s: _Stream, g: _Gen, out: _Out, kind: str, message: str) -> None:
        g.number = s.new_number()
        g.reset()
        g.held.append((kind, message))

    def _head_matches(self, g: _Gen) -> bool:
        """The file still starts with the bytes this generation was read from."""
        assert g.fd is not None
        try:
            head = os.pread(g.fd, HEAD_BYTES, 0)  # always the same size: cheap, and never mistaken for a read
        except OSError:
            return True  # a read error is reported by the read itself
        return head[: len(g.head)] == g.head

    # ------------------------------------------------------------------ descriptors

    def _open(self, s: _Stream, g: _Gen, out: _Out) -> bool:
        """Open ``g``'s path and make sure it is still ``g``'s inode and head; report failures once."""
        try:
            fd = _open_readonly(g.path)
        except (FileNotFoundError, NotADirectoryError):
            return False  # gone since the stat (deleted or renamed away): the next survey says what happened
        except OSError as exc:
            msg = f"{_name(g.path)} unreadable: {exc.strerror or exc}"
            self._error(s, out, g.path, "unreadable", msg, g.number)
            return False
        try:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != (g.dev, g.ino) or not stat.S_ISREG(st.st_mode):
                os.close(fd)  # the path moved on since the stat; the next survey sorts it out
                return False
        except OSError:
            os.close(fd)
            return False
        g.fd = fd
        if s.errors.get(g.path, "").startswith("unreadable"):
            s.errors.pop(g.path, None)
        if g.head and not self._head_matches(g):
            # Re-opened after LRU eviction and the head differs: same inode number, different content.
            self._restart(
                s, g, out, "replaced", f"{_name(g.path)} rewritten while closed (head changed); reading from 0"
            )
        if not s.family:
            self._lru[id(g)] = g
        return True

    def _evict(self) -> None:
        while len(self._lru) > self.max_open:
            _, g = self._lru.popitem(last=False)
            g.close()

    def _drop(self, g: _Gen) -> None:
        self._lru.pop(id(g), None)
        g.close()

    def _error(self, s: _Stream, out: _Out, path: str, kind: str, message: str, number: int | None = None) -> None:
        """Emit an unreadable/not_a_file notice once per distinct message, not on every poll."""
        key = f"{kind}: {message}"
        if s.errors.get(path) == key:
            return
        s.errors[path] = key
        out.notice(s, s.last_number() if number is None else number, path, kind, message)

    # ------------------------------------------------------------------ phase 2: read within the budget

    def _read_stream(self, s: _Stream, out: _Out, budget: int) -> tuple[int, bool]:
        """Read the stream's generations oldest first; a newer one only after the older reached its size.

        Returns the remaining budget and whether it ran out (so ``poll`` stops and resumes here next time).
        """
        # s.gens is in creation order and the sort is stable: older first even after a restart renumbered one
        order = sorted(s.gens, key=lambda g: g.current)
        for i, g in enumerate(order):
            out.visit(s, g)
            if g.fd is None and not g.gone and g.pos < g.size and not self._open(s, g, out):
                self._release(s, g, out)
                return budget, False  # unreadable: keep later generations waiting, keep other streams going
            self._release(s, g, out)
            if g.fd is not None and g.pos < g.size:
                if budget <= 0:
                    return budget, True
                batch = out.batch(s, g.number, g.path)
                kept = len(batch.lines), len(batch.notices)
                budget -= self._read(s, g, out, min(budget, g.size - g.pos))
                if not self._head_matches(g):
                    # Truncated and regrown between the survey and this read: what it returned may be new
                    # content at the old offset (a garbled line). Drop it and read the new content from 0.
                    del batch.lines[kept[0] :], batch.notices[kept[1] :]
                    self._restart(s, g, out, "replaced", f"{_name(g.path)} rewritten while being read; reading from 0")
                    return budget, False
                if g.pos < g.size:
                    return budget, budget <= 0
            if g.fd is not None:
                self._lru.pop(id(g), None)
                if not s.family and not g.gone:
                    self._lru[id(g)] = g  # most recently used
            if not g.current and (g.gone or any(h.size > 0 for h in order[i + 1 :])):
                self._flush(s, g, out)
            if g.gone:
                if g.farewell:
                    out.notice(s, g.number, g.path, "deleted", f"{_name(g.path)} deleted after {g.pos} bytes")
                self._drop(g)
                s.gens.remove(g)
        return budget, False

    @staticmethod
    def _release(s: _Stream, g: _Gen, out: _Out) -> None:
        """Every older generation is read: the notices that explain where this one starts can go out."""
        for kind, message in g.held:
            out.notice(s, g.number, g.path, kind, message)
        g.held.clear()

    def _read(self, s: _Stream, g: _Gen, out: _Out, limit: int) -> int:
        """``pread`` up to ``limit`` bytes in ``read_chunk`` pieces; split lines; return bytes consumed."""
        assert g.fd is not None
        batch = out.batch(s, g.number, g.path)
        consumed = 0
        while consumed < limit:
            want = min(self.read_chunk, limit - consumed)
            try:
                data = os.pread(g.fd, want, g.pos)
            except OSError as exc:
                msg = f"{_name(g.path)} read failed: {exc.strerror or exc}"
                self._error(s, out, g.path, "unreadable", msg, g.number)
                g.size = g.pos  # stop for this poll; retried next time
                break
            if not data:
                g.size = g.pos  # shrank under us; the next survey decides if it was a truncation
                break
            if g.pos < HEAD_BYTES:
                g.head += data[: HEAD_BYTES - g.pos]
            self._feed(g, data, batch)
            consumed += len(data)
            if len(data) < want:
                break
        return consumed

    def _feed(self, g: _Gen, data: bytes, batch: FileBatch) -> None:
        """Split ``data`` (which starts at ``g.pos``) into lines; hold the tail; skip oversized lines.

        The held partial never exceeds ``max_line_bytes``: once a line is known to be longer, its bytes are
        discarded as they arrive and only its start offset and number are remembered for the notice.
        """
        base = g.pos
        start = 0
        limit = self.max_line_bytes
        n = len(data)
        while start < n:
            nl = data.find(b"\n", start)
            if nl < 0:
                if not g.skipping:
                    if len(g.partial) + (n - start) > limit:
                        g.skipping = True
                        g.partial = bytearray()
                    else:
                        g.partial += data[start:]
                break
            if self.blocks and not g.skipping and not g.partial:
                # the lines up to the read's last newline, in one piece, when none of them can be oversized
                last = data.rfind(b"\n")
                if last > nl and last + 1 - start <= limit:
                    count = data.count(b"\n", start, last + 1)
                    batch.lines.append(Block(g.lineno + 1, g.line_start, data[start : last + 1], count))
                    g.lineno += count
                    start = last + 1
                    g.line_start = base + start
                    continue
            g.lineno += 1
            if g.skipping or len(g.partial) + (nl - start) > limit:
                length = base + nl - g.line_start
                batch.notices.append(self._oversized(g, length))
                g.skipping = False
                g.partial = bytearray()
            elif g.partial:
                g.partial += data[start:nl]
                batch.lines.append(Line(g.lineno, g.line_start, bytes(g.partial)))
                g.partial = bytearray()
            else:
                batch.lines.append(Line(g.lineno, g.line_start, data[start:nl]))
            start = nl + 1
            g.line_start = base + start
        g.pos = base + n

    def _oversized(self, g: _Gen, length: int) -> Notice:
        return Notice(
            "oversized_line",
            g.path,
            f"{_name(g.path)} line {g.lineno} at offset {g.line_start} is {length} bytes, over the "
            f"{self.max_line_bytes}-byte limit; skipped",
            lineno=g.lineno,
            offset=g.line_start,
        )

    def _flush(self, s: _Stream, g: _Gen, out: _Out) -> None:
        """Emit the unterminated tail of a generation that will never grow again, as a Line.

        senpi writes every line whole (one ``appendFile`` of ``line + "\\n"``), so a fragment at the end of a
        rotated, replaced or deleted generation is a torn write or a crash: nothing will ever complete it,
        and dropping it would lose data silently. The flush waits until the next generation has bytes (or the
        old one is gone), so a long-lived appender that finishes its line just after the rename is still
        joined correctly.
        """
        if g.pos == g.flushed_at or (not g.partial and not g.skipping):
            return
        g.flushed_at = g.pos
        g.lineno += 1
        batch = out.batch(s, g.number, g.path)
        if g.skipping:
            batch.notices.append(self._oversized(g, g.pos - g.line_start))
        else:
            batch.lines.append(Line(g.lineno, g.line_start, bytes(g.partial)))
        g.partial = bytearray()
        g.skipping = False
        g.line_start = g.pos

    # ------------------------------------------------------------------ persistence (core.index)

    def order(self) -> list[str]:
        """Logical paths in discovery order (what a fresh scan of the same files would give)."""
        with self._lock:
            return list(self._order)

    def layout(self) -> list[tuple[str, list[tuple[str, int]]]]:
        """Per stream in discovery order, its generations oldest first as (path, size at the last survey)."""
        with self._lock:
            out = []
            for logical in self._order:
                gens = sorted(self._streams[logical].gens, key=lambda g: g.current)  # the order reading takes
                out.append((logical, [(g.path, g.size) for g in gens if not g.gone]))
            return out

    def export_state(self, full_digest: frozenset[str] = frozenset()) -> list[StreamSnap] | str:
        """Every stream's reading position, or the reason it cannot be resumed faithfully by another process.

        Only a *clean* tail is exported: every known file present at its path, read without a rotation, reset,
        deletion or error in flight. Anything else would resume a history that a fresh read of the same files
        would not produce (e.g. lines counted under ``session.log`` that now live in ``session.log.1``).
        ``full_digest``: logical paths whose whole read prefix is digested (formats rewritten in place).
        Call between polls (the engine holds its lock); it reads a few KiB per file.
        """
        with self._lock:
            if self._closed:
                return "sources closed"
            if self._scanner.capped:
                return "file cap reached"
            out: list[StreamSnap] = []
            for logical in self._order:
                s = self._streams[logical]
                if s.errors or s.pending_reason is not None:
                    return f"{_name(logical)}: an error or a reset is pending"
                if not s.gens or set(s.seen) != {g.path for g in s.gens}:
                    return f"{_name(logical)}: files and generations do not match (deleted or not yet read)"
                gens: list[GenSnap] = []
                for g in s.gens:
                    if g.gone or g.held or g.farewell or g.path != (s.logical if g.current else s.rot):
                        return f"{_name(g.path)}: a rotation or replacement is in progress"
                    snap = self._gen_snap(g, logical in full_digest)
                    if snap is None:
                        return f"{_name(g.path)}: cannot re-read what was read"
                    gens.append(snap)
                out.append(StreamSnap(logical, s.next_number, gens))
            return out

    @staticmethod
    def _gen_snap(g: _Gen, full: bool) -> GenSnap | None:
        fd = g.fd
        opened = fd is None
        if fd is None:
            try:
                fd = _open_readonly(g.path)
            except OSError:
                return None
        try:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != (g.dev, g.ino) or st.st_size < g.pos:
                return None
            if os.pread(fd, len(g.head), 0) != g.head:
                return None
            digests = _gen_digests(fd, g.pos, full)
        except OSError:
            return None
        finally:
            if opened:
                os.close(fd)
        if digests is None:
            return None
        return GenSnap(
            number=g.number, path=g.path, dev=g.dev, ino=g.ino, current=g.current, sig=g.sig, size=g.size,
            pos=g.pos, line_start=g.line_start, lineno=g.lineno, partial=bytes(g.partial), skipping=g.skipping,
            head=g.head, flushed_at=g.flushed_at, tail=digests[0], prefix=digests[1],
        )  # fmt: skip

    def restore_state(
        self, streams: list[StreamSnap], check: Callable[[set[str], list[str]], str | None] | None = None
    ) -> str | None:
        """Resume every saved stream where ``export_state`` left it, or change nothing and say why.

        Must run before the first ``poll``. All or nothing: every saved generation must still be at its path,
        be the same inode, start with the same head, hold the same bytes just before the saved offset (and
        the same whole prefix when one was digested), and no file may have appeared at a member path that had
        none (a rotation while we were away). Files that only grew resume at the saved offset, exactly like a
        tail that had kept running; new files are read from 0 by the next poll. ``check`` gets the logical
        paths of saved streams with bytes beyond the saved offset and the discovery order, and may still
        refuse (a reason) before anything is installed. Returns None when restored, else the reason.
        """
        with self._lock:
            if self._closed or self._streams:
                return "sources already polled"
            self._rescan()
            grown: set[str] = set()
            seen: dict[str, os.stat_result] = {}
            for snap in streams:
                s = self._streams.get(snap.logical)
                if s is None:
                    return f"{_name(snap.logical)} is gone (deleted)"
                at = {g.path: g for g in snap.gens}
                for m in s.members:
                    try:
                        st = os.stat(m)
                    except (FileNotFoundError, NotADirectoryError):
                        if m in at:
                            return f"{_name(m)} was deleted or renamed"
                        continue
                    except OSError as exc:
                        return f"{_name(m)} cannot be inspected: {exc.strerror or exc}"
                    gs = at.get(m)
                    if gs is None:
                        return f"{_name(m)} appeared (rotation)"
                    reason = _verify(gs, st)
                    if reason is not None:
                        return reason
                    seen[m] = st
                    if st.st_size > gs.pos:
                        grown.add(snap.logical)
            reason = None if check is None else check(grown, list(self._order))
            if reason is not None:
                return reason
            for snap in streams:
                s = self._streams[snap.logical]
                s.next_number = snap.next_number
                for gs in snap.gens:
                    g = _Gen(gs.number, gs.path, seen[gs.path], gs.current)
                    g.sig, g.size = gs.sig, gs.size
                    g.pos, g.line_start, g.lineno = gs.pos, gs.line_start, gs.lineno
                    g.partial, g.skipping, g.head, g.flushed_at = (
                        bytearray(gs.partial),
                        gs.skipping,
                        gs.head,
                        gs.flushed_at,
                    )
                    s.gens.append(g)
            self._dirty = True
            return None

    # ------------------------------------------------------------------ snapshots for other threads

    def _snapshot(self) -> None:
        stats: list[FileStat] = []
        pending = 0
        for logical in self._order:
            s = self._streams[logical]
            for g in s.gens:
                pending += max(0, g.size - g.pos)
            for m in reversed(s.members):  # .1 first, like discovery order
                g_at = next((g for g in s.gens if not g.gone and g.path == m), None)
                exists = m in s.seen
                if not exists and g_at is None and m != s.logical:
                    continue  # a .1 that does not exist is not a known file
                err = s.errors.get(m)
                stats.append(
                    FileStat(
                        path=m,
                        logical=logical,
                        bytes_read=g_at.pos if g_at else 0,
                        lines_read=g_at.lineno if g_at else 0,
                        size=s.seen.get(m),
                        exists=exists,
                        error=err.split(": ", 1)[1] if err else None,
                    )
                )
        self._stats = stats
        self._pending = pending
        self._stale -= {"files", "pending"}


def _verify(gs: GenSnap, st: os.stat_result) -> str | None:
    """Why the file at ``gs.path`` (stat ``st``) is not the saved generation plus appended bytes, or None."""
    name = _name(gs.path)
    if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (gs.dev, gs.ino):
        return f"{name} was replaced (another file at its path)"
    if st.st_size < gs.pos:
        return f"{name} was truncated"
    if not gs.current and st.st_size != gs.size:
        return f"{name} changed (a rotated generation never grows: its last line was final)"
    if st.st_size == gs.pos and gs.sig is not None and st.st_mtime_ns != gs.sig[1]:
        return f"{name} was rewritten (same size, new modification time)"
    try:
        fd = _open_readonly(gs.path)
    except OSError as exc:
        return f"{name} unreadable: {exc.strerror or exc}"
    try:
        if (os.fstat(fd).st_ino, os.pread(fd, len(gs.head), 0)) != (gs.ino, gs.head):
            return f"{name} was rewritten (head changed)"
        digests = _gen_digests(fd, gs.pos, gs.prefix is not None)
    except OSError as exc:
        return f"{name} unreadable: {exc.strerror or exc}"
    finally:
        os.close(fd)
    if digests is None or digests != (gs.tail, gs.prefix):
        return f"{name} was rewritten (bytes before the saved offset changed)"
    return None
