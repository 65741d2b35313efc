"""What the persistent index tests share: data dirs whose sessions the index stores, and reports of real runs.

`report` runs the real `report` command in this process (the index in the test's own cache dir, `conftest`)
and returns its JSON without the time of the run; `cold` is the same with `--no-cache`. A resumed run must give
exactly the cold report of the same bytes.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import core.demo
from core.index import index_path
from tests.report_helpers import write_agent
from tui.cli import main

DEMO = Path(core.demo.__file__).parent / "data"


def report(paths: list[Path], tmp_path: Path, *extra: str) -> dict[str, Any]:
    """`continuity-tui report PATHS --format json`, parsed, without its time-of-run field."""
    out = tmp_path / f"report-{len(list(tmp_path.glob('report-*.json')))}.json"
    assert main(["report", *map(str, paths), "--format", "json", "-o", str(out), *extra]) == 0
    data = json.loads(out.read_bytes())
    data.pop("generated_at")
    return data


def cold(paths: list[Path], tmp_path: Path, *extra: str) -> dict[str, Any]:
    return report(paths, tmp_path, "--no-cache", *extra)


def demo_without_recordings(tmp_path: Path, name: str = "demo") -> Path:
    """The demo agent dir without its event recordings: its finished sessions are ones the index stores (a
    session with recordings attached is read from its file at every start)."""
    data = tmp_path / name
    shutil.copytree(DEMO, data)
    shutil.rmtree(data / "events")
    return data


def agent(tmp_path: Path) -> Path:
    """The report tests' agent dir (rotated logs, two sessions, bad lines)."""
    return write_agent(tmp_path / "data")


def stored(query: str, *args: Any) -> list[tuple[Any, ...]]:
    """Rows of the test's index (read-only)."""
    conn = sqlite3.connect(f"file:{index_path()}?mode=ro", uri=True)
    try:
        return conn.execute(query, args).fetchall()
    finally:
        conn.close()


def stored_sessions() -> set[str]:
    return {row[0] for row in stored("SELECT key FROM sessions")}


def many_sessions(tmp_path: Path, copies: int, name: str = "many") -> Path:
    """The demo without recordings, its finished sessions copied `copies` times under new session ids (each in
    its own folder): a history that takes a while to read, for the kill and order tests."""
    root = demo_without_recordings(tmp_path, name)
    originals = sorted(p for p in (root / "sessions").rglob("*") if p.is_file())
    for i in range(copies):
        for path in originals:
            name_part = path.name
            session_id = name_part.split("_", 1)[1].split(".", 1)[0]
            new_id = f"{session_id[:4]}{i:04x}{session_id[8:]}"
            folder = root / "sessions" / f"--copy-{i:03d}-{path.parent.name.strip('-')}--"
            folder.mkdir(exist_ok=True)
            (folder / name_part.replace(session_id, new_id)).write_bytes(
                path.read_bytes().replace(session_id.encode(), new_id.encode())
            )
    return root
