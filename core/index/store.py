"""Opening the index file safely: a directory and a file that only this user can write, a regular SQLite file
with exactly our schema, in WAL mode, never waited on for long.

What a store must survive, and how (each case is in `tests/index/test_store.py`):

- **someone else's file or directory**: the cache directory is created 0700 (each missing parent too, whatever
  the umask: under `umask 000` the old index's directory came out 0777); an existing directory, its parent or
  the file (and its `-wal`/`-shm`) owned by another user, or writable by group or others (a parent that is
  only with its sticky bit, like `/tmp`), is refused with one line and the run goes on without the index;
- **not a regular file at the path** (a FIFO, a socket, a device, a directory, a symbolic link): opened with
  `O_NONBLOCK | O_NOFOLLOW` and refused by its type, so a FIFO never blocks a start;
- **a file that is not ours**: not SQLite, another `application_id` or `user_version`, or any object in
  `sqlite_master` beyond `core.index.schema.TABLES` (a trigger would run SQL on our writes): it is removed and
  an empty store takes its place (the user owns it and it is in a private directory: nothing else can be
  lost). SQLite runs with `trusted_schema=OFF` and extension loading off; nothing read is ever executed or
  unpickled (values are decoded as typed data, `core.index.codec`);
- **two processes**: WAL mode lets readers go on while one writes; a write waits at most `BUSY_MS`, then the
  caller skips it (`Busy`) and writes that data with its next transaction;
- **kill -9 at any moment**: every write is one transaction (`transaction`); SQLite's journal makes it all or
  nothing, so the file always holds the last committed state.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from core.index.schema import APPLICATION_ID, SCHEMA_VERSION, TABLES

__all__ = ["BUSY_MS", "Busy", "Refused", "Store", "open_store", "prepare_dir"]

BUSY_MS = 200
"""How long a write waits for another process's write to finish before it is skipped (`Busy`)."""

OPEN_BUSY_S = 3.0
"""How long opening waits, in all, while other processes hold the store (making it, switching it to WAL): four
processes making one store at once saw "database is locked" from `PRAGMA journal_mode`, for which SQLite calls
no busy handler; taken for a damaged file, the store was removed under the others ("disk I/O error"). A store
busy past this is refused for this run (it goes on without the index), never replaced."""

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class Refused(Exception):
    """The index cannot be used: one line for the user (the run goes on without the index)."""


class Busy(Exception):
    """Another process holds the store's write lock longer than `BUSY_MS`: this write is skipped."""


# ---------------------------------------------------------------------------------------------- directory
def prepare_dir(directory: Path) -> None:
    """Create the cache directory (and missing parents) 0700, then check it is private; `Refused` if not."""
    missing: list[Path] = []
    cursor = directory
    while not os.path.lexists(cursor):
        missing.append(cursor)
        if cursor.parent == cursor:
            break
        cursor = cursor.parent
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue  # another process made it meanwhile: checked below like any existing directory
        except OSError as exc:
            raise Refused(f"cannot create {path}: {exc.strerror or exc}") from None
        with contextlib.suppress(OSError):
            os.chmod(path, 0o700)  # mkdir's mode is masked by the umask: an odd umask could leave it wider
    _check_dir(directory)


