"""A persistent index: the engine's whole state saved after a run, so the next start reads only new bytes.

Months of history take seconds to analyse (the recomputation is the product); a second start should cost what
is new since the last one. After a run has read its sources, `Index.capture` pickles an `EngineSnapshot` (the
analysis `State`, every tailed file's identity, offset and held partial line, the per-file counters and
problems); `Index.restore` at the next start adopts it when it is provably the same history:

* the same roots, the same options (`--volatile`), the same reading mode (a report drains in discovery order,
  the dashboard newest first: the two build their state in different orders) and the same code (a digest of
  every `core/` source file: any change to the analysis starts cold) -- all part of the file's name (key);
* every saved file still at its path, same inode, same first bytes, same bytes just before the saved offset
  (and the whole prefix for formats whose writer rewrites in place, mux); nothing at a member path that had
  nothing (a rotation). Unchanged files read nothing, grown files resume at the saved offset like a tail that
  had kept running, new files are read from 0. Anything else -- truncated, replaced, rewritten, rotated,
  deleted -- discards the snapshot and the run is cold: simple and obviously correct beats clever.

A saved snapshot is only taken of a clean history (`Engine.snapshot`): none that saw a rotation or a reset.
Files live in `$CONTINUITY_TUI_CACHE_DIR`, else `$XDG_CACHE_HOME/continuity-tui`, else
`~/.cache/continuity-tui`: one per key, written atomically (temp + rename), the `KEEP` most recently used kept.
A file that is corrupt, partial or from another version is ignored with a one-line notice, never a crash.

Pickle is safe enough here: the file is our own, in the user's cache dir, and nothing is unpickled before a
header naming this format and this code digest was read and matched.
"""

from __future__ import annotations

import contextlib
import copyreg
import dataclasses
import gc
import gzip
import hashlib
import json
import os
import pickle
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import xxhash

from core.engine import Engine, EngineSnapshot
from core.kernel.hashing import HashChain

__all__ = ["KEEP", "Index", "cache_dir", "code_digest"]

MAGIC = b"continuity-tui index 1\n"
"""First line of every index file; a file that does not start with it is not ours (or an older layout)."""

KEEP = 8
"""Index files kept (most recently used first): one per (roots, options) a user runs on, bounded."""

ENV_DIR = "CONTINUITY_TUI_CACHE_DIR"

_CHAIN_ANCHOR = 64
_RECURSION = 20_000


def cache_dir() -> Path:
    """Where index files live (see the module docstring); not created until something is saved."""
    override = os.environ.get(ENV_DIR)
    if override:
        return Path(override).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "continuity-tui"


#: sources that hold nothing an index saves: the senpi simulator (an independent oracle the demo and the
#: tests run; editing it must not throw away users' indexes)
NOT_DIGESTED = ("demo/sim/", "demo/simulate.py")


