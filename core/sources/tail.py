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

import contextlib
import errno
import os
import stat
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from msgspec import Struct, field

from .discover import Scanner, is_candidate_name, logical_of, rotated_of
from .watch import DirWatcher

__all__ = [
    "HEAD_BYTES", "FileBatch", "FileStat", "GenSnap", "Line", "Notice", "Sources", "StreamSnap", "verify_stream",
]  # fmt: skip

HEAD_BYTES = 256
"""Bytes of a generation's head kept to recognise it: enough to differ between two JSONL files (timestamps,
ids), small enough to re-read after every read."""
#: the UTF-8 byte order mark, accepted (and skipped) at the start of a file
BOM = b"\xef\xbb\xbf"

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

UNDECIDED_S = 1.0
"""How long a file at ``.1`` that is a strict prefix (under 64 bytes, ending inside a line) of the current file's
head may stay undecided (a ``cp`` still writing it) before it counts as an older file of its own. Whole lines
alike byte for byte are a copy at once, and so is any prefix once the log is truncated (copytruncate's ``cp``
is over by then)."""

NOTICE_KINDS = frozenset(
    {
        "truncated", "replaced", "deleted", "rotated", "recreated", "unreadable", "oversized_line", "not_a_file",
        "alias",
    }
)  # fmt: skip


class Line(Struct):
    """One complete line of a file generation."""

    lineno: int
    """1-based line number within the file generation (skipped oversized lines count too)."""
    offset: int
    """Byte offset of the line's first byte in that generation: a drill-down re-reads it with ``pread``."""
    data: bytes
    """The line without its trailing ``b"\\n"``. A trailing ``b"\\r"`` is kept (callers strip); invalid UTF-8
    is kept as is, because decoding is the format adapters' job."""


class Block(Struct):
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


class Notice(Struct):
    """Something about a file the user should know, which is not a line (never an exception)."""

    kind: str
    """One of ``NOTICE_KINDS``."""
    path: str
    message: str
    """One human line, e.g. ``session.log truncated (size 120 < offset 4096); reading from 0``."""
    lineno: int | None = None
    offset: int | None = None


class FileBatch(Struct):
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


class HeldPartial(Struct):
    """An unterminated line the tailer still holds: where it starts and how long it is so far."""

    path: str
    lineno: int
    offset: int
    size: int


class FileStat(Struct):
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


class GenSnap(Struct):
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
    alias: str | None = None
    """The stream that reads this file under another name (a link), or None."""


class StreamSnap(Struct):
    """A stream's generations (oldest first) and numbering, as ``Sources.export_state`` saw them."""

    logical: str
    next_number: int
    gens: list[GenSnap]


def _digest_range(fd: int, start: int, end: int) -> bytes | None:
    """blake2b of the bytes [start, end) of ``fd``; None when the file no longer holds them all."""
    import hashlib  # (on first use: only the index's saved state needs it; ~3 ms CPU of every start-up)

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


_SEEK_DATA: int | None = getattr(os, "SEEK_DATA", None)


def _kind_of(mode: int) -> str:
    """What a path that is not a regular file is, for the Problem that says it is skipped."""
    for test, what in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe), not a regular file"),
        (stat.S_ISSOCK, "a socket, not a regular file"),
        (stat.S_ISCHR, "a character device, not a regular file"),
        (stat.S_ISBLK, "a block device, not a regular file"),
    ):
        if test(mode):
            return what
    return "not a regular file"


