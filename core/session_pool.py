"""Reading in parallel, across files: each transcript of a history read to its end in a worker process, its
parked session taken back as if the persistent index had stored it.

A transcript's analysis (the payload lanes, the commit check, the replay: ~85 % of a senpi history's report)
needs nothing but its own file while it is read, so a worker can read it alone: a one-file `Engine` drains it
and parks its session (`State.park`, what a report does with every finished transcript), and the parent takes
the parked session, the file's reading position, counts and problems through the index's own door
(`Engine.adopt_stored`: the parked session waits for its log lines, recordings and closes like a stored one,
`State.adopt_session`). The parent then reads every other file (logs, event recordings, sidecars, what could not
be read apart) by its polls, as a run resumed from the index does.

What the files read together decide depends on the order they are read in, and a run that took the
transcripts first met them in another order than a cold drain; what puts that back is the index's own, checked
against cold drains (`core.index.apart.settle`, which the engine is handed: this layer is below the index):
the sessions in the order a cold drain makes them, log lines paired with calls as a cold drain pairs them, and
the build evidence log lines credit. A session read
apart has no build-profile tracker (the chosen profile is in `session.profile`, as for a stored one), so it is
exact when a cold drain credits it no log line (the log is read before the transcripts, or names no session);
anything else, and the whole history is read again in this process (the settle says False). So `--jobs N` gives
the bytes `--jobs 1` gives: `tests/test_session_pool.py` checks it report for report.

What is not read apart: a transcript with a file beside it (a restart sidecar, a rotated generation), one whose
format is not a parkable one-file session (`Adapter.parkable`), a file that ends in a partial line or that the
worker could not read as the polls would; those the polls read. A pool that does not start, or a worker that
dies, leaves everything to the polls (nothing was read yet).

Below `MIN_BYTES` of transcripts the fork and the pickling cost more than they save.
"""

from __future__ import annotations

import bisect
import os
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.model import Problem
from core.pool import _real_stderr

if TYPE_CHECKING:
    from core.engine import Engine, SourceStat
    from core.pool import LogPool
    from core.sources.tail import StreamSnap
    from core.state import SessionState

MIN_BYTES = 4 * 1024 * 1024
"""Transcript bytes below which a history is read in one process."""
MIN_FILES = 2


@dataclass(slots=True)
class Apart:
    """One transcript as a worker read it: what `Engine.adopt_stored` takes for it."""

    snaps: list[StreamSnap]
    formats: dict[str, str]
    stats: list[SourceStat]
    session: SessionState
    problems: list[Problem]
    held: dict[str, tuple[int, int]]
    """Per record handler with a bound on what it holds (`pending_limit`): (records it took, the bound)."""


def candidates(engine: Engine) -> list[tuple[str, list[str], int]]:
    """The transcripts that may be read apart, in discovery order, each as (its path, the files read with it in
    discovery order, their bytes): the transcript, the files named after it (a restart sidecar `X.jsonl.<suffix>.json`,
    read right after it), and the files of another format that open with the same session header (its event
    recordings: `{"type":"session","id":…}`, the id of the transcript's own header). See the module docstring."""
    from core.agents import agent_of, sniff
    from core.formats.document import first_object
    from core.sources.discover import discover, logical_of

    paths = [str(p) for p in discover(engine.roots)]
    rank = {path: i for i, path in enumerate(paths)}
    ordered = sorted(paths)
    firsts: dict[str, Any] = {}
    by_header: dict[str, list[str]] = {}  # session id -> files of a non-transcript format opening with it
    transcripts: list[str] = []
    for path in paths:
        if logical_of(path) != path:
            continue
        obj = first_object(path)
        if obj is None:
            continue
        adapter = sniff(path, obj)
        if adapter is None or adapter.blocks:
            continue
        firsts[path] = obj
        header = obj.get("id") if obj.get("type") == "session" else None
        if adapter.parkable:
            transcripts.append(path)
            agent_of(adapter).load()  # imported here, once: the forked workers find it imported
        elif isinstance(header, str):
            by_header.setdefault(header, []).append(path)
    taken: set[str] = set()
    out: list[tuple[str, list[str], int]] = []
    for path in transcripts:
        at = bisect.bisect_right(ordered, path)
        beside = []
        while at < len(ordered) and ordered[at].startswith(path):
            beside.append(ordered[at])
            at += 1
        if any(logical_of(other) == path for other in beside):
            continue  # a rotated generation (X.jsonl.1): one stream of two files, the polls read it
        if [rank[p] for p in beside] != list(range(rank[path] + 1, rank[path] + 1 + len(beside))):
            continue  # not read one after the other in a cold drain
        obj = firsts[path]
        header = obj.get("id") if obj.get("type") == "session" else None
        recordings = by_header.get(header, []) if isinstance(header, str) else []
        group = sorted([path, *beside, *recordings], key=rank.__getitem__)
        if taken.intersection(group):
            continue  # two transcripts with one header: the polls read both
        taken.update(group)
        try:
            size = sum(os.stat(p).st_size for p in group)
        except OSError:
            continue
        out.append((path, group, size))
    return out