@cache
def code_digest() -> str:
    """SHA-256 of every `core/**/*.py` (path and bytes) and the Python version: any code change starts cold.

    Hashing the sources rather than trusting a version number is what makes a stale index impossible while the
    analysis is being changed (a snapshot holds analyzer objects whose meaning is their code). The simulator is
    left out (`NOT_DIGESTED`): nothing it holds is in a snapshot.
    """
    root = Path(__file__).resolve().parent
    h = hashlib.sha256(sys.version.encode())
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative.startswith(NOT_DIGESTED):
            continue
        h.update(relative.encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


# ---------------------------------------------------------------------- pickling HashChain
# A HashChain holds a running hashlib state, which pickle cannot save. It is saved as (an ancestor at a
# multiple of _CHAIN_ANCHOR hashes, the hashes after it) and rebuilt by re-hashing: the recursion depth stays
# length / 64 (a chain as the parent of a parent of ... would recurse once per message), and a per-load memo
# keyed by (parent object, hash) rebuilds each node once, so nodes shared between turns stay shared.
_chain_memo: dict[tuple[int, str], HashChain] | None = None  # only while `_bulk` loads: ids are reused later
_chain_lock = threading.Lock()


def _rebuild_chain(anchor: HashChain | None, hashes: tuple[str, ...]) -> HashChain | None:
    memo = _chain_memo
    node = anchor
    for value in hashes:
        nxt = None if memo is None else memo.get((id(node), value))
        if nxt is None:
            nxt = HashChain(node, value)
            if memo is not None:
                memo[(id(node), value)] = nxt
        node = nxt
    return node


def _reduce_chain(node: HashChain) -> tuple[Any, tuple[HashChain | None, tuple[str, ...]]]:
    hashes: list[str] = []
    cursor: HashChain | None = node
    while cursor is not None:
        hashes.append(cursor.hash)
        cursor = cursor.parent
        if cursor is not None and cursor.length % _CHAIN_ANCHOR == 0:
            break
    hashes.reverse()
    return _rebuild_chain, (cursor, tuple(hashes))


copyreg.pickle(HashChain, _reduce_chain)


# ---------------------------------------------------------------------- pickling a running xxhash state
# An xxhash object cannot export its running state (Claude Code calls hash their content blocks as they
# arrive). Saved as its digest so far: a restored call whose hash never grows again (the usual case: its lines
# were all written) reports the same; one that does grow marks the run `spent_used` and a report reads cold.
_spent_used = threading.Event()


class _SpentHash:
    """Stands in for a restored xxhash state: the digest so far; an `update` marks the run as not resumable."""

    __slots__ = ("_hex",)

    def __init__(self, hexdigest: str) -> None:
        self._hex = hexdigest

    def update(self, data: bytes) -> None:
        _spent_used.set()

    def hexdigest(self) -> str:
        return self._hex

    def intdigest(self) -> int:
        return int(self._hex, 16)

    def digest(self) -> bytes:
        return bytes.fromhex(self._hex)

    def copy(self) -> _SpentHash:
        return _SpentHash(self._hex)


def _reduce_running_hash(obj: Any) -> tuple[type[_SpentHash], tuple[str]]:
    return _SpentHash, (obj.hexdigest(),)


for _hasher in (xxhash.xxh3_64, xxhash.xxh3_128, xxhash.xxh64, xxhash.xxh32):
    copyreg.pickle(type(_hasher()), _reduce_running_hash)
copyreg.pickle(_SpentHash, lambda obj: (_SpentHash, (obj.hexdigest(),)))


# Frozen slotted dataclasses (e.g. the ~90,000 context messages of the 100 MB corpus) pickle through
# `dataclasses._dataclass_setstate`, which looks their fields up again for every object: half the load time.
# The same fields, set the same way, without the lookup. Registered for every such class of a loaded `core`
# module when a snapshot is saved (classes of modules imported later simply keep the default).
def _new_frozen(cls: type, names: tuple[str, ...], values: tuple[Any, ...]) -> object:
    obj = object.__new__(cls)
    for name, value in zip(names, values, strict=True):
        object.__setattr__(obj, name, value)
    return obj


def _frozen_reducer(cls: type, names: tuple[str, ...]) -> Any:
    def reduce(obj: object) -> tuple[Any, tuple[type, tuple[str, ...], tuple[Any, ...]]]:
        return _new_frozen, (cls, names, tuple(getattr(obj, name) for name in names))

    return reduce


def _register_frozen_dataclasses() -> None:
    for name, module in list(sys.modules.items()):
        if not name.startswith("core.") or module is None:
            continue
        for value in list(vars(module).values()):
            setstate = getattr(value, "__setstate__", None) if isinstance(value, type) else None
            if getattr(setstate, "__name__", "") != "_dataclass_setstate" or value in copyreg.dispatch_table:
                continue
            names = tuple(f.name for f in dataclasses.fields(value))
            if set(names) == set(getattr(value, "__slots__", ())):  # exactly the fields: nothing else to keep
                copyreg.pickle(value, _frozen_reducer(value, names))


@contextlib.contextmanager
def _bulk() -> Iterator[None]:
    """Pickle or unpickle a large object graph: no cyclic GC meanwhile (it would walk the graph being built
    again and again: 6 s instead of 0.6 s to load the 100 MB corpus), a deeper recursion limit, a fresh memo."""
    global _chain_memo
    enabled = gc.isenabled()
    limit = sys.getrecursionlimit()
    with _chain_lock:
        gc.disable()
        sys.setrecursionlimit(max(limit, _RECURSION))
        _chain_memo = {}
        try:
            yield
        finally:
            _chain_memo = None
            sys.setrecursionlimit(limit)
            if enabled:
                gc.enable()


# ---------------------------------------------------------------------- the index of one (roots, options)
@dataclass
class Index:
    """The saved state for one set of roots, options and reading mode; `notices` says what happened to it."""

    roots: list[str]
    options: dict[str, Any]
    directory: Path = field(default_factory=cache_dir)
    notices: list[str] = field(default_factory=list)
    """Routine one-line notices for the user (a corrupt or unreadable file): never an exception."""
    status: str = "cold"
    """`warm` when a snapshot was adopted, else why the run is cold (for tests and diagnostics)."""
    _restored_bytes: int | None = None

    @classmethod
    def for_engine(cls, engine: Engine, *, volatile: list[str], mode: str, directory: Path | None = None) -> Index:
        """The index of this engine's roots, `--volatile` patterns and reading mode (`report` or `live`)."""
        roots = [os.fspath(root) for root in engine.roots]
        return cls(roots, {"volatile": list(volatile), "mode": mode}, directory or cache_dir())

    @property
    def key(self) -> str:
        text = json.dumps({"roots": self.roots, "options": self.options, "code": code_digest()}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    @property
    def path(self) -> Path:
        return self.directory / f"{self.key}.index"

    def _header(self) -> dict[str, Any]:
        return {"key": self.key, "code": code_digest(), "roots": self.roots, "options": self.options}

    # ------------------------------------------------------------------ load
    def restore(self, engine: Engine) -> bool:
        """Adopt the saved snapshot into a fresh engine (before its first poll); False: read cold.

        Whatever goes wrong -- no file, another version, a corrupt or truncated file, a file that changed
        other than by appending -- leaves the engine as it was and the run cold.
        """
        snap = self._read()
        if snap is None:
            return False
        reason = engine.restore(snap)
        if reason is not None:
            self.status = f"cold: {reason}"
            return False
        _spent_used.clear()
        self.status = "warm"
        self._restored_bytes = engine.total_bytes
        with contextlib.suppress(OSError):
            os.utime(self.path)  # most recently used: kept longest
        return True

    def resumable(self, engine: Engine) -> bool:
        """After reading on from a restored snapshot: is the result the one a cold read gives? (A running hash
        saved as its digest grew again, or log lines pair differently than a cold read pairs them: no.)"""
        if self.status != "warm":
            return True
        if _spent_used.is_set():
            self.status = "cold: a call saved half-hashed received more content"
            return False
        if not engine.resumed_in_order():
            self.status = "cold: new decisions could pair with saved ones differently than a cold read"
            return False
        return True

    def _read(self) -> EngineSnapshot | None:
        """The saved snapshot, streamed from the file (no copy of it, compressed or not, is ever whole in
        memory: at 1 GB of history the pickle alone is a quarter of a gigabyte)."""
        try:
            fh = open(self.path, "rb")  # noqa: SIM115  (closed below, after a streamed load)
        except FileNotFoundError:
            self.status = "cold: no index yet"
            return None
        except OSError as exc:
            return self._ignore(f"unreadable ({exc.strerror or exc})")
        with fh:
            try:
                magic, line = fh.read(len(MAGIC)), fh.readline(1 << 16)
            except OSError as exc:
                return self._ignore(f"unreadable ({exc.strerror or exc})")
            if magic != MAGIC:
                return self._ignore("not an index of this version")
            try:
                header = json.loads(line) if line.endswith(b"\n") else None
            except ValueError:
                header = None
            if not isinstance(header, dict):
                return self._ignore("corrupt header")
            if header != self._header():
                self.status = "cold: index of other code or options"
                return None
            try:
                with _bulk(), gzip.GzipFile(fileobj=fh, mode="rb") as gz:
                    snap = pickle.load(gz)
                    gc.freeze()  # a long-lived heap: keep full collections from walking it (as `tui.cli.tune_gc`)
            except Exception as exc:  # a damaged file can raise anything from gzip, zlib or pickle
                return self._ignore(f"corrupt ({type(exc).__name__})")
        if not isinstance(snap, EngineSnapshot):
            return self._ignore("corrupt (unexpected content)")
        return snap

    def _ignore(self, why: str) -> None:
        self.status = f"cold: index {why}"
        self.notices.append(f"index {self.path} ignored: {why}; reading everything")
        return None

    # ------------------------------------------------------------------ save
    def capture(self, engine: Engine) -> Path | None:
        """Write the engine's snapshot to a temp file beside the index; None when not worth or not safe to save.

        Call right after the reading (`Engine.read_all`, or between two polls of a live engine), before
        `finish_pending`/`report_partials`: what those do later is not saved. `write` then publishes the file
        (an atomic rename), so a run that fails in between leaves the previous index whole. A warm run that
        read nothing new saves nothing (the index is already this state).
        """
        if not self._worth_saving(engine):
            return None
        with engine.reading():
            snap = engine.snapshot()
            if isinstance(snap, str):
                self.status += f"; not saved: {snap}"
                return None
            tmp: str | None = None
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".index", dir=self.directory)
                with os.fdopen(fd, "wb") as fh:
                    fh.write(MAGIC + json.dumps(self._header(), sort_keys=True).encode() + b"\n")
                    _register_frozen_dataclasses()
                    with _bulk(), gzip.GzipFile(fileobj=fh, mode="wb", compresslevel=1, mtime=0) as gz:
                        pickle.dump(snap, gz, protocol=pickle.HIGHEST_PROTOCOL)
                done, tmp = Path(tmp), None
                return done
            except OSError as exc:
                self.notices.append(f"index not saved in {self.directory}: {exc.strerror or exc}")
                return None
            except Exception as exc:  # an analysis object pickle cannot save: run uncached
                self.status += f"; not saved: {type(exc).__name__}: {exc}"
                return None
            finally:
                if tmp is not None:
                    with contextlib.suppress(OSError):
                        os.unlink(tmp)

    def _worth_saving(self, engine: Engine) -> bool:
        """False when never read (a dashboard quit at once), or nothing new since the saved state."""
        return not (engine.polls == 0 or (self.status == "warm" and engine.total_bytes == self._restored_bytes))

    def capture_behind(self, engine: Engine) -> Callable[[], Path | None]:
        """`capture` in a forked child while the caller goes on (the `report` command builds and writes its
        report meanwhile, on the other core): returns a function that waits for the child and gives what
        `capture` would have. The child sees the state as it was at the fork (copy-on-write), so what it saves
        is exactly what `capture` here would have saved; `finish_pending` in the parent does not reach it.

        Only where fork is safe: a POSIX system and a single thread (a forked copy of a lock another thread
        holds would never be released). Elsewhere this is `capture`, then and there."""
        if not self._worth_saving(engine) or not hasattr(os, "fork") or threading.active_count() > 1:
            captured = self.capture(engine)
            return lambda: captured
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: save, say where, and leave without running any of the parent's exit code
            code = 1
            try:
                os.close(read_fd)
                path = self.capture(engine)
                message = {"path": None if path is None else str(path), "status": self.status, "notices": self.notices}
                os.write(write_fd, json.dumps(message).encode("utf-8"))
                code = 0
            finally:
                os._exit(code)
        os.close(write_fd)

        def wait() -> Path | None:
            with os.fdopen(read_fd, "rb") as pipe:
                data = pipe.read()
            os.waitpid(pid, 0)
            try:
                message = json.loads(data)
                self.status, self.notices = str(message["status"]), [str(n) for n in message["notices"]]
                return None if message["path"] is None else Path(message["path"])
            except (ValueError, KeyError, TypeError):
                self.notices.append("index not saved: the process saving it failed")
                return None

        return wait

    def write(self, captured: Path | None) -> None:
        """Publish a captured snapshot (rename over the index), then keep the `KEEP` most recently used."""
        if captured is None:
            return
        try:
            os.replace(captured, self.path)
        except OSError as exc:
            self.notices.append(f"index not saved in {self.directory}: {exc.strerror or exc}")
            with contextlib.suppress(OSError):
                captured.unlink()
        prune(self.directory)

    def save(self, engine: Engine) -> None:
        self.write(self.capture(engine))


def prune(directory: Path, keep: int = KEEP) -> None:
    """Delete all but the `keep` most recently used index files, and temp files older than an hour."""
    try:
        entries = [(p, p.stat().st_mtime) for p in directory.iterdir() if p.name.endswith(".index")]
    except OSError:
        return
    now = time.time()
    stale = [p for p, mtime in entries if p.name.startswith(".tmp-") and now - mtime > 3600]
    kept = sorted(((p, m) for p, m in entries if not p.name.startswith(".tmp-")), key=lambda e: e[1], reverse=True)
    for path in stale + [p for p, _ in kept[keep:]]:
        with contextlib.suppress(OSError):
            path.unlink()
