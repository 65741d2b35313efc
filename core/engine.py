"""The one object a surface drives: sources -> the agents' format adapters -> state, under a lock.

The TUI calls `poll()` from a worker thread whenever the watcher wakes it; the report calls it until the
backlog is drained. Readers take `lock` while they copy what they show. The engine names no agent and no
format: a file's adapter is the first of `core.agents.ADAPTERS` that sniffs it, and what to do with the file
beyond parsing (park its session, start it over when the file is replaced, which file events are routine) is
what that adapter declares.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct, field

from core.agents import adapter_named, agent_of, sniff
from core.formats.base import Adapter, load_object
from core.formats.document import DOCUMENT_MAX_BYTES, document_on_disk, first_object, join_document, opens_document
from core.kernel.ports import Reread
from core.model import Problem
from core.pool import RANGES_PER_JOB, SPLIT_MIN_BYTES, LogPool, RangeError, split_points
from core.sources import Block, Line, Notice, Sources
from core.sources.discover import logical_of, resolve_roots
from core.sources.reread import FileReread
from core.sources.tail import StreamSnap
from core.state import PARK_IDLE_S, LogState, SessionState, State
from core.timeutil import now_ms

if TYPE_CHECKING:
    from core.session_pool import Adopted

#: Lines of a file not yet recognised are held (bounded) until one line tells its format.
SNIFF_HOLD_LINES = 50
SNIFF_HOLD_BYTES = 4 * 1024 * 1024
RESET_NOTICES = frozenset({"truncated", "replaced", "recreated", "deleted"})
#: notices after which a file is read again from its first byte (`Engine.source_resets` counts them)
RESTART_NOTICES = frozenset({"truncated", "replaced", "recreated"})
READ_CHUNK = 16 * 1024 * 1024
"""Bytes per poll of a drain (see `drain`; `core.sources.order` replays the same polls). The lines of one chunk
are alive together while they are applied: 64 MB put a 1 GB report's peak RSS at ~410 MB, 16 MB at ~340 MB."""
PARK_CHECK_S = 30.0
"""A live engine looks for sessions to park (`park_idle`) at most this often."""


class SourceStat(Struct):
    """Per-file reading statistics, for the report's `sources` and the status line."""

    path: str
    format: str | None = None
    bytes: int = 0
    lines: int = 0
    bad_lines: int = 0


class PollResult(Struct):
    lines: int = 0
    bytes: int = 0
    changed: bool = False
    #: files that got lines in this poll: the only ones a poll can have read to their end
    paths: set[str] = field(default_factory=set)


class _Pending(Struct, dict=True):
    lines: list[Line] = field(default_factory=list)
    size: int = 0


