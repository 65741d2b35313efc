"""Reading in parallel: one large log split at line boundaries across worker processes, aggregates merged.

A log is read in order, and everything it feeds is order-sensitive (streaks, the peak, attribution, the rows'
order), so the split is of the *work*, not of the order: each worker parses one byte range of the file (ranges
cut at newlines) into its own columns and aggregates (`parse_range`), and the engine takes the ranges back in
file order (`State.apply_range`): columns are appended with their codes translated into the state's
vocabularies and their line numbers moved by the lines before the range, counts add, and streaks join at the
seams (`LogStats.merge`). The result is the state a one-process read of the same lines builds;
`tests/test_pool.py` checks it report for report.

When: during a cold read, once the log is the only file with bytes left to read (a history's transcripts come
first in a cold read's round-robin and are done within its first polls), so what is read in parallel arrives in
the same place of the reading order as it would one poll at a time. Below `SPLIT_MIN_BYTES` a pool costs more
than it saves (the workers fork, ~10 ms each).
"""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from core.kernel.logcols import LogColumns
from core.kernel.logpart import LogPart
from core.kernel.stats import LogStats
from core.model import Problem

if TYPE_CHECKING:
    from concurrent.futures import Executor

SPLIT_MIN_BYTES = 32 * 1024 * 1024
"""A log with less than this left to read is read in one process."""
RANGES_PER_JOB = 4
"""Ranges per worker: more than one lets the engine take the first back while the last are still parsed (it
merges each range as soon as the ranges before it are in: with 4 a worker, only the last two ranges' merge,
~1/4 of it, is left once the workers are done; a range costs its worker ~1 ms more)."""
WORKER_MODULES = ("core.pool", "core.agents", "core.agents.senpi.formats.logs", "core.agents.senpi.formats.typed_log")
"""What `parse_range` imports in a worker (preloaded by a fork server)."""
READ_BLOCK = 1 << 20
"""Bytes a worker hands its adapter at a time (the tailer's read size: the typed decoder's sweet spot)."""


