"""Prompt-cache waste on the real files in `../shared/realdata` (issue 14): the spotter call the issue names, and
on every set that the `waste` section adds up to its calls' own figures."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.realdata import SETS, needs_realdata
from tests.test_realdata_calls import report

pytestmark = needs_realdata

SPOTTER_SESSION = "4d5611e5-241a-462a-8d15-5122611a9569"


def test_the_spotter_rewrite_after_a_task_notification() -> None:
    """4d5611e5, msg_01NvVN4PVKoD4wgRrBm3Vwyj: expected read 98,231, read 21,478, 77,251 tokens written again 5 s
    after a `<task-notification>`: excess 76,753. The 21,478 matched are what the first call after the
    compaction also read back (system prompt and tools), so the prompts parted right after them."""
    rep = report("cc-marot-spotter")
    (call,) = [t for t in rep["turns"] if t["entry_id"] == "msg_01NvVN4PVKoD4wgRrBm3Vwyj"]
    assert call["session"] == SPOTTER_SESSION
    assert (call["call"]["kind"], call["call"]["reason"]) == ("re-send", "prefix_rewritten")
    ev = call["cache"]
    assert (ev["expected_read"], ev["cache_read"], ev["cache_write"], ev["excess"]) == (98_231, 21_478, 77_251, 76_753)
    assert round(ev["gap_ms"] / 1000) == 5 and ev["ttl_ms"] == 300_000
    assert ev["new_input"] == ["<task-notification>"]
    assert ev["changed_at"]["tokens"] == 21_478 and ev["changed_at"]["same_read_as"] is not None
    assert "the system prompt and tools matched" in ev["changed_at"]["where"]
    # Opus 4.6, a 5-minute write: $6.25 - $0.50 per million beyond a hit
    assert call["cost_usd"]["excess"] == pytest.approx(76_753 * 5.75 / 1e6, abs=1e-6)
    top = rep["waste"]["top"]
    assert any(t["entry_id"] == "msg_01NvVN4PVKoD4wgRrBm3Vwyj" and t["excess"] == 76_753 for t in top)


def test_a_rewind_after_the_cache_expired_is_idle_expiry_in_the_waste() -> None:
    """hive rewinds after 12.9 h idle: the call stays a fork (`rewind`), but its re-written history is idle expiry's
    cost (a 5-minute cache was gone whatever the user did), in tokens, dollars and the exposition alike."""
    rep = report("cc-Crazytieguy-alignment-hive")
    (rewind,) = [t for t in rep["turns"] if t.get("call") and t["call"]["reason"] == "rewind"]
    assert rewind["call"]["kind"] == "fork" and rewind["cache"]["cache_reason"] == "cache_expired"
    assert rewind["cache"]["gap_ms"] > 12 * 3600 * 1000  # 46,529 s and rewind["cache"]["excess"] > 0
    waste = rep["waste"]
    assert "rewind" not in waste["by_cause"] and "rewind" not in waste["cost_usd"]["by_cause"]
    assert waste["cost_usd"]["by_cause"]["cache_expired"] >= rewind["cost_usd"]["excess"] > 0


def _own_calls(rep: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in rep["turns"] if t.get("call") is not None and t.get("cache")]


@pytest.mark.parametrize("name", [n for n in SETS if n != "senpi-live"])
def test_the_waste_section_adds_up_to_its_calls(name: str) -> None:
    rep = report(name)
    waste = rep["waste"]
    calls = [t for t in _own_calls(rep) if t["cache"].get("rule")]
    by_cause: Counter[str] = Counter()
    for t in calls:
        if t["cache"]["excess"]:
            assert t["call"]["kind"] in ("re-send", "fork", "flatten"), t
            # a fork whose cache had expired anyway counts as expiry (the cache's own reading, kept beside it)
            expired = t["cache"].get("cache_reason") == "cache_expired"
            by_cause["cache_expired" if expired else t["call"]["reason"]] += t["cache"]["excess"]
    assert waste["excess_tokens"] == sum(by_cause.values())
    assert waste["by_cause"] == dict(by_cause)
    excess_usd = [t["cost_usd"]["excess"] for t in calls if t["cache"]["excess"]]
    if waste["cost_usd"]["excess"] is not None:
        assert waste["cost_usd"]["excess"] == pytest.approx(
            sum(v for v in excess_usd if v is not None), abs=1e-6 * len(excess_usd)
        )  # (each call's figure is rounded to 6 decimals)
    if isinstance(waste["share"], float):
        assert 0 <= waste["share"] <= 1


def test_pi_actual_spend_is_pis_own_cost() -> None:
    """pi writes what each call cost (`usage.cost.total`): the actual spend is that figure, not list prices."""
    waste = report("pi")["waste"]
    assert waste["pricing"]["actual_from"].get("agent", 0) > 0
    assert waste["cost_usd"]["actual"] is not None


def test_codex_expected_reads_are_whole_128_token_blocks() -> None:
    rep = report("codex")
    reads = [t["cache"]["expected_read"] for t in _own_calls(rep) if t["cache"].get("expected_read") is not None]
    assert reads and all(r % 128 == 0 for r in reads)
    assert all(t["call"]["reason"] != "cache_expired" for t in _own_calls(rep))  # OpenAI publishes no lifetime


def test_the_first_line_of_every_claude_code_set_says_what_re_writing_cost() -> None:
    from core.report.markdown import render_markdown

    first = render_markdown(report("cc-marot-spotter")).split("\n")[2]
    assert first.startswith("**$") and "was spent re-writing cache that was already written" in first
    assert "cache expiry after > 5 min idle (`cache_expired`)" in first
