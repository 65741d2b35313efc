"""Claude Code and mux sessions in the store (`core.index.assembled`): a second report loads them as stored, and
every report over a history whose files were appended, cut, truncated, replaced, deleted or joined by a resumed
copy reports exactly what a cold (`--no-cache`) read reports, at drain budgets that cut files mid-way."""

from __future__ import annotations

import json
import os
import random
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.index import ENV_DIR, Index
from core.index.assembled import _strings
from core.index.codec import strings_of
from core.timeutil import iso_ms
from tests.realdata import SETS, copy_set
from tui.cli import main

T0 = 1_767_000_000_000


def _report(root: Path, out: Path, *extra: str, fmt: str = "json") -> bytes:
    assert main(["report", str(root), "--format", fmt, "-o", str(out), *extra]) == 0
    data = out.read_bytes()
    if fmt == "json":
        report = json.loads(data)
        report.pop("generated_at")
        return json.dumps(report, sort_keys=True).encode()
    return data


def _warm_equals_cold(root: Path, tmp: Path) -> bytes:
    warm = _report(root, tmp / "warm.json")
    cold = _report(root, tmp / "cold.json", "--no-cache")
    assert warm == cold
    return warm


# ---------------------------------------------------------------------------------------------- Claude Code lines
def _line(session: str, kind: str, n: int, ms: int, parent: str | None, **extra: Any) -> dict[str, Any]:
    side = extra.pop("agent", None)
    env: dict[str, Any] = {"parentUuid": parent, "isSidechain": side is not None, "userType": "external",
                           "cwd": "/home/u/proj", "sessionId": session, "version": "2.1.2", "type": kind,
                           "uuid": f"u{n:06d}-{session[:4]}", "timestamp": iso_ms(ms)}  # fmt: skip
    if side is not None:
        env["agentId"] = side
    env.update(extra)
    return env


def _call(session: str, n: int, ms: int, parent: str | None, msg: str, req: str, read: int, write: int,
          **extra: Any) -> dict[str, Any]:  # fmt: skip
    usage = {"input_tokens": 5, "cache_creation_input_tokens": write, "cache_read_input_tokens": read,
             "output_tokens": 40, "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": write}}  # fmt: skip
    return _line(session, "assistant", n, ms, parent, requestId=req, **extra,
                 message={"model": "claude-opus-4-6", "id": msg, "type": "message", "role": "assistant",
                          "content": [{"type": "text", "text": f"answer {msg}"}], "stop_reason": "end_turn",
                          "usage": usage})  # fmt: skip


def _conversation(session: str, first: int, calls: int, ms: int, *, copy_of: list[Any] | None = None,
                  agent: str | None = None) -> list[Any]:  # fmt: skip
    """A session's lines: a resumed copy's copied lines first (same uuids, message and request ids, its own
    sessionId), then `calls` user/assistant exchanges of its own."""
    lines: list[Any] = []
    parent = None
    for line in copy_of or ():
        copied = {**line, "sessionId": session}
        lines.append(copied)
        parent = copied["uuid"]
    read = 0
    for i in range(calls):
        n = first + 2 * i
        extra = {"agent": agent} if agent else {}
        user = _line(session, "user", n, ms + i * 60_000, parent, message={"role": "user", "content": f"q{n}"},
                     **extra)  # fmt: skip
        write = 300 + 17 * i
        call = _call(session, n + 1, ms + i * 60_000 + 900, user["uuid"], f"msg_{session[:4]}_{n}",
                     f"req_{session[:4]}_{n}", read, write, **extra)  # fmt: skip
        read += write if i % 4 != 3 else -read // 2  # now and then a re-send
        lines += [user, call]
        parent = call["uuid"]
    return lines


