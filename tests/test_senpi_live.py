"""senpi-live: an agent dir written by senpi v2026.8.4-2's own agent loop, transcript writer and session logger
(scripted model replies; `tests/data/senpi-live`, a copy of `shared/realdata/senpi-live`). Every one of its 15
calls is replayed from the files, the three that were copied from the log before issue 20 included: the
thinking-level switch, the options drift after it and the idle expiry."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from core.report.schema import Report
from tests.report_helpers import report_for
from tests.senpi_builder import run

LIVE = Path(__file__).resolve().parent / "data" / "senpi-live" / "agent"
CAUSES = "019fe58a-5aa8-7046-883c-ef5e816b333f"


def _copy(tmp_path: Path) -> Path:
    agent = tmp_path / "agent"
    shutil.copytree(LIVE, agent)
    return agent


def test_all_fifteen_calls_are_replayed_and_agree(tmp_path: Path) -> None:
    agent = _copy(tmp_path)
    state = run([agent, agent / "events"])
    turns = [t for s in state.sessions.values() for t in s.turns]
    assert len(turns) == 15
    assert [t.logged_only for t in turns] == [False] * 15
    assert [t.agreement for t in turns] == [True] * 15
    assert not any(t.contradiction for t in turns)
    causes = next(s for s in state.sessions.values() if s.session_id == CAUSES)
    got = [(t.recomputed.kind, t.recomputed.reason, t.recomputed.count) for t in causes.turns[3:]]  # type: ignore[union-attr]
    assert got == [("fork", "history_rolled_back", 4), ("fork", "options_changed", 1), ("fork", "idle_ttl", 1)]
    switch, drift, idle = causes.turns[3:]
    assert switch.why.startswith(
        "the thinking-level switch closed the entry and kept a binding of 3 message(s), its sent hashes emptied"
    )
    assert drift.why.startswith("the live entry was made at thinking level high, this call runs at medium")
    assert "idle reaper closed the entry" in idle.why and "a gap of 31 min 15 s" in idle.why


def test_the_reattach_close_pairs_with_the_call_that_wrote_it(tmp_path: Path) -> None:
    """Five close lines: three idle reaps and the thinking switch fall between calls; the `other` of the reattach
    after the switch is the drift call's own (stamped with the millisecond the previous call's line was)."""
    agent = _copy(tmp_path)
    state = run([agent, agent / "events"])
    closes = {(t.session, t.index): t.facts.closes for s in state.sessions.values() for t in s.turns}
    assert closes.pop((CAUSES, 4)) == ["other"]
    assert set(map(tuple, closes.values())) == {()}
    report = report_for(agent, paths=[agent, agent / "events"])
    Report.model_validate(json.loads(json.dumps(report)))
    assert report["continuity"]["closes"] == {"idle_ttl": 3, "thinking_level_selected": 1, "other": 1}
    assert report["continuity"]["closes_paired"] == 1
    paired = [t for t in report["turns"] if t["closes"]]
    assert [(t["index"], t["closes"]) for t in paired] == [(4, ["other"])]