def _check_dir(directory: Path) -> None:
    try:
        st = os.stat(directory)  # a symlinked ~/.cache is fine: what it points to is checked
    except OSError as exc:
        raise Refused(f"{directory}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise Refused(f"{directory} is not a directory")
    _check_owner(directory, st, "directory")
    parent = directory.resolve().parent
    try:
        pst = os.stat(parent)
    except OSError as exc:
        raise Refused(f"{parent}: {exc.strerror or exc}") from None
    if pst.st_mode & 0o022 and not pst.st_mode & stat.S_ISVTX and pst.st_uid != os.geteuid():
        # another user could rename our directory away and put theirs in its place
        raise Refused(f"{parent} (holding {directory.name}) is writable by others (mode {_mode(pst)})")


def _check_owner(path: Path, st: os.stat_result, what: str) -> None:
    if st.st_uid != os.geteuid():
        raise Refused(f"{what} {path} is owned by uid {st.st_uid}, not by you (uid {os.geteuid()})")
    if st.st_mode & 0o022:
        raise Refused(f"{what} {path} is writable by others (mode {_mode(st)})")


def _mode(st: os.stat_result) -> str:
    return f"{stat.S_IMODE(st.st_mode):04o}"


def _check_file(path: Path) -> bool:
    """Whether a file is at `path` (False: none yet); `Refused` when it is not a private regular file. Opened
    without following links and without blocking, so a FIFO or a device is told by its type, never read."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        return False
    except OSError as exc:
        if os.path.islink(path):
            raise Refused(f"{path} is a symbolic link, not an index file") from None
        raise Refused(f"{path}: {exc.strerror or exc} (not an index file)") from None
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    if not stat.S_ISREG(st.st_mode):
        raise Refused(f"{path} is {_kind(st.st_mode)}, not an index file")
    _check_owner(path, st, "index file")
    return True


def _kind(mode: int) -> str:
    for test, what in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return what
    return "not a regular file"


def _check_side_files(path: Path) -> None:
    """SQLite's `-wal` and `-shm` beside the file: a planted WAL would be replayed into the store."""
    for suffix in ("-wal", "-shm", "-journal"):
        side = Path(f"{path}{suffix}")
        try:
            st = os.lstat(side)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise Refused(f"{side}: {exc.strerror or exc}") from None
        if not stat.S_ISREG(st.st_mode):
            raise Refused(f"{side} is {_kind(st.st_mode)}, not SQLite's own file")
        _check_owner(side, st, "index file")


# ---------------------------------------------------------------------------------------------- the store
@dataclass
class Store:
    """An open index: one connection (autocommit off: every write is an explicit transaction)."""

    path: Path
    conn: sqlite3.Connection
    replaced: str | None = None
    """Why a file found at the path was replaced by an empty store (not ours, damaged, another version)."""

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One all-or-nothing write (`BEGIN IMMEDIATE`): `Busy` when another writer holds the lock too long."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if _is_busy(exc):
                raise Busy(str(exc)) from None
            raise
        try:
            yield self.conn
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")
            raise
        try:
            self.conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")
            if _is_busy(exc):
                raise Busy(str(exc)) from None
            raise

    @contextlib.contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """A consistent read (one snapshot of the WAL) of everything read inside it."""
        self.conn.execute("BEGIN")
        try:
            yield self.conn
        finally:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("COMMIT")

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.conn.close()


def _is_busy(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def open_store(path: Path) -> Store:
    """The index at `path`, made when absent and replaced when it is not ours; `Refused` when it must not be
    used (see the module docstring). The directory must have passed `prepare_dir`."""
    exists = _check_file(path)
    _check_side_files(path)
    if not exists:
        _create_file(path)
    replaced = None
    try:
        conn = _open_ours(path)
    except (sqlite3.DatabaseError, _NotOurs) as exc:
        replaced = _why(exc)
        _remove(path)
        _create_file(path)
        try:
            conn = _open_ours(path)
        except (sqlite3.DatabaseError, _NotOurs) as again:
            raise Refused(f"{path}: cannot make an index there ({_why(again)})") from None
    return Store(path, conn, replaced)


def _open_ours(path: Path) -> sqlite3.Connection:
    """A connection to the store at `path`, checked (`_verify`); while another process holds it, tried again
    for up to `OPEN_BUSY_S`, then `Refused`: a busy store is never mistaken for one that is not ours."""
    deadline = time.monotonic() + OPEN_BUSY_S
    while True:
        conn: sqlite3.Connection | None = None
        try:
            conn = _connect(path)
            _verify(conn)
            return conn
        except sqlite3.OperationalError as exc:
            if conn is not None:
                conn.close()
            if not _is_busy(exc):
                raise
            if time.monotonic() >= deadline:
                raise Refused(f"{path} is busy: another process holds it ({exc}); this run goes without it") from None
            time.sleep(0.02)
        except BaseException:
            if conn is not None:
                conn.close()
            raise


class _NotOurs(Exception):
    pass


def _why(exc: BaseException) -> str:
    if isinstance(exc, _NotOurs):
        return str(exc)
    return f"not an index ({exc})"


def _create_file(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        if not _check_file(path):  # made and removed by another process meanwhile: try once more
            _create_file(path)
        return
    except OSError as exc:
        raise Refused(f"cannot create {path}: {exc.strerror or exc}") from None
    os.close(fd)


def _remove(path: Path) -> None:
    for name in (str(path), f"{path}-wal", f"{path}-shm", f"{path}-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(
        f"file:{quote(path.as_posix())}?mode=rw", uri=True, timeout=BUSY_MS / 1000, isolation_level=None,
        check_same_thread=False,
    )  # fmt: skip
    conn.execute("PRAGMA trusted_schema = OFF")
    conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
    mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()
    if mode is None:
        raise _NotOurs("no journal mode")
    conn.execute("PRAGMA synchronous = NORMAL")  # with WAL: never inconsistent, only the last commit can be lost
    return conn


@functools.cache
def _expected_master() -> list[tuple[str, str, str, str | None]]:
    probe = sqlite3.connect(":memory:")
    try:
        for statement in _statements():
            probe.execute(statement)
        return _master(probe)
    finally:
        probe.close()


def _statements() -> list[str]:
    return [part.strip() for part in TABLES.split(";") if part.strip()]


def _master(conn: sqlite3.Connection) -> list[tuple[str, str, str, str | None]]:
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").fetchall()
    return [(str(t), str(n), str(tb), None if s is None else str(s)) for t, n, tb, s in rows]


def _header(conn: sqlite3.Connection) -> tuple[int, int, list[tuple[str, str, str, str | None]]]:
    """The application id, schema version and schema in one read transaction: read one by one, another
    process making the store between two of them gave an id of 0 beside its tables ("another program's SQLite
    file", seen once at load ~13 with two reports starting together), and the new store was replaced."""
    conn.execute("BEGIN")
    try:
        app = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        master = _master(conn)
    finally:
        conn.execute("COMMIT")
    return int(app), int(version), master


def _verify(conn: sqlite3.Connection) -> None:
    """Make an empty file a store, or check that a store is exactly ours (`_NotOurs` otherwise)."""
    app, version, master = _header(conn)
    if app == 0 and version == 0 and not master:
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if _is_busy(exc):
                raise  # another process is making it: `_open_ours` tries again
            raise _NotOurs(f"cannot initialise ({exc})") from None
        try:
            if not _master(conn):  # another process may have initialised it while we waited
                for statement in _statements():
                    conn.execute(statement)
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
        app, version, master = _header(conn)
    if app != APPLICATION_ID:
        raise _NotOurs(f"another program's SQLite file (application_id {app})")
    if version != SCHEMA_VERSION:
        raise _NotOurs(f"an index of another version ({version}, this one reads {SCHEMA_VERSION})")
    if master != _expected_master():
        raise _NotOurs("unexpected tables, triggers or views")