def _encode(lines: list[Any]) -> bytes:
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def _history(root: Path) -> dict[Path, bytes]:
    """Two projects: a session with a sub-agent file and a resumed copy of it, an unrelated session, a 2.0-era
    top-level sub-agent file, and a session in another project. Returns every file's whole body."""
    a, b, c, d = ("aaaa1111-0000", "bbbb2222-0000", "cccc3333-0000", "dddd4444-0000")
    proj = root / "projects" / "-home-u-proj"
    other = root / "projects" / "-home-u-other"
    main_a = _conversation(a, 0, 8, T0)
    bodies = {
        proj / f"{a}.jsonl": main_a,
        proj / a / "subagents" / "agent-x1.jsonl": _conversation(a, 500, 3, T0 + 30_000, agent="x1"),
        proj / f"{b}.jsonl": _conversation(b, 900, 4, T0 + 9_000_000, copy_of=main_a[:10]),
        proj / f"{c}.jsonl": _conversation(c, 1300, 6, T0 + 100_000),
        proj / "agent-top1.jsonl": _conversation(a, 1700, 2, T0 + 200_000, agent="top1"),
        other / f"{d}.jsonl": _conversation(d, 2100, 5, T0 + 400_000),
    }
    return {path: _encode(lines) for path, lines in bodies.items()}


def _step(rng: random.Random, bodies: dict[Path, bytes], root: Path) -> str:
    """One change to the history (what a user's agents and tools do to these files)."""
    path = rng.choice(sorted(bodies))
    whole = bodies[path]
    size = path.stat().st_size if path.exists() else 0
    op = rng.choice(["append", "append", "append_part", "truncate", "replace", "delete", "resume", "nothing"])
    if op in ("append", "append_part") and size < len(whole):
        rest = whole[size:]
        cut = rest.find(b"\n", rng.randrange(len(rest))) + 1 if op == "append" else rng.randrange(1, len(rest) + 1)
        with path.open("ab") as fh:
            fh.write(rest[: cut or len(rest)])
    elif op == "truncate" and size:
        with path.open("r+b") as fh:
            fh.truncate(rng.randrange(size))
    elif op == "replace":
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(whole[: rng.randrange(len(whole) + 1)])
        os.replace(tmp, path)  # a new inode at the path
    elif op == "delete" and path.exists():
        path.unlink()
    elif op == "resume":  # a new session that resumes a stored one: its copies meet the stored calls
        source = [orjson.loads(x) for x in whole.splitlines() if x.strip()]
        source = [x for x in source if isinstance(x, dict) and not x.get("isSidechain")][: rng.randrange(1, 12)]
        sid = f"r{rng.randrange(10**6):06d}-0000"
        new = root / "projects" / "-home-u-proj" / f"{sid}.jsonl"
        body = _encode(_conversation(sid, 3000 + rng.randrange(1000) * 10, 2, T0 + 20_000_000, copy_of=source))
        new.write_bytes(body)
        bodies[new] = body
    else:
        op = "nothing"
    return op


@pytest.mark.parametrize("chunk", [1 << 24, 3_000, 777])
@pytest.mark.parametrize("seed", range(int(os.environ.get("CCSTORE_SEEDS", "4"))))
def test_random_histories_of_assembled_sessions_report_as_cold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs: list[Index], seed: int, chunk: int
) -> None:
    monkeypatch.setenv(ENV_DIR, str(tmp_path / "cache"))
    monkeypatch.setattr("tui.commands.READ_CHUNK", chunk)  # small budgets cut files: another interleaving
    rng = random.Random(seed * 7919 + chunk)
    root = tmp_path / "claude"
    bodies = _history(root)
    for path, body in bodies.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        cut = body.find(b"\n", rng.randrange(len(body) // 2, len(body))) + 1  # (partial lines come with the steps)
        path.write_bytes(body[:cut] if rng.random() < 0.5 else body)
    _warm_equals_cold(root, tmp_path)
    ops = []
    for _ in range(8):
        ops.append(_step(rng, bodies, root))
        _warm_equals_cold(root, tmp_path)
    warm = [run.status for run in runs if "assembled" in run.status]
    # (at budgets that cut every file, most runs see another interleaving than the stored one and read cold)
    assert warm or chunk < 4096, f"no run loaded stored sessions ({ops}): {[r.status for r in runs]}"


def test_a_second_report_loads_every_session_as_stored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       runs: list[Index]) -> None:  # fmt: skip
    monkeypatch.setenv(ENV_DIR, str(tmp_path / "cache"))
    root = tmp_path / "claude"
    for path, body in _history(root).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
    first = _report(root, tmp_path / "1.json")
    second = _report(root, tmp_path / "2.json")
    assert first == second == _report(root, tmp_path / "c.json", "--no-cache")
    assert runs[1].status.startswith("warm: 0 sessions, 5 assembled sessions"), runs[1].status
    with sqlite3.connect(tmp_path / "cache" / "index.sqlite3") as conn:
        groups = conn.execute("SELECT sessions, files FROM assemblies ORDER BY id").fetchall()
        agents = conn.execute("SELECT DISTINCT agent FROM sessions").fetchall()
    # the resumed copy and its original, and the sub-agent file, are one group; the others stand alone
    assert sorted(n for n, _ in groups) == [1, 1, 1, 2]
    assert max(len(json.loads(files)) for _, files in groups) == 3
    assert agents == [("claude-code",)]


def test_a_file_appended_to_reads_its_group_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  runs: list[Index]) -> None:  # fmt: skip
    monkeypatch.setenv(ENV_DIR, str(tmp_path / "cache"))
    root = tmp_path / "claude"
    bodies = _history(root)
    for path, body in bodies.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
    _report(root, tmp_path / "1.json")
    sub = next(p for p in bodies if p.parent.name == "subagents")
    with sub.open("ab") as fh:
        fh.write(_encode(_conversation("aaaa1111-0000", 800, 1, T0 + 60_000, agent="x1")))
    _warm_equals_cold(root, tmp_path)
    assert "3 assembled sessions" in runs[1].status, runs[1].status  # its group (2 sessions) read again


