"""The continuity replay over hand-built transcripts: one per decision path of senpi-formats §4.3 / §8."""

from __future__ import annotations

from pathlib import Path

from core.agents.senpi.continuity.decide import Bounds, boundary_below, push, restrict
from core.agents.senpi.profiles import profile_of
from core.report import sections
from tests.senpi_builder import Transcript, decisions, only_session, run, text, thinking, tool_call

OLD_DAY = "2026-08-05T09:00:00.000Z"  # before v2026.8.11-2: verbatim assistantContentHash
MARKER_DAY = "2026-08-20T09:00:00.000Z"  # markers and sidecar, timing-stripped hash
NEW_DAY = "2026-10-12T09:00:00.000Z"


def _logged(session) -> list[tuple[str, str, int | None]]:
    return [(t.logged.kind, t.logged.reason, t.logged.count) for t in session.turns]


def test_bootstrap_then_deltas_agree(tmp_path: Path) -> None:
    t = Transcript(start=MARKER_DAY)
    t.user("list the files")
    t.marker()
    t.assistant([tool_call("c1")], "bootstrap", "registry_miss", 1, stop="toolUse")
    t.tool_result("c1", "a.py\nb.py")
    t.marker()
    t.assistant([text("two files")], "delta", "prefix_matched", 1)
    t.user("and now?")
    t.marker()
    t.assistant([text("done")], "delta", "prefix_matched", 1)
    session = only_session(run([t.write(tmp_path / "agent")]))
    assert decisions(session) == _logged(session)
    assert [t.agreement for t in session.turns] == [True, True, True]
    assert not any(t.logged_only for t in session.turns)
    assert [t.commit.outcome for t in session.turns] == ["clean"] * 3
    assert [t.commit.source for t in session.turns] == ["transcript"] * 3
    assert session.turns[0].why == "first call: no live entry, 1 transmitted message(s)"
    assert session.turns[1].why.startswith("delta: live entry, 1 sent message(s) still a prefix, 1 new")
    summary = session.facts.verdicts
    assert (summary["replayed"], summary["agree"], summary["agreement_rate"]) == (3, 3, 1.0)
    assert session.profile["id"] == "2026.8.20"
    assert "binding marker" in session.profile["why"]


def test_flatten_chain_after_a_rewritten_first_turn(tmp_path: Path) -> None:
    """Verbatim build: every thinking turn commits rewritten; with no boundary below the first call, each next
    call flattens, and the fresh entry has no boundary below its own first call either."""
    t = Transcript(start=OLD_DAY)
    t.user("fix the bug")
    t.assistant([thinking(timed=t.clock), tool_call("c1")], "bootstrap", "registry_miss", 1, stop="toolUse")
    t.tool_result("c1")
    t.assistant([thinking(timed=t.clock), tool_call("c2")], "flatten", "assistant_rewritten", 2, stop="toolUse")
    t.tool_result("c2")
    t.assistant([thinking(timed=t.clock), text("found it")], "flatten", "assistant_rewritten", 3)
    t.user("thanks")
    t.assistant([text("you're welcome")], "flatten", "assistant_rewritten", 4)
    t.user("bye")
    t.assistant([text("bye")], "delta", "prefix_matched", 1)
    session = only_session(run([t.write(tmp_path / "agent")]))
    assert profile_of(session).hash_rule == "verbatim"
    assert decisions(session) == _logged(session)
    assert [t.agreement for t in session.turns] == [True] * 5
    assert [t.commit.outcome for t in session.turns] == ["rewritten", "rewritten", "rewritten", "clean", "clean"]
    rewritten = session.turns[0].commit
    assert (rewritten.source, rewritten.klass) == ("inferred", "volatile-only")
    assert [c.path for c in rewritten.diff] == [".content[0].startedAt", ".content[0].endedAt"]
    assert all(c.change == "missing_in_capture" and c.volatile for c in rewritten.diff)
    # the counterfactual: a stable fingerprint would have kept every call a delta
    assert [(c.kind, c.count) for c in (t.counterfactual for t in session.turns)] == [
        ("bootstrap", 1), ("delta", 1), ("delta", 1), ("delta", 1), ("delta", 1)
    ]  # fmt: skip
    assert [t.avoidable for t in session.turns] == [None, True, True, True, None]
    assert session.turns[1].why == (
        "pending fork from turn 0 (assistant_rewritten), no boundary below it -> flatten; inferred capture and "
        "commit differ only in volatile fields .content[0].startedAt, .content[0].endedAt: avoidable"
    )
    cf = session.counterfactual
    assert (cf["resends_logged"], cf["resends_avoidable"]) == (3, 3)
    assert cf["messages_resent_logged"] == 1 + 2 + 3
    assert cf["messages_resent_avoidable"] == (2 - 1) + (3 - 1) + (4 - 1)
    report = sections.counterfactual(session.turns, [(session, session.turns)])  # the report's section
    assert report is not None and (report["resends_logged"], report["resends_avoidable"]) == (3, 3)
    assert report["messages_resent_avoidable"] == cf["messages_resent_avoidable"]


