"""Close lines paired with the calls that wrote them (`core.agents.senpi.continuity.closes`): by window and reason,
only where exactly one call could have written the line, whatever order the files are read in."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from core.sources.reread import FileReread
from core.state import State
from core.timeutil import iso_ms
from tests.senpi_builder import Transcript, feed, run, text

DAY = "2026-08-05T09:00:00.000Z"  # an old build: close lines name no session


def _session(sid: str, second: tuple[str, str, int]) -> Transcript:
    t = Transcript(session_id=sid, start=DAY)
    t.user("one")
    t.assistant([text("a")], "bootstrap", "registry_miss", 1)
    t.user("two")
    t.assistant([text("b")], *second)
    return t


def _agent(tmp_path: Path, closes: list[dict[str, str]]) -> tuple[Path, list[Transcript]]:
    agent = tmp_path / "agent"
    a = _session("0198f0a1-0000-7000-8000-00000000000a", ("fork", "assistant_rewritten", 1))
    b = _session("0198f0a1-0000-7000-8000-00000000000b", ("flatten", "assistant_rewritten", 2))
    c = _session("0198f0a1-0000-7000-8000-00000000000c", ("fork", "assistant_rewritten", 1))
    for t in (a, b, c):
        t.write(agent)
    start = a.messages[1]["timestamp"]  # the three second calls run over the same milliseconds
    lines = [
        {
            "ts": iso_ms(start + 1 + int(c.pop("after", 0))),
            "level": "info",
            "event": "claude_sdk_oauth_session_close",
            **c,
        }
        for c in closes
    ]
    log = agent / "logs" / "session.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return agent, [a, b, c]


def _closes(state: State) -> dict[str, list[list[str] | None]]:
    return {s.session_id[-1]: [t.facts.closes for t in s.turns] for s in state.sessions.values() if s.turns}


def test_a_close_pairs_only_with_the_one_call_that_writes_its_reason(tmp_path: Path) -> None:
    agent, _ = _agent(tmp_path, [{"reason": "assistant_rewritten"}, {"reason": "other"}])
    state = run([agent])
    # the flatten of b writes assistant_rewritten; a and c both fork at that time: `other` pairs with neither
    assert _closes(state) == {"a": [[], []], "b": [[], ["assistant_rewritten"]], "c": [[], []]}
    paired = [(line.reason, line.matched_session) for line in state.log.closes]
    assert paired == [("assistant_rewritten", "0198f0a1-0000-7000-8000-00000000000b"), ("other", None)]


def test_a_session_id_on_the_line_settles_it(tmp_path: Path) -> None:
    agent, _ = _agent(tmp_path, [{"reason": "other", "sessionId": "0198f0a1-0000-7000-8000-00000000000c"}])
    assert _closes(run([agent])) == {"a": [[], []], "b": [[], []], "c": [[], ["other"]]}


def test_the_pairing_does_not_depend_on_the_reading_order(tmp_path: Path) -> None:
    agent, transcripts = _agent(tmp_path, [{"reason": "assistant_rewritten"}, {"reason": "other"}])
    files = [t.path_in(agent) for t in transcripts]
    log = agent / "logs" / "session.log"
    results = []
    for order in ([log, *files], [*files, log], [files[0], log, files[1], files[2]]):
        state = State(FileReread())
        for path in order:
            feed(state, path)
        results.append(_closes(state))
    assert results[0] == results[1] == results[2] == {"a": [[], []], "b": [[], ["assistant_rewritten"]], "c": [[], []]}


def test_a_decision_keeps_one_close_the_earliest(tmp_path: Path) -> None:
    """senpi writes one close at a decision's start: a second one a second later (another session's, on an old
    build that names no session) is not the flatten's."""
    agent, _ = _agent(tmp_path, [{"reason": "assistant_rewritten"}, {"reason": "assistant_rewritten", "after": "900"}])
    state = run([agent])
    assert _closes(state)["b"] == [[], ["assistant_rewritten"]]
    assert [line.matched_turn for line in state.log.closes] == [1, None]


def test_a_close_looks_at_every_call_whose_window_can_hold_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """`_add_close` looks at the calls started in the last 2 s and at the long windows (a failure's, up to 30
    minutes) started before: the candidates are every call `_holds` accepts, found by looking at all of them."""
    from core.agents.senpi.continuity import closes as mod

    monkeypatch.setattr(mod.ClosePairing, "_settle", lambda self, store, seq: None)
    rng = random.Random(9)
    reasons = [mod.TERMINAL_REASONS, frozenset({"other"}), frozenset({"registry_miss", "x"})]
    for _round in range(20):
        pairing = mod.ClosePairing(None, None)  # type: ignore[arg-type]
        for index in range(rng.randint(0, 60)):
            start = rng.randint(0, 3_600_000)
            kind = rng.choice(reasons)
            span = rng.choice([0, 1, 1_999, 2_000, 2_001, 600_000, mod.MAX_WINDOW_MS])
            end = start + (span if kind is mod.TERMINAL_REASONS else min(span, mod.START_WINDOW_MS))
            call = (rng.choice(["a", "b"]), index)
            pairing._calls[call] = (start, end, rng.choice(["s1", "s2", None]), kind)
            pairing._held[call] = set()
            mod.bisect.insort(pairing._windows, (start, *call))
            if end - start > mod.START_WINDOW_MS:
                mod.bisect.insort(pairing._long, (start, *call))
        for seq in range(40):
            line = (rng.randint(0, 3_700_000), rng.choice(["other", "x", "pump_failed"]), rng.choice(["s1", None]))
            pairing._add_close(None, seq, line)  # type: ignore[arg-type]
            assert pairing._candidates[seq] == {c for c in pairing._calls if pairing._holds(c, line, None)}  # type: ignore[arg-type]
