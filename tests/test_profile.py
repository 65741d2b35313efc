"""Build profiles are data, and the choice among them follows the evidence, never simply the newest."""

from __future__ import annotations

from core.agents.senpi.fingerprint import PROJECTED, TIMING_STRIPPED, VERBATIM, fingerprints
from core.agents.senpi.profiles import PROFILES, Evidence, detect_profile, profile_by_id
from core.timeutil import parse_iso_ms


def _day(day: str) -> int:
    ms = parse_iso_ms(f"{day}T12:00:00.000Z")
    assert ms is not None
    return ms


def test_the_timeline_changes_one_thing_at_a_time() -> None:
    ids = [p.id for p in PROFILES]
    assert ids[0] == "2026.8.3" and ids[-1] == "2026.10.10-10"
    assert [p.since_date for p in PROFILES] == sorted(p.since_date for p in PROFILES)
    assert profile_by_id("2026.8.3").hash_rule == VERBATIM
    assert profile_by_id("2026.8.11-2").hash_rule == TIMING_STRIPPED
    assert profile_by_id("2026.9.7-2").hash_rule == PROJECTED
    assert profile_by_id("2026.9.7-2").first_turn == "at-most-one-transmitted"
    assert profile_by_id("2026.9.9").first_turn == "no-assistant-in-context"
    assert profile_by_id("2026.10.1").dedupe == "keep-last"
    assert profile_by_id("2026.10.10-10").dedupe == "keep-identical-previous"
    assert "options_changed" in profile_by_id("2026.8.20").reasons
    assert "options_changed" not in profile_by_id("2026.9.7-2").reasons
    assert profile_by_id("2026.9.29").terminal_kind == "failed"


def test_dates_bound_the_build_from_above() -> None:
    profile, why = detect_profile(Evidence(last_ms=_day("2026-08-07")))
    assert profile.id == "2026.8.3" and "last entry dated 2026-08-07" in why


def test_features_bound_the_build_from_below() -> None:
    ev = Evidence(last_ms=_day("2026-10-05"), providers={"anthropic-subscription"}, session_id_lines=3)
    profile, why = detect_profile(ev)
    assert profile.id == "2026.10.1"
    assert "sessionId on 3 log line(s) (>= 2026.9.29)" in why
    assert "nothing separates 2026.9.29 … 2026.10.1" in why


def test_old_behaviour_bounds_the_build_from_above() -> None:
    ev = Evidence(last_ms=_day("2026-10-05"), reasons={"options_changed": 2})
    profile, why = detect_profile(ev)
    assert profile.id == "2026.9.3-3" and "options_changed" in why


def test_logged_decisions_pick_the_hash_rule_among_allowed_builds() -> None:
    ev = Evidence(last_ms=_day("2026-08-12"))
    assert detect_profile(ev)[0].id == "2026.8.11-2"  # nothing else known: the latest the date allows
    ev.set_votes(1, {VERBATIM: 1, TIMING_STRIPPED: -1, PROJECTED: -1})
    profile, why = detect_profile(ev)
    assert profile.hash_rule == VERBATIM and "1 logged decision(s) agree with the verbatim hash rule" in why
    ev.set_votes(1, None)
    assert detect_profile(ev)[0].hash_rule == TIMING_STRIPPED


def test_conflicting_evidence_is_said() -> None:
    ev = Evidence(last_ms=_day("2026-08-05"), markers=2)
    profile, why = detect_profile(ev)
    assert profile.id == "2026.8.18-3" and "conflicting evidence" in why


def test_fingerprints_of_a_plain_message_agree_across_rules() -> None:
    msg = {"role": "assistant", "api": "claude-sdk-oauth", "provider": "claude-sdk-oauth", "model": "m",
           "content": [{"type": "text", "text": "hi"}]}  # fmt: skip
    prints = fingerprints(msg)
    assert prints["senpi_sha256"] == prints["senpi_sha256_verbatim"] == prints["senpi_sha256_projected"]


def test_describe_made_once_per_profile_is_the_walk_over_its_fields() -> None:
    from dataclasses import fields, replace

    from core.agents.senpi.profiles import _NOT_DESCRIBED

    def walk(p: object) -> dict[str, object]:
        out: dict[str, object] = {"id": p.id, "since_date": p.since_date, "label": p.label}  # type: ignore[attr-defined]
        out.update((f.name, getattr(p, f.name)) for f in fields(p) if f.name not in _NOT_DESCRIBED)  # type: ignore[arg-type]
        return out

    for profile in [*PROFILES, replace(PROFILES[-1], id="test-copy")]:
        first, second = profile.describe(), profile.describe()
        assert first == walk(profile) and list(first) == list(walk(profile))
        assert first is not second  # a dict of its own each time (session.profile is built from it)
