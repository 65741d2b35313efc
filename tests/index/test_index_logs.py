"""The log lines in the store (`core.index.logs`): a report stores the decision log's rows as per-chunk column
BLOBs with their aggregates, the next report loads them instead of reading the log again (only what was
appended is read), and whatever a cold read would see differently (a rotation, a truncation, damage) discards
them and reads the log again. Each case compares with the `--no-cache` report of the same bytes."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import zlib
from array import array
from pathlib import Path
from typing import Any

import msgspec
import pytest

from core.index import Index, index_path
from core.kernel.logcols import CHUNK_TYPES
from tests.index_support import agent, cold, demo_without_recordings, report, stored
from tests.report_helpers import log_line


def test_a_second_report_loads_the_log_lines_and_equals_cold(tmp_path: Path, runs: list[Index]) -> None:
    data = demo_without_recordings(tmp_path)
    first = report([data], tmp_path)
    second = report([data], tmp_path)
    assert runs[1].status.startswith("warm: 2 sessions, 0 ignored files, 36 log lines from the index")
    assert first == second == cold([data], tmp_path)
    assert stored("SELECT count(*) FROM streams WHERE unit = 'log'") == [(2,)]  # session.log, compaction.log


def test_the_columns_are_little_endian_arrays_a_user_can_count(tmp_path: Path) -> None:
    """`length(data)` of a column is its rows times its width (the layout `core.kernel.logcols` documents)."""
    data = demo_without_recordings(tmp_path)
    first = report([data], tmp_path)
    rows = stored("SELECT sum(rows), sum(closes) FROM log_chunks")[0]
    assert rows == (first["continuity"]["events"], sum(first["continuity"]["closes"].values()))
    for seq, name, typecode, blob in stored("SELECT seq, name, typecode, data FROM log_columns"):
        table, _, column = name.partition(".")
        assert column in CHUNK_TYPES[table]
        n = stored("SELECT rows, closes FROM log_chunks WHERE seq = ?", seq)[0][table == "closes"]
        assert len(blob) == n * array(typecode).itemsize
    by_kind = dict(stored("SELECT kind, sum(lines) FROM decisions_daily GROUP BY kind"))
    assert by_kind == {k: n for k, n in first["continuity"]["by_kind"].items() if n}


def test_appended_log_lines_are_read_after_the_stored_ones(tmp_path: Path, runs: list[Index]) -> None:
    root = agent(tmp_path)
    log = root / "logs" / "session.log"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:3]) + lines[3][:10])  # a partial line: stored as of its start
    report([root], tmp_path)
    log.write_bytes(b"".join(lines))
    assert report([root], tmp_path) == cold([root], tmp_path)
    assert runs[-1].status.startswith("warm") and "log lines from the index" in runs[-1].status
    with log.open("a") as fh:
        fh.write(log_line(900, "delta", "prefix_matched", 1) + "\n")
    assert report([root], tmp_path) == cold([root], tmp_path)


@pytest.mark.parametrize("change", ["rotate", "copytruncate", "truncate", "rewrite"])
def test_a_log_a_cold_read_sees_differently_is_read_again(tmp_path: Path, runs: list[Index], change: str) -> None:
    root = agent(tmp_path)
    log = root / "logs" / "session.log"
    report([root], tmp_path)
    body = log.read_bytes()
    if change == "rotate":
        os.replace(log, log.with_name("session.log.2"))
        os.replace(log.with_name("session.log.1"), log.with_name("session.log.2"))
        os.replace(log.with_name("session.log.2"), log.with_name("session.log.1"))
        log.write_bytes(b"")
    elif change == "copytruncate":
        shutil.copyfile(log, log.with_name("session.log.1"))
        with log.open("r+b") as fh:
            fh.truncate(0)
    elif change == "truncate":
        with log.open("r+b") as fh:
            fh.truncate(len(body) // 2)
    else:
        log.write_bytes(body.replace(b"flatten", b"FLATTEN", 1))
    warm = report([root], tmp_path)
    assert warm == cold([root], tmp_path)
    assert report([root], tmp_path) == warm  # and the store written again from that read is right too


def said_damaged_once(capsys: Any) -> None:
    """The run said, in one stderr line, that the store was damaged and everything is read again."""
    err = [line for line in capsys.readouterr().err.splitlines() if line]
    assert len(err) == 1 and "damaged" in err[0] and err[0].endswith("reading everything")


@pytest.mark.parametrize(
    ("table", "column", "value"),
    [
        ("log_columns", "data", b"\x01\x02\x03"),
        ("log_columns", "typecode", "d"),
        ("log_vocab", "value", 7),
        ("log_state", "data", b"not zlib"),
        ("log_chunks", "rows", 10**6),
        ("log_streaks", "data", 7),  # (not a BLOB; streaks that do not decode are found when read: below)
        ("log_view", "data", b"not zlib"),
    ],
)
def test_damaged_log_rows_are_dropped_with_a_notice(
    tmp_path: Path, capsys: Any, table: str, column: str, value: Any
) -> None:
    root = agent(tmp_path)
    want = report([root], tmp_path)
    conn = sqlite3.connect(index_path())
    if not conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]:
        conn.execute("INSERT INTO log_streaks (scope, seq, data) SELECT scope, 99, x'00' FROM log_state")
    conn.execute(f"UPDATE {table} SET {column} = ?", (value,))
    conn.commit()
    conn.close()
    capsys.readouterr()
    assert report([root], tmp_path) == want == cold([root], tmp_path)
    said_damaged_once(capsys)
    assert report([root], tmp_path) == want


def test_a_dashboard_stores_no_log_lines(tmp_path: Path) -> None:
    """A dashboard meets a log's lines and the sessions they name in its own order (newest files first): its
    scope keeps the sessions, and its logs are read at every start."""
    from core.engine import READ_CHUNK
    from tui.commands import open_engine

    data = demo_without_recordings(tmp_path)
    engine = open_engine([data], [])
    index = Index.for_engine(engine, volatile=[], mode="live")
    index.restore(engine)
    engine.read_all(READ_CHUNK)
    index.commit(engine)
    index.close()
    engine.close()
    assert stored("SELECT count(*) FROM log_chunks") == [(0,)]
    assert stored("SELECT count(*) FROM streams WHERE unit = 'log'") == [(0,)]


def _named_log(tmp_path: Path) -> Path:
    """The report tests' agent dir with decision lines that name sessions by `sessionId` (newer senpi builds):
    some the transcripts hold, some only the log names, one named before and after a run of unnamed lines."""
    root = agent(tmp_path)
    lines = []
    for i, sid in enumerate(["0198f0a1-log-only-1", "0198f0a1-log-only-2", None, "0198f0a1-log-only-1"] * 3):
        obj = json.loads(log_line(700 + i, ["flatten", "fork", "delta"][i % 3], "prefix_mismatch", i))
        if sid is not None:
            obj["sessionId"] = sid
        lines.append(json.dumps(obj))
    with (root / "logs" / "session.log").open("a") as fh:
        fh.write("\n".join(lines) + "\n")
    return root


def _from_columns_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """A report that builds its log aggregates from the columns fails (it must read the stored view)."""
    import core.report.build as build

    def boom(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("built from the columns")

    monkeypatch.setattr(build, "timeline_rows", boom)
    monkeypatch.setattr(build, "named_rows", boom)


def test_a_report_of_the_same_rows_reads_the_stored_view(
    tmp_path: Path, runs: list[Index], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first report stores its log aggregates with the rows (`log_view`); the next one of the same rows reads
    them instead of the columns, and equals the cold report, with every option that reads the whole log."""
    root = _named_log(tmp_path)
    want = {
        extra: cold([root], tmp_path, *extra) for extra in [(), ("--session", "0198f0a1-log-only"), ("--no-redact",)]
    }
    assert report([root], tmp_path) == want[()]
    events = want[()]["continuity"]["events"]
    closes = sum(want[()]["continuity"]["closes"].values())
    assert stored("SELECT rows, closes, events FROM log_view") == [(events, closes, events)]
    assert any(s["turns"] == 0 and s["log_lines"] for s in want[()]["sessions"])  # sessions only the log names
    with monkeypatch.context() as patched:
        _from_columns_fails(patched)
        for extra, expected in want.items():
            assert report([root], tmp_path, *extra) == expected, extra
    assert "log lines from the index" in runs[-1].status
    # a window reads the columns (the view is of every line), and still equals cold
    window = ("--since", "2026-08-04T00:10:00Z")
    assert report([root], tmp_path, *window) == cold([root], tmp_path, *window)


