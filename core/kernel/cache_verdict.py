"""Delta or re-send, told from the provider's prompt-cache figures of two consecutive calls.

Agents that talk to a stateless API (pi, Claude Code, mux/Xum) send the whole conversation on every call;
what tells "only the new part was processed" from "the history was processed again" is the prompt cache.
A call whose cache read covers the previous call's whole prompt re-used everything that was sent before:
a `delta`. A call whose cache read collapses re-processed the history: a `re-send`, and the time since
the previous call says why. A gap longer than the cache lifetime (5 minutes, or 1 hour for 1-hour
breakpoints) is a TTL expiry; a shorter gap means the prefix itself changed (a rewrite).

The rule is pure and works on numbers only, so each agent's analysis feeds it from its own usage fields.
Thresholds are module constants (the reference gives none): they are documented where they are defined.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.model import LoggedDecision

#: `re-send` is the kind for a call that re-processed its history per the cache evidence. It is not one of
#: senpi's five kinds; reports add it to `by_kind` when seen.
RESEND = "re-send"
COMPACTION = "compaction"

#: The cache read "covers" the previous prompt when it reaches this share of it. Breakpoints sit on the
#: last block of a request, but agents append small volatile blocks (reminders, timestamps) after them,
#: so an exact match is too strict; 90 % still leaves a re-sent history impossible to miss.
COVER_RATIO = 0.9
#: The read "collapsed" below this share of the previous prompt.
COLLAPSE_RATIO = 0.5
#: The write "jumped to most of the prompt" at this share of the current prompt.
WRITE_MAJORITY = 0.5
#: Anthropic caches nothing below 1024 prompt tokens (2048 for Haiku): a miss there is not evidence.
MIN_CACHEABLE = 1024
#: Cache lifetimes. A read refreshes the lifetime, so the one that matters is that of the previous call.
TTL_5M_MS = 5 * 60_000
TTL_1H_MS = 60 * 60_000


@dataclass(slots=True)
class CallUsage:
    """One provider call's prompt-side figures, in tokens, plus when it started and its cache lifetime."""

    input: int  # uncached input tokens
    cache_read: int
    cache_write: int
    ts_ms: int | None = None
    #: the lifetime of what this call wrote (1 h when it wrote 1-hour breakpoints), None when not reported
    ttl_ms: int | None = None
    output: int | None = None

    @property
    def prompt(self) -> int:
        """Prompt tokens = uncached input + cache read + cache write (the Anthropic mapping)."""
        return self.input + self.cache_read + self.cache_write

    @property
    def empty(self) -> bool:
        """No usage at all: an aborted or failed call, which says nothing about the cache."""
        return self.prompt == 0


@dataclass(slots=True)
class CacheVerdict:
    """The decision and the figures it rests on (kept on the turn so a reader can check it)."""

    kind: str
    reason: str
    evidence: dict[str, Any]


def judge(current: CallUsage, previous: CallUsage | None) -> CacheVerdict:
    """Classify one call against the previous call of the same conversation thread.

    - no previous call: `bootstrap/first_call` (the whole prompt is new by definition);
    - the cache read covers the previous prompt: `delta/cache_hit`;
    - otherwise a `re-send`, with the reason the evidence supports:
      `cache_expired` when the gap reached the previous call's cache lifetime, `below_cache_minimum` when the
      previous prompt was too small to be cached at all, `uncached` when neither reads nor writes are reported
      (caching off, or a provider that reports none), `prefix_rewritten` when the read collapsed while the
      write jumped to most of the prompt, and `partial_prefix` when only part of the history was read back.
    """
    evidence = _evidence(current, previous)
    if previous is None:
        return CacheVerdict("bootstrap", "first_call", evidence)
    prev_prompt = previous.prompt
    if current.cache_read >= COVER_RATIO * prev_prompt:
        return CacheVerdict("delta", "cache_hit", evidence)
    gap, ttl = evidence["gap_ms"], evidence["ttl_ms"]
    if gap is not None and gap >= ttl:
        return CacheVerdict(RESEND, "cache_expired", evidence)
    if prev_prompt < MIN_CACHEABLE:
        return CacheVerdict(RESEND, "below_cache_minimum", evidence)
    if current.cache_read == 0 and current.cache_write == 0:
        return CacheVerdict(RESEND, "uncached", evidence)
    if current.cache_read < COLLAPSE_RATIO * prev_prompt and current.cache_write >= WRITE_MAJORITY * current.prompt:
        return CacheVerdict(RESEND, "prefix_rewritten", evidence)
    return CacheVerdict(RESEND, "partial_prefix", evidence)