def default_jobs() -> int:
    """The number of cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class RangeError(Exception):
    """A range could not be read as the tailer would have (a line over the size limit): read it in one process."""


def parse_range(adapter_name: str, path: str, start: int, end: int, max_line_bytes: int) -> LogPart:
    """Read bytes [start, end) of `path` (whole lines: `end` is just after a newline) with the named adapter's
    `parse_block`, into columns and aggregates of the range alone."""
    from core.agents import adapter_named

    adapter = adapter_named(adapter_name)
    if adapter is None or not adapter.blocks:
        raise RangeError(f"{adapter_name}: not a block adapter")
    cols = LogColumns()
    stats = LogStats(rows=cols.continuity)
    other: dict[str, int] = {}
    problems: list[Problem] = []
    named: Counter[str] = Counter()
    lines = bad = 0
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        pos = start  # the next byte to read
        carry, carry_at = b"", start  # an unfinished line and where it starts
        while pos < end:
            chunk = os.pread(fd, min(READ_BLOCK, end - pos), pos)
            if not chunk:
                break  # the file shrank under us: `end` says how far this got, the engine reads the rest
            pos += len(chunk)
            data = carry + chunk
            cut = data.rfind(b"\n") + 1
            block, carry, at = data[:cut], data[cut:], carry_at
            carry_at += cut
            if len(carry) > max_line_bytes or _has_long_line(block, max_line_bytes):
                raise RangeError(f"{path}: a line over {max_line_bytes} bytes")
            if not block:
                continue
            part = adapter.parse_block(path, lines + 1, at, block)
            lines += block.count(b"\n")
            cols.continuity.append_block(part)
            cols.closes.append_block(part)
            stats.add_block(part)
            stats.add_closes(part.close_reasons)
            for event, n in part.other.items():
                other[event] = other.get(event, 0) + n
            bad += len(part.problems)
            problems.extend(part.problems)
            for ids in (part.sessions, part.close_sessions):
                if ids is not None:
                    named.update(i for i in ids if i is not None)
    finally:
        os.close(fd)
    n, m = len(cols.continuity), len(cols.closes)
    stats.rows = None  # the columns travel as BLOBs
    return LogPart(
        start=start,
        end=carry_at,
        lines=lines,
        bad_lines=bad,
        continuity=cols.continuity.chunk_blobs(0, n),
        continuity_extras=cols.continuity.chunk_extras(0, n),
        closes=cols.closes.chunk_blobs(0, m),
        closes_extras=cols.closes.chunk_extras(0, m),
        vocabularies=cols.vocabularies(),
        stats=stats,
        other=other,
        problems=problems,
        named=named,
    )


def _has_long_line(block: bytes, limit: int) -> bool:
    """Whether a line of `block` (complete lines) is longer than `limit` without its newline: the tailer skips
    such a line with a notice, so the range is the polls'. Only the first line can be, when the limit is at
    least a read (every other line lies inside one `READ_BLOCK` read); the carry check alone missed a line whose
    last read took it past the limit (a 64.5 MiB line was parsed here as a line, and skipped by the tailer)."""
    if len(block) <= limit:
        return False
    if block.find(b"\n") > limit:
        return True
    return limit < READ_BLOCK and max(map(len, block.split(b"\n"))) > limit


def split_points(path: str, start: int, end: int, parts: int) -> list[tuple[int, int]]:
    """[start, end) cut into about `parts` ranges, each ending just after a newline (`end` must be one too)."""
    if parts <= 1 or end - start < 2 * READ_BLOCK:
        return [(start, end)]
    step = (end - start) // parts
    cuts = [start]
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        for i in range(1, parts):
            at = start + i * step
            while at < end:
                piece = os.pread(fd, 64 * 1024, at)
                nl = piece.find(b"\n")
                if nl >= 0:
                    at += nl + 1
                    break
                if not piece:
                    at = end
                    break
                at += len(piece)
            if cuts[-1] < at < end:
                cuts.append(at)
    finally:
        os.close(fd)
    cuts.append(end)
    return list(pairwise(cuts))


@contextmanager
def _real_stderr() -> Iterator[None]:
    """`sys.stderr` as the process's own while multiprocessing starts its helpers: it passes
    `sys.stderr.fileno()` to the resource tracker it spawns, and under Textual (the dashboard) `sys.stderr` is
    a capture whose fileno is -1 (the spawn raised "bad value(s) in fds_to_keep" and the dashboard stopped
    reading the log it was handing over)."""
    err = sys.stderr
    try:
        valid = err is None or err.fileno() >= 0
    except (AttributeError, OSError, ValueError):
        valid = True  # multiprocessing passes no descriptor then
    if valid or sys.__stderr__ is None:
        yield
        return
    sys.stderr = sys.__stderr__
    try:
        yield
    finally:
        if sys.stderr is sys.__stderr__:
            sys.stderr = err


class LogPool:
    """A process pool for log ranges, made on first use and shut down with the engine."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self._executor: Executor | None = None

    def executor(self) -> Executor:
        if self._executor is None:
            import multiprocessing  # here: multiprocessing and its imports cost a one-line report ~12 ms
            from concurrent.futures import ProcessPoolExecutor

            # fork is the cheapest start (nothing to import again), and safe in a process with one thread (the
            # report); a process with threads (the dashboard) starts its workers from a fork server instead
            methods = multiprocessing.get_all_start_methods()
            if "fork" in methods and threading.active_count() == 1:
                method = "fork"
            else:
                method = "forkserver" if "forkserver" in methods else "spawn"
            context = multiprocessing.get_context(method)
            if method == "forkserver":
                # the fork server imports what a worker runs once, before it forks them: each worker otherwise
                # imported the pool, the agents, the adapter, msgspec and the decoder itself while the dashboard
                # waited for its first range ("__main__" is the default preload, kept)
                context.set_forkserver_preload(["__main__", *WORKER_MODULES])
            with _real_stderr():
                self._executor = ProcessPoolExecutor(self.jobs, mp_context=context)
        return self._executor

    def map_ranges(self, adapter_name: str, path: str, ranges: list[tuple[int, int]], max_line: int) -> list[Any]:
        """Futures of `parse_range` over `ranges`, in order."""
        pool = self.executor()
        with _real_stderr():  # the workers start at the first submit
            return [pool.submit(parse_range, adapter_name, path, a, b, max_line) for a, b in ranges]

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
