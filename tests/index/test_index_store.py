"""The attacks on the persistent index (reliability review: a crafted pickle ran code, a world-writable directory
was accepted, `umask 000` made the directory 0777, a FIFO at the index path hung every start). Each one must
do nothing but be refused, or replaced by an empty store: the run goes on, says so in one line, and reports
exactly what a cold run reports.

The tests run as root, where mode bits stop nothing: ownership is checked with files `chown`ed to another
user, modes by their bits."""

from __future__ import annotations

import os
import pickle
import socket
import sqlite3
import stat
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

from core.index import cache_dir, index_path
from core.index.schema import APPLICATION_ID, SCHEMA_VERSION, TABLES
from tests.index_support import agent, cold, report

OTHER_UID = 4242


class Pwn:
    """A pickle that runs code when loaded: what the old index would have executed."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


def _run(root: Path, tmp_path: Path, capsys: Any) -> tuple[dict[str, Any], list[str]]:
    capsys.readouterr()
    out = report([root], tmp_path)
    err = capsys.readouterr().err
    return out, [line.removeprefix("continuity-tui: ") for line in err.splitlines() if line]


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


# ---------------------------------------------------------------------------------------------- the directory
def test_the_cache_dir_and_its_parents_are_made_0700_even_under_umask_000(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = tmp_path / "home" / ".cache"
    monkeypatch.setenv("CONTINUITY_TUI_CACHE_DIR", str(base / "continuity-tui"))
    old = os.umask(0)
    try:
        report([agent(tmp_path)], tmp_path)
    finally:
        os.umask(old)
    for path in (tmp_path / "home", base, base / "continuity-tui"):
        assert _mode(path) == 0o700, path
    assert _mode(index_path()) == 0o600


@pytest.mark.parametrize(
    "spoil, why",
    [
        (lambda d: os.chmod(d, 0o777), "is writable by others (mode 0777)"),
        (lambda d: os.chmod(d, 0o720), "is writable by others (mode 0720)"),
        (lambda d: os.chown(d, OTHER_UID, -1), f"is owned by uid {OTHER_UID}"),
    ],
)
def test_a_directory_others_can_write_is_refused(tmp_path: Path, capsys: Any, spoil: Any, why: str) -> None:
    root = agent(tmp_path)
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    spoil(directory)
    out, err = _run(root, tmp_path, capsys)
    assert out == cold([root], tmp_path)
    assert len(err) == 1 and err[0].startswith("index refused: directory") and why in err[0]
    assert not index_path().exists()  # nothing written into it


def test_a_parent_others_can_write_is_refused_unless_sticky(tmp_path: Path, capsys: Any, monkeypatch: Any) -> None:
    root = agent(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    os.chmod(shared, 0o777)
    os.chown(shared, OTHER_UID, -1)
    monkeypatch.setenv("CONTINUITY_TUI_CACHE_DIR", str(shared / "mine"))
    _, err = _run(root, tmp_path, capsys)
    assert len(err) == 1 and "writable by others" in err[0] and "shared" in err[0]
    os.chmod(shared, 0o1777)  # /tmp: others cannot rename what is ours
    out, err = _run(root, tmp_path, capsys)
    assert err == [] and index_path().exists() and out == cold([root], tmp_path)


# ---------------------------------------------------------------------------------------------- the file
@pytest.mark.parametrize(
    "spoil, why",
    [
        (lambda p: os.chown(p, OTHER_UID, -1), f"is owned by uid {OTHER_UID}"),
        (lambda p: os.chmod(p, 0o666), "is writable by others (mode 0666)"),
        (lambda p: os.chmod(p, 0o620), "is writable by others (mode 0620)"),
    ],
)
def test_an_index_file_others_can_write_is_refused(tmp_path: Path, capsys: Any, spoil: Any, why: str) -> None:
    root = agent(tmp_path)
    report([root], tmp_path)
    before = index_path().read_bytes()
    spoil(index_path())
    out, err = _run(root, tmp_path, capsys)
    assert out == cold([root], tmp_path)
    assert len(err) == 1 and err[0].startswith("index refused: index file") and why in err[0]
    assert index_path().read_bytes() == before  # not touched


@pytest.mark.parametrize("side", ["-wal", "-shm"])
def test_a_planted_wal_or_shm_is_refused(tmp_path: Path, capsys: Any, side: str) -> None:
    root = agent(tmp_path)
    cache_dir().mkdir(parents=True, exist_ok=True, mode=0o700)
    planted = Path(f"{index_path()}{side}")
    planted.write_bytes(b"\0" * 32)
    os.chown(planted, OTHER_UID, -1)
    out, err = _run(root, tmp_path, capsys)
    assert out == cold([root], tmp_path)
    assert len(err) == 1 and err[0].startswith("index refused:") and side in err[0]


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))  # left bound: the socket file stays


def _link(path: Path) -> None:
    target = path.with_name("elsewhere.sqlite3")
    target.write_bytes(b"")
    os.symlink(target, path)


@pytest.mark.parametrize(
    "make, what",
    [
        (_fifo, "is a FIFO"),
        (_socket, "(not an index file)"),
        (lambda p: p.mkdir(), "is a directory"),
        (_link, "is a symbolic link"),
        (lambda p: os.mknod(p, 0o600 | stat.S_IFCHR, os.makedev(1, 3)), "is a character device"),
    ],
)
def test_not_a_regular_file_at_the_index_path_is_refused_without_blocking(tmp_path: Path, make: Any, what: str) -> None:
    """A real process with a time limit: a FIFO opened for reading without O_NONBLOCK blocks forever."""
    root = agent(tmp_path)
    cache_dir().mkdir(parents=True, exist_ok=True, mode=0o700)
    make(index_path())
    result = subprocess.run(
        [sys.executable, "-m", "tui.cli", "report", str(root), "--format", "json", "-o", str(tmp_path / "r.json")],
        capture_output=True, text=True, timeout=120, env={**os.environ},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    err = [line.removeprefix("continuity-tui: ") for line in result.stderr.splitlines() if line]
    assert len(err) == 1 and err[0].startswith("index refused:") and what in err[0], err


# ---------------------------------------------------------------------------------------------- content
def _sqlite(path: Path, *, app: int = APPLICATION_ID, version: int = SCHEMA_VERSION, extra: str = "") -> None:
    conn = sqlite3.connect(path)
    for statement in [part for part in TABLES.split(";") if part.strip()]:
        conn.execute(statement)
    if extra:
        conn.executescript(extra)
    conn.execute(f"PRAGMA application_id = {app}")
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()
    conn.close()


CRAFTED = {
    "a pickle that runs code": lambda p, m: p.write_bytes(pickle.dumps(Pwn(m))),
    "the old index's header and a pickle": lambda p, m: p.write_bytes(
        b'continuity-tui index 1\n{"key": "x"}\n' + pickle.dumps(Pwn(m))
    ),
    "garbage": lambda p, m: p.write_bytes(os.urandom(4096)),
    "an empty SQLite of another program": lambda p, m: _sqlite(p, app=0x12345678),
    "our tables in another version": lambda p, m: _sqlite(p, version=SCHEMA_VERSION + 1),
    "our tables and a trigger": lambda p, m: _sqlite(
        p,
        extra=f"CREATE TABLE pwn (x); CREATE TRIGGER t AFTER INSERT ON scopes BEGIN INSERT INTO pwn VALUES ('{m}'); END;",
    ),
    "our tables and a view": lambda p, m: _sqlite(p, extra="CREATE VIEW v AS SELECT 1;"),
    "our tables and one more": lambda p, m: _sqlite(p, extra="CREATE TABLE more (x);"),
}


@pytest.mark.parametrize("craft", list(CRAFTED), ids=list(CRAFTED))
def test_a_crafted_file_at_the_index_path_is_replaced_never_run(tmp_path: Path, capsys: Any, craft: str) -> None:
    root = agent(tmp_path)
    marker = tmp_path / "PWNED"
    cache_dir().mkdir(parents=True, exist_ok=True, mode=0o700)
    CRAFTED[craft](index_path(), marker)
    os.chmod(index_path(), 0o600)
    out, err = _run(root, tmp_path, capsys)
    assert out == cold([root], tmp_path)
    assert not marker.exists()
    assert len(err) == 1 and err[0].startswith(f"index {index_path()} replaced:"), err
    conn = sqlite3.connect(index_path())
    assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('trigger', 'view')")] == []
    conn.close()
    again, err = _run(root, tmp_path, capsys)
    assert again == out and err == []  # the new store is used from then on


def test_old_pickled_index_files_are_removed_unread(tmp_path: Path, capsys: Any) -> None:
    root = agent(tmp_path)
    marker = tmp_path / "PWNED"
    cache_dir().mkdir(parents=True, exist_ok=True, mode=0o700)
    old = cache_dir() / ("0" * 32 + ".index")
    old.write_bytes(b"continuity-tui index 1\n{}\n" + pickle.dumps(Pwn(marker)))
    (cache_dir() / ".tmp-abc.index").write_bytes(b"half")
    out, err = _run(root, tmp_path, capsys)
    assert out == cold([root], tmp_path) and not marker.exists()
    assert not old.exists() and not (cache_dir() / ".tmp-abc.index").exists()
    assert err == [f"removed 2 index file(s) of the previous format from {cache_dir()}"]


@pytest.mark.parametrize(
    "table, column, value",
    [
        ("sessions", "state", b"\xc1garbage"),
        ("sessions", "state", pickle.dumps(Pwn(Path("/tmp/never")))),
        ("sessions", "calls_data", b"\x93\x01\x02\x03"),
        ("sessions", "calls_data", pickle.dumps(Pwn(Path("/tmp/never")))),
        ("sessions", "calls_data", zlib.compress(b"\x93\x01\x02\x03")),
        ("sessions", "state", zlib.compress(b"\0" * (1 << 20), 9)),
        ("files", "pos", "not a number"),
        ("files", "head_digest", 7),
        ("problems", "error", b"bytes"),
    ],
)
def test_damaged_rows_are_dropped_with_a_notice(
    tmp_path: Path, capsys: Any, table: str, column: str, value: Any
) -> None:
    root = agent(tmp_path)
    report([root], tmp_path)
    if table == "problems":  # the built agent's transcript has a bad line: a stored problem
        assert sqlite3.connect(index_path()).execute("SELECT count(*) FROM problems").fetchone()[0] > 0
    conn = sqlite3.connect(index_path())
    conn.execute(f"UPDATE {table} SET {column} = ?", (value,))
    conn.commit()
    conn.close()
    out, err = _run(root, tmp_path, capsys)
    assert out == cold([root], tmp_path)
    assert (
        len(err) == 1 and err[0].startswith(f"index {index_path()}: damaged") and err[0].endswith("reading everything")
    )
    again, err = _run(root, tmp_path, capsys)
    assert again == out and err == []


def test_a_truncated_store_is_replaced(tmp_path: Path, capsys: Any) -> None:
    root = agent(tmp_path)
    report([root], tmp_path)
    body = index_path().read_bytes()
    for side in ("-wal", "-shm"):
        Path(f"{index_path()}{side}").unlink(missing_ok=True)
    index_path().write_bytes(body[: len(body) // 3])
    out, err = _run(root, tmp_path, capsys)
    assert out == cold([root], tmp_path)
    assert len(err) == 1 and ("replaced" in err[0] or "damaged" in err[0]), err
