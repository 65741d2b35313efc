"""The verdict replay takes a call's counterfactual step from its real one while the two registries are one object
(`core.agents.senpi.continuity.replay.SHARE_COUNTERFACTUAL`): the report is the one two steps per call give, on
the simulator's corpus (rewritten commits that differ only in volatile fields make the two diverge), the
realdata senpi-live replay and the demo."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

import core.agents.senpi.continuity.replay as replay
from core.demo.sim.generator import generate
from core.demo.sim.sink import DEFAULT_ROTATE_BYTES
from core.engine import Engine
from core.report import build_report
from core.report.options import ReportOptions

REPO = Path(__file__).resolve().parent.parent
SENPI_LIVE = REPO.parent / "shared" / "realdata" / "senpi-live" / "agent"
DEMO = REPO / "core" / "demo" / "data"


def _report(paths: list[Path]) -> tuple[bytes, list[Any]]:
    engine = Engine(paths, jobs=1)
    try:
        engine.drain()
        report = build_report(engine, ReportOptions(now_ms=0))
        turns = [t for s in engine.state.sessions.values() for t in s.turns]
    finally:
        engine.close()
    report.pop("generated_at")
    return orjson.dumps(report, option=orjson.OPT_SORT_KEYS), turns


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("corpus") / "agent"
    generate(out, "corpus", seed=7, scale=1.0, rotate_bytes=DEFAULT_ROTATE_BYTES, sessions=21)
    return out


def _both(monkeypatch: pytest.MonkeyPatch, paths: list[Path]) -> tuple[bytes, bytes, list[Any]]:
    shared, turns = _report(paths)
    monkeypatch.setattr(replay, "SHARE_COUNTERFACTUAL", False)
    two_steps, _ = _report(paths)
    monkeypatch.setattr(replay, "SHARE_COUNTERFACTUAL", True)
    return shared, two_steps, turns


def test_the_corpus_gives_the_report_of_two_steps_per_call(monkeypatch: pytest.MonkeyPatch, corpus: Path) -> None:
    shared, two_steps, turns = _both(monkeypatch, [corpus])
    assert shared == two_steps
    # both branches ran: calls whose counterfactual left the real replay (a volatile-only rewrite before them)
    assert any(t.counterfactual != t.recomputed for t in turns)
    assert sum(t.counterfactual is not None for t in turns) > 100
    # no turn's counterfactual is its recomputed decision's very object (two steps never gave one)
    assert all(t.counterfactual is not t.recomputed for t in turns if t.recomputed is not None)


@pytest.mark.parametrize("root", [SENPI_LIVE, DEMO], ids=["senpi-live", "demo"])
def test_real_histories_give_the_report_of_two_steps_per_call(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    if not root.is_dir():
        pytest.skip(f"{root} is absent")
    shared, two_steps, _ = _both(monkeypatch, [root])
    assert shared == two_steps
