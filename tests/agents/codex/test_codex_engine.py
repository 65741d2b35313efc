"""Codex rollouts through the engine and the CLI: found with no PATH, tailed as they grow, read again when
replaced, bad lines reported with their place, and a warm index run equal to a cold one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from core.agents import default_roots
from core.agents.codex import AGENT
from core.engine import Engine
from core.index import Index
from core.report import build_report
from tests.agents.codex.codex_lines import REAL, SID, T0, Rollout, rollout_path
from tests.agents.codex.test_codex_calls import story
from tests.realdata import needs_realdata
from tui.cli import main

OTHER_HOMES = (
    "SENPI_CODING_AGENT_DIR",
    "PI_CODING_AGENT_DIR",
    "CLAUDE_CONFIG_DIR",
    "XUM_ROOT",
    "MUX_ROOT",
    "CODEX_HOME",
)


def report_of(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["report", *args, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    data.pop("generated_at")
    return data


def test_homes_follow_codex_home_else_the_default(tmp_path: Path) -> None:
    (home,) = AGENT.homes
    assert home.candidates({}, tmp_path) == [tmp_path / ".codex" / "sessions"]
    assert home.candidates({"CODEX_HOME": str(tmp_path / "ch")}, tmp_path) == [tmp_path / "ch" / "sessions"]
    assert default_roots({}, tmp_path) == []
    (tmp_path / ".codex" / "sessions").mkdir(parents=True)
    assert default_roots({}, tmp_path) == [tmp_path / ".codex" / "sessions"]


@pytest.mark.parametrize("via_env", [False, True])
def test_report_without_a_path_finds_codex_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], via_env: bool
) -> None:
    for name in OTHER_HOMES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    codex_home = tmp_path / "elsewhere" if via_env else tmp_path / ".codex"
    if via_env:
        monkeypatch.setenv("CODEX_HOME", str(codex_home))
    story().write(rollout_path(codex_home))
    report = report_of([], capsys)
    assert [(s["agent"], s["id"], s["turns"]) for s in report["sessions"]] == [("codex", SID, 8)]
    assert {s["format"] for s in report["sources"]} == {"codex-rollout"}
    assert report["sources"][0]["path"].startswith("2026/08/22/rollout-")
    assert all(t["logged"]["kind"] for t in report["turns"])


def test_a_growing_rollout_is_tailed_without_counting_a_call_twice(tmp_path: Path) -> None:
    path = rollout_path(tmp_path)
    path.parent.mkdir(parents=True)
    lines = story().lines
    engine = Engine([tmp_path / "sessions"])
    seen: list[int] = []
    for end in (3, 9, 12, 25, 30, len(lines)):  # cut between a call's line and its repeats, and mid-compaction
        body = b"".join(line + b"\n" for line in lines[:end])
        with path.open("ab") as fh:
            fh.write(body[path.stat().st_size if path.exists() else 0 :])
        engine.drain()
        seen.append(len(engine.state.sessions[str(path)].turns))
    assert seen == [0, 1, 2, 4, 5, 8]
    repeat = next(line for line in reversed(lines) if b'"token_count"' in line)  # Codex's copy of the last call
    with path.open("ab") as fh:
        fh.write(repeat[:30])  # half of it: held until its newline arrives
    engine.drain()
    with path.open("ab") as fh:
        fh.write(repeat[30:] + b"\n")
    engine.drain()
    turns = engine.state.sessions[str(path)].turns
    assert len(turns) == 8 and [t.index for t in turns] == list(range(8))
    assert [t.kind for t in turns] == [
        "bootstrap",
        "delta",
        "re-send",
        "re-send",
        "compaction",
        "re-send",
        "aborted",
        "delta",
    ]


def test_a_replaced_rollout_is_read_again_and_bad_lines_are_problems(tmp_path: Path) -> None:
    r = story()
    r.lines.insert(6, b'{"timestamp":"2026-08-22T09:00:05.500Z","type":"event_msg","payload":{"type":"token_')
    r.lines.insert(12, b"\xff\xfe not json")
    path = r.write(rollout_path(tmp_path))
    engine = Engine([tmp_path / "sessions"])
    engine.drain()
    session = engine.state.sessions[str(path)]
    assert len(session.turns) == 8 and session.session_id == SID and session.cwd == "/home/dev/shop"
    problems = [(p.line, p.error) for p in engine.state.problems if p.path == str(path)]
    offsets = [sum(len(line) + 1 for line in r.lines[: n - 1]) for n in (7, 13)]
    assert [(p.line, p.offset) for p in engine.state.problems if p.path == str(path)] == list(
        zip((7, 13), offsets, strict=True)
    )
    assert "invalid JSON" in problems[0][1] and "invalid UTF-8" in problems[1][1]
    assert engine.stats[str(path)].bad_lines == 2
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data)  # a new inode, same content: read from 0 again, nothing counted twice
    engine.drain()
    session = engine.state.sessions[str(path)]
    assert len(session.turns) == 8 and [t.index for t in session.turns] == list(range(8))


def test_turns_and_sessions_in_the_report(tmp_path: Path) -> None:
    path = Rollout(source={"subagent": "review"}).write(rollout_path(tmp_path))
    r = story()
    r.write(path)
    engine = Engine([tmp_path / "sessions"])
    engine.drain()
    report = build_report(engine)
    (session,) = report["sessions"]
    assert (session["agent"], session["id"], session["cwd"], session["started_at"]) == (
        "codex",
        SID,
        "/home/dev/shop",
        "2026-08-22T09:00:00.000Z",
    )
    assert session["models"] == ["gpt-5.2-codex", "gpt-5.4"] and session["profile"]["id"] == "codex"
    assert "Codex CLI 0.105.0" in session["profile"]["label"]
    turn = report["turns"][2]
    assert turn["logged"] == {
        "kind": "re-send",
        "reason": "prefix_rewritten",
        "count": None,
        "payload_bytes": None,
        "collapsed_directives": None,
        "source": "cache",
        "matched_log_line": False,
    }
    assert turn["tokens"] == {"input": 712, "cache_read": 12_288, "cache_write": 0, "output": 100}
    assert (turn["cache"]["expected_read"], turn["cache"]["excess"], turn["thread"]) == (12_416, 128, "main")
    assert turn["entry_id"] == "#15" and turn["ts"] == "2026-08-22T09:00:11.000Z"
    assert report["turns"][6]["tokens"] is None and report["turns"][6]["logged"]["source"] == "transcript"


@needs_realdata
def test_a_warm_index_run_reports_what_a_cold_run_does(
    tmp_path: Path, runs: list[Index], capsys: pytest.CaptureFixture[str]
) -> None:
    sessions = tmp_path / "sessions"
    shutil.copytree(REAL / "sessions", sessions)
    grown = sessions / "2026/04/07/rollout-2026-04-07T23-24-08-019d688b-3b5f-72c0-8028-4a4af562b9f5.jsonl"
    body = grown.read_bytes()
    grown.write_bytes(body[: len(body) // 2])
    report_of([str(sessions)], capsys)
    grown.write_bytes(body)  # appended in place
    warm = report_of([str(sessions)], capsys)
    # a Codex session is never parked (its rollout is read by a record handler): the index keeps nothing of it,
    # and every start reads the rollouts again (`core.index`)
    assert runs[-1].status == "cold: no index yet"
    cold = report_of([str(sessions), "--no-cache"], capsys)
    assert warm == cold and len(cold["turns"]) == 997
    assert T0  # the fixtures' clock is shared with the other Codex tests
