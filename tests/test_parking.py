"""Parking (`State.park`): a session whose transcript was read to its end drops its incremental machinery.

What a user sees must not change: a report of a history read with parking equals (JSON, minus `generated_at`)
one read without, whatever the read chunk (a drain reads files round-robin, so recordings, log lines and
sidecars may arrive after the transcript they belong to); a parked session whose file grows is rebuilt and
equals a cold read of the grown file; the drill-down reads the same (a parked session stored by the
persistent index: `tests/index/`).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from report_helpers import write_agent

import core.demo
from core.agents.senpi.continuity.replay import VerdictReplay
from core.agents.senpi.drilldown import load_capture_commit
from core.agents.senpi.payload.analyzer import PayloadAnalyzer
from core.agents.senpi.payload.rebuild import rebuild_turn, simulate_turn
from core.agents.shared.pi_family.context import ProviderContext
from core.engine import READ_CHUNK, Engine
from core.report import build_report, render_bytes
from core.sources.reread import FileReread

READ = FileReread()  # the re-read port the engine hands the analyses

DEMO = Path(core.demo.__file__).parent / "data"


def _report(engine: Engine) -> dict[str, Any]:
    engine.finish_pending()
    engine.report_partials()
    out = json.loads(render_bytes(build_report(engine), "json"))
    out.pop("generated_at", None)
    return out


def _read(paths: list[Path], *, park: bool, chunk: int = READ_CHUNK) -> Engine:
    engine = Engine(paths, park_after_s=0.0 if park else None)
    engine.read_all(chunk)
    return engine


def _parked(engine: Engine) -> int:
    return sum(session.parked is not None for session in engine.state.sessions.values())


def _transcripts(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.jsonl") if "sessions" in p.parts)


@pytest.mark.parametrize("chunk", [READ_CHUNK, 65_536, 4096])
def test_demo_report_is_the_same_parked(chunk: int) -> None:
    """Small chunks: event recordings and log lines arrive after their transcripts were parked."""
    cold = _read([DEMO], park=False, chunk=chunk)
    parked = _read([DEMO], park=True, chunk=chunk)
    assert _parked(parked) >= 2
    assert _parked(cold) == 0
    assert _report(parked) == _report(cold)


@pytest.mark.parametrize("chunk", [READ_CHUNK, 1024])
def test_built_agent_report_is_the_same_parked(tmp_path: Path, chunk: int) -> None:
    agent = write_agent(tmp_path)
    cold = _read([agent], park=False, chunk=chunk)
    parked = _read([agent], park=True, chunk=chunk)
    assert _parked(parked) == 2
    assert _report(parked) == _report(cold)


def test_parking_drops_the_incremental_state() -> None:
    engine = _read([DEMO], park=True)
    for session in engine.state.sessions.values():
        if session.parked is None:
            continue
        payload = session.analyzer(PayloadAnalyzer)
        if payload is not None:
            assert payload.lanes == {} and not payload.completed and not payload._pending  # type: ignore[attr-defined]
        verdicts = session.analyzer(VerdictReplay)
        if verdicts is not None:
            assert len(verdicts.marks) <= 1  # type: ignore[attr-defined]
        context = session.analyzer(ProviderContext)
        if context is not None:
            assert context.items == []  # type: ignore[attr-defined]


def test_the_drill_down_reads_the_same_parked() -> None:
    """The detail screen re-reads capture and commit (`load_capture_commit`) and rebuilds payloads from disk."""
    cold = _read([DEMO], park=False)
    parked = _read([DEMO], park=True)
    compared = 0
    for key, session in parked.state.sessions.items():
        other = cold.state.sessions[key]
        for turn, twin in zip(session.turns, other.turns, strict=True):
            assert load_capture_commit(turn, session, READ) == load_capture_commit(twin, other, READ)
            a, b = rebuild_turn(session, turn.index, READ), rebuild_turn(other, twin.index, READ)
            assert (a.blocks_raw if a else None) == (b.blocks_raw if b else None)
            assert simulate_turn(session, turn.index, READ) == simulate_turn(other, twin.index, READ)
            compared += 1
    assert compared > 10


def _split_transcripts(src: Path, dst: Path) -> list[tuple[Path, bytes]]:
    """Copy `src` to `dst` with every transcript cut to its first half (at a line end); returns the rests."""
    shutil.copytree(src, dst)
    rests = []
    for path in _transcripts(dst):
        data = path.read_bytes()
        lines = data.splitlines(keepends=True)
        half = b"".join(lines[: max(2, len(lines) // 2)])
        path.write_bytes(half)
        rests.append((path, data[len(half) :]))
    return rests


def test_a_parked_session_whose_file_grows_equals_a_cold_read(tmp_path: Path) -> None:
    root = tmp_path / "data"
    rests = _split_transcripts(DEMO, root)
    engine = _read([root], park=True)
    assert _parked(engine) >= 2
    for path, rest in rests:
        with open(path, "ab") as fh:
            fh.write(rest)
    engine.read_all()
    grown = _report(engine)
    assert grown == _report(_read([root], park=False))
    assert grown == _report(_read([root], park=True))


def test_a_grown_parked_session_equals_one_never_parked(tmp_path: Path) -> None:
    """The same live history (read, grow, read on), with and without parking in between."""
    root = tmp_path / "data"
    rests = _split_transcripts(DEMO, root)
    live = _read([root], park=False)
    parked = _read([root], park=True)
    for path, rest in rests:
        with open(path, "ab") as fh:
            fh.write(rest)
    live.read_all()
    parked.read_all()
    assert _report(parked) == _report(live)


def test_a_live_engine_parks_only_idle_files(tmp_path: Path) -> None:
    """The idle threshold is the engine's clock against the file's mtime: no sleeping in tests."""
    root = tmp_path / "data"
    shutil.copytree(DEMO, root)
    # one mtime for every file: a checkout stamps files when it writes them, so a demo file changed by a
    # later merge would otherwise look 10+ minutes newer than the rest
    newest = max(os.stat(p).st_mtime for p in _transcripts(root))
    for path in root.rglob("*"):
        os.utime(path, (newest, newest))
    now = [newest + 10.0]
    engine = Engine([root], park_after_s=600.0, clock=lambda: now[0])
    while engine.poll().changed:
        pass
    assert _parked(engine) == 0  # read to the end, but modified 10 s ago
    now[0] = newest + 601.0
    engine.poll()
    assert _parked(engine) >= 2
    assert _report(engine) == _report(_read([root], park=False))


def test_a_late_recording_wakes_its_parked_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read in small chunks, event recordings arrive after their transcripts were parked: the session is
    rebuilt (its recordings matched anew) and the report is the one a never-parked read gives."""
    from core.state import State

    woken: list[str] = []
    unpark = State.unpark

    def spy(self: State, key: str, *args: Any) -> None:
        woken.append(key)
        unpark(self, key, *args)

    monkeypatch.setattr(State, "unpark", spy)
    parked = _read([DEMO], park=True, chunk=4096)
    assert woken
    assert _report(parked) == _report(_read([DEMO], park=False, chunk=4096))


def test_a_sidecar_read_after_parking_is_judged_as_before(tmp_path: Path) -> None:
    """A restart binding of a parked session is judged against its newest branch mark, kept frozen: the same
    history (transcripts first, their sidecars later) read with and without parking reports the same."""
    root = tmp_path / "data"
    shutil.copytree(DEMO, root)
    sidecars = sorted(root.rglob("*.claude-sdk-oauth-binding.json"))
    assert sidecars
    held = tmp_path / "held"
    held.mkdir()
    for i, path in enumerate(sidecars):
        path.rename(held / f"{i}.json")
    parked, live = _read([root], park=True), _read([root], park=False)
    assert _parked(parked) >= 2
    for i, path in enumerate(sidecars):
        (held / f"{i}.json").rename(path)
    parked.read_all()
    live.read_all()
    verdicts = [s.facts.sidecar_verdict for s in parked.state.sessions.values() if s.parked is not None]
    assert any(verdicts)
    assert _report(parked) == _report(live)
