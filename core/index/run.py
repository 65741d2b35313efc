"""The index as one run uses it (`Index`): load what the store holds into a fresh engine, write what each poll
finished, settle a resumed drain. The design is in the package docstring (`core.index`)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import sqlite3
import sys
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from core.index import FILE_NAME, cache_dir
from core.index.assembled import (
    StoredGroup,
    arrival,
    delete_groups,
    freeze_session,
    groups,
    met,
    read_groups,
    thaw_session,
    write_group,
)
from core.index.codec import Corrupt, NotKept, check_strings
from core.index.files import StoredStream, drop_stream, read_problems, read_streams, revive, write_stream
from core.index.livelog import OrderFree
from core.index.logs import LIVE_EVERY_S, LoadedLog, LogWriter, StoredStreaks, read_log
from core.index.sessions import StoredSession, freeze, thaw
from core.index.store import Busy, Refused, Store, open_store, prepare_dir
from core.index.views import encode_view, write_view
from core.model import Problem, Where
from core.sources.order import BEFORE, DrainOrder
from core.sources.tail import StreamSnap
from core.state import MAX_PROBLEMS, LogState, SessionState
from core.state.attribution import cold_pairs
from core.state.logview import LogView

if TYPE_CHECKING:
    from core.engine import Engine, PollResult

__all__ = ["KEEP", "Index", "code_digest"]

KEEP = 8
"""Scopes kept (most recently used first): one per set of roots and options a user runs on, bounded."""

#: sources that hold nothing the index keeps: the senpi simulator (an independent oracle the demo and the tests
#: run; editing it must not throw away users' indexes)
NOT_DIGESTED = ("demo/sim/", "demo/simulate.py")
_OLD_FORMAT = re.compile(r"^(\.tmp-.*|[0-9a-f]{32})\.index$")
"""The pickled index files of earlier versions (they held every secret they read in plain text): removed."""


@cache
def code_digest() -> str:
    """SHA-256 of every `core/**/*.py` (path and bytes) and the Python version: a store written by other code is
    never read (what a stored session holds means what its analyzers' code made of it)."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256(sys.version.encode())
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative.startswith(NOT_DIGESTED):
            continue
        h.update(relative.encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class _Unit(msgspec.Struct):
    """What the store holds for one stored session (its key) or ignored file, as this run last wrote it."""

    token: object  # the session object (or the ignored file's line count) it was written from
    streams: tuple[str, ...]


@dataclass
class Index:
    """The store as one run uses it: `restore` into a fresh engine, `commit` after every poll, `settle` after a
    report's drain, `close` at the end. `status` says whether the run resumed (`warm …`) or why not."""

    roots: list[str]
    options: dict[str, Any]
    mode: str = "report"
    directory: Path = field(default_factory=cache_dir)
    notices: list[str] = field(default_factory=list)
    """Routine one-line notices for the user (an index refused or replaced): never an exception."""
    status: str = "cold"
    store: Store | None = None
    scope: int | None = None
    writing: bool = False
    """Whether this run writes the store (it claimed the scope, and nothing has stopped it since)."""
    _writer: str = field(default_factory=lambda: f"{os.getpid()}-{time.time_ns()}-{secrets.token_hex(4)}")
    _units: dict[str, _Unit] = field(default_factory=dict)
    _loaded: dict[str, tuple[SessionState, object]] = field(default_factory=dict)
    _loaded_at: dict[str, int] = field(default_factory=dict)
    _stored_credits: dict[str, tuple[int, int] | None] = field(default_factory=dict)
    _credits: dict[str, tuple[int, int]] | None = None
    """After `settle`: per session, the log lines a cold read credits it with (stored with it)."""
    _credits_written: bool = False
    _dropped: set[str] = field(default_factory=set)
    _start: dict[str, int] = field(default_factory=dict)
    _not_kept: dict[str, tuple[int, int | None, int]] = field(default_factory=dict)
    not_kept: dict[str, str] = field(default_factory=dict)
    """Sessions this run did not store, and why (`NotKept`): their files are read again at the next start."""
    _log: LogWriter | None = None
    """What this run wrote of the log lines (`core.index.logs`); made when the scope is claimed."""
    _log_drop: bool = False
    """The stored log must go (it no longer matches its files, or this run stores none): at the next commit."""
    _view: tuple[int, int, int, bytes] | None = None
    """The report view a report built this run (rows, closes, events, BLOB): stored at `close`."""
    _log_restored: bool = False
    """Stored log lines were loaded into this run's state."""
    _verify: bool = False
    """A dashboard loaded something and has not yet checked, with its backfill read, that this is exact."""
    _verified_at: float = float("-inf")
    _left: float = float("inf")
    """Bytes the last poll of a dashboard left unread (`_live_poll`)."""
    _groups: list[StoredGroup] = field(default_factory=list)
    """The stored groups of assembled sessions (Claude Code, mux: `core.index.assembled`) this run loaded."""
    _group_sessions: dict[str, SessionState] = field(default_factory=dict)
    _groups_stored: int = 0
    """How many groups the store held for the scope when this run loaded it."""
    _chunk: int = 0
    _settled: int | None = None
    """The chunk of a drain that gave what a cold read gives (`settle` said so, or `start_over` read it cold):
    what `store_assembled` stores is then exact."""

    @classmethod
    def for_engine(cls, engine: Engine, *, volatile: list[str], mode: str, directory: Path | None = None) -> Index:
        """The index of this engine's roots and `--volatile` patterns; `mode` is `report` (a drain, settled
        after it) or `live` (the dashboard)."""
        roots = [os.fspath(root) for root in engine.roots]
        return cls(roots, {"volatile": list(volatile)}, mode, directory or cache_dir())

    @property
    def key(self) -> str:
        text = json.dumps(
            {"roots": self.roots, "options": self.options, "mode": self.mode, "code": code_digest()}, sort_keys=True
        )
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    @property
    def path(self) -> Path:
        return self.directory / FILE_NAME

    # ------------------------------------------------------------------ opening
    def _open(self) -> Store | None:
        try:
            prepare_dir(self.directory)
            store = open_store(self.path)
        except Refused as why:
            self._refuse(str(why))
            return None
        except (sqlite3.Error, OSError) as exc:
            self._refuse(f"{self.path}: {exc}")
            return None
        if store.replaced is not None:
            self.notices.append(f"index {self.path} replaced: {store.replaced}")
        self._remove_old_format()
        return store

    def _refuse(self, why: str) -> None:
        self.status = f"cold: index refused ({why})"
        self.notices.append(f"index refused: {why}; running without it")

    def _remove_old_format(self) -> None:
        removed = 0
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.directory):
                if _OLD_FORMAT.match(entry.name) and entry.is_file(follow_symlinks=False):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)
                        removed += 1
        if removed:
            self.notices.append(f"removed {removed} index file(s) of the previous format from {self.directory}")

    # ------------------------------------------------------------------ restoring
    def restore(self, engine: Engine) -> bool:
        """Open the store and load what it holds for this scope into a fresh engine (before its first poll), then
        write as the engine reads (`Engine.after_each_poll`). True when anything was loaded.

        Whatever goes wrong (no store yet, a refused or busy one, damage) leaves the engine as it was: the run
        reads everything, and writes the store when it may."""
        store = self.store = self._open()
        if store is None:
            return False
        try:
            loaded = self._restore(engine, store)
        except (sqlite3.Error, Corrupt) as exc:
            self.status = f"cold: index damaged ({exc})"
            self.notices.append(f"index {self.path}: damaged ({exc}); reading everything")
            self._drop_scope()
            loaded = False
        self._verify = self.mode == "live" and loaded
        self._after_polls(engine)
        return loaded

    def _after_polls(self, engine: Engine) -> None:
        if self.mode == "live":
            engine.after_each_poll(lambda result: self._live_poll(engine, result))
        elif self.writing:
            engine.after_each_poll(lambda _result: self.commit(engine))

    def _live_poll(self, engine: Engine, result: PollResult) -> None:
        """After each poll of a dashboard: while the order a dashboard meets lines in may decide something
        (`core.index.livelog`), nothing it read is exact to store or to resume from. Asked once its backfill is
        read, and every `LIVE_EVERY_S` before. A run that resumed and finds it does reads everything cold, as a
        first start does (the poll says it changed: the dashboard is not loaded yet); a run that writes and
        finds it does drops what it stored and writes nothing more (the next start reads everything cold).
        Then commit."""
        # the backfill is read when a poll reads nothing and leaves no fewer bytes unread than the last one (a
        # poll whose budget went into a line still being written reads nothing whole, yet more is left)
        left = engine.pending_bytes()
        idle = not result.lines and not result.changed and (left == 0 or left >= self._left)
        self._left = left
        now = time.monotonic()
        if (self._verify or self.writing) and (idle or now - self._verified_at >= LIVE_EVERY_S):
            self._verified_at = now
            with engine.lock:
                why = OrderFree.why_not(engine.state)
            if why is not None and self._verify:
                self._verify = False
                self.status = f"cold: {why}"
                engine.start_over()
                self.start_over(engine)
                result.changed = True
                return
            if why is not None:
                self._drop_scope()
                self._stop(f"the order a dashboard reads lines in decides something: {why}")
                return
        if idle and self._verify:
            self._verify = False
            if self._loaded and engine.sources.newest_first:
                with engine.lock:
                    _newest_first_order(engine)
        self.commit(engine)

    def _restore(self, engine: Engine, store: Store) -> bool:
        now = _now_ms()
        try:
            with store.transaction() as conn:
                row = conn.execute("SELECT id FROM scopes WHERE key = ?", (self.key,)).fetchone()
                if row is None:
                    cursor = conn.execute(
                        "INSERT INTO scopes (key, roots, options, code, writer, created_ms, used_ms) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (self.key, json.dumps(self.roots), json.dumps({**self.options, "mode": self.mode},
                         sort_keys=True), code_digest(), self._writer, now, now),
                    )  # fmt: skip
                    self.scope = int(cursor.lastrowid or 0)
                    _prune(conn, KEEP)
                else:
                    self.scope = int(row[0])
                    conn.execute(
                        "UPDATE scopes SET writer = ?, used_ms = ? WHERE id = ?", (self._writer, now, self.scope)
                    )
            self.writing = True
        except Busy:
            row = store.conn.execute("SELECT id FROM scopes WHERE key = ?", (self.key,)).fetchone()
            self.scope = None if row is None else int(row[0])
            self.status = "cold: no index yet"
        if self.scope is None:
            if self.writing:
                self.status = "cold: no index yet"
            return False
        with store.reading() as conn:
            streams = read_streams(conn, self.scope)
            stored = _read_sessions(conn, self.scope)
            problems = read_problems(conn, self.scope, streams)
            log = read_log(conn, self.scope)
            assembled = read_groups(conn, self.scope) if self.mode == "report" else []
            loaded = self._load(engine, streams, stored, problems, log, assembled)  # (in the read: the columns)
        if not self.writing:
            self.status += "; not written: index busy (another run is writing it)"
        return loaded

    def _load(
        self,
        engine: Engine,
        streams: dict[str, StoredStream],
        stored: list[StoredSession],
        problems: dict[str, list[Problem]],
        log: LoadedLog | None = None,
        assembled: list[StoredGroup] | None = None,
    ) -> bool:
        self._log = self._log_writer()
        valid: dict[str, Any] = {}
        why: dict[str, str] = {}
        for logical, stream in streams.items():
            snap = revive(stream)
            if isinstance(snap, str):
                why[logical] = snap
            else:
                valid[logical] = snap
        sessions: list[SessionState] = []
        credits_of: dict[str, tuple[int, int] | None] = {}
        for item in stored:
            if item.key not in valid or (item.sidecar_path is not None and item.sidecar_path not in valid):
                # its file changed, or the restart sidecar its verdict was judged from: read it again
                self._dropped.add(item.key)
                continue
            sessions.append(thaw(item, engine.reread))
            credits_of[item.key] = item.log_credits
        keep = {s.key for s in sessions} | {lg for lg, st in streams.items() if st.unit == "ignored" and lg in valid}
        groups_kept, group_sessions = self._load_groups(engine, assembled or [], streams, valid, keep)
        keep |= {lg for group in groups_kept for lg in group.files}
        for s in sessions:
            if s.sidecar is not None and s.sidecar.where.path in valid:
                keep.add(s.sidecar.where.path)
        log_state = self._load_log(log, streams, valid)
        if log_state is not None and log is not None:
            keep |= set(log.streams)
        self._dropped |= set(streams) - keep
        restored = [valid[lg] for lg in keep]
        if not restored:
            self.status = "cold: nothing stored is still as it was" if streams else "cold: no index yet"
            return False
        adapters = {lg: streams[lg].format for lg in keep if streams[lg].format is not None}
        ignored = {lg for lg in keep if streams[lg].unit == "ignored"}
        stats = {gen.snap.path: gen.stat for lg in keep for gen in streams[lg].gens if gen.stat is not None}
        kept_problems = [p for lg in keep for p in problems.get(lg, [])]
        reason = engine.adopt_stored(restored, adapters, ignored, stats, sessions, kept_problems, log_state)
        if reason is not None:
            self.status = f"cold: {reason}"
            self._dropped |= set(streams)
            self._log_drop = self._log_drop or log is not None
            self._log = self._log_writer()
            return False
        with engine.lock:  # not `adopt_session`: a cold read never parks them, nor pairs their calls as they come
            for session in group_sessions:
                engine.state.sessions[session.key] = session
            engine.state.version += 1
        self._groups = groups_kept
        self._groups_stored = len(assembled or [])
        self._group_sessions = {session.key: session for session in group_sessions}
        for session in sessions:
            self._loaded[session.key] = (session, session.sidecar)
            self._loaded_at[session.key] = session.parked or 0
            self._stored_credits[session.key] = credits_of.get(session.key)
            self._units[session.key] = _Unit(session, _session_streams(session))
        for logical in ignored:
            last = streams[logical].gens[-1].stat
            self._units[logical] = _Unit(last.lines if last is not None else 0, (logical,))
        self._start = {snap.logical: _stream_pos(snap) for snap in restored}
        dropped = f", {len(why)} changed" if why else ""
        rows = f", {len(log_state.continuity):,} log lines" if log_state is not None else ""
        together = f", {len(group_sessions)} assembled sessions" if group_sessions else ""
        self.status = (
            f"warm: {len(sessions)} sessions{together}, {len(ignored)} ignored files{rows} from the index{dropped}"
        )
        return True

    def _load_groups(
        self,
        engine: Engine,
        assembled: list[StoredGroup],
        streams: dict[str, StoredStream],
        valid: dict[str, Any],
        taken: set[str],
    ) -> tuple[list[StoredGroup], list[SessionState]]:
        """The stored groups whose files are all as they were read, to their last byte, and their sessions
        (`core.index.assembled`); `Corrupt` when a row does not decode."""
        kept: list[StoredGroup] = []
        sessions: list[SessionState] = []
        seen = set(taken)
        for group in assembled:
            if len(group.rows) != group.sessions or not all(
                lg in valid and streams[lg].unit == "assembled" and _whole(valid[lg]) for lg in group.files
            ):
                continue  # a file changed (or a kill left it half written): its files are read again
            thawed = [thaw_session(group.agent, *row, engine.reread) for row in group.rows]
            for session in thawed:
                if session.key in seen:
                    raise Corrupt("two stored sessions with one key")
                seen.add(session.key)
            kept.append(group)
            sessions.extend(thawed)
        return kept, sessions

    def _log_writer(self) -> LogWriter:
        """A report stores the log lines; so does a dashboard (or exporter), while the order it meets them in
        decides nothing (`core.index.livelog`: its order, newest files first and live, is its own)."""
        return LogWriter(live=self.mode == "live")

    def _load_log(
        self, log: LoadedLog | None, streams: dict[str, StoredStream], valid: dict[str, Any]
    ) -> LogState | None:
        """The stored log lines in a fresh `LogState` when every file they were read from is still as it was
        read (else the stored log goes and its files are read again); `Corrupt` when the rows do not decode."""
        if log is None:
            return None
        if not log.streams or any(lg not in valid or streams[lg].unit != "log" for lg in log.streams):
            self._log_drop = True
            return None
        state = LogState()
        log.install(state)
        self._log = LogWriter.resumed(log, [valid[lg] for lg in log.streams], live=self.mode == "live")
        self._log_restored = True
        return state

    # ------------------------------------------------------------------ writing
    def commit(self, engine: Engine) -> None:
        """One transaction with what changed since the last one: sessions parked (with their files), sessions
        no longer parked as stored, ignored files. Runs between two polls; skipped while the store is busy (the
        next commit writes it). Also rebuilds a loaded session whose restart sidecar was read again. Whatever
        goes wrong stops this run's writing with one line; the run goes on."""
        try:
            self._commit(engine)
        except Exception as exc:  # a bug here must not end a report or the dashboard's reading
            self._stop(f"{type(exc).__name__}: {exc}")
            self.notices.append(f"index {self.path} not updated: {type(exc).__name__}: {exc}")

    def _commit(self, engine: Engine) -> None:
        with engine.lock:
            self._rebuild_touched(engine)
        if not self.writing or self.store is None or self.scope is None:
            return
        state = engine.state
        if self.mode == "report":
            state.log.view_sink = self._take_view  # the report built from this state hands its log view here
        if state.problems_total > len(state.problems) or state.problems_total > MAX_PROBLEMS:
            self._stop("more problems than are kept: which ones are kept depends on the reading order")
            self._drop_scope()
            return
        with engine.lock:
            writes, deletes = self._changes(engine)
            if self._log is None:
                self._log = self._log_writer()
            log = self._log.changes(engine, self.scope)
        if log == "drop":
            self._log_drop, log = True, None
        credits = None
        if self._credits is not None and not self._credits_written:
            credits = [(*n, self.scope, key) for key, n in self._credits.items() if key in self._units]
        if not writes and not deletes and not self._dropped and credits is None and log is None and not self._log_drop:
            return
        try:
            with self.store.transaction() as conn:
                row = conn.execute("SELECT writer FROM scopes WHERE id = ?", (self.scope,)).fetchone()
                if row is None or row[0] != self._writer:
                    raise _Lost
                for logical in sorted(self._dropped):
                    drop_stream(conn, self.scope, logical)
                    _drop_session(conn, self.scope, logical)
                for key in deletes:
                    unit = self._units.pop(key, None)
                    _drop_session(conn, self.scope, key)
                    for logical in unit.streams if unit is not None else (key,):
                        drop_stream(conn, self.scope, logical)
                for write in writes:
                    write(conn)
                if self._log_drop:
                    _delete_log(conn, self.scope, self._log.streams if self._log is not None else [])
                if log is not None and not isinstance(log, str):
                    log.write(conn)
                if credits:
                    conn.executemany(
                        "UPDATE sessions SET log_credits = ?, log_credits_parked = ? WHERE scope = ? AND key = ?",
                        credits,
                    )
        except Busy:
            return
        except _Lost:
            self._stop("another run took the index over")
            return
        except sqlite3.Error as exc:
            self._stop(f"not written: {exc}")
            self.notices.append(f"index {self.path} not updated: {exc}")
            return
        self._dropped.clear()
        self._log_drop = False
        if log is not None and not isinstance(log, str):
            log.done()
        if credits is not None:
            self._credits_written = True

    def _stop(self, why: str) -> None:
        self.writing = False
        self.status += f"; not written: {why}"

    def _changes(self, engine: Engine) -> tuple[list[Any], list[str]]:
        """What to write (functions of a connection) and which stored keys to delete; call with the lock."""
        state = engine.state
        scope = self.scope
        assert scope is not None
        deletes = [
            key
            for key, unit in self._units.items()
            if isinstance(unit.token, SessionState)
            and (state.sessions.get(key) is not unit.token or unit.token.parked is None)
        ]
        for key in deletes:
            del self._units[key]
        candidates: list[tuple[str, SessionState | None, tuple[str, ...]]] = []
        for key, session in state.sessions.items():
            if session.parked is None or key in self._units or self._not_kept.get(key) == _mark(session):
                continue
            candidates.append((key, session, _session_streams(session)))
        for logical in engine.ignored:
            lines = engine.stats[logical].lines if logical in engine.stats else 0
            unit = self._units.get(logical)
            if unit is None or unit.token != lines:
                candidates.append((logical, None, (logical,)))
        if not candidates:
            return [], deletes
        wanted = sorted({lg for _, _, streams in candidates for lg in streams})
        full = frozenset(lg for lg in wanted if (a := engine.adapters.get(lg)) is not None and a.routine_notices)
        snaps = engine.sources.export_streams(wanted, full, whole_lines=True)
        writes: list[Any] = []
        for key, session, streams in candidates:
            if any(isinstance(snaps.get(lg), str) for lg in streams):
                continue  # not clean now (a rotation, a reset in flight): tried again at the next commit
            if session is not None:
                frozen = self._freeze(session, snaps[key])
                if frozen is None:
                    continue
                frozen.log_credits = None if self._credits is None else self._credits.get(key, (0, 0))
                writes.append(self._session_writer(engine, frozen, session, {lg: snaps[lg] for lg in streams}))
                self._units[key] = _Unit(session, streams)
            else:
                stats = engine.stats.get(key)
                writes.append(self._stream_writer(engine, snaps[key], "ignored", None))
                self._units[key] = _Unit(stats.lines if stats is not None else 0, (key,))
        return writes, deletes

    def _freeze(self, session: SessionState, snap: Any) -> StoredSession | None:
        current = [gen for gen in snap.gens if gen.current]
        if len(snap.gens) != 1 or not current or current[0].pos != session.parked:
            self._not_kept[session.key] = _mark(session)
            return None
        try:
            return freeze(session)
        except NotKept as why:
            self._not_kept[session.key] = _mark(session)
            self.not_kept[session.key] = str(why)
            return None
        except Exception as exc:  # a value the codec cannot hold: the session is read from its file next time
            self._not_kept[session.key] = _mark(session)
            self.not_kept[session.key] = f"{type(exc).__name__}: {exc}"
            return None

    def _stream_writer(self, engine: Engine, snap: Any, unit: str, fmt: str | None) -> Any:
        scope = self.scope
        paths = {gen.path for gen in snap.gens}
        stats = {path: engine.stats.get(path) for path in paths}
        problems = [p for p in engine.state.problems if p.path in paths]
        names = [snap.logical, *paths, *(p.error for p in problems)]

        def write(conn: sqlite3.Connection) -> None:
            if check_strings(names) is not None:
                drop_stream(conn, scope, snap.logical)
                return
            write_stream(conn, scope, snap, unit, fmt, stats, problems)

        return write

    def _session_writer(
        self, engine: Engine, frozen: StoredSession, session: SessionState, snaps: dict[str, Any]
    ) -> Any:
        scope = self.scope
        stream_writers = [
            self._stream_writer(engine, snap, "session" if lg == session.key else "sidecar",
                                a.name if (a := engine.adapters.get(lg)) is not None else None)
            for lg, snap in snaps.items()
        ]  # fmt: skip

        def write(conn: sqlite3.Connection) -> None:
            _drop_session(conn, scope, frozen.key)
            for writer in stream_writers:
                writer(conn)
            _write_session(conn, scope, frozen)

        return write

    # ------------------------------------------------------------------ after a drain
    def _rebuild_touched(self, engine: Engine) -> None:
        """A loaded session's restart sidecar was read again (the file changed): its analyzers hold none of
        what judging it needs, so rebuild it from its file, as a parked session woken by a recording."""
        for key, (session, sidecar) in list(self._loaded.items()):
            if engine.state.sessions.get(key) is not session:
                del self._loaded[key]
                continue
            if session.sidecar is not sidecar and session.parked is not None:
                del self._loaded[key]
                engine.rebuild(key)

    def settle(self, engine: Engine, chunk: int) -> bool:
        """After a report's drain (`Engine.read_all(chunk)`): put what depends on the reading order as a cold
        drain has it, or say it cannot be (False: the caller reads everything cold, `start_over`). Also notes how
        many log lines credit each session in a cold read, which the sessions are stored with."""
        self._chunk = chunk
        with engine.reading():
            self._rebuild_touched(engine)
            damaged = _load_streaks(engine.state.log)
            if damaged is not None:
                self.status = f"cold: index damaged ({damaged})"
                self.notices.append(f"index {self.path}: damaged ({damaged}); reading everything")
                return False
            layout = engine.sources.layout()
            cold = DrainOrder(layout, chunk)
            warm = DrainOrder(layout, chunk, self._start)
            kept = {key: session for key, (session, _) in self._loaded.items()}
            reason = self._check_groups(engine, cold, warm)
            if reason is not None:
                self.status = f"cold: {reason}"
                return False
            credits, reason = _log_credits(engine, cold, warm, self._loaded_at, kept, self._stored_credits)
            if reason is not None:
                self.status = f"cold: {reason}"
                return False
            self._credits = {key: credits.get(key, (0, 0)) for key in engine.state.sessions}
            if self._start:
                _cold_session_order(engine, cold)
                sessions = engine.state.sessions.values()
                if any(turn.logged is not None for session in sessions for turn in session.turns):
                    # (no call logged a decision: nothing pairs, as in a cold read; the replay walks every
                    # log line, ~13 s and ~280 MB for the 1.1M-line log)
                    _repair(engine, cold_pairs(engine.state, layout, chunk))
        self._settled = chunk
        return True

    def _check_groups(self, engine: Engine, cold: DrainOrder, warm: DrainOrder) -> str | None:
        """Why the assembled sessions of this run are not what a cold read makes (None: they are): what was
        read now met a stored group, or a group's files would arrive interleaved otherwise in a cold read."""
        if self.mode != "report":
            return None
        fresh = groups(engine.state)  # (only what this run read: a stored session's records never reached them)
        reason = met(fresh, self._groups, set(self._group_sessions))
        if reason is not None:
            return reason
        for stored in self._groups:
            if arrival(cold, stored.files) != stored.arrival:
                return "a cold read would deliver a stored session's files in another order"
        if self._start:
            for group in fresh:
                if arrival(warm, group.files) != arrival(cold, group.files):
                    return f"session {os.path.basename(group.keys[0])}'s files arrive in another order than cold"
        return None

    def store_assembled(self, engine: Engine) -> None:
        """After a report's drain gave what a cold read gives: one transaction storing the groups of assembled
        sessions (Claude Code, mux) read in this run, and dropping the stored ones no longer loaded
        (`core.index.assembled`). Whatever goes wrong is one line; the run goes on."""
        chunk, self._settled = self._settled, None
        if chunk is None or self.mode != "report" or not self.writing or self.store is None or self.scope is None:
            return
        try:
            self._store_assembled(engine, self.store, self.scope, chunk)
        except Busy:
            return
        except Exception as exc:  # a bug here must not end a report
            self._stop(f"{type(exc).__name__}: {exc}")
            self.notices.append(f"index {self.path} not updated: {type(exc).__name__}: {exc}")

    def _store_assembled(self, engine: Engine, store: Store, scope: int, chunk: int) -> None:
        with engine.reading():
            state = engine.state
            state.settle()  # (which session made the calls a resumed session copied: on the turns stored)
            kept = {g.id for g in self._groups if all(state.sessions.get(row[0]) is self._group_sessions.get(row[0])
                                                      for row in g.rows)}  # fmt: skip
            loaded = set(self._group_sessions)
            fresh = [group for group in groups(state) if not any(key in loaded for key in group.keys)]
            if not fresh and len(kept) == self._groups_stored:
                return  # (the second report of the same files writes nothing)
            cold = DrainOrder(engine.sources.layout(), chunk)
            wanted = sorted({lg for group in fresh for lg in group.files})
            full = frozenset(lg for lg in wanted if (a := engine.adapters.get(lg)) is not None and a.routine_notices)
            snaps = engine.sources.export_streams(wanted, full, whole_lines=True)
            writes: list[Any] = []
            for group in fresh:
                adapters = [engine.adapters.get(lg) for lg in group.files]
                if any(key not in state.sessions for key in group.keys) or any(a is None for a in adapters):
                    continue
                if not all(_whole(snaps.get(lg)) for lg in group.files):
                    continue  # a file ends in a partial line, or is mid-rotation: read again next time
                try:
                    frozen = [(state.sessions[key], *freeze_session(state.sessions[key])) for key in group.keys]
                except NotKept as why:
                    self.not_kept[group.keys[0]] = str(why)
                    continue
                except Exception as exc:  # a value the codec cannot hold: read from its files next time
                    self.not_kept[group.keys[0]] = f"{type(exc).__name__}: {exc}"
                    continue
                streams = [
                    self._stream_writer(engine, snaps[lg], "assembled", a.name if a is not None else None)
                    for lg, a in zip(group.files, adapters, strict=True)
                ]
                writes.append((group, streams, frozen, arrival(cold, group.files)))
        with store.transaction() as conn:
            row = conn.execute("SELECT writer FROM scopes WHERE id = ?", (scope,)).fetchone()
            if row is None or row[0] != self._writer:
                self._stop("another run took the index over")
                return
            delete_groups(conn, scope, kept)
            for group, streams, frozen, order in writes:
                for key in group.keys:
                    _drop_session(conn, scope, key)
                for write in streams:
                    write(conn)
                write_group(conn, scope, group, frozen, order, _write_calls)

    def start_over(self, engine: Engine) -> None:
        """The run reads everything cold in `engine` after all: the scope's stored data goes, this run writes it
        anew as it reads."""
        self._units.clear()
        self._loaded.clear()
        self._loaded_at.clear()
        self._stored_credits.clear()
        self._credits = None
        self._credits_written = False
        self._start.clear()
        self._not_kept.clear()
        self._log = self._log_writer()
        self._log_drop = False
        self._log_restored = False
        self._verify = False
        self._verified_at, self._left = float("-inf"), float("inf")
        self._groups = []
        self._group_sessions = {}
        self._groups_stored = 0
        self._settled = self._chunk or _read_chunk()
        self._drop_scope()
        self._after_polls(engine)

    def _drop_scope(self) -> None:
        if self.store is None or self.scope is None or not self.writing:
            return
        try:
            with self.store.transaction() as conn:
                _delete_scope_data(conn, self.scope)
        except (Busy, sqlite3.Error):
            self._stop("the stale data could not be removed")

    def _take_view(self, view: LogView) -> None:
        """A report built the whole log's aggregates from the columns: encoded now (the report goes on to
        consume its sections), stored at `close` with the rows they were built from."""
        blob = encode_view(view)
        self._view = None if blob is None else (view.rows, view.closes, view.events, blob)

    def _write_view(self) -> None:
        """One transaction: the report view of the log, when this run wrote exactly the rows it was built from."""
        view, log = self._view, self._log
        self._view = None
        if view is None or log is None or log.off is not None or self._log_drop or (log.rows, log.closes) != view[:2]:
            return
        if not self.writing or self.store is None or self.scope is None:
            return
        try:
            with self.store.transaction() as conn:
                row = conn.execute("SELECT writer FROM scopes WHERE id = ?", (self.scope,)).fetchone()
                if row is not None and row[0] == self._writer:
                    write_view(conn, self.scope, *view)
        except Busy:
            return
        except Exception as exc:  # the report is out: a failure here is one line, never a traceback
            self.notices.append(f"index {self.path} not updated: {type(exc).__name__}: {exc}")

    def close(self) -> None:
        """Store the report view a report handed over (if any), and close the store."""
        if self.store is not None:
            self._write_view()
            self.store.close()
            self.store = None