def test_a_resumed_copy_of_a_stored_session_reads_cold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       runs: list[Index]) -> None:  # fmt: skip
    """A new session whose first lines copy a stored one's: a cold read decides which of them made the shared
    calls; the stored session holds none of what that needs, so the run reads everything cold."""
    monkeypatch.setenv(ENV_DIR, str(tmp_path / "cache"))
    root = tmp_path / "claude"
    bodies = _history(root)
    for path, body in bodies.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
    _report(root, tmp_path / "1.json")
    d = next(p for p in bodies if p.parent.name == "-home-u-other")
    copied = [orjson.loads(x) for x in bodies[d].splitlines()][:6]
    (d.parent / "eeee5555-0000.jsonl").write_bytes(_encode(_conversation("eeee5555-0000", 4000, 2, T0 + 10**7,
                                                                         copy_of=copied)))  # fmt: skip
    _warm_equals_cold(root, tmp_path)
    assert runs[1].status.startswith("cold: session eeee5555-0000.jsonl shares calls"), runs[1].status


@pytest.mark.parametrize("name", [name for name in SETS if name.startswith("cc-")] + ["mux"])
def test_every_real_set_reports_the_same_from_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        runs: list[Index], name: str) -> None:  # fmt: skip
    """Every real Claude Code and mux set: the first report writes the store, the second reads it; both give the
    cold report's bytes in every format, and `check` its verdict."""
    monkeypatch.setenv(ENV_DIR, str(tmp_path / "cache"))
    one = copy_set(name, tmp_path / "real")
    for fmt in ("json", "md", "html", "openmetrics"):
        cold = _no_time(_report(one, tmp_path / f"cold.{fmt}", "--no-cache", fmt=fmt))
        for run in ("first", "second"):
            assert _no_time(_report(one, tmp_path / f"{run}.{fmt}", fmt=fmt)) == cold, (fmt, run)
        assert "assembled sessions" in runs[-1].status, runs[-1].status
    assert len({main(["check", str(one), *extra]) for extra in ([], [], ["--no-cache"])}) == 1


def _no_time(data: bytes) -> bytes:
    import re

    return re.sub(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", b"<t>", data)


def test_crafted_rows_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs: list[Index]) -> None:
    """A crafted `assemblies` or assembled `sessions` row is refused as damage (typed decoding, nothing
    executed): the run reads everything and reports what a cold read reports."""
    monkeypatch.setenv(ENV_DIR, str(tmp_path / "cache"))
    root = tmp_path / "claude"
    for path, body in _history(root).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
    cold = _report(root, tmp_path / "c.json", "--no-cache")
    crafted = [
        "UPDATE assemblies SET arrival = X'c1'",
        'UPDATE assemblies SET files = \'{"not": "a list"}\'',
        "UPDATE assemblies SET ids = X'0102'",
        "UPDATE sessions SET state = X'789c4b040000620062' WHERE assembly IS NOT NULL",
        "UPDATE sessions SET calls_data = zeroblob(40) WHERE assembly IS NOT NULL",
        "UPDATE sessions SET agent = 'os.system' WHERE assembly IS NOT NULL",
    ]
    for sql in crafted:
        assert _report(root, tmp_path / "w.json") == cold  # (writes the store again)
        with sqlite3.connect(tmp_path / "cache" / "index.sqlite3") as conn:
            conn.execute(sql)
        assert _report(root, tmp_path / "w.json") == cold, sql
        assert runs[-1].status.startswith("cold"), (sql, runs[-1].status)


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False)
                    | st.text(), lambda kids: st.lists(kids) | st.dictionaries(st.text(), kids), max_leaves=30))  # fmt: skip