class Engine:
    def __init__(
        self,
        paths: list[Path],
        *,
        watch: bool = False,
        newest_first: bool = False,
        park_after_s: float | None = PARK_IDLE_S,
        clock: Callable[[], float] = time.time,
        jobs: int = 1,
        settle_apart: Callable[[Engine, Adopted, int], bool] | None = None,
    ) -> None:
        """``newest_first``: a budget-limited `poll` reads the most recently modified files first (a dashboard:
        the newest sessions are on screen at once, history fills in behind; see `Sources`).
        ``park_after_s``: a poll parks sessions whose transcript is read to its end and unmodified that long
        (by ``clock``, against the file's mtime; `read_all` parks every fully read one); None never parks.
        ``jobs``: worker processes a report's drain reads the transcripts with before anything else
        (`core.session_pool`), and a big log's rest once it is the only file left (`core.pool`); 1 reads
        everything in this process (the same report either way). ``settle_apart``: what puts a drain that read
        the transcripts apart in a cold drain's order (`core.index.apart.settle`, or False: read it all again);
        without it they are not read apart."""
        self.jobs = max(1, jobs)
        self._log_pool: LogPool | None = None
        self._apart_tried = False  # the transcripts were offered to the pool once (`_read_sessions_apart`)
        self._settle_apart = settle_apart
        self._park_after = park_after_s
        self._clock = clock
        self._park_checked = float("-inf")
        self.paths = [Path(p) for p in paths]
        self.roots = resolve_roots(self.paths)
        self.sources = Sources(self.roots, newest_first=newest_first, blocks=True)
        self.reread: Reread = FileReread()
        self.state = State(self.reread)
        self.lock = threading.RLock()
        self._polling = threading.Lock()  # held for a whole poll: a snapshot never sees a read half applied
        self.adapters: dict[str, Adapter] = {}
        self.stats: dict[str, SourceStat] = {}
        self._pending: dict[str, _Pending] = {}
        self.ignored: set[str] = set()
        self.rotations = 0
        self._partials_reported: set[tuple[str, int, int]] = set()
        self._documents: set[str] = set()  # JSON documents already read whole: their generation has nothing more
        self.total_lines = 0
        self.total_bytes = 0
        self.resets = 0  # rotations, truncations, replacements, deletions seen
        #: files read again from their first byte, by (format, notice kind): truncated, replaced, recreated; a
        #: format's routine rewrites (mux) are not counted (`continuity_source_resets_total`)
        self.source_resets: Counter[tuple[str, str]] = Counter()
        #: called with a file's logical path, under the lock, just before its session is forgotten to be read
        #: again from the start (`State.reset_session`): what it counted can be kept (`core.report.openmetrics`)
        self.reset_listeners: list[Callable[[str], None]] = []
        self._first_poll: Callable[[], object] | None = None
        self._after_poll: Callable[[PollResult], object] | None = None
        self.polls = 0
        if watch:
            self.sources.start_watching()

    # ------------------------------------------------------------------ reading
    def poll(self, max_bytes: int | None = None) -> PollResult:
        """Read what is new everywhere and apply it. Safe to call from a worker thread."""
        with self._polling:
            if self._first_poll is not None:
                first, self._first_poll = self._first_poll, None
                first()
            self.polls += 1
            result = self._poll(max_bytes)
            if self._after_poll is not None:
                self._after_poll(result)
            return result

    def before_first_poll(self, fn: Callable[[], object]) -> None:
        """Run `fn` at the start of the first `poll`, in the polling thread (the dashboard loads its persistent
        index there: its first frame is drawn at once, and the history appears with the first poll)."""
        self._first_poll = fn

    def _poll(self, max_bytes: int | None) -> PollResult:
        if self.jobs > 1 and self.polls > 1:
            self._read_log_apart()
        batches = self.sources.poll(max_bytes)
        result = PollResult()
        with self.lock:
            for batch in batches:
                # a deletion comes after the lines it travels with: they are the rest of the deleted file
                for notice in batch.notices:
                    if notice.kind != "deleted":
                        self._notice(batch.logical, notice)
                    result.changed = True
                if batch.lines:
                    self._lines(batch.path, batch.logical, batch.lines)
                    result.paths.add(batch.path)
                    for item in batch.lines:
                        if isinstance(item, Block):
                            result.lines += item.lines
                            result.bytes += len(item.data)
                        else:
                            result.lines += 1
                            result.bytes += len(item.data) + 1
                    result.changed = True
                for notice in batch.notices:
                    if notice.kind == "deleted":
                        self._notice(batch.logical, notice)
            self.state.polled()  # (what a handler put off until the poll's records were in: Claude Code's verdicts)
            for key, end in self.state.take_wakes():  # a recording arrived for a parked session's turn
                self._unpark(key, end)
            if self._park_after is not None and self._clock() - self._park_checked >= PARK_CHECK_S:
                self.park_idle(self._park_after)
            elif self._park_after is not None and result.paths:
                # a file this poll read to its end that is long idle (history a backfill just finished) is
                # parked now, not at the next check: the persistent index stores it with this poll
                self.park_idle(self._park_after, only=result.paths, check=False)
            self.total_lines += result.lines
            self.total_bytes += result.bytes
        return result

    def drain(self, chunk: int = READ_CHUNK) -> None:
        """Read until nothing is left (the report; tests).

        A poll can consume a whole chunk and complete no line (inside a line longer than ``chunk``, e.g. an
        oversized one being skipped), so "no lines" alone does not mean done: stop when the bytes left on disk
        stop shrinking (all read, or only unreadable files left).
        """
        self.read_all(chunk)
        self.finish_pending()
        self.report_partials()

    def read_all(self, chunk: int = READ_CHUNK) -> None:
        """The reading half of `drain`: poll until nothing is left, then settle the order (see `settle_order`)."""
        left: int | None = None
        apart = None
        if self.jobs > 1 and self.polls == 0:
            apart = self._read_sessions_apart()
            self.poll(0)  # discovery only: a lone big log is then read apart from its first byte
        while True:
            result = self.poll(chunk)
            if self._park_after is not None and result.paths:
                # nothing more is read for a file read to its end: park it now (only this poll's files can
                # have just reached their end; a 1 GB history polls ~60 times over ~3,000 files)
                self.park_idle(0.0, only=result.paths)
            now = self.sources.pending_bytes()
            if not result.lines and not result.changed and (now == 0 or (left is not None and now >= left)):
                break
            left = now
        if self._park_after is not None:
            self.park_idle(0.0)  # whatever a poll's paths did not name (belt and braces: one full pass)
        if apart is not None and self._settle_apart is not None:
            with self.lock:
                settled = self._settle_apart(self, apart, chunk)
            if not settled:  # this run cannot give what a cold drain gives: read it all again, in this process
                self._start_over()
                self.read_all(chunk)
                return
        self.settle_order()

    def _read_sessions_apart(self) -> Adopted | None:
        """Before the first poll of a report's drain: every transcript that can be read alone read in the
        process pool and adopted as parked sessions (`core.session_pool`); the adopted sessions by key, or
        None when the polls read everything. Only a plain cold drain does it (no persistent index, no watcher,
        files read round-robin): what the pool gives is then put in a cold drain's order after it."""
        if (
            self._apart_tried
            or self._settle_apart is None
            or self._after_poll is not None
            or self._first_poll is not None
            or self.stats
            or self.sources.newest_first
        ):
            return None
        self._apart_tried = True
        from core.session_pool import adopt, read_apart

        if self._log_pool is None:
            self._log_pool = LogPool(self.jobs)
        try:
            taken = read_apart(self, self._log_pool)
        except Exception:
            # no pool in this process (a worker could not start, or died): nothing was read, the polls read
            # everything, and the pool is not tried again
            self._log_pool.close()
            self.jobs = 1
            return None
        if taken is None:
            return None
        return adopt(self, taken)

    def start_over(self) -> None:
        """Forget everything read, between two polls: the next poll reads every file again from its first byte,
        as a first start does (a dashboard whose restored index would not be exact, `core.index.Index`)."""
        self._start_over()

    def _start_over(self) -> None:
        """Forget everything read: the next `read_all` reads every file again from its first byte."""
        with self.lock:
            watching = self.sources.watching
            self.sources.close()
            self.sources = Sources(self.roots, newest_first=self.sources.newest_first, blocks=True)
            if watching:
                self.sources.start_watching()
            self.state = State(self.reread)
            self.adapters = {}
            self.stats = {}
            self._pending = {}
            self.ignored = set()
            self.rotations = 0
            self._partials_reported = set()
            self._documents = set()
            self.total_lines = self.total_bytes = self.resets = 0
            self.source_resets = Counter()
            self.polls = 0
            self._park_checked = float("-inf")

    def settle_order(self) -> None:
        """Put per-file sources and problems in discovery order, whatever order the polls read the files in.

        A drain reads files round-robin in budget-sized polls, so the arrival order of sources and problems is
        an artefact of the budget; a run resumed from the persistent index (`core.index`) reads only what it
        did not store, later. Sorting both by the file's place in discovery order (stable: a file's own
        problems keep their order) makes the two runs agree. Problems are left alone once more arrived than
        are kept: which ones were dropped depended on the arrival order.
        """
        with self.lock:
            rank = {logical: i for i, logical in enumerate(self.sources.order())}
            last = len(rank)

            def place(path: str) -> tuple[int, int]:
                logical = logical_of(path)
                return (rank.get(logical, last), 1 if path == logical else 0)  # X.log.1 (older) before X.log

            self.stats = dict(sorted(self.stats.items(), key=lambda item: place(item[0])))
            problems = self.state.problems
            if self.state.problems_total <= len(problems):
                ordered = sorted(problems, key=lambda p: place(p.path)[0])
                problems.clear()
                problems.extend(ordered)

    def report_partials(self) -> None:
        """A snapshot names every unterminated last line: a torn write must be shown, never silently absent.

        Live, such bytes are a write in progress and simply wait; only a snapshot (report, check) calls this.
        """
        with self.lock:
            for key, problem in self._partial_problems():
                self._partials_reported.add(key)
                self.state.add_problem(problem)

    def pending_problems(self) -> list[Problem]:
        """What a snapshot would count as problems that the live state still holds back, without counting them:
        unterminated last lines (`report_partials`) and lines of files no format recognised yet
        (`finish_pending`). The dashboard shows them as pending and its export includes them, so its count
        equals `report`'s on the same files (it said 5 where `report` said 6: an incomplete last line)."""
        with self.lock:
            out = [problem for _key, problem in self._partial_problems()]
            for path, pending in self._pending.items():
                for line in pending.lines:
                    obj = load_object(path, line.lineno, line.offset, line.data)
                    reason = obj.error if isinstance(obj, Problem) else "no format this tool reads matched it"
                    out.append(
                        Problem(path, line.lineno, line.offset, f"{reason} (file format not recognised)", now_ms())
                    )
            return out

    def pending_count(self) -> int:
        """`len(pending_problems())` without building them (the status line asks on every snapshot)."""
        with self.lock:
            return len(self._partial_problems()) + sum(len(p.lines) for p in self._pending.values())

    def _partial_problems(self) -> list[tuple[tuple[str, int, int], Problem]]:
        """Held partial lines not reported yet, each with its key in `_partials_reported` (call with the lock)."""
        out = []
        for held in self.sources.held_partials():
            key = (held.path, held.offset, held.size)
            # a JSON document (mux partial.json) needs no final newline: it was read whole, not torn
            if held.path in self._documents or key in self._partials_reported:
                continue
            out.append(
                (
                    key,
                    Problem(
                        held.path,
                        held.lineno,
                        held.offset,
                        f"incomplete last line: {held.size} bytes without a newline (a write in "
                        "progress or a torn write); not read",
                        now_ms(),
                    ),
                )
            )
        return out

    def finish_pending(self) -> None:
        """Files never recognised: their held lines become problems (nothing is silently dropped)."""
        with self.lock:
            for path, pending in list(self._pending.items()):
                whole = document_on_disk(path, pending.lines)  # a document still being written: read it whole
                if whole is not None:
                    del self._pending[path]
                    self._lines(path, path, [whole])
                    self._documents.add(path)
                    continue
                for line in pending.lines:
                    self._unrecognised(path, line)
                pending.lines.clear()

    def wait(self, timeout: float) -> bool:
        return self.sources.wait(timeout)

    def wake(self) -> None:
        """A `wait` in another thread returns now (the dashboard quits: its ingest worker, cancelled, must not
        sleep out its heartbeat: that was most of a quit's 0.3-0.6 s)."""
        self.sources.wake()

    # ------------------------------------------------------------------ what the surfaces read (tui.view.EngineView)
    @property
    def park_after(self) -> float | None:
        """Parks sessions unmodified this long (see `__init__`); None: never parks."""
        return self._park_after

    @property
    def files_generation(self) -> int:
        """Bumps when a file is found, replaced or lost (the dashboard's cheap "did anything move" mark)."""
        return self.sources.generation

    def file_count(self) -> int:
        """Files being read (without building the whole file list)."""
        return self.sources.file_count()

    def pending_bytes(self) -> int:
        """Bytes on disk not read yet."""
        return self.sources.pending_bytes()

    # ------------------------------------------------------------------ parking (State.park)
    def park_idle(self, min_idle_s: float, only: set[str] | None = None, *, check: bool = True) -> int:
        """Park the session of every transcript read to its end (no held partial line) whose file has not been
        modified for `min_idle_s` (by the engine's clock); returns how many were parked now. A file read in
        budget-sized chunks is parked only once its last chunk is in. `only`: look at these paths alone.
        `check`: this is the periodic look (`PARK_CHECK_S`), not one at the files a poll just read."""
        with self.lock:
            now = self._clock()
            if check:
                self._park_checked = now
            held = {partial.path for partial in self.sources.held_partials()}
            parked = 0
            for stat in self.sources.files:
                path = stat.path
                if only is not None and path not in only:
                    continue
                adapter = self.adapters.get(stat.logical)
                if adapter is None or not adapter.parkable or path != stat.logical:
                    continue
                if not stat.exists or stat.size is None or stat.bytes_read != stat.size or path in held:
                    continue
                if path not in self.state.sessions or self.state.is_parked(path):
                    continue
                if min_idle_s > 0:
                    try:
                        if now - os.stat(path).st_mtime < min_idle_s:
                            continue
                    except OSError:
                        continue
                parked += self.state.park(path, stat.size)
            return parked

    def _unpark(self, key: str, end: int) -> None:
        """Rebuild a parked session from its file's first `end` bytes (`State.unpark`)."""
        adapter = self.adapters.get(key)
        if adapter is not None:
            self.state.unpark(key, adapter.parse, end, self.sources.max_line_bytes)

    # ------------------------------------------------------------------ the persistent index (core.index)
    def after_each_poll(self, fn: Callable[[PollResult], object] | None) -> None:
        """Run `fn` at the end of every `poll`, in the polling thread, before the next poll can start (the
        persistent index writes what the poll read there: a consistent point, and no extra thread)."""
        self._after_poll = fn

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """Hold off polls (waiting for one in progress to finish) and readers: a consistent point to look at
        the tailer and the state together. The tailer's offsets move in `Sources.poll`, before the engine
        applies the lines under `lock`; a look in between would see offsets past lines not yet applied."""
        with self._polling, self.lock:
            yield

    def adopt_stored(
        self,
        streams: list[StreamSnap],
        adapters: dict[str, str],
        ignored: set[str],
        stats: dict[str, SourceStat],
        sessions: list[SessionState],
        problems: list[Problem],
        log: LogState | None = None,
    ) -> str | None:
        """Before the first poll: take what the persistent index stored for some files (their reading
        positions, formats, counts, problems, the log lines read from them, and the parked sessions they hold)
        instead of reading them. Every other file is read from its start. None when adopted, else why not
        (nothing changed)."""
        by_logical: dict[str, Adapter] = {}
        for logical, name in adapters.items():
            adapter = adapter_named(name)
            if adapter is None:
                return f"{name}: a format the index used is no longer registered"
            by_logical[logical] = adapter
        with self.lock:
            reason = self.sources.restore_state(streams)
            if reason is not None:
                return reason
            self.adapters.update(by_logical)
            self.ignored |= ignored
            self.stats.update(stats)
            if log is not None:
                self.state.log = log  # first, as a cold read meets the logs before the transcripts
            for session in sessions:
                self.state.adopt_session(session)
            for problem in problems:
                self.state.add_problem(problem)
            self.total_lines += sum(stat.lines for stat in stats.values())
            self.total_bytes += sum(stat.bytes for stat in stats.values())
        return None

    def rebuild(self, key: str) -> None:
        """Rebuild a parked session from its file now (`State.unpark`), then park it again when it is read to
        its end (the persistent index: a stored session whose restart sidecar changed)."""
        with self.lock:
            session = self.state.sessions.get(key)
            if session is None or session.parked is None:
                return
            end = session.parked
            self._unpark(key, end)
            self.state.park(key, end)

    def close(self) -> None:
        if self._log_pool is not None:
            self._log_pool.close()
            self._log_pool = None
        self.sources.close()

    # ------------------------------------------------------------------ a big log read apart (core.pool)
    def _presniff(self, logical: str, path: str) -> Adapter | None:
        """The format of a file nothing was read from, told by its first line as `_sniff` tells it when that
        line is a JSON object (else None: the polls sniff it, with everything their rules hold)."""
        obj = first_object(path)
        if obj is None:
            return None
        adapter = sniff(path, obj)
        if adapter is None or not adapter.blocks:
            return None
        self.adapters[logical] = adapter
        self._stat(path).format = adapter.name
        return adapter

    def _read_log_apart(self) -> None:
        """When one log is the only file with bytes left and enough of them, read its complete lines with the
        process pool, range by range, and take them back in file order (`State.apply_range`): what polls would
        have applied one block after another (see `core.pool`). Anything unexpected: the polls read it."""
        left = [f for f in self.sources.files if f.exists and f.size is not None and f.bytes_read < f.size]
        if len(left) != 1:
            return
        logical = left[0].logical
        if logical in self._pending or logical in self._documents or logical in self.ignored:
            return
        unread = self.sources.unread(logical)
        if unread is None:
            return
        path, start, lineno, size = unread
        adapter = self.adapters.get(logical)
        if adapter is None and start == 0 and size >= SPLIT_MIN_BYTES:
            adapter = self._presniff(logical, path)
        if adapter is None or not adapter.blocks:
            return
        if size - start < SPLIT_MIN_BYTES or self.state.is_parked(path):
            return
        end = _last_line_end(path, start, size)
        if end - start < SPLIT_MIN_BYTES:
            return
        if self._log_pool is None:
            self._log_pool = LogPool(self.jobs)
        ranges = split_points(path, start, end, self.jobs * RANGES_PER_JOB)
        try:
            futures = self._log_pool.map_ranges(adapter.name, path, ranges, self.sources.max_line_bytes)
        except Exception:
            self._no_pool()
            return
        agent = agent_of(adapter)
        base = lineno
        try:
            # each range is taken back as soon as it and every range before it are read, while the workers
            # parse the next ones: only the last ranges' merge is left after the parse (the 1.1M-line log's
            # merge is ~0.35 s of CPU, once all of it after the workers)
            for (a, b), future in zip(ranges, futures, strict=True):
                try:
                    part = future.result()
                except RangeError:
                    return  # a line the tailer must read itself (over the size limit): the polls read from `a`
                except Exception:
                    self._no_pool()
                    return
                if part.end != b:
                    return  # the file changed while it was read: the polls see what happened, from `a`
                with self.lock:
                    if not self.sources.advance(path, a, b, part.lines):
                        return
                    stat = self._stat(path)
                    stat.format = stat.format or adapter.name
                    for problem in part.problems:
                        if problem.ts_ms is None:
                            problem.ts_ms = now_ms()
                    self.state.apply_range(part, agent, base)
                    base += part.lines
                    stat.lines += part.lines
                    stat.bytes += part.end - part.start
                    stat.bad_lines += part.bad_lines
                    self.total_lines += part.lines
                    self.total_bytes += part.end - part.start
        finally:
            for future in futures:
                future.cancel()  # what is left after a range the polls read instead (running ones finish unread)

    def _no_pool(self) -> None:
        """No pool in this process (a worker could not start, or died): the polls read the rest, and the pool is
        not tried again."""
        if self._log_pool is not None:
            self._log_pool.close()
        self.jobs = 1

    # ------------------------------------------------------------------ internals
    def _routine(self, logical: str) -> frozenset[str]:
        adapter = self.adapters.get(logical)
        return adapter.routine_notices if adapter is not None else frozenset()

    def _stat(self, path: str) -> SourceStat:
        stat = self.stats.get(path)
        if stat is None:
            stat = self.stats[path] = SourceStat(path)
        return stat

    def _notice(self, logical: str, notice: Notice) -> None:
        # formats whose writer rewrites or removes the file as its normal write path (mux) say which notices
        # are routine for them; those are not problems
        if notice.kind == "rotated" or notice.kind in RESET_NOTICES:
            self.resets += 1
        if notice.kind == "rotated":
            self.rotations += 1  # the normal life of session.log: counted, not a problem
        elif notice.kind not in self._routine(logical):
            self.state.add_problem(Problem(notice.path, notice.lineno, notice.offset, notice.message, now_ms()))
        if notice.kind == "oversized_line":
            self._stat(notice.path).bad_lines += 1
        if notice.kind in RESET_NOTICES:
            self._documents.discard(logical)
            held = self._pending.get(logical)
            if held is not None and held.lines and opens_document(held.lines[0]) and notice.kind != "deleted":
                del self._pending[logical]  # an unfinished version of a document its writer has superseded
            adapter = self.adapters.get(logical)
            if notice.kind in RESTART_NOTICES and notice.kind not in self._routine(logical):
                stat = self.stats.get(notice.path) or self.stats.get(logical)
                fmt = (stat.format if stat is not None else None) or (adapter.name if adapter is not None else None)
                self.source_resets[(fmt or "unknown", notice.kind)] += 1
            if adapter is not None and adapter.resets_on_replace:
                for listener in self.reset_listeners:
                    listener(logical)
                self.state.reset_session(logical)
            if notice.kind != "deleted":
                self.adapters.pop(logical, None)

    def _lines(self, path: str, logical: str, items: list[Line | Block]) -> None:
        stat = self._stat(path)
        if logical in self._documents:
            return  # the tail of a document already read whole (its closing line, flushed when it was replaced)
        adapter = self.adapters.get(logical)
        lines: list[Line | Block]
        if adapter is None:
            if logical in self.ignored:
                _count(stat, items)  # a file of no format this tool reads: counted, never parsed
                return
            # the format is told by the first line that is a JSON object: only the lines up to it are cut out of
            # their blocks (a 16 MiB first poll of a big log stays in blocks)
            head, tail = _up_to_first_object(path, items)
            adapter, sniffed = self._sniff(path, logical, head)
            if adapter is None:
                _count(stat, tail)  # the rest of a file just ignored (else nothing: no line decoded at all)
                return
            lines = [*sniffed, *tail]
            stat.format = adapter.name
        else:
            lines = items
            if stat.format is None:
                stat.format = adapter.name
        if not adapter.blocks and any(isinstance(item, Block) for item in lines):
            lines = list(split_blocks(lines))
        if lines and self.state.is_parked(path):
            self._unpark(path, lines[0].offset)  # its file grew: rebuild it before the new lines extend it
        apply = self.state.apply
        agent = agent_of(adapter)
        parse = adapter.parse
        nbytes = 0
        for line in lines:  # the hot loop of a backfill: per-line (or per-block) work only
            data = line.data
            if isinstance(line, Block):
                stat.lines += line.lines
                nbytes += len(data)
                block = adapter.parse_block(path, line.lineno, line.offset, data)
                for problem in block.problems:
                    stat.bad_lines += 1
                    if problem.ts_ms is None:
                        problem.ts_ms = now_ms()
                self.state.apply_block(block, agent)
                continue
            stat.lines += 1
            nbytes += len(data) + 1
            if not data or data.isspace():  # == not data.strip(), without copying the line
                continue
            for record in parse(path, line.lineno, line.offset, data):
                if isinstance(record, Problem):
                    stat.bad_lines += 1
                    if record.ts_ms is None:
                        record.ts_ms = now_ms()
                apply(record, agent)
        stat.bytes += nbytes

    def _sniff(self, path: str, logical: str, lines: list[Line]) -> tuple[Adapter | None, list[Line]]:
        if logical in self.ignored:
            stat = self._stat(path)
            stat.lines += len(lines)
            stat.bytes += sum(len(line.data) + 1 for line in lines)
            return None, []
        pending = self._pending.setdefault(logical, _Pending())
        held = pending.lines + lines
        if held and opens_document(held[0]):
            return self._sniff_document(path, logical, held)
        for line in held:
            obj = load_object(path, line.lineno, line.offset, line.data)
            if isinstance(obj, Problem):
                continue
            del self._pending[logical]
            adapter = sniff(path, obj)
            if adapter is not None:
                self.adapters[logical] = adapter
                return adapter, held
            # a valid JSON object of no known format: the file is not ours; say so once
            self.ignored.add(logical)
            self.state.add_problem(
                Problem(path, line.lineno, line.offset, "not a format this tool reads; file ignored", now_ms())
            )
            return self._sniff(path, logical, held)
        self._hold(path, pending, held, too_many=len(held) > SNIFF_HOLD_LINES, limit=SNIFF_HOLD_BYTES)
        return None, []

    def _sniff_document(self, path: str, logical: str, held: list[Line]) -> tuple[Adapter | None, list[Line]]:
        """A pretty-printed JSON document (`core.formats.document`): held until its lines decode together,
        then sniffed and parsed as one line."""
        whole = join_document(held)
        if whole is not None:
            del self._pending[logical]
            self._documents.add(logical)
            return self._sniff(path, logical, [whole])
        self._hold(path, self._pending[logical], held, too_many=False, limit=DOCUMENT_MAX_BYTES)
        return None, []

    def _hold(self, path: str, pending: _Pending, held: list[Line], *, too_many: bool, limit: int) -> None:
        """Keep a file's lines while its format is unknown, up to a bound; past it, give up on them: every held
        line is counted and reported as unrecognised (nothing is silently dropped)."""
        pending.lines = held
        pending.size = sum(len(line.data) for line in held)
        if too_many or pending.size > limit:
            stat = self._stat(path)
            for line in held:
                stat.lines += 1
                stat.bytes += len(line.data) + 1
                if line.data.strip():
                    self._unrecognised(path, line)
            pending.lines = []
            pending.size = 0

    def _unrecognised(self, path: str, line: Line) -> None:
        """A line held while the file's format was unknown, and never recognised: say why it is bad."""
        obj = load_object(path, line.lineno, line.offset, line.data)
        reason = obj.error if isinstance(obj, Problem) else "no format this tool reads matched it"
        self._problem(path, line, f"{reason} (file format not recognised)")

    def _problem(self, path: str, line: Line, reason: str) -> None:
        self._stat(path).bad_lines += 1
        self.state.add_problem(Problem(path, line.lineno, line.offset, reason, now_ms()))