class _Lost(Exception):
    pass


def _load_streaks(log: LogState) -> str | None:
    """Decode the stored streaks unless the report reads the stored view instead (`core.state.logview`): why
    they do not decode, or None."""
    streaks, view = log.stats.streaks, log.view
    if not isinstance(streaks, StoredStreaks) or not streaks.pending:
        return None
    if view is not None and view.fits(len(log.continuity), len(log.closes), log.stats.events):
        return None
    try:
        streaks.load()
    except Corrupt as exc:
        return str(exc)
    return None


def _read_chunk() -> int:
    from core.engine import READ_CHUNK

    return READ_CHUNK


def _whole(snap: Any) -> bool:
    """A stream of one file read to its last byte, which is still its size on disk (a group of assembled
    sessions is stored and loaded only so: a file read on from an offset would meet handlers that hold nothing
    of what came before)."""
    if not isinstance(snap, StreamSnap) or len(snap.gens) != 1:
        return False
    gen = snap.gens[0]
    if not gen.current or gen.pos != gen.size:
        return False
    try:
        return os.stat(gen.path).st_size == gen.pos
    except OSError:
        return False


def _write_calls(conn: sqlite3.Connection, session_id: int, turns: list[Any]) -> None:
    conn.executemany(
        f"INSERT INTO calls ({_CALL_COLUMNS}) VALUES ({', '.join('?' * 17)})",
        [_call_row(session_id, turn) for turn in turns],
    )