def _evidence(current: CallUsage, previous: CallUsage | None) -> dict[str, Any]:
    """Previous and current figures and the gap: what a reader needs to tell a TTL expiry from a rewrite."""
    out: dict[str, Any] = {
        "prompt": current.prompt,
        "input": current.input,
        "cache_read": current.cache_read,
        "cache_write": current.cache_write,
        "prev_prompt": None,
        "prev_cache_read": None,
        "prev_cache_write": None,
        "gap_ms": None,
        "ttl_ms": None,
        "read_share_of_prev": None,
    }
    if previous is None:
        return out
    out["prev_prompt"] = previous.prompt
    out["prev_cache_read"] = previous.cache_read
    out["prev_cache_write"] = previous.cache_write
    if current.ts_ms is not None and previous.ts_ms is not None:
        out["gap_ms"] = max(0, current.ts_ms - previous.ts_ms)
    out["ttl_ms"] = previous.ttl_ms or TTL_5M_MS
    if previous.prompt:
        out["read_share_of_prev"] = round(current.cache_read / previous.prompt, 4)
    return out


@dataclass(frozen=True, slots=True)
class WhyTexts:
    """One agent's wording of the one-line `why` a user reads beside a cache verdict: `str.format` templates over
    the verdict's figures `read`, `prev`, `prompt`, `write` (tokens) and its `reason`, and `gap` (this agent's
    `gap` template over `seconds` and `ttl_min`, or "" when the gap is unknown)."""

    bootstrap: str
    delta: str
    compaction: str
    fork: str
    resend: str
    gap: str


def why(verdict: CacheVerdict, texts: WhyTexts) -> str:
    """The verdict explained in `texts`' wording (each agent says it its own way: a pi branch is a fork, a Claude
    Code rewind is one)."""
    ev = verdict.evidence
    gap_ms = ev.get("gap_ms")
    ttl_min = (ev.get("ttl_ms") or 0) // 60_000
    gap = texts.gap.format(seconds=gap_ms / 1000, ttl_min=ttl_min) if gap_ms is not None else ""
    template = {"bootstrap": texts.bootstrap, "delta": texts.delta, COMPACTION: texts.compaction, "fork": texts.fork}
    figures = {"read": ev.get("cache_read"), "prev": ev.get("prev_prompt"), "prompt": ev.get("prompt")}
    return template.get(verdict.kind, texts.resend).format(
        **figures, write=ev.get("cache_write"), reason=verdict.reason, gap=gap
    )


def decision(verdict: CacheVerdict, count: int | None, *, source: str = "cache") -> LoggedDecision:
    """The verdict as the turn's `logged` decision: the agent's own evidence, `source` naming which."""
    return LoggedDecision(kind=verdict.kind, reason=verdict.reason, count=count, source=source)


def structural(kind: str, reason: str, current: CallUsage, previous: CallUsage | None) -> CacheVerdict:
    """A verdict the transcript's structure decides (compaction, branch), with the cache figures attached.

    The cache's own reading stays in the evidence (`cache_kind`/`cache_reason`), so a fork that still hit the
    cache for its shared prefix can be told from one that re-processed everything.
    """
    by_cache = judge(current, previous)
    evidence = dict(by_cache.evidence)
    evidence["cache_kind"], evidence["cache_reason"] = by_cache.kind, by_cache.reason
    return CacheVerdict(kind, reason, evidence)
