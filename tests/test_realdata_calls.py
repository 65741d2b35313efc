"""Calls as the unit, on the real files in `../shared/realdata` (issue 13; reviews/real-data.md).

Per session, the calls and tokens the report gives equal an independent line-level reading (`tests/realdata`:
distinct message.id + requestId over a Claude Code session file, its `subagents/` files and the sub-agent calls
inside `agent_progress` lines; pi's assistant messages; mux's assistant rows). Every call has a kind,
`calls.by_kind` adds up, a call that reads its previous call's cacheable prefix back exactly is a delta, and
each defect the review measured is pinned on the file that shows it. The files are only read (nothing is
written next to them: no cache, no output there).
"""

from __future__ import annotations

import subprocess
import sys
from functools import cache
from typing import Any

import pytest

from core.engine import Engine
from core.model import CALL_KINDS
from core.report import ReportOptions, build_report
from core.report.schema import validate
from tests.realdata import CLAUDE_SETS, REAL, SETS, claude_sessions, mux_workspace, needs_realdata, pi_sessions

pytestmark = needs_realdata

ANTHROPIC_SETS = [f"cc-{name}" for name in CLAUDE_SETS] + ["pi", "mux"]


@cache
def report(name: str, session: str | None = None) -> dict[str, Any]:
    engine = Engine([SETS[name]])
    engine.read_all()
    try:
        return build_report(engine, ReportOptions(now_ms=0, session=session))
    finally:
        engine.close()


def turns_of(rep: dict[str, Any], session: str) -> list[dict[str, Any]]:
    return [t for t in rep["turns"] if t["session"] == session]


def call_kind(turn: dict[str, Any]) -> tuple[str, str]:
    return turn["call"]["kind"], turn["call"]["reason"]


# ---------------------------------------------------------------------------------------------- the counts
@pytest.mark.parametrize("name", [f"cc-{name}" for name in CLAUDE_SETS])
def test_claude_code_calls_and_tokens_per_session_equal_the_line_level_reading(name: str) -> None:
    rep = report(name)
    truth = claude_sessions(SETS[name])
    got = {s["id"]: (s["turns"], s["tokens"] or dict.fromkeys(("input", "cache_read", "cache_write", "output"), 0))
           for s in rep["sessions"]}  # fmt: skip
    assert got == truth
    assert rep["calls"]["total"] == sum(calls for calls, _ in truth.values())


def test_pi_calls_and_tokens_per_session_equal_the_line_level_reading() -> None:
    rep = report("pi")
    truth = pi_sessions(SETS["pi"])
    assert {s["id"]: (s["turns"], s["tokens"]) for s in rep["sessions"]} == {
        sid: (calls, tokens) for sid, (calls, tokens, _) in truth.items()
    }
    aborted = {s["id"]: s["by_kind"].get("aborted", 0) for s in rep["sessions"]}
    assert aborted == {sid: zero for sid, (_, _, zero) in truth.items()} and sum(aborted.values()) == 27


def test_mux_calls_and_tokens_equal_the_line_level_reading() -> None:
    rep = report("mux")
    (session,) = rep["sessions"]
    assert (session["turns"], session["tokens"]) == mux_workspace(SETS["mux"] / "replay-fixture" / "chat.jsonl")


@pytest.mark.parametrize("name", list(SETS))
def test_every_call_has_a_kind_and_the_calls_section_adds_up(name: str) -> None:
    rep = report(name)
    validate(rep)  # the contract, `calls` included: by_kind has every kind and sums to total, by_reason too
    calls = rep["calls"]
    kinds = [t["call"]["kind"] for t in rep["turns"] if t["call"] is not None]
    assert set(kinds) <= set(CALL_KINDS), f"calls without a known kind: {set(kinds) - set(CALL_KINDS)}"
    assert all(t["call"]["reason"] and t["call"]["evidence"] for t in rep["turns"] if t["call"] is not None)
    assert len(kinds) == calls["total"] == sum(calls["by_kind"].values())
    assert list(calls["by_kind"])[: len(CALL_KINDS)] == list(CALL_KINDS)
    for session in rep["sessions"]:
        assert sum(session["by_kind"].values()) == session["turns"] or session["path"] is None


# ---------------------------------------------------------------------------------------------- the cache rule
@pytest.mark.parametrize("name", ANTHROPIC_SETS)
def test_exact_prefix_reuse_is_a_delta(name: str) -> None:
    """Every call whose cache read reaches its previous call's cache_read + cache_write (same session and thread)
    is a delta, unless the transcript's structure says otherwise (a compaction, a rewind, a branch). (mux reads
    1,200 after a call that cached 1,100: another request of the same turn cached more.)"""
    rep = report(name)
    previous: dict[tuple[str, str], dict[str, int]] = {}
    checked = 0
    for turn in rep["turns"]:
        tokens = turn["tokens"]
        if not tokens or not any(tokens.values()):
            continue
        key = (turn["session"], turn["thread"])
        before = previous.get(key)
        previous[key] = tokens
        if before is None or turn["call"]["evidence"] != "cache":
            continue
        expected = before["cache_read"] + before["cache_write"]
        if tokens["cache_read"] >= expected > 0:
            checked += 1
            assert turn["call"]["kind"] == "delta", (turn["session"], turn["index"], turn["call"])
            assert turn["cache"]["expected_read"] == expected and turn["cache"]["excess"] == 0
    assert checked > 0