def _mark(session: SessionState) -> tuple[int, int | None, int]:
    return (id(session), session.parked, len(session.turns))


def _session_streams(session: SessionState) -> tuple[str, ...]:
    if session.sidecar is not None and session.sidecar.where.path != session.key:
        return (session.key, session.sidecar.where.path)
    return (session.key,)


def _stream_pos(snap: Any) -> int:
    """Where a restored stream resumes, in bytes of the whole stream (older generations first)."""
    pos = 0
    for gen in sorted(snap.gens, key=lambda g: g.current):
        pos += gen.pos if gen.current else gen.size
    return pos


# ---------------------------------------------------------------------------------------------- rows
_CALL_COLUMNS = (
    "session, idx, ts, kind, reason, evidence, recomputed_kind, agreement, model, payload_bytes, payload_bytes_raw, "
    "input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, commit_outcome, avoidable"
)


def _call_row(session_id: int, turn: Any) -> tuple[Any, ...]:
    """The inspectable columns of one call (a projection of its session's `calls_data`, which alone is read
    back)."""
    recomputed = turn.recomputed
    tokens = turn.tokens or {}

    def flag(value: bool | None) -> int | None:
        return None if value is None else int(value)

    return (
        session_id, turn.index, turn.ts, turn.kind, turn.reason, turn.evidence,
        recomputed.kind if recomputed is not None else None, flag(turn.agreement), turn.model, turn.payload_bytes,
        turn.payload_bytes_raw, tokens.get("input"), tokens.get("cache_read"), tokens.get("cache_write"),
        tokens.get("output"), turn.commit.outcome if turn.commit is not None else None, flag(turn.avoidable),
    )  # fmt: skip


