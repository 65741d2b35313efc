"""The prompt-cache rule (`core.kernel.cache_verdict`), both styles, on figures with known answers.

The rule is the schema's (reference/report-schema.md, "Additions"): a warm cache reads back the previous call's
`cache_read + cache_write` (Anthropic-style usage) or its whole prompt in 128-token blocks (OpenAI-style); a
call that reads that much back is a delta, any other shortfall a re-send whose reason the gap and the read tell.
"""

from __future__ import annotations

from core.kernel.cache_verdict import OPENAI, TTL_1H_MS, CallUsage, expected_read, judge, structural

T0 = 1_785_000_000_000
M = 60_000


def verdict(current: CallUsage, previous: CallUsage | None, **kw: object) -> tuple[str, str]:
    found = judge(current, previous, **kw)  # type: ignore[arg-type]
    return found.kind, found.reason


def test_anthropic_exact_prefix_reuse_is_a_delta_and_any_shortfall_a_resend() -> None:
    first = CallUsage(10, 0, 20_000, T0)
    assert verdict(first, None) == ("bootstrap", "first_call")
    exact = CallUsage(17_082, 20_000, 500, T0 + 30_000)  # uncached input of the previous call is never read back
    assert expected_read(first) == 20_000
    assert verdict(exact, first) == ("delta", "cache_hit")
    more = CallUsage(10, 20_300, 500, T0 + 30_000)  # a prefix another thread cached too: more than expected
    assert verdict(more, first) == ("delta", "cache_hit")
    short = judge(CallUsage(10, 19_999, 600, T0 + 30_000), first)
    assert (short.kind, short.reason) == ("re-send", "prefix_rewritten")
    assert short.evidence["expected_read"] == 20_000 and short.evidence["shortfall"] == 1
    assert short.evidence["excess"] == 1  # min(not read: 600 + 10, expected - read: 1)


def test_anthropic_reasons_from_the_gap_and_the_read() -> None:
    hit = CallUsage(10, 20_000, 500, T0 + 30_000)  # cached 20,500
    expired = judge(CallUsage(10, 3_000, 17_600, T0 + 30_000 + 6 * M), hit)
    assert (expired.kind, expired.reason) == ("re-send", "cache_expired")
    assert expired.evidence["gap_ms"] == 6 * M and expired.evidence["ttl_ms"] == 5 * M
    assert expired.evidence["excess"] == 17_500  # min(17,610 not read, 20,500 - 3,000)
    rewritten = judge(CallUsage(10, 3_000, 17_600, T0 + 60_000), hit)
    assert (rewritten.kind, rewritten.reason) == ("re-send", "prefix_rewritten")
    miss = judge(CallUsage(5_000, 0, 0, T0 + 31_000), hit)
    assert (miss.kind, miss.reason) == ("re-send", "cache_miss")
    assert miss.evidence["excess"] == 5_000  # what was processed again, not more
    one_hour = CallUsage(10, 20_000, 500, T0, ttl_ms=TTL_1H_MS)
    assert verdict(CallUsage(10, 3_000, 17_600, T0 + 20 * M), one_hour) == ("re-send", "prefix_rewritten")
    assert verdict(CallUsage(10, 3_000, 17_600, T0 + 61 * M), one_hour) == ("re-send", "cache_expired")


def test_anthropic_nothing_cached_before_is_never_a_resend() -> None:
    """pi ffae836b #1: the first call wrote and read nothing (2,775 uncached tokens); the second wrote 33,637.
    Nothing could have been read back, so nothing was processed again that a warm cache would have saved."""
    nothing = CallUsage(2_775, 0, 0, T0)
    found = judge(CallUsage(1, 0, 33_637, T0 + 4_105), nothing)
    assert (found.kind, found.reason, found.evidence["excess"]) == ("delta", "uncached", 0)
    tiny = CallUsage(700, 0, 0, T0)
    assert verdict(CallUsage(900, 0, 0, T0 + 1_000), tiny) == ("delta", "below_cache_minimum")


def test_openai_reads_back_the_previous_prompt_in_128_token_blocks() -> None:
    first = CallUsage(10_000 - 4_096, 4_096, 0, T0)  # input_tokens 10,000 of which 4,096 cached
    assert expected_read(first, OPENAI) == 9_984  # 78 whole blocks
    assert verdict(CallUsage(1_000, 9_984, 0, T0 + M), first, style=OPENAI) == ("delta", "cache_hit")
    assert verdict(CallUsage(1_000, 9_857, 0, T0 + M), first, style=OPENAI) == ("delta", "cache_hit")  # 127 short
    short = judge(CallUsage(1_000, 9_856, 0, T0 + M), first, style=OPENAI)  # one whole block short
    assert (short.kind, short.reason, short.evidence["excess"]) == ("re-send", "prefix_rewritten", 128)
    miss = judge(CallUsage(11_000, 0, 0, T0 + 2 * M), first, style=OPENAI)
    assert (miss.kind, miss.reason, miss.evidence["excess"]) == ("re-send", "cache_miss", 9_984)
    assert miss.evidence["ttl_ms"] is None  # OpenAI publishes no lifetime: never cache_expired
    late = judge(CallUsage(11_000, 0, 0, T0 + 600 * M), first, style=OPENAI)
    assert late.reason == "cache_miss"
    small = CallUsage(900, 0, 0, T0)
    assert verdict(CallUsage(1_500, 0, 0, T0 + M), small, style=OPENAI) == ("delta", "below_cache_minimum")


def test_structural_verdicts_keep_the_cache_reading_and_count_excess_only_on_resends() -> None:
    previous = CallUsage(10, 50_000, 2_000, T0)
    after = CallUsage(10, 0, 8_000, T0 + M)  # a summary replaced the history
    compacted = structural("compaction", "compaction_entry", after, previous)
    assert (compacted.evidence["cache_kind"], compacted.evidence["cache_reason"]) == ("re-send", "cache_miss")
    assert compacted.evidence["expected_read"] is None and compacted.evidence["excess"] == 0
    fork = structural("fork", "rewind", CallUsage(10, 30_000, 9_000, T0 + M), previous)
    assert fork.evidence["expected_read"] == 52_000 and fork.evidence["excess"] == 9_010
    warm = structural("fork", "branch", CallUsage(10, 52_000, 100, T0 + M), previous)
    assert warm.evidence["cache_kind"] == "delta" and warm.evidence["excess"] == 0
