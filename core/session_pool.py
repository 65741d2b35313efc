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
import copyreg
import dataclasses
import gc
import io
import os
import sys
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec import Struct

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


class Apart(Struct):
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
        return dumps(Apart(snaps, formats, stats, session, list(state.problems), held))
    finally:
        engine.close()


# ---------------------------------------------------------------------------------------------- pickling
# A parked session is ~60,000 small objects, most of them slotted dataclasses (Where, EntryNode, Turn, CommitInfo,
# Decision...). pickle stores each through the `__getstate__`/`__setstate__` that `dataclass(slots=True)` writes,
# Python functions that call `dataclasses.fields()` per object: a third of a worker's pickling and of the parent's
# unpickling (8.4 MB for the 213 transcripts of the 100 MB bench corpus: dumps 0.21 -> 0.12 s, loads 0.18 ->
# 0.14 s, 6.6 MB). `dumps` stores such an object as a call of its own generated `__init__` with its field values
# instead, for the classes where that call rebuilds exactly the object (every field an `__init__` argument, the
# generated `__init__`, no `__post_init__`, no instance `__dict__`); anything else pickles as before. A value
# whose objects refer to themselves only through such calls cannot be written that way (RecursionError): it is
# written by the standard pickler then. `tests/test_session_pool.py` checks both give equal objects.


def _generated_init(cls: type) -> bool:
    """`cls.__init__` is the one `@dataclass` wrote (compiled from a string), not a hand-written one."""
    init = cls.__dict__.get("__init__")
    code = getattr(init, "__code__", None)
    return code is not None and code.co_filename == "<string>" and init.__qualname__ == f"{cls.__qualname__}.__init__"


_STATE_FUNCTIONS = (
    "__getstate__",
    "__setstate__",
    "__reduce__",
    "__reduce_ex__",
    "__getnewargs__",
    "__getnewargs_ex__",
)


def _own_pickling(cls: type) -> bool:
    """`cls` (or a base) says how it pickles: anything but object's defaults and the dataclass-generated state."""
    for name in _STATE_FUNCTIONS:
        func = getattr(cls, name, None)
        if func is None or func is getattr(object, name, None):
            continue
        if getattr(func, "__module__", None) != "dataclasses":
            return True
    return False


def _slots(cls: type) -> set[str]:
    """Every slot an instance of `cls` has (a slot that is no field would be lost)."""
    out: set[str] = set()
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        out.update([slots] if isinstance(slots, str) else slots)
    return out - {"__weakref__"}


def _by_init(cls: type) -> Any:
    """The reducer of `cls` when its generated `__init__` rebuilds an instance from its fields, else None."""
    params = cls.__dict__.get("__dataclass_params__")
    if params is None or not params.init or hasattr(cls, "__post_init__") or cls.__dictoffset__ != 0:
        return None
    fields = dataclasses.fields(cls)
    if not fields or not all(f.init and not f.kw_only for f in fields) or not _generated_init(cls):
        return None
    if _own_pickling(cls) or _slots(cls) != {f.name for f in fields}:
        return None
    if len(fields) == 1:
        name = fields[0].name
        return lambda obj: (cls, (getattr(obj, name),))
    get = attrgetter(*(f.name for f in fields))
    return lambda obj: (cls, get(obj))


_TABLE: dict[type, Any] | None = None


def _dispatch_table() -> dict[type, Any]:
    """copyreg's table plus a reducer for every such dataclass of the project's loaded modules (built once)."""
    global _TABLE
    if _TABLE is None:
        table: dict[type, Any] = dict(copyreg.dispatch_table)
        for name, module in list(sys.modules.items()):
            if module is None or not (name == "core" or name.startswith("core.")):
                continue
            for value in list(vars(module).values()):
                if isinstance(value, type) and value.__module__ == name and value not in table:
                    reducer = _by_init(value)
                    if reducer is not None:
                        table[value] = reducer
        _TABLE = table
    return _TABLE


def dumps(value: Any, *, fast: bool = True) -> bytes:
    """`pickle.dumps(value, protocol=5)`, dataclasses stored as calls of their `__init__` (above) unless not `fast`."""
    import pickle  # (here and in `_loads`: a report of one file reads nothing apart; pickle is ~7 M instructions)

    if fast:
        out = io.BytesIO()
        pickler = pickle.Pickler(out, protocol=5)
        pickler.dispatch_table = _dispatch_table()
        try:
            pickler.dump(value)
            return out.getvalue()
        except (RecursionError, AttributeError):  # a cycle of such objects; a field never set
            pass
    return pickle.dumps(value, protocol=5)


def _loads(blobs: list[bytes]) -> list[Any]:
    """The workers' pickles loaded with the cyclic garbage collector paused: ~60,000 new objects a session, all
    kept, made its collections walk the growing heap again and again (0.15-0.43 s -> 0.07 s for the 213 sessions
    of the 100 MB bench corpus, the parent's serial time)."""
    import pickle

    enabled = gc.isenabled()
    gc.disable()
    try:
        return [pickle.loads(data) for data in blobs]
    finally:
        if enabled:
            gc.enable()


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
    taken = _loads([data for data in results if data is not None])  # our own workers' bytes, not a file's
    totals: dict[str, list[int]] = {}
    for apart in taken:
        for name, (n, limit) in apart.held.items():
            total = totals.setdefault(name, [0, limit])
            total[0] += n
    if any(n >= limit for n, limit in totals.values()):
        return None  # a cold drain could hold that many at once and drop the rest: only it gives its bytes
    return taken if len(taken) >= MIN_FILES else None


class Adopted(Struct):
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