def _write_session(conn: sqlite3.Connection, scope: int | None, frozen: StoredSession) -> None:
    cursor = conn.execute(
        "INSERT INTO sessions (scope, key, session_id, agent, cwd, started, calls, parked_at, log_credits, "
        "log_credits_parked, sidecar, state, calls_data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (scope, frozen.key, frozen.session_id, frozen.agent, frozen.cwd, frozen.started, len(frozen.turns),
         frozen.parked_at, *(frozen.log_credits or (None, None)), frozen.sidecar_path, frozen.state,
         frozen.calls),
    )  # fmt: skip
    session_id = int(cursor.lastrowid or 0)
    conn.executemany(
        f"INSERT INTO calls ({_CALL_COLUMNS}) VALUES ({', '.join('?' * 17)})",
        [_call_row(session_id, turn) for turn in frozen.turns],
    )


def _drop_session(conn: sqlite3.Connection, scope: int | None, key: str) -> None:
    conn.execute(
        "DELETE FROM calls WHERE session IN (SELECT id FROM sessions WHERE scope = ? AND key = ?)", (scope, key)
    )
    conn.execute("DELETE FROM sessions WHERE scope = ? AND key = ?", (scope, key))


def _read_sessions(conn: sqlite3.Connection, scope: int) -> list[StoredSession]:
    out: list[StoredSession] = []
    for key, session_id, agent, cwd, started, parked_at, read, parked, sidecar, state, calls in conn.execute(
        "SELECT key, session_id, agent, cwd, started, parked_at, log_credits, log_credits_parked, sidecar, state, "
        "calls_data FROM sessions WHERE scope = ? AND assembly IS NULL ORDER BY id",
        (scope,),
    ):
        if not (isinstance(key, str) and isinstance(session_id, str) and isinstance(agent, str)):
            raise Corrupt("a stored session row is not one")
        if not (isinstance(state, bytes) and isinstance(calls, bytes) and isinstance(parked_at, int)):
            raise Corrupt("a stored session row is not one")
        if not all(v is None or isinstance(v, str) for v in (cwd, started, sidecar)):
            raise Corrupt("a stored session row is not one")
        credits = None
        if isinstance(read, int) and isinstance(parked, int):
            credits = (read, parked)
        elif read is not None or parked is not None:
            raise Corrupt("a stored session row is not one")
        out.append(StoredSession(key, session_id, agent, cwd, started, parked_at, sidecar, state, calls, [], credits))
    return out