def test_full_cache_reuse_is_no_longer_called_a_partial_prefix_resend() -> None:
    """hive #5 reads 50,872 = the previous call's 50,720 + 152 (the old rule compared it with the previous
    prompt, 17,082 uncached input included); spotter ae4a77f8 #7 reads 15,436 = 15,436."""
    hive = turns_of(report("cc-Crazytieguy-alignment-hive"), "6f2580aa-3095-45b7-8d4e-dd8cac7eeffe")
    assert (hive[5]["tokens"]["cache_read"], hive[5]["cache"]["expected_read"]) == (50_872, 50_872)
    assert call_kind(hive[5]) == ("delta", "cache_hit")
    spotter = turns_of(report("cc-marot-spotter"), "ae4a77f8-aedd-4bc1-888f-c94edc91af04")
    assert (spotter[7]["tokens"]["cache_read"], spotter[7]["cache"]["expected_read"]) == (15_436, 15_436)
    assert call_kind(spotter[7]) == ("delta", "cache_hit")
    reasons = {t["call"]["reason"] for name in ANTHROPIC_SETS for t in report(name)["turns"] if t["call"]}
    assert "partial_prefix" not in reasons


def test_a_real_prefix_rewrite_stays_a_resend_with_its_excess() -> None:
    """spotter 4d5611e5 #150: cache_read drops 98,231 -> 21,478 and 77,251 are written again 5 s after a
    `<task-notification>`: a warm cache would have read 76,753 of them (issue 14's example)."""
    turn = turns_of(report("cc-marot-spotter"), "4d5611e5-241a-462a-8d15-5122611a9569")[150]
    assert call_kind(turn) == ("re-send", "prefix_rewritten")
    assert (turn["cache"]["expected_read"], turn["tokens"]["cache_read"], turn["cache"]["excess"]) == (
        98_231, 21_478, 76_753,
    )  # fmt: skip


def test_a_pi_call_after_nothing_was_cached_is_not_a_resend() -> None:
    """pi ffae836b #1 wrote 33,637 after a first call that read and wrote nothing: no prefix to re-read."""
    turns = turns_of(report("pi"), "ffae836b-9420-4060-ac13-7745215f90ff")
    assert (turns[0]["tokens"]["cache_read"], turns[0]["tokens"]["cache_write"]) == (0, 0)
    assert call_kind(turns[1]) == ("delta", "uncached") and turns[1]["cache"]["excess"] == 0


def test_the_27_aborted_pi_calls_are_aborted() -> None:
    rep = report("pi")
    aborted = [t for t in rep["turns"] if t["call"]["kind"] == "aborted"]
    assert len(aborted) == rep["calls"]["by_kind"]["aborted"] == 27
    assert {t["stop_reason"] for t in aborted} == {"aborted", "error"}
    assert {t["call"]["reason"] for t in aborted} == {"request_aborted", "request_failed"}
    assert all(not any(t["tokens"].values()) for t in aborted)
    # left out of the share: 47 re-sends (42 cache_miss, 5 cache_expired) of the 910 calls with usage
    assert rep["calls"]["by_kind"]["re-send"] == 47 and rep["calls"]["resend_share"] == round(47 / 910, 4)


# ---------------------------------------------------------------------------------------------- sessions
def test_a_top_level_agent_file_is_its_own_session() -> None:
    """fasthooks' 2.0-era `agent-af1ff21.jsonl` shares the parent's sessionId; it became a second session
    c45af7b1…, which `--session c45af7b1` matched too. Now it is `agent-af1ff21`, as ccusage has it."""
    rep = report("cc-oneryalcin-fasthooks")
    sessions = {s["id"]: s for s in rep["sessions"]}
    assert set(sessions) == {"agent-af1ff21", "c45af7b1-cb7c-4e51-93db-8cbb250a877a"}
    agent = sessions["agent-af1ff21"]
    assert (agent["turns"], agent["path"], agent["cwd"]) == (1, "-workspace/agent-af1ff21.jsonl", "/workspace")
    assert agent["tokens"] == {"input": 728, "cache_read": 0, "cache_write": 0, "output": 152}
    assert sessions["c45af7b1-cb7c-4e51-93db-8cbb250a877a"]["turns"] == 12
    assert {t["path"] for t in turns_of(rep, "agent-af1ff21")} == {"-workspace/agent-af1ff21.jsonl"}
    only = report("cc-oneryalcin-fasthooks", "c45af7b1")
    assert [s["id"] for s in only["sessions"]] == ["c45af7b1-cb7c-4e51-93db-8cbb250a877a"]
    assert only["calls"]["total"] == 12


