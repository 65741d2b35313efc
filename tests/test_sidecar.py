"""The restart sidecar: its hashes recomputed from the transcript, and whether a restart would reattach or flatten."""

from __future__ import annotations

from pathlib import Path

from core.agents.senpi.fingerprint import PROJECTED, sent_message_hash
from core.kernel.hashing import prefix_digest
from core.sources.reread import FileReread
from core.state import State
from tests.senpi_builder import (
    Transcript,
    feed,
    only_session,
    result_msg,
    run,
    text,
    tool_call,
    user_msg,
)

MARKER_DAY = "2026-08-20T09:00:00.000Z"
NEW_DAY = "2026-10-12T09:00:00.000Z"


def _two_calls(t: Transcript, *, directive: bool = False) -> str:
    if directive:
        t.custom_message("omo-ultrawork:directive", "<ultrawork-mode>\nbe precise\n</ultrawork-mode>\n")
    t.user("one")
    t.marker()
    t.assistant([tool_call("c1")], "flatten" if directive else "bootstrap", "registry_miss", 2 if directive else 1,
                stop="toolUse")  # fmt: skip
    t.tool_result("c1")
    marker = t.marker()
    t.assistant([text("done")], "delta", "prefix_matched", 1)
    return marker


def _verdict(paths: list[Path]) -> dict:
    return only_session(run(paths)).facts.sidecar_verdict


def test_a_matching_sidecar_reattaches(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    t = Transcript(start=MARKER_DAY)
    marker = _two_calls(t)
    transcript = t.write(agent)
    sidecar = t.sidecar(agent, marker_id=marker, sent=[user_msg("one"), result_msg("c1")], assistant=t.messages[-1])
    verdict = _verdict([transcript, sidecar])
    assert verdict["restore"] == "accepted"
    assert all(verdict["checks"].values()), verdict["checks"]
    assert verdict["sentCount"] == 2
    assert verdict["sentPrefixHash"] == prefix_digest([sent_message_hash(user_msg("one")),
                                                       sent_message_hash(result_msg("c1"))])  # fmt: skip
    assert (verdict["would"], verdict["kind"], verdict["reason"], verdict["count"]) == ("reattach", "fork",
                                                                                        "registry_miss", 0)  # fmt: skip
    assert "a restart reattaches" in verdict["why"]


def test_custom_messages_break_the_branch_walk_prefix(tmp_path: Path) -> None:
    """The declared residual: the sidecar counts message entries only, the live context also hashes the hidden
    directive, so the first sentCount hashes differ and a restart flattens."""
    agent = tmp_path / "agent"
    t = Transcript(start=MARKER_DAY)
    marker = _two_calls(t, directive=True)
    transcript = t.write(agent)
    sidecar = t.sidecar(agent, marker_id=marker, sent=[user_msg("one"), result_msg("c1")], assistant=t.messages[-1])
    verdict = _verdict([transcript, sidecar])
    assert verdict["restore"] == "accepted"
    assert verdict["checks"]["sentCount"] and verdict["checks"]["sentPrefixHash"]  # senpi wrote it consistently
    assert (verdict["would"], verdict["reason"], verdict["count"]) == ("flatten", "sent_stream_diverged", 3)
    assert "skips 1 custom_message" in verdict["why"]


def test_an_invalidation_after_the_marker_rejects_the_restore(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    t = Transcript(start=MARKER_DAY)
    marker = _two_calls(t)
    sidecar_assistant = t.messages[-1]
    t.user("two")
    t.invalidation("assistant_rewritten")
    t.assistant([text("reworded")], "delta", "prefix_matched", 1)
    transcript = t.write(agent)
    sidecar = t.sidecar(agent, marker_id=marker, sent=[user_msg("one"), result_msg("c1")], assistant=sidecar_assistant)
    verdict = _verdict([transcript, sidecar])
    assert verdict["restore"] == "rejected"
    assert "invalidation (assistant_rewritten)" in verdict["why"]
    assert (verdict["would"], verdict["reason"], verdict["count"]) == ("flatten", "registry_miss", 3)


def test_a_stale_assistant_hash_rejects_the_restore(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    t = Transcript(start=MARKER_DAY)
    marker = _two_calls(t)
    transcript = t.write(agent)
    other = {**t.messages[-1], "content": [text("something else")]}
    sidecar = t.sidecar(agent, marker_id=marker, sent=[user_msg("one"), result_msg("c1")], assistant=other)
    verdict = _verdict([transcript, sidecar])
    assert verdict["checks"]["assistantContentHash"] is False
    assert verdict["restore"] == "rejected" and verdict["would"] == "flatten"
    assert "assistantContentHash (timing-stripped rule) differs" in verdict["why"]


def test_a_later_user_message_rejects_old_builds_but_not_new_ones(tmp_path: Path) -> None:
    for start, provider, rule, restore in ((MARKER_DAY, "claude-sdk-oauth", "timing-stripped", "rejected"),
                                           (NEW_DAY, "anthropic-subscription", PROJECTED, "accepted")):  # fmt: skip
        agent = tmp_path / provider
        t = Transcript(start=start, provider=provider)
        marker = _two_calls(t)
        t.user("two")  # typed, then the process restarted before the call
        transcript = t.write(agent)
        sidecar = t.sidecar(agent, marker_id=marker, sent=[user_msg("one"), result_msg("c1")],
                            assistant=t.messages[-1], rule=rule)  # fmt: skip
        verdict = _verdict([transcript, sidecar])
        assert verdict["restore"] == restore, verdict
        if restore == "accepted":
            assert (verdict["would"], verdict["count"]) == ("reattach", 1)
        else:
            assert "message user" in verdict["why"]


def test_a_sidecar_read_before_its_transcript(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    t = Transcript(start=MARKER_DAY)
    marker = _two_calls(t)
    transcript = t.write(agent)
    sidecar = t.sidecar(agent, marker_id=marker, sent=[user_msg("one"), result_msg("c1")], assistant=t.messages[-1])
    state = State(FileReread())
    feed(state, sidecar)
    feed(state, transcript)
    session = only_session(state)
    assert session.sidecar is not None and session.sidecar.where.path == str(sidecar)
    assert session.facts.sidecar_verdict["would"] == "reattach"


def test_recomputed_values_are_reported_when_the_sidecar_disagrees(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    t = Transcript(start=MARKER_DAY)
    marker = _two_calls(t)
    transcript = t.write(agent)
    sidecar = t.sidecar(agent, marker_id=marker, sent=[user_msg("one")], assistant=t.messages[-1])
    verdict = _verdict([transcript, sidecar])
    assert verdict["checks"]["sentCount"] is False and verdict["checks"]["sentPrefixHash"] is False
    assert verdict["sentCount"] == 2  # what senpi should have written
    # the stored (shorter) prefix still matches the live context, so a restart reattaches from it
    assert (verdict["would"], verdict["count"]) == ("reattach", 1)