def _descriptor_budget() -> int:
    """A quarter of the soft descriptor limit (256 under the common ``ulimit -n 1024``): the rest stays free for
    log families (which keep theirs), the watcher, the index and whatever else the process opens."""
    try:
        import resource

        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return 1 << 16
    return 1 << 16 if soft == resource.RLIM_INFINITY else max(1, soft // 4)


def _name(path: str) -> str:
    return os.path.basename(path) or path


class _Gen:
    """Reading state of one generation: descriptor, identity, offsets, and the held partial line."""

    __slots__ = (
        "alias",
        "copy",
        "current",
        "denied",
        "dev",
        "farewell",
        "fd",
        "flushed_at",
        "gone",
        "head",
        "held",
        "ino",
        "last_size",
        "line_start",
        "lineno",
        "number",
        "partial",
        "path",
        "pos",
        "sig",
        "size",
        "skipping",
        "suspect",
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
        self.last_size = st.st_size  # its size under a name, before it went (``_gone``)
        self.flushed_at = -1  # pos at which the partial was last flushed (flush at most once per EOF)
        # Notices wait here until the stream's reading reaches this generation (``held``: why it starts) or
        # has drained it (``farewell``: it was deleted), so a budget-limited poll never reports a reset
        # before the last lines of the generation it ends.
        self.held: list[tuple[str, str]] = []
        self.farewell = False
        # the last open was refused (EACCES, EPERM): an older generation in this state does not hold up the
        # newer ones (they are read; this one is reported once and read if it becomes readable)
        self.denied = False
        # another stream reads this inode (a symlink or hard link to a tailed file): never read under this name
        self.alias: str | None = None
        # the current generation this file is a byte copy of (copytruncate: `cp X.log X.log.1`): not read
        # unless that generation is truncated, when it goes on from where that one stopped (see `_handover`)
        self.copy: _Gen | None = None
        # its head changed under a look whose stats were taken a moment before (see `_check_same_inode`)
        self.suspect = False
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

    __slots__ = (
        "alias_of",
        "errors",
        "gens",
        "heads",
        "hold",
        "logical",
        "members",
        "mtime_ns",
        "next_number",
        "pending_reason",
        "rot",
        "seen",
        "undecided_since",
    )

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
        self.alias_of: str | None = None  # the stream last named as reading this one's file (said once)
        self.hold = False  # a file at .1 may be a copy still being written: read nothing until the next look
        self.undecided_since: float | None = None  # since when (monotonic) that file has been too short to tell
        #: the heads of the last generations read from 0 and restarted (truncated, handed over): a copy of one of
        #: them found where an older generation was (`_holds_a_copy_of_read`) is never read a second time
        self.heads: list[bytes] = []

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


def _owed(g: _Gen) -> int:
    """Bytes of ``g`` on disk not read yet that reading can get to (what a progress bar waits for): none for a
    file it may not open, another name of a file read elsewhere, or a copy that is not (yet) to be read."""
    if g.denied or g.alias is not None or g.copy is not None:
        return 0
    return max(0, g.size - g.pos)


def _remember_head(s: _Stream, g: _Gen) -> None:
    if s.family and g.head:
        s.heads = [*s.heads[-3:], g.head]


def _newest(s: _Stream, g: _Gen) -> None:
    """``g`` now holds the stream's newest content but the current file's: read after every other old one (the
    reading order is ``s.gens``'s, current last; a file deleted earlier and still draining comes first)."""
    s.gens.remove(g)
    s.gens.append(g)


_Position = tuple[int, int, int, bytes, bool, bytes, int]


def _position(g: _Gen) -> _Position:
    return (g.pos, g.line_start, g.lineno, bytes(g.partial), g.skipping, g.head, g.flushed_at)


def _set_position(g: _Gen, p: _Position) -> None:
    g.pos, g.line_start, g.lineno, partial, g.skipping, g.head, g.flushed_at = p
    g.partial = bytearray(partial)


def _settled(g: _Gen) -> bool:
    """A generation reading leaves alone until a survey sees it change: another name of a file read elsewhere,
    a copy that is not to be read. (One it may not open is tried again each poll: a parent directory's mode
    can change without the file's ctime.)"""
    return not g.gone and (g.alias is not None or g.copy is not None)


def _idle(s: _Stream) -> bool:
    """Nothing to do for the read phase: every generation current, read to its size, nothing held or owed
    (or settled: see ``_settled``).

    ``_read_stream`` on such a stream only touches the LRU (an unchanged file is not "used", so it should not)."""
    return not s.hold and all(
        _settled(g) or (g.current and not g.gone and g.pos >= g.size and not g.held) for g in s.gens
    )


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
        self.max_open = max(1, min(max_open, _descriptor_budget()))
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
        # (st_dev, st_ino) -> the generation that reads that file: a second name for it (a symlink or a hard
        # link inside a watched tree) is an alias, never read again (see ``_claim``)
        self._inodes: dict[tuple[int, int], tuple[str, _Gen]] = {}
        self._aliased = False  # some generation is an alias (a drop then looks for one to take over)
        self._lock = threading.Lock()
        self._closed = False
        self._wake = threading.Event()
        self._watcher: DirWatcher | None = None
        self._carry: _Out | None = None  # notices of surveys made between polls (``_pin``), for the next poll
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
                self._pending = sum(_owed(g) for s in streams for g in s.gens)
                self._stale.discard("pending")
            return self._pending

    def held_partials(self) -> list[HeldPartial]:
        """Per generation, the unterminated bytes after its last newline (a write in progress, or a torn one).

        They are not lines yet and ``poll`` never returns them; a snapshot (the report) names them so a
        partial write at the end of a file is shown, never silently absent. A line over ``max_line_bytes`` that
        never ended (a 200 MB tail, a sparse file of NULs) is one too, by its length so far: its bytes are not
        held, only counted.
        """
        with self._lock:
            return [
                HeldPartial(g.path, g.lineno + 1, g.line_start, g.pos - g.line_start if g.skipping else len(g.partial))
                for stream in self._streams.values()
                for g in stream.gens
                if g.partial or g.skipping
            ]

    @property
    def capped(self) -> bool:
        """True when the last scan hit the file cap (``discover.MAX_FILES``) and some files are not tailed."""
        return self._scanner.capped

    def discovery(self) -> dict[str, int | bool]:
        """What discovery found against its cap, for the reports and the status line: ``files`` tailed,
        ``cap``, ``left_out`` (found past the cap, never read) and ``counted_all`` (False: ``left_out`` is a
        lower bound, the count stopped)."""
        with self._lock:
            scanner = self._scanner
            return {
                "files": scanner.found + len(self._file_roots),
                "cap": scanner.max_files,
                "left_out": scanner.left_out,
                "counted_all": scanner.counted_all,
            }

    def poll(self, max_bytes: int | None = None) -> list[FileBatch]:
        """Rescan for new files (cheap), then read every file from its saved offset; return only COMPLETE lines.

        ``max_bytes`` bounds the bytes read in this call (backpressure); the rest is read by the next call.
        Never raises for a file problem: those come back as ``Notice``s.
        """
        with self._lock:
            if self._closed:
                return []
            out, self._carry = self._carry or _Out(), None  # what the watch thread's surveys noticed (`_pin`)
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
                    left, _ = self._read_stream(s, out, self.read_chunk)
                    if left >= self.read_chunk or s.hold:
                        # no byte read (an older file waits, one went since the stat), or the stream held for the
                        # next look (rewritten under the read: copytruncate, a truncation): the next poll goes on.
                        # Looping on, it spun at 100 % CPU holding the lock (the chaos test, under load, > 8 min)
                        break
                return 0, True
        return budget, False

    @property
    def watching(self) -> bool:
        """Whether `start_watching` was called."""
        return self._watcher is not None

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

            self._watcher = DirWatcher(list(self._dir_roots), parents, accept, on_change=self._pin)
            self._watcher.start()

    def _pin(self, paths: set[str]) -> None:
        """Survey the log families among ``paths`` now, in the watch thread: a new generation is opened (pinned)
        the moment it appears, not at the next poll.

        A poll comes when its caller is ready, and a caller can be slow: the dashboard's first polls restore
        its index and warm the analysis up, and a busy machine stretches every gap. A log that rotates 10 times
        a second lives 0.2 s under its two names; a generation created and renamed over (deleted) between two
        polls was never opened, and its lines were lost (186-491 at start-up in the review's battery, 59 % with
        polls 0.35-0.6 s apart). Opened here, its descriptor reads it after it is gone. The survey's notices wait
        in ``_carry`` for the next poll, which hands them out in order with what it reads."""
        families = {logical_of(p) for p in paths}
        with self._lock:
            if self._closed or self._last_full == float("-inf"):
                return  # nothing is known yet: the first poll surveys everything
            for logical in families:
                s = self._streams.get(logical)
                if s is None or not s.family:
                    continue  # a new stream waits for the poll's rescan; other files do not rotate
                if self._carry is None:
                    self._carry = _Out()
                self._survey(s, self._carry)

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
        if self._wake.wait(max(0.0, timeout)) and not self._closed:
            self._wake.clear()  # a `wake` (close leaves it set: every later wait returns at once)
        return False

    def wake(self) -> None:
        """A blocked ``wait`` returns now (safe from another thread): its caller was told to stop."""
        self._wake.set()
        if self._watcher is not None:
            self._watcher.wake()

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
                self._error(s, out, m, "not_a_file", f"{_name(m)} is {_kind_of(st.st_mode)}; skipped, never opened")
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
        undecided = self._spot_copy(s, sts, out) if s.family else set()
        # a `cp` is still writing what may be a copy of the current file: if that file was truncated meanwhile,
        # its reading position is what the copy goes on from, so leave it (and the stream's reading) as it is
        s.hold = bool(undecided)

        # (a copy: `_newest` and `_restart` move generations within the list; whether each was a copy is taken
        # now, before the current file's check below can hand its reading over to it)
        for g, copied in [(g, g.copy is not None) for g in s.gens]:
            if g.gone:
                continue
            loc = at.get((g.dev, g.ino))
            if (g.dev, g.ino) in undecided or (s.hold and g.current and loc == s.logical):
                # rewritten in place, maybe by a `cp` still writing: decided at the next look; a current file
                # rotated to .1 first is an old one from now on (the new file at the log's path is current)
                if g.current and loc is not None and loc != s.logical:
                    g.current, g.path = False, loc
                    _newest(s, g)
                    out.notice(s, g.number, loc, "rotated", f"{_name(s.logical)} rotated to {_name(loc)}")
                continue
            if loc is None:
                self._gone(s, g, out, sts)
                continue
            if g.alias is not None or g.copy is not None:
                g.path, g.size, g.sig = loc, sts[loc].st_size, None  # followed, never read under this name
                continue
            if copied:
                # a copy handed over in this survey (the current file, listed before it, was truncated): its
                # size is `_handover`'s fstat, newer than this stat, which may have been taken while `cp` was
                # writing it (size 0 < its new offset: it was "rewritten" and every line of it read twice)
                g.path, g.sig = loc, None
                continue
            if g.current and loc != s.logical:
                g.current = False
                # the newest of the old files now: a copy restarted at .1 (`cp` over it) was listed after it
                # while it was current, yet holds what the log held before it (read after it, lines came out of
                # order when a rotation removed that copy)
                _newest(s, g)
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

        known = {(g.dev, g.ino) for g in s.gens if not g.gone} | undecided
        if s.family and not any(not g.gone for g in s.gens):
            known |= self._copy_at_start(s, sts)
        # Unknown .1 before unknown logical: at start-up, or after a rotation we never saw, the .1 file is older.
        for m in reversed(s.members):
            st = sts.get(m)
            if st is None or (st.st_dev, st.st_ino) in known:
                continue
            is_current = m == s.logical
            if is_current and any(g.current for g in s.gens if g.alias is None):
                continue  # cannot happen with a consistent stat pair; be safe rather than double-read
            g = _Gen(s.new_number(), m, st, is_current)
            s.gens.append(g)
            known.add((g.dev, g.ino))
            if self._claim(s, g, out):
                continue  # another name of a file another stream reads
            if s.pending_reason is not None:
                # the first generation seen after the current one vanished, even at X.log.1 (the new file
                # rotated before we looked): the reset happened before it
                reason, s.pending_reason = s.pending_reason, None
                msg = "replaced by a new file" if reason == "replaced" else "recreated"
                g.held.append((reason, f"{_name(s.logical)} {msg}; reading from 0"))
            if s.family:
                # Pin the inode now: if it rotates and is deleted before we get to read it, the fd still reads.
                self._pin_open(s, g, out)

    def _gone(self, s: _Stream, g: _Gen, out: _Out, sts: dict[str, os.stat_result]) -> None:
        """A generation is at none of the stream's paths: deleted, replaced, or an old .1 removed by rotation."""
        g.gone = True
        if g.alias is not None or g.copy is not None:
            return  # never read under this name: nothing to drain, nothing to tell
        was_current, g.current = g.current, False
        if was_current:
            _newest(s, g)  # the newest of the old files, whatever waits to be read at .1 (see `_survey_all`)
        g.last_size = g.size  # what it held at the last look under a name (a cp may rewrite it before it goes)
        if g.fd is not None:
            try:
                g.size = os.fstat(g.fd).st_size  # what was written before the unlink/rename is still readable
            except OSError:
                g.size = g.pos
        else:
            g.size = g.pos
        if not was_current and s.family and g.fd is not None and self._holds_a_copy_of_read(s, g):
            # rewritten by a copytruncate's `cp` (onto .1, in place) before the next one removed it: it holds the
            # current file's bytes, which are read there; read here too, they were counted twice
            if g.last_size > g.pos and g.head:
                unread = g.last_size - g.pos
                out.notice(
                    s,
                    g.number,
                    g.path,
                    "copytruncate_lost",
                    f"{_name(g.path)} overwritten by a copy and removed before its last {unread} bytes"
                    f" (from offset {g.pos}) were read; they are in no file any more",
                    offset=g.pos,
                )
            g.size = g.pos
            g.partial, g.skipping = bytearray(), False
            return
        if not was_current:
            return  # an old generation leaving .1 is ordinary rotation, nothing to tell
        rot = sts.get(s.rot) if s.rot is not None else None
        if rot is not None and not any((h.dev, h.ino) == (rot.st_dev, rot.st_ino) for h in s.gens if not h.gone):
            # rotated twice between two looks (10 rotations a second): it went to .1 and a later rotation
            # deleted it from there; the file now at .1 is the one after it. Rotation, not a reset: its rest is
            # read from the descriptor held since it was found, the newer files from 0.
            return
        if s.logical in sts:
            s.pending_reason = "replaced"
        else:
            s.pending_reason = "recreated"
            if not s.errors.get(s.logical, "").startswith("not_a_file"):
                g.farewell = True

    def _check_same_inode(self, s: _Stream, g: _Gen, st: os.stat_result, out: _Out) -> None:
        """Same inode as before: detect truncation (size < offset) and in-place rewrites (head changed)."""
        was = g.size  # what the file held at the last look: a copytruncate loses what its copy does not hold
        g.size = st.st_size
        sig = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if sig == g.sig:
            return
        g.sig = sig
        self._dirty = True
        suspect, g.suspect = g.suspect, False
        rewritten = st.st_size < g.pos or (g.fd is not None and g.head and not self._head_matches(g))
        if rewritten and s.family and not g.current:
            # nothing but `cp` writes to X.log.1 (copytruncate; `_spot_copy` found it is no copy of what was read
            # here): a new older generation, as after a rotation, read from 0
            self._restart(s, g, out, "rotated", f"{_name(g.path)} rewritten by a copy (copytruncate); reading it")
            return
        if st.st_size < g.pos:
            if self._handover(s, g, out, was):
                return
            self._restart(
                s,
                g,
                out,
                "truncated",
                f"{_name(g.path)} truncated (size {st.st_size} < offset {g.pos}); reading from 0"
                + (f"; {len(g.partial)} unterminated bytes dropped" if g.partial else ""),
            )
        elif g.fd is not None and g.head and not self._head_matches(g):
            if self._handover(s, g, out, was):
                return
            if s.family and not suspect:
                # The head is read now, the stats a moment ago: copytruncate may have copied and truncated in
                # between, the copy not in these stats yet. Look again (next poll) before calling it a rewrite.
                g.suspect, g.sig, s.hold = True, None, True
                return
            self._restart(s, g, out, "replaced", f"{_name(g.path)} rewritten in place (head changed); reading from 0")

    def _restart(self, s: _Stream, g: _Gen, out: _Out, kind: str, message: str) -> None:
        _remember_head(s, g)
        _newest(s, g)
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
            fd = self._open_fd(g.path)
        except (FileNotFoundError, NotADirectoryError):
            return False  # gone since the stat (deleted or renamed away): the next survey says what happened
        except OSError as exc:
            g.denied = exc.errno in (errno.EACCES, errno.EPERM)
            msg = f"{_name(g.path)} unreadable: {exc.strerror or exc}"
            self._error(s, out, g.path, "unreadable", msg, g.number)
            return False
        g.denied = False
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
            self._evict()  # at once: a poll over thousands of files holds at most ``max_open`` of them
        return True

    def _pin_open(self, s: _Stream, g: _Gen, out: _Out) -> None:
        """``_open`` a new generation of a log family; when it was renamed between the stat and the open (a
        rotation in between, at 10 a second), at the stream's other name, where ``_open`` checks it is the same
        file: unopened, it would be lost if the next rotation deleted it before the next survey."""
        if self._open(s, g, out) or g.fd is not None:
            return
        first = g.path
        for m in s.members:
            if m != first:
                g.path = m
                if self._open(s, g, out):
                    return
        g.path = first

    def _open_fd(self, path: str) -> int:
        """``_open_readonly``; out of descriptors (EMFILE, ENFILE: this process's limit or the system's), close
        every idle one (``_lru``: reopened by identity when next needed) and try once more."""
        try:
            return _open_readonly(path)
        except OSError as exc:
            if exc.errno not in (errno.EMFILE, errno.ENFILE) or not self._lru:
                raise
        self._evict(0)
        return _open_readonly(path)

    def _head_of(self, path: str) -> bytes:
        """The first ``HEAD_BYTES`` of ``path`` through a descriptor of its own (closed at once); empty when it
        cannot be opened or read: every caller then takes it for no copy, as for an empty file."""
        return _first_head(path, self._open_fd)

    def _evict(self, keep: int | None = None) -> None:
        keep = self.max_open if keep is None else keep
        while len(self._lru) > keep:
            _, g = self._lru.popitem(last=False)
            g.close()

    def _drop(self, g: _Gen) -> None:
        self._lru.pop(id(g), None)
        key = (g.dev, g.ino)
        owner = self._inodes.get(key)
        if owner is not None and owner[1] is g:
            del self._inodes[key]
            if self._aliased and g.alias is None:
                self._promote(key, g)
        g.close()

    def _promote(self, key: tuple[int, int], gone: _Gen) -> None:
        """The name a file was read under is gone (deleted, drained to its end); another name of it (a hard
        link) goes on reading from where that one stopped, so what is appended through it is not lost."""
        for logical in self._order:
            st = self._streams[logical]
            for h in st.gens:
                if h.alias is not None and not h.gone and (h.dev, h.ino) == key:
                    h.alias = None
                    h.pos, h.line_start, h.lineno, h.head = gone.pos, gone.line_start, gone.lineno, gone.head
                    h.partial, h.skipping, h.flushed_at = bytearray(gone.partial), gone.skipping, gone.flushed_at
                    h.sig = None
                    self._inodes[key] = (logical, h)
                    self._busy.add(logical)
                    return

    def _claim(self, s: _Stream, g: _Gen, out: _Out) -> bool:
        """Make ``g`` the reader of its file, or (True) an alias of the stream that reads it under another name.

        A file is one inode, ``(st_dev, st_ino)``, whatever its names. A symlink whose target is a file this
        tailer reads defers to that name even before it is surveyed (the order of surveys must not decide);
        otherwise the first name surveyed reads the file and any later one (a hard link) is an alias, said once
        as a notice and never read: 10 lines under two names count 10 times, not 20."""
        key = (g.dev, g.ino)
        owner: str | None = None
        if os.path.islink(g.path):
            real = logical_of(os.path.realpath(g.path))
            if real != s.logical and real in self._streams:
                owner = real
        if owner is None:
            held = self._inodes.get(key)
            if held is not None and held[0] != s.logical and not held[1].gone and held[1].alias is None:
                # an inode number is reused once its file is gone and no descriptor pins it: the reader must
                # still have that very file at its path for this one to be another name of it
                try:
                    there = os.stat(held[1].path)
                    if (there.st_dev, there.st_ino) == key:
                        owner = held[0]
                except OSError:
                    pass
        if owner is None:
            self._inodes[key] = (s.logical, g)
            return False
        g.alias = owner
        self._aliased = True
        if s.alias_of != owner:
            s.alias_of = owner
            where = os.path.join(os.path.basename(os.path.dirname(owner)), os.path.basename(owner))
            out.notice(s, g.number, g.path, "alias",
                       f"{_name(g.path)} is another name (a link) for {where}; read once, under that name")  # fmt: skip
        return True

    # ------------------------------------------------------------------ copytruncate

    def _spot_copy(self, s: _Stream, sts: dict[str, os.stat_result], out: _Out) -> set[tuple[int, int]]:
        """Recognise ``X.log.1`` as a byte copy of the current ``X.log`` (logrotate's copytruncate:
        ``cp X.log X.log.1; truncate -s0 X.log``) by its content, as Vector's checksum fingerprint does: it
        starts with the bytes the current generation was read from. Such a copy is not a generation of its own
        (reading it would count every line twice: 80-89 % of a live log doubled); it waits, unread, until the
        current file is truncated, and then goes on from exactly where that one stopped (``_handover``): the
        lines appended after our last read and before the copy are read from it, once. Lines written between
        the copy and the truncation are in neither file: copytruncate itself loses them.

        Returns the inodes at ``.1`` not to treat as new this time (a copy too short yet to tell)."""
        st0, st1 = sts.get(s.logical), sts.get(s.rot) if s.rot is not None else None
        if st0 is None or st1 is None:
            return set()
        cur = next((g for g in s.gens if g.current and not g.gone and g.alias is None), None)
        if cur is None:
            return set()
        if (cur.dev, cur.ino) != (st0.st_dev, st0.st_ino):
            return self._copy_after_rotation(s, st0, st1)
        key = (st1.st_dev, st1.st_ino)
        if key == (cur.dev, cur.ino):
            return set()
        old = next((g for g in s.gens if not g.gone and (g.dev, g.ino) == key), None)
        if old is not None:
            if old.alias is not None or old.current:
                return set()
            if old.copy is not None:
                if old.copy is cur and old.fd is not None and st1.st_size >= len(old.head) and self._head_matches(old):
                    return set()  # still the copy it was, waiting for the current file's truncation
                # rewritten by a later `cp`, or waiting for a generation that started over: look at it afresh
            elif st1.st_size >= old.pos and old.head and (old.fd is None or self._head_matches(old)):
                return set()  # the older generation as it was: not rewritten
            # (nothing read from it yet, or rewritten: whatever it holds now may be a copy of the current file)
        assert s.rot is not None
        # what the current generation was read from, and what its file starts with now (a copy of content that
        # replaced what was read: it waits for the next truncation, the current file is read from 0 meanwhile)
        refs = [cur.head] if cur.head else []
        if cur.fd is not None:
            with contextlib.suppress(OSError):
                now = os.pread(cur.fd, HEAD_BYTES, 0)
                if now and now != cur.head:
                    refs.append(now)
        verdict, ref = self._is_copy(refs, s.rot)
        if verdict is None and cur.head and ref == cur.head and st0.st_size < cur.pos:
            # a copy of what was read, and the log truncated since: copytruncate's `cp` is over, that is all it wrote
            verdict = True
        if verdict is None:
            now = time.monotonic()
            if s.undecided_since is None:
                s.undecided_since = now
            if now - s.undecided_since < UNDECIDED_S:
                return {key}
            verdict = False  # a few bytes that never grew: an older file that happens to start alike
        s.undecided_since = None
        if not verdict:
            if old is not None and old.copy is not None:  # no copy of anything read here: an older file, from 0
                old.copy = None
                _newest(s, old)
                old.reset()
                old.sig, old.size = None, st1.st_size
            return set()
        if old is not None:  # a second `cp` onto the last copy, in place: it holds the current file's bytes now
            unread = old.size - old.pos if old.copy is None else 0
            if unread > 0:  # a generation still being read here, rewritten under us: its rest is gone
                out.notice(
                    s,
                    old.number,
                    old.path,
                    "copytruncate_lost",
                    f"{_name(old.path)} overwritten by the next copytruncate before its last {unread} bytes"
                    f" (from offset {old.pos}) were read; they are in no file any more",
                    offset=old.pos,
                )
            _newest(s, old)
            old.reset()
            old.held.clear()
            old.copy, old.number, old.sig, old.size, old.head = cur, cur.number, None, st1.st_size, ref[: st1.st_size]
        else:
            g1 = _Gen(cur.number, s.rot, st1, False)
            # what it holds of ``ref`` so far: a copy shorter than the head it copies (`cp` still writing) is
            # no rewrite of it (`_open` compares the file with its head, and restarted it as "replaced")
            g1.copy, g1.head = cur, ref[: st1.st_size]
            s.gens.append(g1)
            self._inodes.setdefault(key, (s.logical, g1))
            self._open(s, g1, out)  # pinned: a copy moved away or deleted (`rm X.log.1; cp …`) is still read
        self._dirty = True
        return set()

    def _copy_after_rotation(self, s: _Stream, st0: os.stat_result, st1: os.stat_result) -> set[tuple[int, int]]:
        """The log rotated since the last look (a new file at ``X.log``) and ``X.log.1`` no longer holds what was
        read from it: a copytruncate's ``cp`` of the new file may be writing it (a rotation, then a copytruncate
        whose `cp` is slow). Read as an older generation it delivered the new file's lines twice, or the middle
        of one (the copy's rest, written after a flush of its torn end). Such a ``.1`` is left alone this look
        (its inode returned, the stream held): at the next one the new file is the current generation and
        ``_spot_copy`` compares the copy with it.

        Costs a ``pread`` of ``.1``'s head per rotation seen, and an ``open`` of the log only when that head
        changed."""
        key = (st1.st_dev, st1.st_ino)
        if key == (st0.st_dev, st0.st_ino):
            return set()
        old = next((g for g in s.gens if not g.gone and (g.dev, g.ino) == key), None)
        if old is not None:
            if old.alias is not None or old.copy is not None:
                return set()
            if old.head and st1.st_size >= old.pos and (old.fd is None or self._head_matches(old)):
                return set()  # what was read from it, as it was: a plain rotation
        head = self._head_of(s.logical)
        verdict, _ref = self._is_copy([head], s.rot) if head and s.rot is not None else (False, b"")
        return {key} if verdict is not False else set()

    def _holds_a_copy_of_read(self, s: _Stream, g: _Gen) -> bool:
        """``g`` (an older generation) now starts with what another generation was read from (the current one,
        or one restarted lately), and no longer with what ``g`` was read from: a copy was written over it."""
        if g.fd is None:
            return False
        try:
            now = os.pread(g.fd, HEAD_BYTES, 0)
        except OSError:
            return False
        if not now or (g.head and now.startswith(g.head)):
            return False  # empty, or still its own content
        heads = [h.head for h in s.gens if h is not g and h.head and h.alias is None and h.copy is None] + s.heads
        for head in heads:
            n = min(len(now), len(head))
            if now[:n] == head[:n] and (n >= 64 or n == len(head) or now[n - 1 : n] == b"\n"):
                return True
        return False

    def _copy_at_start(self, s: _Stream, sts: dict[str, os.stat_result]) -> set[tuple[int, int]]:
        """At the first look at a log family, ``X.log.1`` that starts with the bytes ``X.log`` starts with is a
        copy of it (a copytruncate in progress: copied, not truncated yet; or a backup copy), not an older
        generation: reading both counted its lines twice. It is left unknown this time (the inode returned), and
        from the next look ``_spot_copy`` treats it as any copy, once the log's reading has a head to compare."""
        st0, st1 = sts.get(s.logical), sts.get(s.rot) if s.rot is not None else None
        if st0 is None or st1 is None or (st0.st_dev, st0.st_ino) == (st1.st_dev, st1.st_ino) or not st0.st_size:
            return set()
        head = self._head_of(s.logical)
        verdict, _ref = self._is_copy([head], s.rot) if head else (False, b"")
        return {(st1.st_dev, st1.st_ino)} if verdict is not False else set()

    def _is_copy(self, refs: list[bytes], path: str) -> tuple[bool | None, bytes]:
        """Whether ``path`` starts with one of ``refs`` (and which); None (and the first ref it may be a copy of)
        while it is too short to tell (``cp`` still writing it: a strict prefix shorter than 64 bytes that ends
        inside a line)."""
        return _copy_verdict(refs, self._head_of(path)) if refs else (False, b"")

    def _handover(self, s: _Stream, g: _Gen, out: _Out, was: int) -> bool:
        """The current generation was truncated while a copy of it waits at ``.1`` (copytruncate): the copy
        takes over its reading (offset, line number, held partial line), and the current file starts again
        from 0 as a new generation. Said as a rotation, which it is; False when no copy waits."""
        if not g.current or s.rot is None:
            return False
        copy = next((c for c in s.gens if c.copy is g and not c.gone), None)
        n = min(len(copy.head), len(g.head)) if copy is not None else 0
        if copy is None or copy.head[:n] != g.head[:n]:
            return False  # none waits, or it copied what replaced the bytes read (it waits for g's next truncation)
        with contextlib.suppress(OSError):  # its size now: `cp` may have finished since the stats were taken
            # through its descriptor when it has one: the next copytruncate may have removed it from .1 already
            # (`rm X.log.1; cp …`), and a stale size put its reading in the middle of a line
            st = os.fstat(copy.fd) if copy.fd is not None else os.stat(copy.path)
            if (st.st_dev, st.st_ino) == (copy.dev, copy.ino):
                copy.size = st.st_size
        copy.copy = None
        # read right before the current file's new content, whatever happens to it: listed after it (newest),
        # the copy came after it as soon as the current file rotated, and its rest was read after newer lines
        s.gens.remove(copy)
        s.gens.insert(s.gens.index(g), copy)
        copy.number = g.number
        # bytes the log held at the last look (``was``) past both the copy's end and our reading: written between
        # the copy and the truncation, they are in neither file. copytruncate itself loses them (every tool
        # does: logrotate's documented window); said as a Problem, never silently (a lower bound: what was
        # appended after the last look and before the truncation is not known)
        lost = was - max(copy.size, g.pos)
        if lost > 0:
            out.notice(
                s,
                copy.number,
                copy.path,
                "copytruncate_lost",
                f"{_name(s.logical)} copied to {_name(s.rot)} and truncated: {lost} bytes written between the copy"
                f" and the truncation (from offset {copy.size}) are in neither file; copytruncate loses them itself",
                offset=copy.size,
            )
        # the copy holds the bytes g was read from up to its own size (a copy shorter than g's head holds less)
        copy.head, copy.lineno, copy.flushed_at = g.head[: copy.size], g.lineno, g.flushed_at
        dropped = ""
        if copy.size >= g.pos:
            copy.pos, copy.line_start, copy.partial, copy.skipping = g.pos, g.line_start, g.partial, g.skipping
        else:  # the copy ends before what was read: it holds nothing more (the rest was read from g)
            copy.pos = copy.line_start = copy.size
            if g.partial:
                dropped = f"; {len(g.partial)} unterminated bytes dropped"
        g.number = s.new_number()
        _remember_head(s, g)
        g.reset()
        g.held.append(
            (
                "rotated",
                f"{_name(s.logical)} copied to {_name(s.rot)} and truncated (copytruncate); the rest is read from"
                f" the copy, then {_name(s.logical)} from 0{dropped}",
            )
        )
        self._busy.add(s.logical)
        self._dirty = True
        return True

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
        if s.hold:
            return budget, False  # see `_survey_all`: decided at the next survey, a moment later
        # s.gens is in creation order and the sort is stable: older first even after a restart renumbered one
        order = sorted(s.gens, key=lambda g: g.current)
        for i, g in enumerate(order):
            if g.alias is not None or g.copy is not None:
                if g.gone:
                    self._drop(g)
                    s.gens.remove(g)
                continue  # read under its other name / not a generation of its own (yet)
            out.visit(s, g)
            if g.fd is None and not g.gone and g.pos < g.size and not self._open(s, g, out):
                self._release(s, g, out)
                if g.current or not g.denied:
                    return budget, False  # gone since the stat, or out of descriptors: wait, keep others going
                continue  # an older generation we may not read holds up nothing: reported once, newer ones read
            self._release(s, g, out)
            if g.fd is not None and g.pos < g.size:
                if budget <= 0:
                    return budget, True
                batch = out.batch(s, g.number, g.path)
                kept = len(batch.lines), len(batch.notices)
                # a family's file at .1 can be rewritten in place by `cp` (copytruncate), the current one
                # truncated while its copy waits: either way the position before this read is what to go on from
                before = _position(g) if s.family else None
                budget -= self._read(s, g, out, min(budget, g.size - g.pos))
                if not self._head_matches(g):
                    # Truncated and regrown between the survey and this read: what it returned may be new
                    # content at the old offset (a garbled line). Drop it and read the new content from 0.
                    del batch.lines[kept[0] :], batch.notices[kept[1] :]
                    if before is not None and not g.gone:
                        # A log family's file rewritten under the read: copytruncate's truncation (a copy at .1
                        # goes on from where the last good read ended) or `cp` onto .1. Back to that position;
                        # the next survey, a moment later, tells which (`_spot_copy`) with the copy complete.
                        # (A file gone from every path is never surveyed again: it starts over below.)
                        _set_position(g, before)
                        g.sig = None
                        s.hold = True
                        return budget, False
                    if s.family and g.gone:
                        # gone from every name, and rewritten before it went: only `cp` writes a log's .1, so it
                        # holds a copytruncate's copy (of the current file, read from there, or of a generation
                        # since lost) made just before the next one removed it. Read again it doubled lines, or
                        # put them out of order; what it held past our reading is in no file any more: said
                        unread = g.last_size - before[0] if before is not None else 0
                        if unread > 0:
                            out.notice(
                                s,
                                g.number,
                                g.path,
                                "copytruncate_lost",
                                f"{_name(g.path)} overwritten by a copy and removed before its last {unread} bytes"
                                f" (from offset {before[0]}) were read; they are in no file any more",
                                offset=before[0],
                            )
                        g.pos = g.size = g.line_start = g.flushed_at = 0
                        g.partial, g.skipping = bytearray(), False
                        self._drop(g)
                        s.gens.remove(g)
                        return budget, False
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
            if g.skipping and _SEEK_DATA is not None:
                self._skip_hole(g)
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

    @staticmethod
    def _skip_hole(g: _Gen) -> None:
        """Inside an oversized line, jump over a hole of a sparse file (NUL bytes the disk does not hold: no
        newline can be there) instead of reading it: a 2 GB sparse transcript took 6.9 s of reads, now none."""
        assert g.fd is not None and _SEEK_DATA is not None
        try:
            data = os.lseek(g.fd, g.pos, _SEEK_DATA)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no data after pos (a hole up to the end); else: not supported
                return
            data = g.size
        if data > g.pos:
            g.pos = min(data, max(g.size, g.pos))

    def _feed(self, g: _Gen, data: bytes, batch: FileBatch) -> None:
        """Split ``data`` (which starts at ``g.pos``) into lines; hold the tail; skip oversized lines.

        The held partial never exceeds ``max_line_bytes``: once a line is known to be longer, its bytes are
        discarded as they arrive and only its start offset and number are remembered for the notice.
        """
        base = g.pos
        if base < len(BOM) and g.line_start == 0 and not g.lineno:
            # a UTF-8 BOM before line 1 (an editor or a Windows tool wrote the file) is no part of the line: the
            # line starts after it, at offset 3, so a re-read by offset still gets exactly its bytes. The first
            # reads may hold fewer than its 3 bytes (a writer's 1-byte write, a small read chunk): they wait in
            # the partial line until the 3 bytes tell, so a file reads the same however it was written
            head = bytes(g.partial) + data
            if len(head) < len(BOM) and BOM.startswith(head):
                g.partial = bytearray(head)
                g.pos = base + len(data)
                return
            if head.startswith(BOM):
                g.partial = bytearray()
                data = head[len(BOM) :]
                base = g.line_start = len(BOM)
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

    # ------------------------------------------------------------------ reading done elsewhere (core.pool)

    def unread(self, logical: str) -> tuple[str, int, int, int] | None:
        """(path, offset of the first line not delivered yet, lines delivered before it, size seen) of the
        generation ``logical`` reads next, or None when a caller may not read it itself: older generations
        still pending, inside an oversized line, an alias or copy, or a reset on its way. With `advance`, a
        cold read can hand a big log's rest to worker processes (the bytes of a held partial line included)."""
        with self._lock:
            s = self._streams.get(logical)
            if s is None or getattr(s, "hold", False):
                return None
            pending = [g for g in sorted(s.gens, key=lambda g: g.current) if not g.gone and g.pos < g.size]
            if len(pending) != 1:
                return None
            g = pending[0]
            if g.skipping or g.held or g.fd is None or getattr(g, "alias", None) or getattr(g, "copy", None):
                return None
            return (g.path, g.line_start, g.lineno, g.size)

    def advance(self, path: str, start: int, end: int, lines: int) -> bool:
        """The caller read the ``lines`` complete lines of ``path`` in bytes [start, end) itself (``start`` as
        `unread` gave it): go on from ``end``. False (nothing changed) when the generation moved meanwhile."""
        with self._lock:
            for s in self._streams.values():
                for g in s.gens:
                    if g.path != path or g.gone or g.line_start != start or g.skipping or end > g.size:
                        continue
                    if g.pos < HEAD_BYTES and g.fd is not None:
                        g.head = os.pread(g.fd, HEAD_BYTES, 0)
                    g.pos = g.line_start = end
                    g.lineno += lines
                    g.partial = bytearray()
                    self._dirty = True
                    return True
            return False

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
                out.append((logical, [(g.path, g.size) for g in gens if not g.gone and g.alias is None]))
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
                snap = self._export_stream(logical, logical in full_digest)
                if isinstance(snap, str):
                    return snap
                out.append(snap)
            return out

    def export_streams(
        self, logicals: list[str], full_digest: frozenset[str] = frozenset(), *, whole_lines: bool = False
    ) -> dict[str, StreamSnap | str]:
        """`export_state` stream by stream (the persistent index stores each clean stream on its own): per
        logical path, its snapshot or why it cannot be resumed now. ``whole_lines``: each generation as of the
        start of its held partial line, whose bytes are then read again by a resumed run rather than kept."""
        with self._lock:
            reason = "sources closed" if self._closed else "file cap reached" if self._scanner.capped else None
            out: dict[str, StreamSnap | str] = {}
            for logical in logicals:
                if reason is not None or logical not in self._streams:
                    out[logical] = reason or f"{_name(logical)} is not read"
                else:
                    out[logical] = self._export_stream(logical, logical in full_digest, whole_lines)
            return out

    def _export_stream(self, logical: str, full: bool, whole_lines: bool = False) -> StreamSnap | str:
        s = self._streams[logical]
        if s.errors or s.pending_reason is not None:
            return f"{_name(logical)}: an error or a reset is pending"
        if not s.gens or set(s.seen) != {g.path for g in s.gens}:
            return f"{_name(logical)}: files and generations do not match (deleted or not yet read)"
        gens: list[GenSnap] = []
        for g in s.gens:
            if g.gone or g.held or g.farewell or g.path != (s.logical if g.current else s.rot):
                return f"{_name(g.path)}: a rotation or replacement is in progress"
            if g.copy is not None:
                return f"{_name(g.path)}: a copy of {_name(s.logical)} waits (copytruncate)"
            if g.alias is not None:  # a link read by another stream: nothing of it to keep, claimed again
                return f"{_name(g.path)}: read under another name ({_name(g.alias)})"
            snap = self._gen_snap(g, full, whole_lines)
            if snap is None:
                return f"{_name(g.path)}: cannot re-read what was read"
            gens.append(snap)
        return StreamSnap(logical, s.next_number, gens)

    @staticmethod
    def _gen_snap(g: _Gen, full: bool, whole_lines: bool = False) -> GenSnap | None:
        fd = g.fd
        opened = fd is None
        if fd is None:
            try:
                fd = _open_readonly(g.path)
            except OSError:
                return None
        pos, line_start, partial, flushed_at, sig = g.pos, g.line_start, bytes(g.partial), g.flushed_at, g.sig
        head = g.head
        if whole_lines and not g.skipping and line_start < pos:
            # the held partial line is read again on resume: no stat signature, so the file is looked at (an
            # unchanged one would otherwise never be read again from the line's start), and the head as of that
            # line's start (the reads themselves extend it)
            pos, partial, flushed_at, sig, head = line_start, b"", -1, None, head[:line_start]
        try:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != (g.dev, g.ino) or st.st_size < g.pos:
                return None
            if os.pread(fd, len(g.head), 0) != g.head:
                return None
            digests = _gen_digests(fd, pos, full)
        except OSError:
            return None
        finally:
            if opened:
                os.close(fd)
        if digests is None:
            return None
        return GenSnap(
            number=g.number, path=g.path, dev=g.dev, ino=g.ino, current=g.current, sig=sig, size=g.size,
            pos=pos, line_start=line_start, lineno=g.lineno, partial=partial, skipping=g.skipping,
            head=head, flushed_at=flushed_at, tail=digests[0], prefix=digests[1], alias=g.alias,
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
                if snap.logical not in self._streams:
                    return f"{_name(snap.logical)} is gone (deleted)"
                checked = verify_stream(snap)
                if isinstance(checked, str):
                    return checked
                seen.update(checked)
                if any(st.st_size > gs.pos for gs in snap.gens for st in (checked[gs.path],)):
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
                    g.alias = gs.alias
                    s.gens.append(g)
                    if g.alias is None:
                        self._inodes[(g.dev, g.ino)] = (s.logical, g)
                    else:
                        self._aliased = True
            self._dirty = True
            return None

    # ------------------------------------------------------------------ snapshots for other threads

    def _snapshot(self) -> None:
        stats: list[FileStat] = []
        pending = 0
        for logical in self._order:
            s = self._streams[logical]
            for g in s.gens:
                pending += _owed(g)
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


def _copy_verdict(refs: list[bytes], head: bytes) -> tuple[bool | None, bytes]:
    """`Sources._is_copy` of a file whose first bytes are ``head``."""
    if not refs or not head:
        return False, b""  # nothing in it (yet): an empty older file; looked at again once it has bytes
    undecided: bytes | None = None
    for ref in refs:
        if len(head) >= len(ref) and head[: len(ref)] == ref:
            return True, ref
        if len(head) < len(ref) and ref.startswith(head):
            if len(head) >= 64 or head.endswith(b"\n"):
                # 64 bytes alike, or whole lines byte for byte (their timestamps too): no older file does
                return True, ref
            undecided = ref if undecided is None else undecided
    return (None, undecided) if undecided is not None else (False, b"")


def _first_head(path: str, opener: Callable[[str], int] = _open_readonly) -> bytes:
    """The first ``HEAD_BYTES`` of ``path`` through a descriptor of its own from ``opener`` (closed at once);
    empty when it cannot be opened or read."""
    try:
        fd = opener(path)
    except OSError:
        return b""
    try:
        return os.pread(fd, HEAD_BYTES, 0)
    except OSError:
        return b""
    finally:
        os.close(fd)


def verify_stream(snap: StreamSnap) -> dict[str, os.stat_result] | str:
    """Whether the files at a saved stream's paths are its saved generations plus appended bytes: their stat
    results by path when they are, else why not (a generation deleted, replaced, truncated, rewritten, or a
    file at a member path that had none: a rotation while we were away)."""
    at = {g.path: g for g in snap.gens}
    rot = rotated_of(snap.logical)
    seen: dict[str, os.stat_result] = {}
    for m in [snap.logical] if rot is None else [snap.logical, rot]:
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
    missing = set(at) - set(seen)
    if missing:
        return f"{_name(sorted(missing)[0])} is not where it was read"
    st0, st1 = seen.get(snap.logical), seen.get(rot or "")
    if rot and st0 is not None and st1 is not None and st0.st_size and st0.st_ino != st1.st_ino:
        # a first look at the family would leave the older file unread, as a possible copy of the log
        # (`Sources._copy_at_start`: a short log whose few bytes every line starts with looks like one): a
        # resumed reading of it is not what a fresh one reads
        head = _first_head(snap.logical)
        if head and _copy_verdict([head], _first_head(rot))[0] is not False:
            return f"{_name(rot)} starts with what {_name(snap.logical)} holds (a fresh look takes it for a copy)"
    return seen


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
