"""The persistent index on the other agents' formats: Claude Code (a main transcript and a sub-agent file that
grow), mux/Xum (chat.jsonl appended, rewritten whole by rename, or rewritten in place). Their sessions are
assembled by record handlers across files and never parked; the index stores them in groups keyed by all their
files (`core.index.assembled`, `test_index_assembled.py`), and a group with a changed file is read again: each
run must still report exactly what a cold run reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.index import Index
from tests.test_agent_claude_code import build as build_claude
from tests.test_agent_mux import WS, append, assistant, rewrite, text, user
from tui.cli import main


def report(root: Path, tmp_path: Path, *extra: str) -> dict[str, Any]:
    out = tmp_path / "report.json"
    assert main(["report", str(root), "--format", "json", "-o", str(out), *extra]) == 0
    data = json.loads(out.read_bytes())
    data.pop("generated_at")
    return data


@pytest.mark.parametrize("cut", [0.25, 0.5, 0.8])
def test_claude_code_files_that_grew_resume(tmp_path: Path, runs: list[Index], cut: float) -> None:
    projects, main_path, agent_path = build_claude(tmp_path)
    whole = {path: path.read_bytes() for path in (main_path, agent_path)}
    for path, body in whole.items():
        path.write_bytes(body[: int(len(body) * cut)])  # mid-line: a held partial line
    report(projects, tmp_path)
    for path, body in whole.items():
        with path.open("ab") as fh:
            fh.write(body[path.stat().st_size :])
    warm = report(projects, tmp_path)
    assert runs[-1].status == "cold: no index yet"
    assert warm == report(projects, tmp_path, "--no-cache")


def _mux(tmp_path: Path) -> tuple[Path, Path, list[Any]]:
    sessions = tmp_path / ".xum" / "sessions"
    (sessions / WS).mkdir(parents=True)
    chat = sessions / WS / "chat.jsonl"
    rows: list[Any] = [
        user(0, "Which file holds the entry point?"),
        assistant(1, [text("src/main.ts")], total=1400, read=0, write=1300),
        user(2, "Now run the linter."),
    ]
    rewrite(chat, rows)
    return sessions, chat, rows


def test_mux_rows_appended_resume(tmp_path: Path, runs: list[Index]) -> None:
    sessions, chat, _ = _mux(tmp_path)
    report(sessions, tmp_path)
    append(chat, [assistant(3, [text("Lint passed.")], total=1460, read=1400, write=50), user(4, "thanks")])
    warm = report(sessions, tmp_path)
    assert warm == report(sessions, tmp_path, "--no-cache")


def test_mux_rewritten_by_rename_reads_cold(tmp_path: Path, runs: list[Index]) -> None:
    sessions, chat, rows = _mux(tmp_path)
    report(sessions, tmp_path)
    rows[1] = assistant(1, [text("src/index.ts")], total=1400, read=0, write=1300)  # a row updated by sequence
    rewrite(chat, [*rows, assistant(3, [text("Lint passed.")], total=1460, read=1400, write=50)])
    after = report(sessions, tmp_path)
    assert after == report(sessions, tmp_path, "--no-cache")


def test_mux_rewritten_in_place_reads_cold(tmp_path: Path, runs: list[Index]) -> None:
    """Same inode, same first bytes, same last bytes before the saved offset, longer: only the whole-prefix
    digest kept for formats whose writer rewrites (mux) tells it from an append."""
    sessions, chat, _ = _mux(tmp_path)
    report(sessions, tmp_path)
    body = chat.read_bytes()
    middle = body.index(b"src/main.ts")
    stat = chat.stat()
    with chat.open("r+b") as fh:
        fh.write(body[:middle] + b"src/mainXts" + body[middle + 11 :] + b"\n")
    assert chat.stat().st_ino == stat.st_ino
    after = report(sessions, tmp_path)
    assert after == report(sessions, tmp_path, "--no-cache")


def test_claude_code_call_cut_between_its_blocks_equals_cold(tmp_path: Path, runs: list[Index]) -> None:
    """A call whose content blocks straddle where the last run stopped: read again whole, it is one call."""
    projects, main_path, _ = build_claude(tmp_path)
    body = main_path.read_bytes()
    first_block = body.index(b"\n", body.index(b'"thinking"')) + 1
    main_path.write_bytes(body[:first_block])
    report(projects, tmp_path)
    main_path.write_bytes(body)
    after = report(projects, tmp_path)
    assert after == report(projects, tmp_path, "--no-cache")
