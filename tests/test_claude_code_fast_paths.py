"""The Claude Code call handler's shortcuts give exactly what the long way gives (issue 15).

A later block of a call whose usage differs from the kept one only in its output count is not judged again
(`calls._same_prompt`): the verdict reads none of the output. These tests read every real Claude Code set, and a
generated history shaped like the bench corpus, twice — with the shortcut, and with every such block judged
again as before — and compare every report turn and session whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench import claude_corpus
from core.agents.claude_code import calls
from core.engine import Engine
from core.report import ReportOptions, build_report
from tests.realdata import CLAUDE_SETS, SETS


def _report(root: Path) -> dict[str, Any]:
    engine = Engine([root])
    engine.read_all()
    try:
        return build_report(engine, ReportOptions(now_ms=0))
    finally:
        engine.close()


def _both(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], dict[str, Any], int]:
    taken = [0]
    same = calls._same_prompt

    def counting(kept: calls.CallUsage, usage: calls.CallUsage) -> bool:
        found = same(kept, usage)
        taken[0] += found
        return found

    monkeypatch.setattr(calls, "_same_prompt", counting)
    fast = _report(root)
    monkeypatch.setattr(calls, "_same_prompt", lambda kept, usage: False)  # every later block judged again
    slow = _report(root)
    return fast, slow, taken[0]


@pytest.mark.parametrize("name", CLAUDE_SETS)
def test_the_real_sets_read_the_same_with_and_without_the_shortcut(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, slow, _ = _both(SETS[f"cc-{name}"], monkeypatch)
    assert fast["turns"] == slow["turns"]
    assert fast["sessions"] == slow["sessions"]
    assert fast["calls"] == slow["calls"] and fast["waste"] == slow["waste"]


def test_the_shortcut_is_taken_on_real_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """(so the comparison above compares something: 576 of 793 later blocks in these sets keep their prompt)"""
    taken = sum(_both(SETS[f"cc-{name}"], monkeypatch)[2] for name in ("marot-spotter", "Crazytieguy-alignment-hive"))
    assert taken > 100


def test_a_bench_shaped_history_reads_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    claude_corpus.generate(tmp_path, 2_000_000)
    fast, slow, taken = _both(tmp_path / "projects", monkeypatch)
    assert taken > 0 and len(fast["turns"]) > 50
    assert fast["turns"] == slow["turns"] and fast["sessions"] == slow["sessions"]
