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
from tests.realdata import CLAUDE_SETS, SETS, needs_realdata


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


@needs_realdata
@pytest.mark.parametrize("name", CLAUDE_SETS)
def test_the_real_sets_read_the_same_with_and_without_the_shortcut(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, slow, _ = _both(SETS[f"cc-{name}"], monkeypatch)
    assert fast["turns"] == slow["turns"]
    assert fast["sessions"] == slow["sessions"]
    assert fast["calls"] == slow["calls"] and fast["waste"] == slow["waste"]


@needs_realdata
def test_the_shortcut_is_taken_on_real_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """(so the comparison above compares something: 576 of 793 later blocks in these sets keep their prompt)"""
    taken = sum(_both(SETS[f"cc-{name}"], monkeypatch)[2] for name in ("marot-spotter", "Crazytieguy-alignment-hive"))
    assert taken > 100


def test_a_bench_shaped_history_reads_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    claude_corpus.generate(tmp_path, 2_000_000)
    fast, slow, taken = _both(tmp_path / "projects", monkeypatch)
    assert taken > 0 and len(fast["turns"]) > 50
    assert fast["turns"] == slow["turns"] and fast["sessions"] == slow["sessions"]


# ---------------------------------------------------------------------------------------------- deferred verdicts
# A call's verdict is made once its lines stopped changing it (`ClaudeCalls._defer`), not at every line that
# changed its usage. The long way: every such line judged at once, as before.


def _eager(self: calls.ClaudeCalls, call: Any) -> None:
    self.judge_deferred()
    calls._judge(call)


def _deferred_and_eager(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], dict[str, Any], int]:
    judged = [0]
    judge = calls._judge

    def counting(call: Any) -> None:
        judged[0] += 1
        judge(call)

    monkeypatch.setattr(calls, "_judge", counting)
    deferred = _report(root)
    once = judged[0]
    monkeypatch.setattr(calls.ClaudeCalls, "_defer", _eager)
    judged[0] = 0
    eager = _report(root)
    return deferred, eager, judged[0] - once


@needs_realdata
@pytest.mark.parametrize("name", CLAUDE_SETS)
def test_the_real_sets_read_the_same_with_verdicts_deferred(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    deferred, eager, _ = _deferred_and_eager(SETS[f"cc-{name}"], monkeypatch)
    assert deferred["turns"] == eager["turns"]
    assert deferred["sessions"] == eager["sessions"]
    assert deferred["calls"] == eager["calls"] and deferred["waste"] == eager["waste"]


def test_a_bench_shaped_history_reads_the_same_with_verdicts_deferred(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(and the deferral saves judgements there: its generator changes a call's input figures between lines)"""
    claude_corpus.generate(tmp_path, 2_000_000)
    deferred, eager, saved = _deferred_and_eager(tmp_path / "projects", monkeypatch)
    assert saved > 0 and len(deferred["turns"]) > 50
    assert deferred["turns"] == eager["turns"] and deferred["sessions"] == eager["sessions"]
    assert deferred["calls"] == eager["calls"] and deferred["waste"] == eager["waste"]


def test_a_reader_between_polls_finds_every_call_judged(tmp_path: Path) -> None:
    """The deferred verdict is made when a poll's records are in (`polled`): nothing is left unjudged between
    polls, however small the polls (here ~4 KB: calls cut across polls)."""
    claude_corpus.generate(tmp_path, 400_000)
    engine = Engine([tmp_path / "projects"])
    try:
        for _ in range(10_000):
            result = engine.poll(4096)
            for session in engine.state.sessions.values():
                assert all(turn.logged is not None for turn in session.turns)
            if not result.lines and not result.changed and engine.sources.pending_bytes() == 0:
                break
        assert sum(len(s.turns) for s in engine.state.sessions.values()) > 10
    finally:
        engine.close()