def test_fork_chain_grows_from_a_fixed_boundary(tmp_path: Path) -> None:
    t = Transcript(start=OLD_DAY)
    t.user("one")
    t.assistant([text("ok")], "bootstrap", "registry_miss", 1)  # clean: no thinking timing
    t.user("two")
    t.assistant([thinking(timed=t.clock), tool_call("c1")], "delta", "prefix_matched", 1, stop="toolUse")
    t.tool_result("c1")
    t.assistant([thinking(timed=t.clock), tool_call("c2")], "fork", "assistant_rewritten", 2, stop="toolUse")
    t.tool_result("c2")
    t.assistant([thinking(timed=t.clock), tool_call("c3")], "fork", "assistant_rewritten", 3, stop="toolUse")
    t.tool_result("c3")
    t.assistant([text("done")], "fork", "assistant_rewritten", 4)
    t.user("next")
    t.assistant([text("sure")], "delta", "prefix_matched", 1)
    session = only_session(run([t.write(tmp_path / "agent")]))
    assert decisions(session) == _logged(session)
    assert all(t.agreement for t in session.turns)
    assert "-> fork at boundary 1" in session.turns[3].why
    assert [c.kind for c in (t.counterfactual for t in session.turns)] == ["bootstrap"] + ["delta"] * 5
    assert [t.avoidable for t in session.turns] == [None, None, True, True, True, None]


def _compaction_session(start: str, provider: str, logged_after: tuple[str, str, int]) -> Transcript:
    t = Transcript(start=start, provider=provider)
    first = t.user("one")
    t.marker()
    t.assistant([tool_call("c1")], "bootstrap", "registry_miss", 1, stop="toolUse")
    t.tool_result("c1")
    t.marker()
    t.assistant([tool_call("c2")], "delta", "prefix_matched", 1, stop="toolUse")
    t.tool_result("c2")
    t.marker()
    t.assistant([text("two results")], "delta", "prefix_matched", 1)
    t.user("two")
    t.marker()
    t.assistant([text("ok")], "delta", "prefix_matched", 1)
    t.compaction("we listed files", first)
    t.invalidation("compaction")
    t.user("three")
    t.assistant([text("after compaction")], *logged_after)
    t.user("four")
    t.assistant([text("again")], "delta", "prefix_matched", 1)
    return t


def test_compaction_forks_at_the_boundary_below_sent_count(tmp_path: Path) -> None:
    # context after compaction: summary + the 4 kept messages + "three" = 6; boundary below sentCount 4 is 3
    t = _compaction_session(MARKER_DAY, "claude-sdk-oauth", ("fork", "tainted_compaction", 3))
    session = only_session(run([t.write(tmp_path / "agent")]))
    assert decisions(session) == _logged(session)
    assert all(t.agreement for t in session.turns)
    assert session.turns[4].why.startswith(
        "compaction accepted before this call (tainted_compaction); fork at boundary 3"
    )
    assert session.turns[4].avoidable is False


def test_compaction_flattens_on_newer_builds(tmp_path: Path) -> None:
    t = _compaction_session(NEW_DAY, "anthropic-subscription", ("flatten", "tainted_compaction", 6))
    session = only_session(run([t.write(tmp_path / "agent")]))
    assert profile_of(session).pending_compaction == "flatten"
    assert decisions(session) == _logged(session)
    assert all(t.agreement for t in session.turns)


def test_first_call_with_a_hidden_directive_is_a_flatten_on_old_builds(tmp_path: Path) -> None:
    t = Transcript(start="2026-09-20T09:00:00.000Z")  # the date alone would allow the newer first-turn rule
    t.custom_message("omo-ultrawork:directive", "<ultrawork-mode>\nbe precise\n</ultrawork-mode>\n")
    t.user("ulw fix it")
    t.assistant([tool_call("c1")], "flatten", "registry_miss", 2, stop="toolUse")
    t.tool_result("c1")
    t.assistant([text("fixed")], "delta", "prefix_matched", 1)
    session = only_session(run([t.write(tmp_path / "agent")]))
    assert decisions(session) == [("flatten", "registry_miss", 2), ("delta", "prefix_matched", 1)]
    assert [t.agreement for t in session.turns] == [True, True]
    assert "not a first turn under this build's rule (at most one message)" in session.turns[0].why
    assert "first call with several messages" in session.profile["why"]
    assert session.profile["id"] == "2026.9.7-2"  # the newest build with the old first-turn rule


