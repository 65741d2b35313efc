"""Capture vs commit from event recordings: matching a recording to its transcript turn in either reading
order, the diff class, reconstruction of delta-only recordings, and what the logged decisions say about the
hash rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.agents.senpi.commit import has_timing, strip_timing, timing_diff
from core.agents.senpi.drilldown import load_capture_commit
from core.agents.senpi.fingerprint import hashed_fields
from core.agents.senpi.formats.events import AgentEventsAdapter
from core.agents.senpi.profiles import profile_of
from core.kernel.diff import diff_with_count
from core.kernel.volatility import policy
from core.model import AgentEvent
from core.sources.reread import FileReread
from core.state import State
from tests.realdata import REAL as REALDATA
from tests.realdata import messages
from tests.senpi_builder import Recording, Transcript, decisions, feed, only_session, run, text, thinking, tool_call

OLD_DAY = "2026-08-05T09:00:00.000Z"
MARKER_DAY = "2026-08-20T09:00:00.000Z"


def _thinking_session() -> tuple[Transcript, Recording]:
    t = Transcript(start=OLD_DAY)
    t.user("fix it")
    t.assistant([thinking(timed=t.clock), tool_call("c1")], "bootstrap", "registry_miss", 1, stop="toolUse")
    t.tool_result("c1")
    t.assistant([text("fixed")], "flatten", "assistant_rewritten", 2)
    rec = Recording(session_id=t.session_id)
    for msg in t.messages:
        rec.assistant(msg, strip_timing(msg))  # partials never carry the timing agent-core stamps later
    return t, rec


def _check_recorded(state: State) -> None:
    session = only_session(state)
    first = session.turns[0].commit
    assert (first.outcome, first.source, first.klass) == ("rewritten", "events", "volatile-only")
    assert [(c.path, c.change, c.volatile) for c in first.diff] == [
        (".content[0].startedAt", "missing_in_capture", True),
        (".content[0].endedAt", "missing_in_capture", True),
    ]
    assert first.capture_where is not None and first.commit_where is not None
    assert first.capture_where.path.endswith(".jsonl") and "events" in first.capture_where.path
    assert session.turns[0].commit.outcomes == {
        "verbatim": "rewritten", "timing-stripped": "clean", "projected": "clean"
    }  # fmt: skip
    second = session.turns[1]
    assert second.commit.outcome == "clean" and second.commit.diff == []
    assert decisions(session)[1] == ("flatten", "assistant_rewritten", 2)
    assert second.agreement is True and second.avoidable is True
    assert second.why == (
        "pending fork from turn 0 (assistant_rewritten), no boundary below it -> flatten; capture and commit "
        "differ only in volatile fields .content[0].startedAt, .content[0].endedAt: avoidable"
    )


def test_recording_read_before_the_transcript(tmp_path: Path) -> None:
    t, rec = _thinking_session()
    agent = tmp_path / "agent"
    transcript = t.write(agent)
    recording = rec.write(agent / "events" / f"{t.session_id}.jsonl")
    state = State(FileReread())
    feed(state, recording)
    feed(state, transcript)
    _check_recorded(state)


def test_recording_read_after_the_transcript(tmp_path: Path) -> None:
    t, rec = _thinking_session()
    agent = tmp_path / "agent"
    transcript = t.write(agent)
    recording = rec.write(agent / "events" / f"{t.session_id}.jsonl")
    state = State(FileReread())
    feed(state, transcript)
    session = only_session(state)
    assert session.turns[0].commit.source == "inferred"  # until the recording arrives
    feed(state, recording)
    _check_recorded(state)


def test_the_engine_reads_recordings_with_the_sessions(tmp_path: Path) -> None:
    t, rec = _thinking_session()
    agent = tmp_path / "agent"
    t.write(agent)
    rec.write(agent / "events" / f"{t.session_id}.jsonl")
    # the events directory is named explicitly: resolving an agent dir picks only logs/ and sessions/ today
    _check_recorded(run([agent, agent / "events"]))


def test_a_semantic_rewrite_is_not_avoidable(tmp_path: Path) -> None:
    t = Transcript(start=MARKER_DAY)
    t.user("one")
    t.marker()
    t.assistant([text("a")], "bootstrap", "registry_miss", 1)
    t.user("two")
    t.invalidation("assistant_rewritten")
    t.assistant([text("the answer, reworded by an extension")], "delta", "prefix_matched", 1)
    t.user("three")
    t.assistant([text("c")], "fork", "assistant_rewritten", 2)
    rec = Recording(session_id=t.session_id)
    rec.assistant(t.messages[1], {**t.messages[1], "content": [text("the answer")]})
    agent = tmp_path / "agent"
    state = State(FileReread())
    feed(state, t.write(agent))
    feed(state, rec.write(agent / "events" / "run.jsonl"))
    session = only_session(state)
    commit = session.turns[1].commit
    assert (commit.outcome, commit.source, commit.klass) == ("rewritten", "events", "semantic")
    assert [(c.path, c.change, c.volatile) for c in commit.diff] == [(".content[0].text", "changed", False)]
    last = session.turns[2]
    assert last.agreement is True and last.avoidable is False
    assert "capture and commit differ in .content[0].text: not avoidable" in last.why
    assert last.counterfactual.kind == "fork"


def test_a_result_only_turn_commits_clean(tmp_path: Path) -> None:
    t = Transcript(start=OLD_DAY)
    t.user("hi")
    t.assistant([thinking(timed=t.clock), text("hello")], "bootstrap", "registry_miss", 1)
    rec = Recording(session_id=t.session_id)
    rec.assistant(t.messages[0], None)  # no message_update at all
    agent = tmp_path / "agent"
    state = State(FileReread())
    feed(state, t.write(agent))
    feed(state, rec.write(agent / "events" / "run.jsonl"))
    commit = only_session(state).turns[0].commit
    assert (commit.outcome, commit.source, commit.diff) == ("clean", "events", [])
    sides = load_capture_commit(only_session(state).turns[0], None, FileReread())
    assert sides.capture is None and sides.commit is not None and "result-only" in sides.note


def test_a_delta_only_recording_is_reconstructed(tmp_path: Path) -> None:
    t, _ = _thinking_session()
    rec = Recording(session_id=t.session_id)
    for msg in t.messages:
        rec.assistant(msg, strip_timing(msg), delta_only=True)
    agent = tmp_path / "agent"
    state = State(FileReread())
    feed(state, rec.write(agent / "events" / "run.jsonl"))
    feed(state, t.write(agent))
    session = only_session(state)
    first = session.turns[0]
    assert first.commit.diff_source == "events-reconstructed"
    assert (first.commit.outcome, first.commit.klass) == ("rewritten", "volatile-only")
    assert [c.path for c in first.commit.diff] == [".content[0].startedAt", ".content[0].endedAt"]
    sides = load_capture_commit(first, session, FileReread())
    assert sides.capture is not None and "startedAt" not in sides.capture["content"][0]
    assert sides.capture["content"][0]["thinkingSignature"] == "sig"  # not on the wire: taken from the commit
    assert sides.commit["content"][0]["startedAt"] == t.messages[0]["content"][0]["startedAt"]


def test_load_capture_commit_recorded_and_inferred(tmp_path: Path) -> None:
    t, rec = _thinking_session()
    agent = tmp_path / "agent"
    transcript = t.write(agent)
    state = State(FileReread())
    feed(state, transcript)
    inferred = load_capture_commit(only_session(state).turns[0], None, FileReread())
    assert inferred.note.startswith("inferred")
    assert "startedAt" not in inferred.capture["content"][0] and "startedAt" in inferred.commit["content"][0]
    feed(state, rec.write(agent / "events" / "run.jsonl"))
    recorded = load_capture_commit(only_session(state).turns[0], None, FileReread())
    assert recorded.note.startswith("recorded")
    assert recorded.capture["content"][0] == strip_timing(t.messages[0])["content"][0]


@pytest.mark.parametrize(
    ("next_logged", "rule"),
    [(("delta", "prefix_matched", 1), "timing-stripped"), (("flatten", "assistant_rewritten", 2), "verbatim")],
)
def test_the_next_logged_decision_tells_the_hash_rule(tmp_path: Path, next_logged: tuple, rule: str) -> None:
    """Dated 2026-08-12 the build may be before or after the timing fix; what was logged after a thinking turn
    decides which rule it hashed with."""
    t = Transcript(start="2026-08-12T09:00:00.000Z")
    t.user("fix it")
    t.assistant([thinking(timed=t.clock), tool_call("c1")], "bootstrap", "registry_miss", 1, stop="toolUse")
    t.tool_result("c1")
    t.assistant([text("fixed")], *next_logged)
    session = only_session(run([t.write(tmp_path / "agent")]))
    assert profile_of(session).hash_rule == rule
    assert "agree with the " + rule in session.profile["why"]
    assert session.turns[0].commit.outcome == ("rewritten" if rule == "verbatim" else "clean")
    assert session.turns[1].agreement is True


def test_adapter_sniffs_recordings_and_never_raises() -> None:
    adapter = AgentEventsAdapter()
    assert adapter.sniff("/x/run.jsonl", {"type": "message_update"})
    assert adapter.sniff("/x/events/abc.jsonl", {"type": "session", "id": "abc", "cwd": "/"})
    assert not adapter.sniff("/x/sessions/--a--/abc.jsonl", {"type": "session", "id": "abc", "cwd": "/"})
    assert not adapter.sniff("/x/logs/session.log", {"ts": "t", "level": "info", "event": "x", "type": "agent_start"})
    records = adapter.parse("/x/run.jsonl", 3, 10, b'{"type":"turn_start"}')
    assert isinstance(records[0], AgentEvent) and records[0].where.line == 3
    bad = adapter.parse("/x/run.jsonl", 4, 30, b"{not json")
    assert bad[0].error.startswith("invalid JSON")
    assert adapter.parse("/x/run.jsonl", 5, 40, b'{"kind":1}')[0].error == "event line without string type"


def test_identical_answers_are_told_apart_by_their_call_time(tmp_path: Path) -> None:
    t = Transcript(start=MARKER_DAY)
    t.user("one")
    t.marker()
    t.assistant([text("ok")], "bootstrap", "registry_miss", 1)
    t.user("two")
    t.invalidation("assistant_rewritten")
    t.assistant([text("ok")], "delta", "prefix_matched", 1)
    rec = Recording(session_id=t.session_id)
    rec.assistant(t.messages[1], {**t.messages[1], "content": [text("okay")]})  # recorded out of order
    rec.assistant(t.messages[0], t.messages[0])
    agent = tmp_path / "agent"
    state = State(FileReread())
    feed(state, rec.write(agent / "events" / "run.jsonl"))
    feed(state, t.write(agent))
    first, second = only_session(state).turns
    assert (first.commit.source, first.commit.outcome, first.commit.diff) == ("events", "clean", [])
    assert (second.commit.source, second.commit.outcome, second.commit.klass) == ("events", "rewritten", "semantic")


def _timed_messages() -> list[dict]:
    """Assistant messages with thinking timing: crafted ones, and those of the 100 MB bench corpus' first
    transcripts and of the realdata when they are here."""
    base = {"role": "assistant", "api": "claude-sdk-oauth", "provider": "anthropic", "model": "m"}
    crafted = [
        {**base, "content": [{"type": "thinking", "thinking": "t", "startedAt": 1, "endedAt": 2}]},
        {**base, "content": [{"type": "text", "text": "a"}, {"type": "thinking", "endedAt": 3.5, "thinking": "x"}]},
        {**base, "content": [{"startedAt": 1, "type": "thinking"}, {"type": "toolCall", "arguments": {"n": 1.5}}]},
        {**base, "content": [{"type": "thinking", "thinking": "t", "startedAt": 1, "index": 0, "partialJson": "{"}]},
        {**base, "content": [{"type": "thinking", "startedAt": i, "endedAt": i} for i in range(150)]},  # the cap
        {**base, "content": [{"type": "thinking", "thinking": "no timing"}, "raw", 3, None]},
        {"role": "assistant", "content": [{"type": "thinking", "startedAt": 1}]},  # undefined fields
    ]
    found: list[dict] = []
    roots = [Path("/tmp/continuity-bench/corpus-100MB-seed7/sessions"), REALDATA]
    for root in roots:
        paths = sorted(root.rglob("*.jsonl"))[:40] if root.is_dir() else []
        found += [msg for msg in messages(paths) if msg.get("role") == "assistant" and has_timing(msg)]
    return crafted + found


def test_timing_diff_is_the_full_diff_of_the_inferred_capture() -> None:
    """`timing_diff` walks only the blocks `strip_timing` copied: the same changes as the whole diff."""
    rules = policy()
    messages = _timed_messages()
    for msg in messages:
        full, _ = diff_with_count(hashed_fields(strip_timing(msg)), hashed_fields(msg), rules)
        assert timing_diff(msg, rules) == full
    assert len(messages) > 7 or not REALDATA.is_dir()
