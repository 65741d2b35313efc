"""Prompt-cache waste (issue 14): per call expected read and excess, causes, lifetimes, prices, the report's
`waste` section, `check --max-waste-*` and the reports' opening sentence, on fixtures with known answers.

Claude Code transcripts are built with the real envelope (`tests.test_agent_claude_code.Log`); each cause gets
its own call with figures whose excess and dollars are worked out by hand below (Opus 4.6 list prices: input
$5, 5-minute write $6.25, 1-hour write $10, read $0.50, output $25 per million tokens).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core.engine import Engine
from core.kernel.cache_verdict import TTL_1H_MS, TTL_5M_MS, CallUsage, judge
from core.kernel.pricing import BUNDLED, Price, PriceFileError, call_cost, excess_cost, load_prices
from core.report import ReportOptions, build_report
from core.report.check import Thresholds, evaluate
from core.report.html import render_html
from core.report.markdown import render_markdown
from tests.test_agent_claude_code import SID, T0, Log, text

M = 60_000
SID_B = "7c1f0e52-1b3a-4c55-9d1e-3f2a6b7c8d90"
#: Opus 4.6: a 5-minute write costs $6.25/MTok, a read $0.50: each excess token re-written costs $5.75/MTok
PER_EXCESS_5M = 5.75 / 1_000_000


def project(tmp_path: Path) -> Path:
    return tmp_path / ".claude" / "projects" / "-Users-tom-tmp-tenant-library"


def causes_log() -> Log:
    """One session, one call per cause, 5-minute writes:

    1. first call: writes 20,000 (expected cost, no excess)
    2. 30 s later reads them back and writes 500: a hit (cached 20,500)
    3. 6 min later reads nothing: `cache_expired`, excess min(21,010 not read, 20,500) = 20,500
    4. 30 s later reads 3,000 of 21,000: `prefix_rewritten`, excess min(18,510, 18,000) = 18,000
    5. 30 s later reads nothing of 21,500 within the lifetime: `cache_miss`, excess 21,500
    6. a compaction: its summary's write is expected, not waste
    """
    log = Log()
    t = T0
    log.user(t, "start", parent=None)
    log.call(t + 1_000, "msg_1", "req_1", [text("a")], inp=10, read=0, write=20_000, one_hour=False)
    t += 30_000
    log.user(t, [{"tool_use_id": "toolu_1", "type": "tool_result", "content": "ok"}])
    log.call(t + 1_000, "msg_2", "req_2", [text("b")], inp=10, read=20_000, write=500, one_hour=False)
    t += 6 * M
    log.user(t, "back after a coffee")
    log.call(t + 1_000, "msg_3", "req_3", [text("c")], inp=10, read=0, write=21_000, one_hour=False)
    t += 30_000
    log.user(t, [text("<task-notification>\n<task-id>b1</task-id>\n</task-notification>")])
    log.call(t + 1_000, "msg_4", "req_4", [text("d")], inp=10, read=3_000, write=18_500, one_hour=False)
    t += 30_000
    log.user(t, "go on")
    log.call(t + 1_000, "msg_5", "req_5", [text("e")], inp=10, read=0, write=22_000, one_hour=False)
    t += 30_000
    log.system(t, "compact_boundary", content="Conversation compacted", logicalParentUuid=log.last,
               compactMetadata={"trigger": "auto", "preTokens": 22_010})  # fmt: skip
    log.user(t + 500, [text("summary")], isCompactSummary=True, isVisibleInTranscriptOnly=True)
    log.call(t + 1_000, "msg_6", "req_6", [text("f")], inp=10, read=3_000, write=4_000, one_hour=False)
    return log


def report_of(paths: list[Path], **options: Any) -> dict[str, Any]:
    engine = Engine(paths)
    engine.drain()
    try:
        return build_report(engine, ReportOptions(now_ms=0, **options))
    finally:
        engine.close()


def calls_of(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["entry_id"]: t for t in report["turns"]}


# ---------------------------------------------------------------------------------------------- the kernel
def test_each_cause_and_its_excess_on_a_claude_code_session(tmp_path: Path) -> None:
    causes_log().write(project(tmp_path) / f"{SID}.jsonl")
    report = report_of([tmp_path / ".claude" / "projects"])
    calls = calls_of(report)
    verdicts = {k: (t["call"]["kind"], t["call"]["reason"], t["cache"]["expected_read"], t["cache"]["excess"])
                for k, t in calls.items()}  # fmt: skip
    assert verdicts == {
        "msg_1": ("bootstrap", "first_call", None, 0),
        "msg_2": ("delta", "cache_hit", 20_000, 0),
        "msg_3": ("re-send", "cache_expired", 20_500, 20_500),
        "msg_4": ("re-send", "prefix_rewritten", 21_000, 18_000),
        "msg_5": ("re-send", "cache_miss", 21_500, 21_500),
        "msg_6": ("compaction", "compact_boundary", None, 0),  # a new prompt: nothing expected
    }
    assert calls["msg_3"]["cache"]["gap_ms"] == 6 * M and calls["msg_3"]["cache"]["ttl_ms"] == TTL_5M_MS
    assert calls["msg_4"]["cache"]["new_input"] == ["<task-notification>"]
    waste = report["waste"]
    assert waste["excess_tokens"] == 60_000
    assert waste["by_cause"] == {"cache_miss": 21_500, "cache_expired": 20_500, "prefix_rewritten": 18_000}
    assert waste["calls_by_cause"] == {"cache_miss": 1, "cache_expired": 1, "prefix_rewritten": 1}
    not_read = 20_010 + 510 + 21_010 + 18_510 + 22_010 + 4_010
    assert waste["not_read_tokens"] == not_read and waste["share"] == round(60_000 / not_read, 4)
    cost = waste["cost_usd"]
    assert cost["excess"] == pytest.approx(60_000 * PER_EXCESS_5M)  # $0.345
    assert cost["by_cause"]["cache_expired"] == pytest.approx(20_500 * PER_EXCESS_5M)
    # the actual spend: every call at list price (6 calls x 120 output tokens)
    tokens = report["sessions"][0]["tokens"]
    actual = (tokens["input"] * 5 + tokens["cache_write"] * 6.25 + tokens["cache_read"] * 0.5 + 720 * 25) / 1e6
    assert cost["actual"] == pytest.approx(actual, abs=1e-6)
    assert waste["pricing"]["as_of"] and waste["pricing"]["source"].startswith("bundled list prices")
    # each figure traces to its calls: the largest excess first
    assert [(t["entry_id"], t["cause"], t["excess"]) for t in waste["top"]] == [
        ("msg_5", "cache_miss", 21_500),
        ("msg_3", "cache_expired", 20_500),
        ("msg_4", "prefix_rewritten", 18_000),
    ]
    assert sum(t["excess"] for t in waste["top"]) == waste["excess_tokens"]
    assert calls["msg_4"]["cost_usd"]["excess"] == pytest.approx(18_000 * PER_EXCESS_5M, abs=1e-6)
    session = report["sessions"][0]["waste"]
    assert session["excess_tokens"] == 60_000 and session["cost_usd"]["excess"] == cost["excess"]


def test_a_write_lives_as_long_as_its_part_of_usage_cache_creation_says() -> None:
    """A 1-hour write of the system prompt, 5-minute writes of the conversation after it: a 10-minute gap that
    reads back only the 1-hour part has expired (the read stopped in a 5-minute part); one that reads back
    nothing of a wholly 1-hour prefix has not (nothing had expired: a miss)."""
    first = CallUsage(10, 0, 20_000, T0, write_1h=8_000, write_5m=12_000)
    judge(first, None)
    assert first.lifetimes == ((8_000, TTL_1H_MS), (20_000, TTL_5M_MS))
    expired = judge(CallUsage(10, 8_000, 12_500, T0 + 10 * M, write_5m=12_500, write_1h=0), first)
    assert (expired.kind, expired.reason, expired.evidence["ttl_ms"]) == ("re-send", "cache_expired", TTL_5M_MS)
    assert expired.evidence["excess"] == 12_000
    hour = CallUsage(10, 0, 20_000, T0, write_1h=20_000, write_5m=0)
    judge(hour, None)
    missed = judge(CallUsage(10, 0, 20_500, T0 + 10 * M, write_1h=20_500, write_5m=0), hour)
    assert (missed.reason, missed.evidence["ttl_ms"], missed.evidence["excess"]) == ("cache_miss", TTL_1H_MS, 20_000)
    late = judge(CallUsage(10, 0, 20_500, T0 + 61 * M, write_1h=20_500, write_5m=0), hour)
    assert late.reason == "cache_expired"


def test_resume_reason_on_the_first_call_after_copies() -> None:
    previous = CallUsage(10, 20_000, 500, T0)
    found = judge(CallUsage(10, 0, 21_000, T0 + 2 * M), previous, resumed_from="a-session")
    assert (found.kind, found.reason, found.evidence["excess"]) == ("re-send", "resume", 20_500)
    assert found.evidence["resumed_from"] == "a-session"
    hit = judge(CallUsage(10, 20_500, 300, T0 + 2 * M), previous, resumed_from="a-session")
    assert (hit.kind, hit.reason) == ("delta", "cache_hit")  # a resume that read everything back is no waste


def resume_logs() -> tuple[Log, list[dict[str, Any]]]:
    """Session A: two calls. Session B (a `claude --resume` of A): its file starts with copies of A's lines
    (same uuids, message ids and requestIds under B's sessionId), then 2 min later its first own call reads
    nothing back of the 20,500 A's last call cached."""
    a = causes_log()
    a.lines = a.lines[:4]  # start, msg_1, tool_result, msg_2
    b = copy.deepcopy(a.lines)
    for line in b:
        line["sessionId"] = SID_B
    last = b[-1]["uuid"]
    b.append({**copy.deepcopy(a.lines[0]), "uuid": "b0000001-0000-4000-8000-000000000000", "parentUuid": last,
              "sessionId": SID_B, "timestamp": "2026-08-22T09:03:00.000Z",
              "message": {"role": "user", "content": "carry on"}})  # fmt: skip
    own = copy.deepcopy(a.lines[3])
    own.update(uuid="b0000002-0000-4000-8000-000000000000", parentUuid=b[-1]["uuid"], sessionId=SID_B,
               timestamp="2026-08-22T09:03:01.000Z", requestId="req_b1")  # fmt: skip
    own["message"].update(id="msg_b1", usage={**own["message"]["usage"], "cache_read_input_tokens": 0,
                                              "cache_creation_input_tokens": 21_000,
                                              "cache_creation": {"ephemeral_5m_input_tokens": 21_000,
                                                                 "ephemeral_1h_input_tokens": 0}})  # fmt: skip
    b.append(own)
    return a, b


@pytest.mark.parametrize("b_first", [False, True])
def test_a_resumed_session_counts_its_copies_once_and_its_first_call_as_resume(tmp_path: Path, b_first: bool) -> None:
    a, b = resume_logs()
    where = project(tmp_path)
    a.write(where / f"{SID}.jsonl")
    b_log = Log()
    b_log.lines = b
    b_log.write(where / f"{SID_B}.jsonl")
    paths = [where / f"{SID_B}.jsonl", where / f"{SID}.jsonl"] if b_first else [where]
    report = report_of(paths)
    by_session = {s["id"]: s for s in report["sessions"]}
    assert by_session[SID]["tokens"]["cache_write"] == 20_500  # A made msg_1 and msg_2
    assert by_session[SID_B]["tokens"]["cache_write"] == 21_000  # B's copies of them count in A only
    own = [t for t in report["turns"] if t["session"] == SID_B and t["call"] is not None]
    assert [(t["entry_id"], t["call"]["kind"], t["call"]["reason"]) for t in own] == [("msg_b1", "re-send", "resume")]
    assert own[0]["cache"]["expected_read"] == 20_500 and own[0]["cache"]["excess"] == 20_500
    assert own[0]["cache"]["resumed_from"] == SID
    assert report["calls"]["total"] == 3
    assert report["waste"]["by_cause"] == {"resume": 20_500}
    assert report["waste"]["cost_usd"]["by_cause"]["resume"] == pytest.approx(20_500 * PER_EXCESS_5M)


# ---------------------------------------------------------------------------------------------- prices
def test_list_prices_per_call_and_per_excess_token() -> None:
    opus = BUNDLED.lookup("claude-opus-4-6")
    assert opus == BUNDLED.lookup("claude-opus-4-6[1m]") == BUNDLED.lookup("anthropic/claude-opus-4-6")
    assert opus is not None and (opus.input, opus.cache_write_5m, opus.cache_write_1h, opus.cache_read) == (
        5.0, 6.25, 10.0, 0.5)  # fmt: skip
    assert BUNDLED.lookup("claude-sonnet-4-20250514") == BUNDLED.lookup("claude-sonnet-4")
    # as the agents write them: mux `anthropic:…`, Codex `gpt-5-1-codex-2025-11-13`
    assert BUNDLED.lookup("anthropic:claude-sonnet-4-5") == BUNDLED.lookup("claude-sonnet-4-5") is not None
    assert BUNDLED.lookup("gpt-5-1-codex-2025-11-13") == BUNDLED.lookup("gpt-5.1-codex") is not None
    tokens = {"input": 1_000_000, "cache_read": 1_000_000, "cache_write": 1_000_000, "output": 1_000_000}
    assert call_cost(opus, tokens) == pytest.approx(5 + 0.5 + 6.25 + 25)
    assert call_cost(opus, tokens, write_5m=0, write_1h=1_000_000) == pytest.approx(5 + 0.5 + 10 + 25)
    # 1-hour writes cost $10 - $0.50 per excess token beyond a hit; uncached input $5 - $0.50
    assert excess_cost(opus, 1_000, {"cache_write": 1_000}, 0, 1_000) == pytest.approx(9.5 / 1_000)
    assert excess_cost(opus, 1_000, {"cache_write": 400, "input": 600}) == pytest.approx(
        (400 * 5.75 + 600 * 4.5) / 1e6)  # fmt: skip
    gpt = BUNDLED.lookup("gpt-5-codex")
    assert gpt is not None and excess_cost(gpt, 1_000, {"input": 1_000}) == pytest.approx(1.125 / 1_000)
    assert BUNDLED.lookup("someone-elses-model") is None
    assert call_cost(None, tokens) is None and excess_cost(None, 10, tokens) is None
    sonnet = BUNDLED.lookup("claude-sonnet-4-5")
    assert sonnet is not None and call_cost(sonnet, {"input": 10, "cache_read": 250_000}) is None  # > 200K prompt


def test_a_prices_file_adds_and_overrides_and_bad_ones_say_why(tmp_path: Path) -> None:
    good = tmp_path / "prices.json"
    good.write_text(json.dumps({"claude-opus-4-6": {"cache_write_5m": 7.0}, "my-model": {"input": 1, "output": 2,
                                "cache_read": 0.1, "cache_write_5m": 1.5}}))  # fmt: skip
    table = load_prices(good)
    assert table.lookup("claude-opus-4-6") == Price(5.0, 25.0, 7.0, 10.0, 0.5, None)
    assert table.lookup("my-model") == Price(1.0, 2.0, 1.5, None, 0.1, None)
    assert table.describe()["file"] == str(good) and table.describe()["overridden"] == ["claude-opus-4-6", "my-model"]
    for body, says in [
        ("{", "not JSON"),
        ("[]", "expected an object"),
        ('{"m": {"inptu": 1}}', "unknown key"),
        ('{"m": {"input": -1}}', "must be a number >= 0"),
        ('{"m": 3}', "expected an object"),
    ]:
        bad = tmp_path / "bad.json"
        bad.write_text(body)
        with pytest.raises(PriceFileError, match=says):
            load_prices(bad)
    with pytest.raises(PriceFileError, match="cannot read"):
        load_prices(tmp_path / "missing.json")


def test_a_model_without_a_price_has_a_null_cost_never_a_guess(tmp_path: Path) -> None:
    log = causes_log()
    for line in log.lines:
        if line.get("type") == "assistant":
            line["message"]["model"] = "claude-unreleased-9"
    log.write(project(tmp_path) / f"{SID}.jsonl")
    report = report_of([tmp_path / ".claude" / "projects"])
    waste = report["waste"]
    assert waste["excess_tokens"] == 60_000
    assert waste["cost_usd"]["actual"] is None and waste["cost_usd"]["excess"] is None
    assert waste["cost_usd"]["excess_unpriced_tokens"] == 60_000
    assert waste["pricing"]["unpriced_models"] == {"claude-unreleased-9": 6}
    assert calls_of(report)["msg_3"]["cost_usd"] == {"actual": None, "source": None, "excess": None}
    first = render_markdown(report).split("\n")[2]
    assert first.startswith("**60,000 tokens") and "$" not in first and "claude-unreleased-9" in first
    prices = tmp_path / "p.json"
    prices.write_text(json.dumps({"claude-unreleased-9": {"input": 5, "output": 25, "cache_write_5m": 6.25,
                                                          "cache_read": 0.5}}))  # fmt: skip
    priced = report_of([tmp_path / ".claude" / "projects"], prices=load_prices(prices))["waste"]
    assert priced["cost_usd"]["excess"] == pytest.approx(60_000 * PER_EXCESS_5M)


# ---------------------------------------------------------------------------------------------- surfaces
def test_check_gates_on_waste_dollars_and_share(tmp_path: Path) -> None:
    causes_log().write(project(tmp_path) / f"{SID}.jsonl")
    report = report_of([tmp_path / ".claude" / "projects"])
    results = {r.name: r for r in evaluate(report, Thresholds(max_waste_usd=0.30, max_waste_share=0.9))}
    assert not results["waste-usd"].ok and results["waste-usd"].measured == pytest.approx(0.345)
    assert "60000 excess tokens in 3 of 6 calls" in results["waste-usd"].basis
    assert results["waste-share"].ok and results["waste-share"].measured == report["waste"]["share"]
    assert [r.name for r in evaluate(report, Thresholds(max_waste_usd=1.0))] == ["waste-usd"]
    assert evaluate(report, Thresholds(max_waste_usd=1.0))[0].ok


def test_the_reports_open_with_what_re_writing_cache_cost_and_why(tmp_path: Path) -> None:
    causes_log().write(project(tmp_path) / f"{SID}.jsonl")
    report = report_of([tmp_path / ".claude" / "projects"])
    first = render_markdown(report).split("\n")[2]
    actual = report["waste"]["cost_usd"]["actual"]
    assert first.startswith(f"**$0.34 of ${actual:,.2f} (")  # $0.345 rounds half-even to $0.34
    assert "was spent re-writing cache that was already written** (60,000 tokens in 3 calls): " in first
    assert "36 % cache misses within the lifetime (`cache_miss`)" in first
    assert "34 % cache expiry after > 5 min idle (`cache_expired`)" in first
    assert "30 % prefix rewrites (`prefix_rewritten`)" in first
    page = render_html(report)
    assert "was spent re-writing cache that was already written" in page
    assert page.index("re-writing cache") < page.index("<h2>")
    assert "<h2>Prompt-cache waste</h2>" in page


def test_cli_prices_and_check_flags(tmp_path: Path) -> None:
    causes_log().write(project(tmp_path) / f"{SID}.jsonl")
    projects = str(tmp_path / ".claude" / "projects")
    cmd = [sys.executable, "-m", "tui.cli"]
    run = subprocess.run([*cmd, "check", "--no-cache", "--max-waste-usd", "0.1", projects], capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert run.returncode == 1 and "FAIL waste-usd 0.345" in run.stdout, run.stdout + run.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    run = subprocess.run([*cmd, "report", "--no-cache", "--prices", str(bad), projects], capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert run.returncode != 0 and "--prices" in run.stderr and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def test_a_partly_priced_history_says_which_excess_has_no_price(tmp_path: Path) -> None:
    log = causes_log()
    for line in log.lines:
        if line.get("type") == "assistant" and line["message"]["id"] == "msg_5":
            line["message"]["model"] = "claude-unreleased-9"
    log.write(project(tmp_path) / f"{SID}.jsonl")
    report = report_of([tmp_path / ".claude" / "projects"])
    cost = report["waste"]["cost_usd"]
    assert cost["excess"] == pytest.approx(38_500 * PER_EXCESS_5M) and cost["excess_unpriced_tokens"] == 21_500
    first = render_markdown(report).split("\n")[2]
    assert "(60,000 tokens in 3 calls; 21,500 of them unpriced: claude-unreleased-9)" in first