_SCOPED = (
    "streams", "files", "problems", "log_vocab", "log_chunks", "log_columns", "log_streaks", "log_state",
    "log_view", "decisions_daily", "closes_daily", "assemblies",
)  # fmt: skip


_LOG_TABLES = (
    "log_vocab", "log_chunks", "log_columns", "log_streaks", "log_state", "log_view", "decisions_daily",
    "closes_daily",
)  # fmt: skip


def _delete_log(conn: sqlite3.Connection, scope: int, written: list[str]) -> None:
    """The scope's stored log lines and aggregates, and the log files they were read from."""
    rows = conn.execute("SELECT logical FROM streams WHERE scope = ? AND unit = 'log'", (scope,))
    logicals = {row[0] for row in rows}
    for logical in sorted(logicals | set(written)):
        drop_stream(conn, scope, logical)
    for table in _LOG_TABLES:
        conn.execute(f"DELETE FROM {table} WHERE scope = ?", (scope,))


def _delete_scope_data(conn: sqlite3.Connection, scope: int) -> None:
    conn.execute("DELETE FROM calls WHERE session IN (SELECT id FROM sessions WHERE scope = ?)", (scope,))
    conn.execute("DELETE FROM sessions WHERE scope = ?", (scope,))
    for table in _SCOPED:
        conn.execute(f"DELETE FROM {table} WHERE scope = ?", (scope,))


