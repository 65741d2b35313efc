"""Delta or re-send for OpenAI-style usage: the prompt cache read in whole 128-token blocks.

OpenAI's prompt cache (what Codex's `cached_input_tokens` reports) caches prompts of 1,024 tokens or more
and reads back the longest cached prefix in 128-token increments: every `cached_input_tokens` in the 14 real
rollouts is a multiple of 128 (reviews/codex-format.md). So a warm cache reads back the previous call's whole
prompt (`input_tokens`, which includes the cached part) rounded down to a whole block, and a read that falls
short of it by less than one block (127 tokens) is a full hit. On the real set that splits the 973 non-first
calls into 705 hits within a block, 115 that miss by 128-1,023 tokens, 142 by more, and 11 with nothing read.

The reasons are the schema's (report-schema.md, "Additions"): `first_call`, `cache_hit`, `prefix_rewritten`
(something read back, less than expected), `cache_miss` (nothing read back although the previous prompt was
cacheable), `below_cache_minimum` (the previous prompt was under 1,024 tokens: never cached), `uncached` (the
provider reports no cached figure at all). OpenAI publishes no fixed cache lifetime, so a Codex call is never
`cache_expired`: the idle gap before the request is in the evidence for the reader to weigh instead.

Pure arithmetic on counts; `calls.py` feeds it. Nothing here knows the rollout format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.kernel.cache_verdict import COMPACTION, RESEND, CacheVerdict

#: OpenAI reads cached prefixes in whole blocks of this many tokens.
BLOCK = 128
#: OpenAI caches nothing below this many prompt tokens.
MIN_CACHEABLE = 1024
#: The rule's name in the evidence (the Anthropic rule in `core.kernel.cache_verdict` is the other one).
RULE = "openai-128"


@dataclass(slots=True, frozen=True)
class PromptUsage:
    """One call's prompt side in OpenAI's convention: `prompt` (input_tokens) includes `cached` and
    `cache_write`. `reported` is False when the usage had no `cached_input_tokens` at all."""

    prompt: int
    cached: int
    cache_write: int = 0
    reported: bool = True

    @property
    def uncached(self) -> int:
        """Prompt tokens processed at the full input price (not read, not written to the cache)."""
        return max(0, self.prompt - self.cached - self.cache_write)


def expected_read(previous: PromptUsage | None) -> int | None:
    """What a warm cache reads back of the previous call's prompt: its whole 128-token blocks."""
    return None if previous is None else previous.prompt // BLOCK * BLOCK


def judge(current: PromptUsage, previous: PromptUsage | None, *, gap_ms: int | None = None) -> CacheVerdict:
    """One call against the previous call of the same rollout (a rollout is one conversation thread).

    - no previous call: `bootstrap/first_call` (the prompt is new by definition; what it read is a prefix shared
      with other sessions, e.g. the system prompt);
    - the read falls short of `expected_read` by under one block: `delta/cache_hit`;
    - otherwise a `re-send`: `below_cache_minimum` when the previous prompt was too small to be cached,
      `uncached` when the provider reports no cached figure, `cache_miss` when nothing was read back,
      `prefix_rewritten` when part of it was (the cache matched an older, shorter prefix).

    `excess` (the tokens a warm cache would have read that were processed again) is the shortfall, capped by the
    uncached tokens, for `cache_miss` and `prefix_rewritten`; 0 otherwise (nothing cacheable was lost).
    """
    expected = expected_read(previous)
    evidence = _evidence(current, previous, expected, gap_ms)
    if previous is None or expected is None:
        return CacheVerdict("bootstrap", "first_call", evidence)
    shortfall = expected - current.cached
    evidence["shortfall"] = shortfall
    if shortfall < BLOCK:
        return CacheVerdict("delta", "cache_hit", evidence)
    if previous.prompt < MIN_CACHEABLE:
        return CacheVerdict(RESEND, "below_cache_minimum", evidence)
    if not current.reported:
        return CacheVerdict(RESEND, "uncached", evidence)
    evidence["excess"] = min(current.uncached, shortfall)
    if current.cached == 0:
        return CacheVerdict(RESEND, "cache_miss", evidence)
    return CacheVerdict(RESEND, "prefix_rewritten", evidence)


def compaction(current: PromptUsage, previous: PromptUsage | None, *, gap_ms: int | None = None) -> CacheVerdict:
    """The first call after a compaction: the history was replaced on purpose, so nothing of the previous prompt
    is expected back (`expected_read` null, `excess` 0); the cache's own reading stays in the evidence."""
    by_cache = judge(current, previous, gap_ms=gap_ms)
    evidence = dict(by_cache.evidence)
    evidence["cache_kind"], evidence["cache_reason"] = by_cache.kind, by_cache.reason
    evidence["expected_read"], evidence["excess"] = None, 0
    return CacheVerdict(COMPACTION, "context_compacted", evidence)


def _evidence(
    current: PromptUsage, previous: PromptUsage | None, expected: int | None, gap_ms: int | None
) -> dict[str, Any]:
    """The figures a reader needs to check the verdict (the keys `core.kernel.cache_verdict` writes, plus the
    rule's own: expected read, shortfall, excess)."""
    return {
        "rule": RULE,
        "prompt": current.prompt,
        "input": current.uncached,
        "cache_read": current.cached,
        "cache_write": current.cache_write,
        "prev_prompt": None if previous is None else previous.prompt,
        "prev_cache_read": None if previous is None else previous.cached,
        "prev_cache_write": None if previous is None else previous.cache_write,
        "gap_ms": gap_ms,
        "ttl_ms": None,  # OpenAI publishes no fixed lifetime
        "read_share_of_prev": round(current.cached / previous.prompt, 4) if previous and previous.prompt else None,
        "expected_read": expected,
        "shortfall": None,
        "excess": 0,
    }


__all__ = ["BLOCK", "MIN_CACHEABLE", "RULE", "PromptUsage", "compaction", "expected_read", "judge"]