def test_turns_say_whose_call_from_which_file_and_thread() -> None:
    rep = report("cc-marot-spotter")
    turns = turns_of(rep, "4d5611e5-241a-462a-8d15-5122611a9569")
    assert {t["agent"] for t in turns} == {"claude-code"}
    threads = {t["thread"] for t in turns}
    assert "main" in threads and "agent:a2898e3" in threads
    # a sub-agent call is read from its own file, or from the parent's `agent_progress` line met first
    folder = "-home-marco-projects-spotter-worktrees-spotter-dov/4d5611e5-241a-462a-8d15-5122611a9569"
    sub = {t["path"] for t in turns if t["thread"] == "agent:a2898e3"}
    assert f"{folder}/subagents/agent-a2898e3.jsonl" in sub
    assert sub <= {f"{folder}.jsonl", f"{folder}/subagents/agent-a2898e3.jsonl"}
    assert {t["path"] for t in turns if t["thread"] == "main"} == {f"{folder}.jsonl"}
    assert {t["thread"] for t in report("pi")["turns"]} == {"main"}


# ---------------------------------------------------------------------------------------------- payloads
@pytest.mark.parametrize(
    ("name", "session", "index", "size"),
    [
        ("pi", "ffae836b-9420-4060-ac13-7745215f90ff", 172, 589_246),
        ("cc-DRMacIver-claude-reliability", "c7d3d95c-57f0-4359-8f4b-926a9bef5a3f", 38, 61_529),
        ("cc-marot-spotter", "4d5611e5-241a-462a-8d15-5122611a9569", 72, 428_142),
    ],
)
def test_the_largest_payload_is_the_largest(name: str, session: str, index: int, size: int) -> None:
    """`directives.largest_payload` named a tiny first call (695 bytes on pi, 347 on reliability, 20,687 on
    spotter): it was chosen among flatten calls, and these agents' first calls are the only "flatten" ones."""
    rep = report(name)
    largest = rep["directives"]["largest_payload"]
    raw = max(t["payload_bytes_raw"] or 0 for t in rep["turns"])
    assert (largest["session"], largest["index"], largest["payload_bytes_raw"]) == (session, index, size) == (
        largest["session"], largest["index"], raw,
    )  # fmt: skip
    assert rep["calls"]["peak"] == {"session": session, "index": index, "bytes": size}


# ---------------------------------------------------------------------------------------------- the gate
RESENDS = {  # re-sends per set, by the rule (reviews/real-data.md, and the rule's fixes above)
    "cc-Crazytieguy-alignment-hive": 3,
    "cc-DRMacIver-claude-reliability": 0,
    "cc-chiphuyen-sniffly": 3,
    "cc-d-kimuson-claude-code-viewer": 0,
    "cc-marot-spotter": 6,
    "cc-oneryalcin-fasthooks": 1,
    "pi": 47,
    "mux": 1,
    "codex": 266,  # 255 prefix_rewritten + 11 cache_miss of 986 calls with usage (11 aborted)
    "senpi-live": 3,  # 3 forks: in the transcripts' diagnostics and on the log's lines
}


@pytest.mark.parametrize("name", list(RESENDS))
def test_check_fails_on_every_set_that_holds_resends(name: str) -> None:
    rep = report(name)
    by_kind = rep["calls"]["by_kind"]
    assert by_kind["re-send"] + by_kind["fork"] + by_kind["flatten"] == RESENDS[name]
    done = subprocess.run(
        [sys.executable, "-m", "tui.cli", "check", str(SETS[name]), "--max-resend-share", "0", "--no-cache"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == (1 if RESENDS[name] else 0), done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if " resend-share " in f" {line}"]
    units = ["over calls:", "over log lines:"] if rep["continuity"]["events"] else ["over calls:"]
    assert [unit for line in lines for unit in units if unit in line] == units, lines
    assert all(line.startswith("FAIL" if RESENDS[name] else "PASS") for line in lines), lines


def test_the_real_data_is_there() -> None:
    """CI has `../shared/realdata` beside the checkout: a missing folder fails here, not as a silent skip."""
    assert all(path.is_dir() for path in SETS.values()), REAL


def test_codex_session_tokens_equal_the_measured_table() -> None:
    """`sessions[].tokens` of the 14 real rollouts: the line-level reading of reviews/codex-format.md (ccusage
    20.0.24 agrees on all 13 sessions with calls), in the schema's mapping (input is the uncached part)."""
    from tests.agents.codex.test_codex_realdata import TABLE

    rep = report("codex")
    got = {s["id"][:8]: s for s in rep["sessions"]}
    assert set(got) == set(TABLE)
    for prefix, (calls, prompt, cached, output, _reasoning) in TABLE.items():
        session = got[prefix]
        tokens = session["tokens"] or {"input": 0, "cache_read": 0, "cache_write": 0, "output": 0}
        assert (tokens["input"] + tokens["cache_read"], tokens["cache_read"], tokens["output"]) == (
            prompt, cached, output,
        ), prefix  # fmt: skip
        assert session["turns"] - session["by_kind"].get("aborted", 0) == calls, prefix