def _prune(conn: sqlite3.Connection, keep: int) -> None:
    """All but the `keep` most recently used scopes go."""
    old = [
        row[0]
        for row in conn.execute("SELECT id FROM scopes ORDER BY used_ms DESC, id DESC LIMIT -1 OFFSET ?", (keep,))
    ]
    for scope in old:
        _delete_scope_data(conn, scope)
        conn.execute("DELETE FROM scopes WHERE id = ?", (scope,))


# ---------------------------------------------------------------------------------------------- reading order
def _first_where(session: SessionState) -> Where | None:
    """Where the record that made the session is: its header, else its earliest entry."""
    if session.origin is not None:  # a session assembled across files: its first record may be in any of them
        return session.origin
    wheres = [node.where for node in session.nodes.values() if node.where.path == session.key]
    if session.header is not None and session.header.where.path == session.key:
        wheres.append(session.header.where)
    return min(wheres, key=lambda w: w.offset) if wheres else None


def _arrive(order: DrainOrder, where: Where | None) -> tuple[int, int, int] | None:
    return None if where is None else order.arrival(where.path, where.offset, where.length)


def _log_credits(
    engine: Engine,
    cold: DrainOrder,
    warm: DrainOrder,
    loaded_at: dict[str, int],
    kept: dict[str, SessionState],
    stored: dict[str, tuple[int, int] | None],
) -> tuple[dict[str, tuple[int, int]], str | None]:
    """How many log lines naming each session a cold drain credits it as build evidence, while the session is
    read and once it is parked (a line credits the session when it is read while the session exists,
    `SidecarAndLogHandler`; a drain parks a session after the poll that read its file to the end, and a parked
    session takes the evidence without judging its calls again), and why this run credited some session
    differently (None when it did not).

    This run met only what was not stored. A stored session loaded as it was credits nothing (it has no
    tracker): its stored state must have been made with the credits a cold read gives now. One rebuilt from its
    file because it grew exists again from its first new line on; a session read from its file, from its first
    record on; lines this run did not read (stored) credit nothing."""
    state = engine.state
    if not state.sessions:
        return {}, None
    by_id: dict[str, list[SessionState]] = {}
    for session in state.sessions.values():
        by_id.setdefault(session.session_id, []).append(session)
    named: dict[str, list[Where]] = {}
    for table in (state.log.continuity, state.log.closes):
        ids = table.sessions.values
        wanted = {code for code, session_id in enumerate(ids) if session_id in by_id}
        if wanted:
            for row in [row for row, code in enumerate(table.session) if code in wanted]:
                named.setdefault(ids[table.session[row]], []).append(table.where(row))
    credits: dict[str, tuple[int, int]] = {}
    sizes = {logical: sum(size for _, size in gens) for logical, gens in engine.sources.layout()}
    for session_id, wheres in named.items():
        sessions = by_id[session_id]
        name = session_id[:18]
        if len(sessions) > 1:
            return credits, f"log lines name session {name}, which {len(sessions)} files hold"
        session = sessions[0]
        key = session.key
        created = _first_where(session)
        cold_at = _arrive(cold, created)
        if cold_at is None or key not in sizes:
            return credits, f"log lines name session {name}, made by no record of its own"
        last = cold.arrival(key, sizes[key] - 1, 0)
        cold_credits = credits[key] = _split(cold, wheres, cold_at, last)
        if kept.get(key) is session:
            if stored.get(key) != cold_credits:
                return credits, (
                    f"a cold read credits session {name} with log lines {cold_credits} (read, parked), its stored "
                    f"state with {stored.get(key) or 'an unknown number'}"
                )
            continue
        if key in loaded_at:
            if sizes[key] <= loaded_at[key]:
                return credits, f"log lines name session {name}, rebuilt from its file for another reason"
            warm_at = warm.arrival(key, loaded_at[key], 0)  # rebuilt as it grew: from its first new line on
        else:
            warm_at = _arrive(warm, created)
        warm_credits = (
            (0, 0) if warm_at is None else _split(warm, wheres, warm_at, warm.arrival(key, sizes[key] - 1, 0))
        )
        if cold_credits != warm_credits:
            return credits, (
                f"log lines naming session {name} credit it {warm_credits} times here and {cold_credits} in a "
                "cold read (read, parked: the order they are read in differs)"
            )
    return credits, None


