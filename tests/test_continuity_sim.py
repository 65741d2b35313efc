"""End to end against the senpi simulator: what the replay recomputes must be what the simulated senpi did.

The simulator (`core.demo.sim`) is an independent re-implementation of senpi that writes an agent dir
plus a manifest of true values (logged decision, commit outcome, volatile-only rewrites, what a stable
fingerprint would have logged). Every turn of every session must match.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from core.agents.senpi.continuity.closes import START_WINDOW_MS
from core.demo.bundle import demo_source
from core.demo.sim import scenarios
from core.demo.sim.builds import OLD_BUILD
from core.demo.sim.generator import generate
from core.report.html import render_html
from core.report.markdown import render_markdown
from core.report.schema import Report
from core.state import SessionState, State
from core.timeutil import iso_ms, parse_iso_ms
from tests.report_helpers import report_for
from tests.senpi_builder import run


def _state(agent: Path) -> State:
    # the events directory is named explicitly: resolving an agent dir picks only logs/ and sessions/ today
    paths = [agent] + ([agent / "events"] if (agent / "events").is_dir() else [])
    return run(paths)


def _later(ts: str, ms: int) -> str:
    return iso_ms(parse_iso_ms(ts) + ms)


def _ambiguous(close: dict[str, Any], truth: dict[str, Any], manifest: dict[str, Any]) -> bool:
    """A call of another session was open when `close` was written and writes that reason itself (a line with
    no session id cannot tell them apart)."""
    if truth["provider"] != "claude-sdk-oauth":
        return False  # newer builds put the session id on the line
    for other in manifest["sessions"]:
        if other is truth:
            continue
        for turn in other["turns"]:
            if not turn["ts"] <= close["ts"] < min(turn["log_ts"], _later(turn["ts"], START_WINDOW_MS)):
                continue
            if turn["kind"] == "fork" and close["reason"] == "other":
                return True
            if turn["kind"] in ("flatten", "bootstrap") and close["reason"] in (turn["reason"], "registry_miss"):
                return True
    return False


def _check(state: State, manifest: dict[str, Any]) -> dict[str, int]:
    by_id: dict[str, SessionState] = {s.session_id: s for s in state.sessions.values()}
    seen = {"turns": 0, "events": 0, "rewritten": 0, "avoidable": 0, "sidecars": 0, "closes": 0, "ambiguous": 0}
    for truth in manifest["sessions"]:
        session = by_id[truth["session_id"]]
        assert len(session.turns) == len(truth["turns"])
        for want, turn in zip(truth["turns"], session.turns, strict=True):
            where = f"{truth['session_id']} turn {want['index']}"
            seen["turns"] += 1
            assert turn.recomputed is not None, where
            assert (turn.recomputed.kind, turn.recomputed.reason, turn.recomputed.count) == (
                want["kind"], want["reason"], want["count"]
            ), where  # fmt: skip
            assert turn.agreement in (True, None), (where, turn.disagreement)
            outcome = "unknown" if want["commit"] == "failed" else want["commit"]
            assert turn.commit is not None and turn.commit.outcome == outcome, where
            if want["commit"] == "rewritten":
                seen["rewritten"] += 1
                expected = "volatile-only" if want["volatile_only_rewrite"] else "semantic"
                assert turn.commit.klass == expected, where
            if turn.commit.source == "events":
                seen["events"] += 1
            cf = turn.counterfactual
            assert cf is not None and (cf.kind, cf.reason, cf.count) == (
                want["stable_kind"], want["stable_reason"], want["stable_count"]
            ), where  # fmt: skip
            assert bool(turn.avoidable) == want["resend_from_volatile"], where
            seen["avoidable"] += bool(turn.avoidable)
            # the close lines senpi wrote inside the call (at its start, or on its failure) pair with it, unless a
            # call of another session could have written the same line at that time (old builds name no session)
            inside = [
                c
                for c in truth["closes"]
                if c["when"] in ("call_start", "failure") and want["ts"] <= c["ts"] <= want["log_ts"]
            ]
            expected = [c["reason"] for c in inside if not _ambiguous(c, truth, manifest)]
            assert turn.facts.closes == expected, where
            seen["closes"] += len(expected)
            seen["ambiguous"] += len(inside) - len(expected)
        if truth.get("sidecar"):
            seen["sidecars"] += 1
            verdict = session.facts.sidecar_verdict
            assert verdict["checks"].get("sentPrefixHash") is not False, verdict
    return seen


def test_the_bundled_demo_is_recomputed_turn_by_turn() -> None:
    agent = demo_source()
    manifest = json.loads((agent / "manifest.json").read_text(encoding="utf-8"))
    seen = _check(_state(agent), manifest)
    assert seen["turns"] == sum(len(s["turns"]) for s in manifest["sessions"])
    assert seen["events"] > 0 and seen["rewritten"] > 0 and seen["avoidable"] > 0
    assert seen["closes"] == 17  # 10 before a flatten of a live entry, 6 before a fork that resumes one, 1 failure


def test_the_demo_is_replayed_where_the_files_tell() -> None:
    """34 of 36 calls replayed from the files (the thinking switch of turn 19 and the idle expiry of turn 18
    included); the failed call and the reattach after it are taken from the log, saying what the files lack."""
    state = _state(demo_source())
    turns = [t for s in state.sessions.values() for t in s.turns]
    assert sum(1 for t in turns if t.agreement) == 34 and not any(t.agreement is False for t in turns)
    only = [t for t in turns if t.logged_only]
    assert [t.why for t in only] == [
        "logged-only: terminal failure: every attempt failed",
        "logged-only: query_failed re-attributed from the close after turn 8 ended with error: whether that "
        "failure closed the entry and which binding senpi kept (the one before the failed turn, a retry checkpoint, "
        "or none) is not on disk",
    ]


def test_the_previous_demo_data_contradicts_its_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bundle as written before issue 20 (the v2026.8.18-3 thinking rules on a 2026.8.4-2 session): turn 19
    logged flatten/options_changed/23, which the build its evidence points to cannot log. Shown, not copied."""
    monkeypatch.setattr(
        scenarios, "OLD_BUILD", dataclasses.replace(OLD_BUILD, binding_drift_check=True, thinking_keeps_hashes=True)
    )
    generate(tmp_path / "agent", "demo")
    state = _state(tmp_path / "agent")
    old = next(s for s in state.sessions.values() if s.session_id.startswith("019fdb7e"))
    turn = old.turns[19]
    assert (turn.agreement, turn.logged_only) == (False, False)
    assert turn.contradiction == (
        "logged flatten/options_changed/23; build 2026.8.3 decides fork/history_rolled_back/23: "
        "the profile or the data is wrong"
    )
    assert turn.why is not None and turn.why.startswith(turn.contradiction)
    assert old.facts.verdicts["disagree"] == 1
    report = report_for(tmp_path / "agent", paths=[tmp_path / "agent", tmp_path / "agent" / "events"])
    Report.model_validate(json.loads(json.dumps(report)))
    (row,) = [t for t in report["turns"] if t["contradiction"]]
    assert (row["index"], row["contradiction"]) == (19, turn.contradiction)
    assert turn.contradiction in render_markdown(report) and turn.contradiction in render_html(report)


