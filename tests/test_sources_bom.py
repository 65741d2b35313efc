"""A UTF-8 byte order mark at the start of a file is accepted, for every format this tool reads.

An editor or a Windows tool may write one before line 1. It made line 1 a located Problem ("invalid JSON"), so
the line was lost: a senpi transcript's session header, a Claude Code or Codex session's first entry. The
tailer skips it: line 1 starts at offset 3, so a re-read by offset gets exactly the line's bytes. Each real
data set (and a pretty-printed JSON document, mux's `partial.json` shape) is read twice, as written and with a
BOM before every file: the reports are the same but for the sizes and offsets the three bytes move.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from realdata import REAL, needs_realdata
from report_helpers import report_for

from core.engine import Engine
from core.sources.reread import reread_line
from core.sources.tail import BOM, Sources

#: (name, a real set, the files of it to copy: None for all)
SETS: list[tuple[str, Path, list[str] | None]] = [
    ("senpi", REAL / "senpi-live" / "agent", None),
    ("pi", REAL / "pi" / "badlogic-pi-mono" / "sessions",
     ["--Users-badlogic-workspaces-pi-mono--/2025-11-20T23-33-50-805Z_d703a1a9-1b7b-4fb1-b512-c9738b1fe617.jsonl"]),
    ("claude-code", REAL / "claude-code" / "oneryalcin-fasthooks" / "projects", None),
    ("codex", REAL / "codex" / "sessions",
     ["2026/01/02/rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl"]),
    ("mux", REAL / "mux" / "coder-mux" / "sessions", None),
]  # fmt: skip


def _copy(src: Path, files: list[str] | None, dst: Path) -> Path:
    if files is None:
        shutil.copytree(src, dst)
    for rel in files or []:
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, dst / rel)
    return dst


def _shape(report: dict[str, Any]) -> dict[str, Any]:
    """What a BOM must not change: problems, sessions, calls and their decisions, the continuity counts."""
    return {
        "problems": [(Path(p["path"]).name, p.get("line"), p["error"]) for p in report["problems"]],
        "sessions": sorted((s.get("id"), s.get("turns")) for s in report["sessions"]),
        "turns": [(t.get("session"), t.get("index"), t.get("kind"), t.get("reason")) for t in report["turns"]],
        "continuity": report["continuity"]["events"],
        "lines": sum(s["lines"] for s in report["sources"]),
    }


@needs_realdata
@pytest.mark.parametrize(("name", "src", "files"), SETS, ids=[s[0] for s in SETS])
def test_a_bom_before_every_file_changes_nothing_read(
    name: str, src: Path, files: list[str] | None, tmp_path: Path
) -> None:
    plain = _copy(src, files, tmp_path / "plain")
    marked = _copy(src, files, tmp_path / "bom")
    data_files = [p for p in marked.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".log", ".json")]
    assert data_files
    for path in data_files:
        path.write_bytes(BOM + path.read_bytes())
    before, after = _shape(report_for(plain)), _shape(report_for(marked))
    assert before["lines"] > 0 and (before["turns"] or before["continuity"])
    assert after == before


def test_line_one_starts_after_the_bom_and_rereads_exactly(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(BOM + b'{"a": 1}\n{"b": 2}\n')
    sources = Sources([tmp_path])
    try:
        lines = [line for batch in sources.poll() for line in batch.lines]
    finally:
        sources.close()
    assert [(line.lineno, line.offset, line.data) for line in lines] == [(1, 3, b'{"a": 1}'), (2, 12, b'{"b": 2}')]
    from core.model import Where

    assert reread_line(Where(str(path), 1, 3, len(b'{"a": 1}'))) == b'{"a": 1}'


@needs_realdata
def test_a_pretty_printed_document_after_a_bom_is_one_record(tmp_path: Path) -> None:
    """mux's `partial.json` (pretty-printed, no trailing newline): the document joiner starts at line 1 wherever
    its first byte is."""
    from test_agent_mux import assistant

    doc = {k: v for k, v in assistant(5, []).items() if k != "workspaceId"}
    doc["metadata"] = {**doc["metadata"], "partial": True}
    formats = {}
    for bom in (b"", BOM):
        root = tmp_path / ("bom" if bom else "plain")
        ws = root / "sessions" / "replay-fixture"
        shutil.copytree(REAL / "mux" / "coder-mux" / "sessions" / "replay-fixture", ws)
        (ws / "partial.json").write_bytes(bom + json.dumps(doc, indent=2).encode())
        engine = Engine([root])
        try:
            engine.drain()
            problems = [p for p in engine.state.problems if p.path.endswith("partial.json")]
            formats[bom] = engine.stats[str(ws / "partial.json")].format
        finally:
            engine.close()
        assert problems == [], bom
    assert formats == {b"": "mux-partial", BOM: "mux-partial"}