def test_a_view_of_other_rows_is_not_read(tmp_path: Path, runs: list[Index], monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines appended since the view was stored: the report builds from the columns (as cold) and stores the view of
    the new rows."""
    root = _named_log(tmp_path)
    report([root], tmp_path)
    with (root / "logs" / "session.log").open("a") as fh:
        fh.write(log_line(990, "fork", "prefix_mismatch", 3) + "\n")
    want = cold([root], tmp_path)
    assert report([root], tmp_path) == want
    events = want["continuity"]["events"]
    assert stored("SELECT rows, events FROM log_view") == [(events, events)]
    with monkeypatch.context() as patched:
        _from_columns_fails(patched)
        assert report([root], tmp_path) == want


def test_a_view_is_stored_only_with_the_rows_it_was_built_from(tmp_path: Path) -> None:
    """A report whose log the store does not hold (a dashboard's scope, or the log not written) stores no view."""
    from core.engine import READ_CHUNK
    from core.report import build_report
    from tui.commands import open_engine

    data = demo_without_recordings(tmp_path)
    engine = open_engine([data], [])
    index = Index.for_engine(engine, volatile=[], mode="live")
    index.restore(engine)
    engine.read_all(READ_CHUNK)
    index.commit(engine)
    build_report(engine)
    index.close()
    engine.close()
    assert stored("SELECT count(*) FROM log_view") == [(0,)]


@pytest.mark.parametrize(
    "blob",
    [
        b"not zlib",
        zlib.compress(b"\x93\x01\x02\x03"),  # an array of three ints, not (section, named)
    ],
)
def test_a_damaged_view_is_dropped_with_a_notice(tmp_path: Path, capsys: Any, blob: bytes) -> None:
    """(A view that decodes but names what a report would not: `test_a_crafted_view_is_refused`.)"""
    root = _named_log(tmp_path)
    want = report([root], tmp_path)
    conn = sqlite3.connect(index_path())
    conn.execute("UPDATE log_view SET data = ?", (blob,))
    conn.commit()
    conn.close()
    capsys.readouterr()
    assert report([root], tmp_path) == want == cold([root], tmp_path)
    said_damaged_once(capsys)
    assert report([root], tmp_path) == want


def _view() -> tuple[sqlite3.Connection, list[Any]]:
    """The stored view as its MessagePack array: [section, named, names, streaks JSON]."""
    conn = sqlite3.connect(index_path())
    (data,) = conn.execute("SELECT data FROM log_view").fetchone()
    return conn, msgspec.msgpack.decode(zlib.decompress(data))


def _streak_bytes(view: list[Any], old: bytes, new: bytes) -> None:
    assert old in view[3], (old, view[3][:300])
    view[3] = view[3].replace(old, new, 1)


_ESC_TIME = b'"\\u001b[2J\\u001b]0;pwned\\u0007Z"'


@pytest.mark.parametrize(
    "craft",
    [
        pytest.param(lambda v: _streak_bytes(v, b'"kind": "fork"', b'"kind": "forked"'), id="kind-not-among-names"),
        pytest.param(lambda v: _streak_bytes(v, b'"reason": "', b'"reason": "\\u001b[31m'), id="reason-escape"),
        pytest.param(
            lambda v: _streak_bytes(v, b'"start": "2026', b'"start": ' + _ESC_TIME + b', "x": "2026'),
            id="time-control-sequence",
        ),
        pytest.param(lambda v: _streak_bytes(v, b'"start": "2026-08-04T', b'"start": "sk-ant-api03-T'), id="time-text"),
        pytest.param(lambda v: _streak_bytes(v, b'"length": ', b'"note": "hi", "length": '), id="extra-field"),
        pytest.param(
            lambda v: _streak_bytes(v, b'"kind": "fork"', b'"kind": "\\u001b[2J", "kind": "fork"'),
            id="duplicate-key-first-bad",
        ),
        pytest.param(lambda v: v.__setitem__(3, v[3] + b', {"kind": "fork"}'), id="trailing-data"),
        pytest.param(lambda v: v.__setitem__(3, b"[" + v[3]), id="not-json"),
        pytest.param(lambda v: v.__setitem__(3, v[3].replace(b'"', b"'")), id="single-quotes"),
        pytest.param(lambda v: v.__setitem__(2, [*v[2], "\x1b[2J"]), id="names-control-sequence"),
        pytest.param(lambda v: v.__setitem__(2, [*v[2], "sk-ant-api03-" + "A" * 90]), id="names-secret"),
        pytest.param(lambda v: v.__setitem__(3, v[3][:-1] + b'\xff"]'), id="not-utf8"),
        pytest.param(lambda v: v.__setitem__(3, 7), id="not-bytes"),
        pytest.param(lambda v: v[0].__setitem__(4, [["fork", "r", 2, None, None, None, None]]), id="streaks-twice"),
        pytest.param(lambda v: [entry.__setitem__(0, 10**9) for entry in v[1].values()], id="named-row-past-the-log"),
    ],
)
def test_a_crafted_view_is_refused(tmp_path: Path, capsys: Any, craft: Any) -> None:
    """The stored streaks are JSON a report writes as it is: any of them a report would not write (a name not
    among the view's checked names, a control sequence, text for a time, a field the contract has not, JSON that
    is not one list), or a session's first row the log has not, makes the view damage, and the report is the
    cold one."""
    root = _named_log(tmp_path)
    want = report([root], tmp_path)
    assert want["continuity"]["streaks"], "the log has streaks to craft"
    conn, view = _view()
    craft(view)
    conn.execute("UPDATE log_view SET data = ?", (zlib.compress(msgspec.msgpack.encode(view)),))
    conn.commit()
    conn.close()
    capsys.readouterr()
    got = report([root], tmp_path)
    assert got == want == cold([root], tmp_path)
    said_damaged_once(capsys)
    raw = json.dumps(got)
    assert "pwned" not in raw and "sk-ant" not in raw and "\x1b" not in raw and "forked" not in raw


def test_a_stored_view_writes_the_cold_reports_bytes(tmp_path: Path) -> None:
    """A JSON report writes the stored streaks' bytes as they are: byte for byte the cold report (but its time);
    Markdown and HTML read them as data and equal the cold ones too."""
    from tui.cli import main

    root = _named_log(tmp_path)

    def written(*extra: str) -> dict[str, bytes]:
        out = tmp_path / f"out-{len(list(tmp_path.glob('out-*')))}"
        out.mkdir()
        # the JSON writer alone (a file), and with the other two (a directory: one time for all three)
        assert main(["report", str(root), "--format", "json", "-o", str(out / "alone.json"), *extra]) == 0
        assert main(["report", str(root), "--format", "json,md,html", "-o", str(out / "all"), *extra]) == 0
        got = {}
        for json_file, files in ((out / "alone.json", [out / "alone.json"]), (out / "all" / "continuity-report.json",
                                 sorted((out / "all").iterdir()))):  # fmt: skip
            when = json.loads(json_file.read_bytes())["generated_at"].encode()
            got.update({p.name: p.read_bytes().replace(when, b"GEN") for p in files})
        return got

    written()  # stores the view
    assert stored("SELECT count(*) FROM log_view") == [(1,)]
    assert written() == written("--no-cache")


def test_stored_streaks_are_decoded_when_first_read() -> None:
    """`StoredStreaks`: its length counts the stored and the appended, the appended ones are read without decoding
    the stored, and any other read decodes them first, in order."""
    from core.index.logs import StoredStreaks
    from core.kernel.stats import Streak

    old = [Streak("fork", "r", 3, 1, 2, "", "", 1, 2), Streak("flatten", "s", 2, None, None, "x", "y", None, 9)]
    lazy = StoredStreaks([zlib.compress(msgspec.msgpack.encode(msgspec.to_builtins(old)))], 2)
    new = Streak("bootstrap", "t", 2, 5, 6, "", "", None, None)
    lazy.append(new)
    assert len(lazy) == 3 and lazy.pending
    assert lazy[2:] == [new] and lazy.pending
    assert list(lazy) == [*old, new] and not lazy.pending
    assert lazy[2:] == [new] and lazy[0] == old[0] and len(lazy) == 3


@pytest.mark.parametrize(
    "damage",
    [
        zlib.compress(msgspec.msgpack.encode([{"kind": 1}])),  # streaks that do not decode
        b"\x78\x9c\x03\x00\x00\x00\x00\x01",  # none: another number than the log state says
        b"not zlib",
    ],
)
def test_damaged_streaks_are_found_before_a_report_reads_them(tmp_path: Path, capsys: Any, damage: bytes) -> None:
    """Stored streaks are decoded only for a report that reads them (the stored view does not fit): a damage is
    found then, and the report is the cold one."""
    root = agent(tmp_path)
    want = report([root], tmp_path)
    conn = sqlite3.connect(index_path())
    conn.execute("UPDATE log_streaks SET data = ?", (damage,))
    conn.commit()
    conn.close()
    capsys.readouterr()
    assert report([root], tmp_path) == want  # the view fits: the streaks are not read
    assert not capsys.readouterr().err.strip()
    with (root / "logs" / "session.log").open("a") as fh:
        fh.write(log_line(990, "fork", "prefix_mismatch", 3) + "\n")
    assert report([root], tmp_path) == cold([root], tmp_path)
    said_damaged_once(capsys)


def test_a_log_whose_reason_holds_a_secret_stores_no_view(tmp_path: Path) -> None:
    """A reason the report's redaction changes (a secret in the log): neither the rows nor the view are stored,
    and every report is the cold one (redacted)."""
    from tests.secret_kinds import ANTHROPIC

    root = _named_log(tmp_path)
    with (root / "logs" / "session.log").open("a") as fh:
        fh.write(log_line(995, "fork", f"key {ANTHROPIC}", 3) + "\n")
    want = cold([root], tmp_path)
    assert ANTHROPIC not in json.dumps(want)
    assert report([root], tmp_path) == want == report([root], tmp_path)
    assert stored("SELECT count(*) FROM log_view") == [(0,)]
    assert all(ANTHROPIC.encode() not in bytes(blob) for (blob,) in stored("SELECT data FROM log_columns"))


@pytest.mark.parametrize("typecode", ["B", "b", "H", "h", "I", "i"])
def test_a_code_column_is_within_its_vocabulary_exactly(typecode: str) -> None:
    """`_within` (the load's check that every stored code names a vocabulary entry) takes the fast paths for byte
    and two-byte columns: each agrees with the plain rule on values at and around every edge."""
    import random

    from core.index.logs import _within

    rng = random.Random(7)
    item = array(typecode).itemsize
    signed = typecode.islower()
    lo_v, hi_v = (-(2 ** (8 * item - 1)), 2 ** (8 * item - 1) - 1) if signed else (0, 2 ** (8 * item) - 1)
    for low in (-1, 0) if signed else (0,):
        for size in (1, 31, 33, 100, 127, 128, 255, 256, 257, 999, 1000, 1024, 4097, 32767):
            edges = [low, low - 1, size - 1, size, size + 1, size - 256, size + 255, 255, 256, -1, 0, lo_v, hi_v]
            for _ in range(40):
                inside = rng.randint(low, size - 1)
                values = [rng.choice([inside, inside, rng.choice(edges)]) for _ in range(rng.choice([1, 3, 40]))]
                values = [v for v in values if lo_v <= v <= hi_v]
                want = all(low <= v < size for v in values)
                assert _within(array(typecode, values), low, size) == want, (typecode, low, size, values)
