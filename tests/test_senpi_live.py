"""senpi-live: an agent dir written by senpi v2026.8.4-2's own agent loop, transcript writer and session logger
(scripted model replies; `tests/data/senpi-live`, a copy of `shared/realdata/senpi-live`). Every one of its 15
calls is replayed from the files, the three that were copied from the log before issue 20 included: the
thinking-level switch, the options drift after it and the idle expiry."""

from __future__ import annotations

import shutil
from pathlib import Path

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
