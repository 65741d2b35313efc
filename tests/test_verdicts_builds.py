"""The replay's build-dependent rules (issue 20): what a thinking-level switch, an identity drift and an idle gap
make senpi decide under each build, and a logged decision that contradicts the build shown as such.

Each case is a hand-built transcript whose dates pin the build profile: OLD_DAY (before v2026.8.11-2, rules of
v2026.8.4-2), MARKER_DAY (v2026.8.18-3 rules: markers, drift-checked bindings), NEW_DAY (2026.10.x, provider
anthropic-subscription). The figures are senpi's own (senpi-formats §3.7, §4.3-4.6; senpi-newer §6.1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.agents.senpi.profiles import profile_of
from tests.senpi_builder import Transcript, decisions, only_session, run, text

OLD_DAY = "2026-08-05T09:00:00.000Z"
MARKER_DAY = "2026-08-20T09:00:00.000Z"
NEW_DAY = "2026-10-12T09:00:00.000Z"
MINUTE = 60_000


def _two_calls(t: Transcript, markers: bool) -> None:
    t.user("one")
    if markers:
        t.marker()
    t.assistant([text("a")], "bootstrap", "registry_miss", 1)
    t.user("two")
    if markers:
        t.marker()
    t.assistant([text("b")], "delta", "prefix_matched", 1)


def _transcript(day: str) -> Transcript:
    provider = "anthropic-subscription" if day == NEW_DAY else "claude-sdk-oauth"
    return Transcript(start=day, provider=provider)


@pytest.mark.parametrize(
    ("day", "after_switch", "next_call"),
    [
        # v2026.8.4-2: the kept binding's hashes are emptied and not drift-checked: fork from 0; the resumed entry
        # keeps the binding's thinking level, so the next call drifts and reattaches (senpi-live's causes session)
        (OLD_DAY, ("fork", "history_rolled_back", 3), ("fork", "options_changed", 1)),
        # v2026.8.18-3: the binding keeps its hashes and is drift-checked: flatten; the fresh entry has the new level
        (MARKER_DAY, ("flatten", "options_changed", 3), ("delta", "prefix_matched", 1)),
        # 2026.9.7-2+: options_changed split, toolset drift on a binding reattaches with it
        (NEW_DAY, ("fork", "toolset_changed", 1), ("delta", "prefix_matched", 1)),
    ],
)
def test_a_thinking_switch_is_replayed_by_the_build(
    tmp_path: Path, day: str, after_switch: tuple[str, str, int], next_call: tuple[str, str, int]
) -> None:
    t = _transcript(day)
    markers = day != OLD_DAY
    _two_calls(t, markers)
    t.thinking_level("medium")
    t.user("three")
    if markers and after_switch[0] != "flatten":
        t.marker()
    t.assistant([text("c")], *after_switch)
    t.user("four")
    if markers:
        t.marker()
    t.assistant([text("d")], *next_call)
    session = only_session(run([t.write(tmp_path / "agent")]))
    assert decisions(session)[2:] == [after_switch, next_call]
    assert [turn.agreement for turn in session.turns] == [True] * 4
    assert not any(turn.logged_only for turn in session.turns)
    assert session.turns[2].why.startswith("the thinking-level switch closed the entry and kept a binding of 2")
    assert ("sent hashes emptied" in session.turns[2].why) == (day == OLD_DAY)


def _switch_then(tmp_path: Path, before: str, after: str, logged: tuple[str, str, int]) -> Any:
    """A v2026.8.18-3+ session (markers): two calls at `before`, a switch to `after`, one call logging `logged`."""
    t = _transcript(MARKER_DAY)
    t.lines[2]["thinkingLevel"] = before
    _two_calls(t, markers=True)
    t.thinking_level(after)
    t.user("three")
    t.marker()
    t.assistant([text("c")], *logged)
    return only_session(run([t.write(tmp_path / "agent")]))


def test_a_log_the_build_cannot_write_is_a_contradiction(tmp_path: Path) -> None:
    """v2026.8.4-2's answer to a thinking switch in a session whose markers prove v2026.8.18-3 or later."""
    session = _switch_then(tmp_path, "high", "medium", ("fork", "history_rolled_back", 3))
    profile = profile_of(session).id
    turn = session.turns[2]
    assert (turn.agreement, turn.logged_only) == (False, False)
    assert turn.recomputed is not None and (turn.recomputed.kind, turn.recomputed.reason) == (
        "flatten",
        "options_changed",
    )
    expected = (
        f"logged fork/history_rolled_back/3; build {profile} decides flatten/options_changed/3: "
        "the profile or the data is wrong"
    )
    assert turn.contradiction == expected and turn.why.startswith(expected)
    assert session.facts.verdicts["disagree"] == 1


def test_minimal_to_low_may_keep_the_fingerprint_so_the_log_decides(tmp_path: Path) -> None:
    session = _switch_then(tmp_path, "minimal", "low", ("fork", "thinking_level_selected", 1))
    turn = session.turns[2]
    assert turn.logged_only and turn.agreement is None
    assert "thinking level of minimal then low" in turn.why and "not on disk" in turn.why