def read_transcript(path: str, paths: list[str]) -> bytes | None:
    """In a worker: a transcript (and the files beside it, `candidates`) read to its end by an engine of its
    own, its session parked, pickled as an `Apart`; None when that is not one parked session of the transcript
    with every file read whole (the polls read them then)."""
    from core.engine import Engine

    engine = Engine([Path(p) for p in paths], jobs=1)
    try:
        engine.drain()
        state = engine.state
        session = state.sessions.get(path)
        if (
            len(state.sessions) != 1
            or session is None
            or session.parked is None
            or engine.ignored
            or engine.sources.order() != paths
            or any(engine.adapters.get(p) is None or engine.stats.get(p) is None for p in paths)
            or engine.sources.held_partials()
            or state.problems_total != len(state.problems)
        ):
            return None
        snaps = engine.sources.export_state()
        if isinstance(snaps, str) or [snap.logical for snap in snaps] != paths:
            return None
        if session.parked != os.stat(path).st_size:
            return None  # it grew while it was read: the polls read it
        formats = {p: engine.adapters[p].name for p in paths}
        stats = [engine.stats[p] for p in paths]
        held = {
            type(handler).__qualname__: (handler.recorded, handler.pending_limit)
            for handlers in state.handlers.values()
            for handler in handlers
            if hasattr(handler, "pending_limit")
        }
        return pickle.dumps(Apart(snaps, formats, stats, session, list(state.problems), held), protocol=5)
    finally:
        engine.close()


def read_apart(engine: Engine, pool: LogPool) -> list[Apart] | None:
    """Before the first poll: the history's transcripts read in `pool`'s workers, in discovery order (None when
    there are too few to be worth it). Raises what the pool raised when it could not start or a worker died."""
    found = candidates(engine)
    if len(found) < MIN_FILES or sum(size for _, _, size in found) < MIN_BYTES:
        return None
    by_size = sorted(range(len(found)), key=lambda i: -found[i][2])  # the largest first: the workers end together
    executor = pool.executor()
    with _real_stderr():  # the workers start at the first submit
        futures = [executor.submit(read_transcript, found[i][0], found[i][1]) for i in by_size]
    results: list[bytes | None] = [None] * len(found)
    for i, future in zip(by_size, futures, strict=True):
        results[i] = future.result()
    taken = [pickle.loads(data) for data in results if data is not None]  # our own workers' bytes, not a file's
    totals: dict[str, list[int]] = {}
    for apart in taken:
        for name, (n, limit) in apart.held.items():
            total = totals.setdefault(name, [0, limit])
            total[0] += n
    if any(n >= limit for n, limit in totals.values()):
        return None  # a cold drain could hold that many at once and drop the rest: only it gives its bytes
    return taken if len(taken) >= MIN_FILES else None


@dataclass(slots=True)
class Adopted:
    """What `adopt` took: the sessions by key, and every file read apart (sidecars too)."""

    sessions: dict[str, SessionState]
    streams: list[str]


def adopt(engine: Engine, taken: list[Apart]) -> Adopted | None:
    """`taken` adopted into `engine` (before its first poll) as stored sessions: by key, or None when
    `Engine.adopt_stored` refused them (a file changed since: nothing was adopted, the polls read everything)."""
    sessions = []
    for apart in taken:
        session = apart.session
        # as the index keeps it: no analyzer a stored session does without (the build-profile tracker)
        for cls in [cls for cls in session.analyzers if not cls.in_stored_session]:
            del session.analyzers[cls]
        sessions.append(session)
    reason = engine.adopt_stored(
        [snap for a in taken for snap in a.snaps],
        {logical: name for a in taken for logical, name in a.formats.items()},
        set(),
        {stat.path: stat for a in taken for stat in a.stats},
        sessions,
        [p for a in taken for p in a.problems],
    )
    if reason is not None:
        return None
    return Adopted({s.key: s for s in sessions}, [snap.logical for a in taken for snap in a.snaps])