def _split(
    order: DrainOrder, wheres: list[Where], made: tuple[int, int, int], last: tuple[int, int, int] | None
) -> tuple[int, int]:
    """(lines read after `made` up to the poll of `last`, when the session is parked; lines read in later polls),
    of the lines at `wheres`, in `order` (a line `order` did not read counts in neither)."""
    read = parked = 0
    for where in wheres:
        at = _arrive(order, where)
        if at is None or at == BEFORE or at <= made:
            continue
        if last is None or at[0] <= last[0]:
            read += 1
        else:
            parked += 1
    return read, parked


def _cold_session_order(engine: Engine, cold: DrainOrder) -> None:
    """Sessions in the order a cold drain makes them (by when the record that made each is read); one whose
    record has no known place keeps its place after the one before it."""
    sessions = engine.state.sessions
    keyed = []
    last = BEFORE
    for i, (key, session) in enumerate(sessions.items()):
        at = _arrive(cold, _first_where(session))
        if at is None:
            at = last
        last = at
        keyed.append((at, i, key, session))
    keyed.sort(key=lambda item: (item[0], item[1]))
    ordered = [(key, session) for _, _, key, session in keyed]
    if ordered != list(sessions.items()):
        sessions.clear()  # in place: readers may hold the dict
        sessions.update(ordered)


def _newest_first_order(engine: Engine) -> None:
    """Sessions in the order a cold dashboard makes them (its snapshot lists them so, and its session list
    breaks ties of activity so): it reads transcripts most recently modified first, ties in discovery order
    (`Sources._read_newest_first`), and makes each session when it reads its file's first line. A resumed one
    loaded the stored sessions before everything."""
    sessions = engine.state.sessions
    rank = {logical: i for i, (logical, _) in enumerate(engine.sources.layout())}
    keyed = []
    for i, (key, session) in enumerate(sessions.items()):
        try:
            mtime = os.stat(key).st_mtime_ns
        except OSError:
            keyed.append(((1, 0, 0, i), key, session))
            continue
        keyed.append(((0, -mtime, rank.get(key, len(rank)), i), key, session))
    keyed.sort(key=lambda item: item[0])
    ordered = [(key, session) for _, key, session in keyed]
    if ordered != list(sessions.items()):
        sessions.clear()  # in place: readers may hold the dict
        sessions.update(ordered)
        engine.state.version += 1


def _repair(engine: Engine, pairs: dict[tuple[str, int], int]) -> None:
    """Logged decisions paired with calls as a cold drain pairs them (`cold_pairs`)."""
    engine.state.adopt_pairs(pairs)