def test_an_options_drift_with_no_switch_on_disk_is_taken_from_the_log(tmp_path: Path) -> None:
    t = _transcript(OLD_DAY)
    _two_calls(t, markers=False)
    t.user("three")
    t.assistant([text("c")], "fork", "options_changed", 1)
    session = only_session(run([t.write(tmp_path / "agent")]))
    turn = session.turns[2]
    assert turn.logged_only
    assert (
        turn.why
        == "logged-only: options_changed: the account / system prompt / tool set in the fingerprint is not on disk"
    )


@pytest.mark.parametrize(
    ("gap_min", "logged", "replayed"),
    [
        (45, ("fork", "idle_ttl", 1), True),  # past the lifetime: reaped or found live, both reattach
        (10, ("fork", "idle_ttl", 1), False),  # the gap denies an expiry: a contradiction
        (10, ("delta", "prefix_matched", 1), True),
    ],
)
def test_idle_expiry_follows_from_the_gap(
    tmp_path: Path, gap_min: int, logged: tuple[str, str, int], replayed: bool
) -> None:
    t = _transcript(OLD_DAY)
    _two_calls(t, markers=False)
    t.tick(gap_min * MINUTE)
    t.user("three")
    t.assistant([text("c")], *logged)
    session = only_session(run([t.write(tmp_path / "agent")]))
    turn = session.turns[2]
    assert not turn.logged_only and turn.agreement is replayed
    if not replayed:
        assert turn.contradiction is not None and "decides delta/prefix_matched/1" in turn.contradiction


def test_a_pending_fork_and_an_idle_gap_let_the_log_say_whether_the_reaper_ran(tmp_path: Path) -> None:
    """A rewritten commit then 40 minutes: a live entry would fork on its pending rewrite, a reaped one reattaches
    from its binding (the pending fork went with the entry). The log says which happened; a third answer is a
    contradiction."""
    for logged, found in (
        (("fork", "idle_ttl", 1), "the idle reaper closed the entry"),
        (("fork", "assistant_rewritten", 2), "the call found the entry live"),
    ):
        t = _transcript(MARKER_DAY)
        t.user("one")
        t.marker()
        t.assistant([text("a")], "bootstrap", "registry_miss", 1)
        t.user("two")
        t.invalidation("assistant_rewritten")  # senpi's entry before a rewritten commit
        t.assistant([text("b")], "delta", "prefix_matched", 1)
        t.tick(40 * MINUTE)
        t.user("three")
        t.marker()
        t.assistant([text("c")], *logged)
        session = only_session(run([t.write(tmp_path / logged[1])]))
        assert session.turns[1].commit is not None and session.turns[1].commit.outcome == "rewritten"
        turn = session.turns[2]
        assert turn.agreement is True and f"{found}: the logged decision says so" in turn.why, turn.why


@pytest.mark.parametrize(
    ("day", "logged"),
    [
        (OLD_DAY, ("fork", "history_rolled_back", 2)),  # emptied hashes: fork at the last assistant from 0
        (MARKER_DAY, ("flatten", "options_changed", 2)),  # the drift check comes first
        (NEW_DAY, ("fork", "history_rolled_back", 1)),  # 2026.9.29+: the newest boundary within the prefix (1)
    ],
)
def test_a_switch_then_a_rolled_back_branch(tmp_path: Path, day: str, logged: tuple[str, str, int]) -> None:
    """Three calls, a thinking switch, then the user continues from the first answer (/tree): the binding's
    prefix matches 1 of its 3 messages."""
    t = _transcript(day)
    markers = day != OLD_DAY
    t.user("one")
    if markers:
        t.marker()
    first = t.assistant([text("a")], "bootstrap", "registry_miss", 1)
    for word in ("two", "three"):
        t.user(word)
        if markers:
            t.marker()
        t.assistant([text(word)], "delta", "prefix_matched", 1)
    t.thinking_level("medium")
    t.user("two, differently", parent=first)
    if markers and logged[0] != "flatten":
        t.marker()
    t.assistant([text("d")], *logged)
    session = only_session(run([t.write(tmp_path / "agent")]))
    turn = session.turns[3]
    assert (turn.agreement, turn.logged_only) == (True, False), turn.why
    assert decisions(session)[3] == logged


def test_a_switch_entry_closes_even_when_the_level_looks_unchanged(tmp_path: Path) -> None:
    """senpi writes a thinking_level_change only with its thinking_level_select event: the entry is the switch. With
    no drift to check, the binding reattaches and registry_miss takes the close's cause."""
    # the level the session already had, as far as the transcript says
    session = _switch_then(tmp_path, "high", "high", ("fork", "thinking_level_selected", 1))
    turn = session.turns[2]
    assert (turn.agreement, turn.logged_only) == (True, False), turn.why
    assert "its prefix still matches -> reattach" in turn.why