def test_first_call_with_a_hidden_directive_is_a_bootstrap_on_newer_builds(tmp_path: Path) -> None:
    t = Transcript(start=NEW_DAY, provider="anthropic-subscription")
    t.custom_message("omo-ultrawork:directive", "<ultrawork-mode>\nbe precise\n</ultrawork-mode>\n")
    t.user("ulw fix it")
    t.marker()
    t.assistant([text("fixed")], "bootstrap", "registry_miss", 2)
    session = only_session(run([t.write(tmp_path / "agent")]))
    assert profile_of(session).first_turn == "no-assistant-in-context"
    assert decisions(session) == [("bootstrap", "registry_miss", 2)]
    assert session.turns[0].agreement is True


def test_logged_only_causes_are_taken_not_guessed(tmp_path: Path) -> None:
    t = Transcript(start=MARKER_DAY)
    t.user("one")
    t.marker()
    t.assistant([text("a")], "bootstrap", "registry_miss", 1)
    t.user("two")
    t.marker()
    t.assistant([text("b")], "delta", "prefix_matched", 1)
    t.tick(40 * 60_000)  # idle past the 30-minute TTL
    t.user("three")
    t.marker()
    t.assistant([text("c")], "fork", "idle_ttl", 1)
    t.user("four")
    t.marker()
    t.assistant([text("d")], "delta", "prefix_matched", 1)
    t.user("five")
    t.assistant([], "flatten", "query_failed", None, stop="error")
    t.user("six")
    t.marker()
    t.assistant([text("e")], "fork", "query_failed", 2)
    t.user("seven")
    t.marker()
    t.assistant([text("f")], "delta", "prefix_matched", 1)
    session = only_session(run([t.write(tmp_path / "agent")]))
    turns = session.turns
    assert [t.logged_only for t in turns] == [False, False, False, False, True, True, False]
    assert [t.agreement for t in turns] == [True, True, True, True, None, None, True]
    assert decisions(session) == _logged(session)  # logged-only turns carry the logged decision
    # the idle expiry follows from the 40-minute gap: reaped or found live, both reattach with idle_ttl
    assert turns[2].why.startswith("a close kept") or "idle" in turns[2].why
    assert "reaped or found live, the same decision" in turns[2].why
    assert turns[4].why == "logged-only: terminal failure: every attempt failed"
    assert turns[4].commit.outcome == "unknown"
    assert session.facts.verdicts["logged_only"] == 2
    assert session.facts.verdicts["agreement_rate"] == 1.0


def test_a_contradicting_log_is_a_disagreement_with_the_first_fact(tmp_path: Path) -> None:
    t = Transcript(start=MARKER_DAY)
    t.user("one")
    t.marker()
    t.assistant([text("a")], "bootstrap", "registry_miss", 1)
    t.user("two")
    t.invalidation("assistant_rewritten")
    t.assistant([text("b")], "delta", "prefix_matched", 1)
    t.user("three")
    t.marker()
    t.assistant([text("c")], "delta", "prefix_matched", 1)  # senpi would have forked: the commit was rewritten
    session = only_session(run([t.write(tmp_path / "agent")]))
    assert session.turns[1].commit.outcome == "rewritten" and session.turns[1].commit.source == "transcript"
    assert session.turns[2].recomputed.kind == "fork"
    assert (session.turns[2].agreement, session.turns[2].disagreement) == (False, "kind: logged delta, replay fork")
    assert session.facts.verdicts["disagreements"] == [{"index": 2, "fact": "kind: logged delta, replay fork"}]
    assert session.facts.verdicts["agreement_rate"] == round(2 / 3, 4)


def test_navigating_the_tree_diverges_the_sent_stream(tmp_path: Path) -> None:
    t = Transcript(start=MARKER_DAY)
    t.user("one")
    t.marker()
    first = t.assistant([text("a")], "bootstrap", "registry_miss", 1)
    t.user("two")
    t.marker()
    t.assistant([text("b")], "delta", "prefix_matched", 1)
    t.user("two, differently", parent=first)  # /tree: continue from the first answer
    t.marker()
    t.assistant([text("c")], "fork", "sent_stream_diverged", 1)
    session = only_session(run([t.write(tmp_path / "agent")]))
    assert decisions(session) == _logged(session)
    assert session.turns[2].agreement is True
    assert session.turns[2].why.startswith("sent messages diverged at message 2 of 2")


def test_boundaries_are_a_persistent_descending_list() -> None:
    bounds = push(push(push(None, 1), 2), 5)
    assert boundary_below(bounds, 5) == 2 and boundary_below(bounds, 6) == 5 and boundary_below(bounds, 2) == 1
    assert boundary_below(bounds, 1) is None
    forked = push(restrict(bounds, 1), 7)
    assert boundary_below(forked, 7) == 1 and boundary_below(bounds, 6) == 5  # the old list is untouched
    from core.agents.senpi.continuity.decide import UNKNOWN

    assert boundary_below(Bounds(4, UNKNOWN), 4) is UNKNOWN