def test_the_strings_of_stored_data_are_every_string(value: Any) -> None:
    """What the secret check looks at (`_strings`, JSON written in C and its string tokens) is exactly every
    string the data holds, keys too (`codec.strings_of`)."""
    assert _strings(value) == set(strings_of(value))


_KILL_IN_WRITE = """
import os, signal, sys
import core.index.assembled as assembled
import core.index.run as run
calls = [0]
real = run.write_group
def write_group(*args, **kwargs):
    calls[0] += 1
    if calls[0] > {after}:
        os.kill(os.getpid(), signal.SIGKILL)  # inside the transaction: the {after} groups before it not committed
    return real(*args, **kwargs)
run.write_group = write_group
from tui.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("after", [0, 1, 3])
def test_kill_9_while_the_first_run_writes_leaves_a_usable_store(tmp_path: Path, runs: list[Index],
                                                                 monkeypatch: pytest.MonkeyPatch, after: int) -> None:  # fmt: skip
    """SIGKILL in the middle of the transaction that stores the assembled sessions: the next run finds the store
    as it was before it (an uncommitted SQLite transaction leaves nothing), reads what is not stored, and reports as cold; the run
    after it loads them."""
    import subprocess
    import sys

    monkeypatch.setenv(ENV_DIR, str(tmp_path / "cache"))
    root = tmp_path / "claude"
    for path, body in _history(root).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
    cold = _report(root, tmp_path / "c.json", "--no-cache")
    child = subprocess.run(
        [sys.executable, "-c", _KILL_IN_WRITE.format(after=after), "report", str(root), "--format", "json",
         "-o", str(tmp_path / "killed.json")],
        env={**os.environ}, capture_output=True, timeout=120,
    )  # fmt: skip
    assert child.returncode == -9, child.stderr
    assert _report(root, tmp_path / "1.json") == cold
    assert _report(root, tmp_path / "2.json") == cold
    assert "5 assembled sessions" in runs[-1].status, runs[-1].status


def test_a_new_sub_agent_file_of_a_stored_session_reads_cold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             runs: list[Index]) -> None:  # fmt: skip
    """A file read now whose records belong to a stored session (a new sub-agent file under it): the stored
    session's handlers hold nothing of its threads, so the run reads everything cold."""
    monkeypatch.setenv(ENV_DIR, str(tmp_path / "cache"))
    root = tmp_path / "claude"
    bodies = _history(root)
    for path, body in bodies.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
    _report(root, tmp_path / "1.json")
    sub = next(p for p in bodies if p.parent.name == "subagents")
    (sub.parent / "agent-x2.jsonl").write_bytes(_encode(_conversation("aaaa1111-0000", 600, 2, T0 + 90_000,
                                                                      agent="x2")))  # fmt: skip
    _warm_equals_cold(root, tmp_path)
    assert runs[1].status.startswith("cold: a file read now belongs to stored session aaaa1111"), runs[1].status


def test_a_secret_keeps_its_group_out_of_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   runs: list[Index]) -> None:  # fmt: skip
    """A string the report's redaction would change (a token in a session's working directory) is never
    stored: its group is left out (read again next time), the other groups are stored, the report is cold's."""
    monkeypatch.setenv(ENV_DIR, str(tmp_path / "cache"))
    token = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
    root = tmp_path / "claude"
    for path, body in _history(root).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body.replace(b"/home/u/proj", f"/home/u/{token}".encode()) if "cccc" in path.name else body)
    _warm_equals_cold(root, tmp_path)
    assert any("secret" in why for why in runs[0].not_kept.values()), runs[0].not_kept
    assert token.encode() not in b"".join(p.read_bytes() for p in (tmp_path / "cache").iterdir() if p.is_file())
    _warm_equals_cold(root, tmp_path)
    assert "4 assembled sessions" in runs[1].status, runs[1].status