def _last_line_end(path: str, start: int, size: int) -> int:
    """The offset just after the last newline in [start, size) of `path` (start when there is none)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        end = size
        while end > start:
            at = max(start, end - 65_536)
            window = os.pread(fd, end - at, at)
            nl = window.rfind(b"\n")
            if nl >= 0:
                return at + nl + 1
            end = at
        return start
    finally:
        os.close(fd)


def _count(stat: SourceStat, items: list[Line | Block]) -> None:
    for item in items:
        if isinstance(item, Block):
            stat.lines += item.lines
            stat.bytes += len(item.data)
        else:
            stat.lines += 1
            stat.bytes += len(item.data) + 1


def _up_to_first_object(path: str, items: list[Line | Block]) -> tuple[list[Line], list[Line | Block]]:
    """(the lines up to and including the first that decodes as a JSON object, the items after it): blocks
    are cut only as far as that line; without such a line, every line and nothing after."""
    head: list[Line] = []
    for i, item in enumerate(items):
        if not isinstance(item, Block):
            head.append(item)
            if not isinstance(load_object(path, item.lineno, item.offset, item.data), Problem):
                return head, items[i + 1 :]
            continue
        lineno, offset, data = item.lineno, item.offset, item.data
        pos = 0
        while pos < len(data):
            end = data.index(b"\n", pos)
            line = Line(lineno, offset + pos, data[pos:end])
            head.append(line)
            lineno += 1
            pos = end + 1
            if not isinstance(load_object(path, line.lineno, line.offset, line.data), Problem):
                rest: list[Line | Block] = []
                if pos < len(data):
                    rest.append(Block(lineno, offset + pos, data[pos:], item.lines - (lineno - item.lineno)))
                return head, [*rest, *items[i + 1 :]]
    return head, []


def split_blocks(items: list[Line | Block]) -> list[Line]:
    """Lines, with every `Block` cut back into its lines (for a format that reads one line at a time)."""
    out: list[Line] = []
    for item in items:
        if not isinstance(item, Block):
            out.append(item)
            continue
        lineno, offset = item.lineno, item.offset
        parts = item.data.split(b"\n")
        parts.pop()
        for data in parts:
            out.append(Line(lineno, offset, data))
            lineno += 1
            offset += len(data) + 1
    return out
