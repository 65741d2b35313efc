"""The 14 real Codex rollouts through the engine: calls and tokens per session equal an independent line-level
reading and the measured table of reviews/codex-format.md (where ccusage 20.0.24 agrees on all 13 sessions
with calls), every call has a kind, and the verdicts follow the 128-token rule."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from core.engine import Engine
from core.report import build_report
from tests.agents.codex.codex_lines import REAL
from tests.realdata import needs_realdata

pytestmark = needs_realdata

#: reviews/codex-format.md, "The reading that reproduces Codex's own totals": session id prefix -> (calls,
#: input incl. cached, cached, output incl. reasoning, reasoning). ccusage 20.0.24: "same" on every row.
TABLE: dict[str, tuple[int, int, int, int, int]] = {
    "9cd28a74": (56, 2_280_287, 2_013_312, 25_914, 12_608),
    "019a01d7": (32, 217_360, 170_752, 6_366, 2_752),
    "97b66f6c": (380, 52_925_753, 51_519_872, 151_884, 51_200),
    "019ac364": (19, 174_821, 76_416, 2_495, 1_152),
    "019b5669": (5, 72_638, 40_448, 2_193, 1_536),
    "019b7f94": (3, 22_474, 14_848, 300, 128),
    "019b8fc7": (202, 11_734_895, 11_194_112, 140_886, 100_160),
    "019bbd9b": (8, 98_233, 88_064, 2_354, 1_024),
    "019c8a4d": (28, 1_751_428, 1_651_968, 14_600, 4_293),
    "019cd56c": (7, 93_243, 79_872, 560, 64),
    "019cd9ee": (5, 49_100, 46_208, 265, 0),
    "019d021f": (234, 21_879_358, 20_439_552, 156_136, 46_329),
    "019d688b": (7, 308_384, 248_960, 3_316, 869),
    "019d6de0": (0, 0, 0, 0, 0),
}


def line_level(path: Path) -> dict[str, Any]:
    """The review's reading, written out with `json` alone: a call is a token_count whose total_token_usage
    differs from the previous non-null one; its usage is the line's last_token_usage. Also: the lines that are
    aborted requests (turn_aborted while a request is open), and the model per call from turn_context."""
    calls: list[tuple[dict[str, int], str | None]] = []
    previous = None
    model = None
    open_request = False
    aborted = 0
    for raw in path.read_bytes().splitlines():
        line = json.loads(raw)
        payload = line["payload"]
        kind = payload.get("type") if line["type"] in ("event_msg", "response_item") else line["type"]
        if line["type"] == "turn_context":
            model = payload.get("model") or model
        if kind in (
            "user_message",
            "turn_context",
            "function_call_output",
            "custom_tool_call_output",
            "compacted",
            "context_compacted",
        ):
            open_request = True
        if kind == "turn_aborted" and open_request:
            aborted += 1
            open_request = False
        if kind != "token_count" or payload.get("info") is None:
            continue
        total = payload["info"]["total_token_usage"]
        last = payload["info"]["last_token_usage"]
        if total != previous and any(last[k] for k in ("input_tokens", "cached_input_tokens", "output_tokens")):
            calls.append((last, model))
            open_request = False
        previous = total
    sums = Counter()
    for last, _ in calls:
        sums.update(
            {k: last[k] for k in ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")}
        )
    return {"calls": calls, "aborted": aborted, "sums": sums, "final": previous}


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Engine, dict[str, Any]]:
    home = tmp_path_factory.mktemp("codex-home")
    shutil.copytree(REAL / "sessions", home / "sessions")  # read-only ground truth: the engine reads a copy
    engine = Engine([home / "sessions"])
    engine.drain()
    return home, engine, build_report(engine)


def test_every_session_has_the_measured_calls_and_tokens(real: tuple[Path, Engine, dict[str, Any]]) -> None:
    home, _, report = real
    assert {s["format"] for s in report["sources"]} == {"codex-rollout"} and report["problems_total"] == 0
    sessions = {s["id"][:8]: s for s in report["sessions"]}
    assert sorted(sessions) == sorted(TABLE)
    turns_of: dict[str, list[dict[str, Any]]] = {}
    for turn in report["turns"]:
        turns_of.setdefault(turn["session"][:8], []).append(turn)
    for prefix, (calls, inp, cached, out, reasoning) in TABLE.items():
        session = sessions[prefix]
        path = home / "sessions" / session["path"]
        truth = line_level(path)
        with_usage = [t for t in turns_of.get(prefix, []) if t["tokens"] is not None]
        assert len(with_usage) == len(truth["calls"]) == calls, prefix
        sums = Counter()
        for turn in with_usage:
            sums.update(turn["tokens"])
        # the schema's mapping: input is the uncached part, cache_read the cached, cache_write 0
        assert (sums["input"] + sums["cache_read"], sums["cache_read"], sums["cache_write"], sums["output"]) == (
            inp,
            cached,
            0,
            out,
        ), prefix
        assert (truth["sums"]["input_tokens"], truth["sums"]["cached_input_tokens"]) == (inp, cached)
        assert (
            sum(t["cache"]["reasoning_output"] for t in with_usage)
            == reasoning
            == truth["sums"]["reasoning_output_tokens"]
        )
        if calls:  # the sum over calls is Codex's own final cumulative total, field by field
            final = truth["final"]
            assert (final["input_tokens"], final["cached_input_tokens"], final["output_tokens"]) == (inp, cached, out)
        assert [t["model"] for t in with_usage] == [m for _, m in truth["calls"]], prefix
        assert session["agent"] == "codex" and session["cwd"] and session["started_at"]
        assert {t["path"] if "path" in t else session["path"] for t in turns_of.get(prefix, [])} <= {session["path"]}
    assert sum(c for c, *_ in TABLE.values()) == 986


def test_every_call_has_a_kind_and_the_verdicts_follow_the_128_token_rule(
    real: tuple[Path, Engine, dict[str, Any]],
) -> None:
    _, _, report = real
    turns = report["turns"]
    assert len(turns) == 986 + 11 and all(t["logged"] and t["logged"]["kind"] for t in turns)
    by = Counter((t["logged"]["kind"], t["logged"]["reason"]) for t in turns)
    assert by == {
        ("bootstrap", "first_call"): 13,
        ("delta", "cache_hit"): 705,
        ("re-send", "prefix_rewritten"): 255,
        ("re-send", "cache_miss"): 11,
        ("compaction", "context_compacted"): 2,
        ("aborted", "interrupted"): 11,
    }
    # never cache_expired (OpenAI publishes no lifetime): the gap is shown instead
    assert all(t["cache"]["ttl_ms"] is None for t in turns if t["tokens"] is not None)
    # the review's classification of the 973 non-first calls, recomputed from the figures on the turns
    shortfalls = Counter()
    for turn in turns:
        cache = turn["cache"]
        if turn["tokens"] is None or cache["prev_prompt"] is None:
            continue
        shortfall = cache["prev_prompt"] - cache["cache_read"]
        shortfalls[
            "full"
            if shortfall <= 127
            else "none"
            if cache["cache_read"] == 0
            else "near"
            if shortfall < 1024
            else "partial"
        ] += 1
        expected = cache["prev_prompt"] // 128 * 128
        if turn["logged"]["kind"] != "compaction":
            assert cache["expected_read"] == expected
            assert (turn["logged"]["kind"] == "delta") == (expected - cache["cache_read"] < 128)
            if turn["logged"]["kind"] == "re-send":
                assert cache["excess"] == min(turn["tokens"]["input"], expected - cache["cache_read"]) > 0
            else:
                assert cache["excess"] == 0
    assert shortfalls == {"full": 705, "near": 115, "partial": 142, "none": 11}


def test_structure_compaction_aborted_model_switch_and_sub_agent(real: tuple[Path, Engine, dict[str, Any]]) -> None:
    home, engine, report = real
    by_session: dict[str, list[dict[str, Any]]] = {}
    for turn in report["turns"]:
        by_session.setdefault(turn["session"][:8], []).append(turn)
    # the two compactions: the next call reads back only the system-prompt prefix, and nothing is waste
    compactions = [t for t in report["turns"] if t["logged"]["kind"] == "compaction"]
    assert [(t["cache"]["prompt"], t["cache"]["cache_read"]) for t in compactions] == [(8_321, 6_784), (18_027, 5_504)]
    assert [t["cache"]["compaction"]["estimated_tokens"] for t in compactions] == [9_207, 15_238]
    assert all(t["cache"]["excess"] == 0 and t["cache"]["expected_read"] is None for t in compactions)
    assert all(t["logged"]["source"] == "transcript" for t in compactions)
    # aborted requests: no usage, a kind, counted where they happened
    aborted = Counter(t["session"][:8] for t in report["turns"] if t["logged"]["kind"] == "aborted")
    assert aborted == {"9cd28a74": 1, "019a01d7": 1, "019b8fc7": 1, "019d021f": 7, "019d6de0": 1}
    for prefix, count in aborted.items():
        session = next(s for s in report["sessions"] if s["id"].startswith(prefix))
        assert line_level(home / "sessions" / session["path"])["aborted"] == count
    assert all(t["tokens"] is None for t in report["turns"] if t["logged"]["kind"] == "aborted")
    # the model switch gpt-5.2-codex -> gpt-5.4: the cache is per model, the evidence says so
    switch = [t for t in by_session["019d021f"] if "model_switch" in t["cache"]]
    assert len(switch) == 1 and switch[0]["cache"]["model_switch"] == {"from": "gpt-5.2-codex", "to": "gpt-5.4"}
    assert switch[0]["cache"]["cache_read"] == 3_968 and switch[0]["logged"]["kind"] == "re-send"
    split = Counter()
    for turn in by_session["019d021f"]:
        if turn["tokens"] is not None:
            split[turn["model"], "input"] += turn["tokens"]["input"] + turn["tokens"]["cache_read"]
            split[turn["model"], "cached"] += turn["tokens"]["cache_read"]
    assert split == {
        ("gpt-5.2-codex", "input"): 504_553,
        ("gpt-5.2-codex", "cached"): 491_392,
        ("gpt-5.4", "input"): 21_374_805,
        ("gpt-5.4", "cached"): 19_948_160,
    }
    # 0.34 records no model anywhere: null, never a guess
    assert {t["model"] for t in by_session["97b66f6c"]} == {None}
    assert next(s for s in report["sessions"] if s["id"].startswith("97b66f6c"))["models"] == []
    # a full miss 2.5 s after the first call (not an idle expiry): the gap is in the evidence
    second = by_session["97b66f6c"][1]
    assert second["logged"]["reason"] == "cache_miss" and second["cache"]["gap_ms"] < 3_000
    # the custom provider stuck at 3,072 cached tokens: re-sends on nearly every call
    stuck = by_session["019ac364"]
    assert sum(t["cache"]["cache_read"] == 3_072 for t in stuck) == 16
    assert Counter(t["logged"]["kind"] for t in stuck) == {"bootstrap": 1, "re-send": 18}
    # the /review sub-agent rollout is its own conversation thread; every other rollout is "main"
    threads = {prefix: {t["thread"] for t in turns} for prefix, turns in by_session.items()}
    assert threads.pop("019b5669") == {"review"} and all(t == {"main"} for t in threads.values())
    assert engine.state.sessions  # a session per rollout, keyed by its path
    assert len(engine.state.sessions) == 14