@pytest.mark.parametrize("seed", [3, 29])
def test_freshly_simulated_demos(tmp_path: Path, seed: int) -> None:
    manifest = generate(tmp_path / "agent", "demo", seed=seed)
    data = json.loads((tmp_path / "agent" / "manifest.json").read_text(encoding="utf-8"))
    assert len(data["sessions"]) == len(manifest.sessions)
    seen = _check(_state(tmp_path / "agent"), data)
    assert seen["rewritten"] > 0


def test_a_simulated_corpus_is_recomputed_turn_by_turn(tmp_path: Path) -> None:
    """Both builds over many sessions: thinking-level switches (v2026.8.4-2's fork from 0 and the options drift
    after it; the newer builds' toolset_changed reattach), idle gaps past the lifetime, failed calls."""
    generate(tmp_path / "agent", "corpus", seed=3, scale=0.2, sessions=40)
    data = json.loads((tmp_path / "agent" / "manifest.json").read_text(encoding="utf-8"))
    seen = _check(_state(tmp_path / "agent"), data)
    reasons = {(s["build"][:8], t["reason"]) for s in data["sessions"] for t in s["turns"]}
    assert {
        ("2026.8.4", "history_rolled_back"),
        ("2026.8.4", "options_changed"),
        ("2026.8.4", "idle_ttl"),
        ("2026.10.", "toolset_changed"),
        ("2026.10.", "idle_ttl"),
    } <= reasons
    assert seen["turns"] > 500 and seen["closes"] > 100 and seen["ambiguous"] < seen["closes"] // 10


def test_every_rewritten_recorded_thinking_turn_is_volatile_only() -> None:
    """The issue's acceptance check: on an old build whose thinking turns were recorded as events, every
    rewritten turn shows `.content[N].startedAt` / `.endedAt` missing in capture, class volatile-only."""
    state = _state(demo_source())
    checked = 0
    for session in state.sessions.values():
        for turn in session.turns:
            info = turn.commit
            if info is None or info.outcome != "rewritten" or info.source != "events":
                continue
            checked += 1
            assert info.klass == "volatile-only"
            paths = {c.path.rsplit(".", 1)[-1] for c in info.diff}
            assert paths == {"startedAt", "endedAt"}
            assert all(c.change == "missing_in_capture" for c in info.diff)
    assert checked > 0


def test_projected_digest_equals_the_simulator_on_every_demo_turn() -> None:
    """The 2026.9.7-2+ `assistantContentHash` (projected) the analysis computes per turn equals the simulator's on all
    36 demo turns, the failed call and the old-build session included (senpi-fidelity review: 36/36)."""
    agent = demo_source()
    manifest = json.loads((agent / "manifest.json").read_text(encoding="utf-8"))
    by_id = {s.session_id: s for s in _state(agent).sessions.values()}
    compared = 0
    for truth in manifest["sessions"]:
        for want, turn in zip(truth["turns"], by_id[truth["session_id"]].turns, strict=True):
            assert want["hash_projected"], (truth["session_id"], want["index"])
            assert turn.fingerprints is not None
            assert turn.fingerprints["senpi_sha256_projected"] == want["hash_projected"], (
                truth["session_id"],
                want["index"],
            )
            compared += 1
    assert compared == 36
