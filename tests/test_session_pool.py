"""Transcripts read apart in worker processes give the report of one process (`core.session_pool`): the same
bytes with `--jobs 1` and `--jobs 2` on the simulator's corpus, the realdata senpi-live replay and the demo;
bad lines still problems with their path, line and offset; a pool that cannot start, a worker that dies, or a
history whose reading order the pool cannot reproduce all leave the reading to this process, nothing lost."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path
from typing import Any

import orjson
import pytest

import core.index.apart
import core.session_pool
from core.agents.senpi.commit import RecordingMatcher
from core.demo.sim.generator import generate
from core.demo.sim.sink import DEFAULT_ROTATE_BYTES
from core.engine import Engine
from core.report import build_report, render
from core.report.options import ReportOptions

REPO = Path(__file__).resolve().parent.parent
SENPI_LIVE = REPO.parent / "shared" / "realdata" / "senpi-live" / "agent"
DEMO = REPO / "core" / "demo" / "data"


def _report(paths: list[Path], jobs: int) -> tuple[dict[str, Any], bytes]:
    engine = Engine(paths, jobs=jobs, settle_apart=lambda *args: core.index.apart.settle(*args))
    try:
        engine.drain()
        report = build_report(engine, ReportOptions(now_ms=0))
    finally:
        engine.close()
    report.pop("generated_at")
    return report, orjson.dumps(report, option=orjson.OPT_SORT_KEYS)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """The pool reads any history (no size floor); `counted["adopted"]` says how many sessions it took."""
    monkeypatch.setattr(core.session_pool, "MIN_BYTES", 0)
    seen = {"adopted": 0, "settled": 0, "cold": 0}
    adopt, settle = core.session_pool.adopt, core.index.apart.settle

    def counting_adopt(engine: Engine, taken: list[Any]) -> Any:
        out = adopt(engine, taken)
        seen["adopted"] += 0 if out is None else len(out.sessions)
        return out

    def counting_settle(engine: Engine, adopted: Any, chunk: int) -> bool:
        ok = settle(engine, adopted, chunk)
        seen["settled" if ok else "cold"] += 1
        return ok

    monkeypatch.setattr(core.session_pool, "adopt", counting_adopt)
    monkeypatch.setattr(core.index.apart, "settle", counting_settle)
    return seen


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The simulator's corpus (21 sessions: transcripts, restart sidecars, event recordings, rotated logs)."""
    out = tmp_path_factory.mktemp("corpus") / "agent"
    generate(out, "corpus", seed=7, scale=1.0, rotate_bytes=DEFAULT_ROTATE_BYTES, sessions=21)
    return out


def test_the_corpus_read_apart_gives_the_report_of_one_process(corpus: Path, counted: dict[str, int]) -> None:
    one_bytes = _report([corpus], jobs=1)[1]
    assert counted["adopted"] == 0
    two, two_bytes = _report([corpus], jobs=2)
    assert counted["adopted"] >= 15 and counted["settled"] == 1 and counted["cold"] == 0
    assert two_bytes == one_bytes
    assert len(two["sessions"]) == 21


def test_senpi_live_read_apart_keeps_every_decision(tmp_path: Path, counted: dict[str, int]) -> None:
    if not SENPI_LIVE.is_dir():
        pytest.skip("no realdata")
    home = tmp_path / "agent"
    shutil.copytree(SENPI_LIVE, home)
    one_bytes = _report([home], jobs=1)[1]
    two_bytes = _report([home], jobs=2)[1]
    assert counted["adopted"] == 3
    assert two_bytes == one_bytes


def test_the_demo_read_apart_renders_the_same_reports(counted: dict[str, int]) -> None:
    outputs: dict[int, list[bytes]] = {}
    for jobs in (1, 2):
        report, _ = _report([DEMO], jobs)
        outputs[jobs] = [render(report, fmt).encode() for fmt in ("json", "md", "html")]
    assert counted["adopted"] >= 2
    assert outputs[2] == outputs[1]


def _bad_lines(corpus: Path, tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "agent"
    shutil.copytree(corpus, home)
    transcript = sorted((home / "sessions").rglob("*.jsonl"))[0]
    lines = transcript.read_bytes().split(b"\n")
    lines.insert(3, b'{"type": "message", "broken')
    lines.insert(6, b"\xff\xfe not utf-8")
    transcript.write_bytes(b"\n".join(lines))
    return home, transcript


def test_bad_lines_of_a_transcript_read_apart_are_problems_with_their_place(
    corpus: Path, tmp_path: Path, counted: dict[str, int]
) -> None:
    home, transcript = _bad_lines(corpus, tmp_path)
    one_bytes = _report([home], jobs=1)[1]
    two, two_bytes = _report([home], jobs=2)
    assert counted["adopted"] >= 15
    assert two_bytes == one_bytes
    mine = [p for p in two["problems"] if p["path"].endswith(transcript.name)]
    assert [p["line"] for p in mine] == [4, 7]
    assert all(p["offset"] > 0 for p in mine)


def test_a_pool_that_cannot_start_leaves_everything_to_this_process(
    corpus: Path, counted: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    one_bytes = _report([corpus], jobs=1)[1]

    def no_pool(self: Any) -> Any:
        raise OSError("no processes here")

    monkeypatch.setattr(core.engine.LogPool, "executor", no_pool)
    two_bytes = _report([corpus], jobs=2)[1]
    assert counted["adopted"] == 0
    assert two_bytes == one_bytes


def _die(path: str, paths: list[str]) -> bytes | None:
    os._exit(3)  # a worker killed mid-read


def test_a_worker_that_dies_leaves_everything_to_this_process(
    corpus: Path, counted: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    one_bytes = _report([corpus], jobs=1)[1]
    monkeypatch.setattr(core.session_pool, "read_transcript", _die)
    monkeypatch.setattr(
        threading, "active_count", lambda: 1
    )  # forked workers (whatever threads the suite left): they see it
    two_bytes = _report([corpus], jobs=2)[1]
    assert counted["adopted"] == 0
    assert two_bytes == one_bytes


def test_a_history_the_pool_cannot_settle_is_read_again_in_this_process(
    corpus: Path, counted: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """When `settle` says the pooled run cannot give what a cold drain gives (a log line a cold drain credits to
    a session read apart), the engine forgets what it read and reads everything again itself: the same bytes."""
    one_bytes = _report([corpus], jobs=1)[1]
    monkeypatch.setattr(core.index.apart, "settle", lambda engine, adopted, chunk: False)
    two_bytes = _report([corpus], jobs=2)[1]
    assert counted["adopted"] >= 15
    assert two_bytes == one_bytes


def test_recordings_a_cold_drain_could_drop_leave_the_history_to_this_process(
    corpus: Path, counted: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold drain keeps a bounded number of recordings waiting for their turn and drops the rest; read apart,
    none would wait that long. With more recordings than the bound the pool does not read the history."""
    one_bytes = _report([corpus], jobs=1)[1]
    monkeypatch.setattr(RecordingMatcher, "pending_limit", 10)
    two_bytes = _report([corpus], jobs=2)[1]
    assert counted["adopted"] == 0
    assert two_bytes == one_bytes
