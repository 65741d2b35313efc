"""The README's queries of the index run on a real store: the `sqlite3` command it shows (through the
`sqlite3` shell and the installed `continuity-tui`, when both are there) and the queries it names inline."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from core.index import index_path
from tests.index_support import demo_without_recordings, stored

README = Path(__file__).resolve().parents[2] / "README.md"


def _section() -> str:
    text = README.read_text()
    start = text.index("## Persistent index")
    return text[start : text.index("\n## ", start + 1)]


def _command() -> str:
    block = re.search(r"```sh\n(sqlite3 \"\$\(continuity-tui index --path\)\".*?)\n```", _section(), re.S)
    assert block is not None, "the README shows no sqlite3 command on the index"
    return block.group(1)


def _queries() -> list[str]:
    """The SQL of the command and of the inline examples after it."""
    command = _command()
    inline = re.findall(r"`(SELECT [^`]+)`", _section())
    shown = re.findall(r'"(SELECT [^"]+)"', command)
    assert shown and inline
    return shown + inline


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A store a real report process wrote: the demo's finished sessions, their calls and its log."""
    command = [sys.executable, "-m", "tui.cli", "report", str(demo_without_recordings(tmp_path)), "-o", os.devnull]
    subprocess.run(command, check=True, capture_output=True, env={**os.environ}, timeout=300)
    assert stored("SELECT count(*) FROM calls") != [(0,)]
    assert stored("SELECT count(*) FROM decisions_daily") != [(0,)]
    return index_path()


def test_the_readme_queries_run_on_a_real_store(store: Path) -> None:
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        results = [conn.execute(query).fetchall() for query in _queries()]
        calls = conn.execute("SELECT count(*) FROM calls").fetchone()[0]
        sessions = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
    finally:
        conn.close()
    assert all(results), results
    by_kind, _daily, by_agent = results
    assert sum(row[2] for row in by_kind) == calls  # every stored call, once
    assert sum(row[1] for row in by_agent) == sessions


def test_the_readme_command_runs_as_shown(store: Path) -> None:
    entry = Path(sys.executable).parent / "continuity-tui"
    if shutil.which("sqlite3") is None or not entry.exists():
        pytest.skip("needs the sqlite3 shell and an installed continuity-tui")
    env = {**os.environ, "PATH": f"{entry.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run(["sh", "-c", _command()], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    rows = [line.split("|") for line in result.stdout.splitlines()]
    assert rows and all(len(row) == 4 for row in rows), result.stdout
    assert sum(int(row[2]) for row in rows) == stored("SELECT count(*) FROM calls")[0][0]
