"""Delta or re-send, told from the provider's prompt-cache figures of two consecutive calls.

Agents that talk to a stateless API (pi, Claude Code, mux/Xum, Codex) send the whole conversation on every
call; what tells "only the new part was processed" from "the history was processed again" is the prompt cache.
The rule (reference/report-schema.md, "Additions", the cache rule) compares what a call read back with what a
warm cache would have read back, its `expected_read`:

- Anthropic-style usage (Claude Code, pi, mux): the previous call's cacheable prefix, `cache_read +
  cache_write`. A call reads its previous call's prefix back exactly when nothing in it changed: hive #5
  reads 50,872 = 50,720 + 152, spotter ae4a77f8 #7 15,436 = 15,436. The rule this replaces compared the read
  with the previous *prompt*, whose uncached input (17,082 tokens at hive #4) is never read back, and called
  both re-sends.
- OpenAI-style usage (Codex): the previous call's whole prompt (`input_tokens`, cached part included) in whole
  128-token blocks, since OpenAI reads cached prefixes back in 128-token increments (every
  `cached_input_tokens` in the 14 real Codex rollouts is a multiple of 128): a shortfall under one block is a
  hit. Prompts under 1,024 tokens are never cached.

A call that reads back at least `expected_read` is a `delta/cache_hit`. One whose previous call left nothing in
the cache (`expected_read` 0: caching not in use, or a prompt below the provider's minimum) is a delta too,
`uncached` or `below_cache_minimum`: nothing could have been read back, so nothing was processed again that a
warm cache would have saved (pi ffae836b #1 wrote 33,637 after a first call that cached nothing; the old rule
called it `prefix_rewritten`). Any other shortfall is a `re-send`, its reason what the evidence supports:
`cache_expired` when the gap reached the lifetime of what was cached (Anthropic 5 min, or 1 h for 1-hour
writes; OpenAI publishes no lifetime, so never for OpenAI-style usage), `cache_miss` when nothing was read back
within the lifetime, `prefix_rewritten` when something was, less than expected, and `resume` for either of the
last two on the first new call of a session file that starts with copies of another session's calls (Claude
Code's resume: the expected read is that of the last copied call). `excess` is what a warm cache would have
read of what was processed again: min(tokens not read from cache, expected_read - cache_read).

Lifetimes are per write, not per call (`usage.cache_creation` splits a write into 5-minute and 1-hour parts,
and Anthropic puts 1-hour breakpoints before 5-minute ones): the prefix a call leaves cached is kept as
segments (`CallUsage.lifetimes`), the part it read back keeping the lifetimes it had (a hit refreshes them),
its write appended 1-hour part first. The lifetime the gap is measured against is that of the segment where
the read stopped (the first token not read back): after a 1-hour write of the system prompt and 5-minute
writes of the conversation, a 10-minute gap that reads back only the system prompt is `cache_expired`, one
that reads back nothing of a 1-hour prefix is not (spotter's fixtures write 1 h only; its sessions 5 min).

Pure arithmetic on counts, so each agent's analysis feeds it from its own usage fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from core.model import COMPACTION, RESEND, LoggedDecision

__all__ = [
    "ANTHROPIC",
    "BLOCK",
    "COMPACTION",
    "MIN_CACHEABLE",
    "OPENAI",
    "OPENAI_MIN_CACHEABLE",
    "RESEND",
    "RESUME",
    "TTL_1H_MS",
    "TTL_5M_MS",
    "CacheVerdict",
    "CallUsage",
    "Style",
    "decision",
    "expected_read",
    "explain",
    "judge",
    "structural",
]

Style = Literal["anthropic", "openai-128"]
ANTHROPIC: Style = "anthropic"
OPENAI: Style = "openai-128"

#: Anthropic caches nothing below 1024 prompt tokens (2048 for Haiku): an empty cache there is not evidence.
MIN_CACHEABLE = 1024
#: OpenAI caches prompts of this many tokens or more, and reads them back in whole blocks of `BLOCK` tokens.
OPENAI_MIN_CACHEABLE = 1024
BLOCK = 128
#: Cache lifetimes. A read refreshes the lifetime, so the one that matters is that of the previous call.
TTL_5M_MS = 5 * 60_000
TTL_1H_MS = 60 * 60_000

#: The kinds that re-send history: the call processed part of its history again. `excess` is counted on them.
_RESENDS = frozenset({"fork", "flatten", RESEND})
#: The reason of a re-send on the first new call after a resume (another session's calls copied before it).
RESUME = "resume"

Lifetimes = tuple[tuple[int, int], ...]
"""A cached prefix as segments `(end, ttl_ms)` in prompt order: tokens [previous end, end) live `ttl_ms`."""


@dataclass(slots=True)
class CallUsage:
    """One provider call's prompt-side figures, in tokens, plus when it started and its cache lifetime.

    The Anthropic mapping for every agent (prompt = input + cache_read + cache_write): OpenAI-style usage maps
    `input_tokens - cached_input_tokens` to `input` and `cached_input_tokens` to `cache_read`."""

    input: int  # uncached input tokens
    cache_read: int
    cache_write: int
    ts_ms: int | None = None
    #: the lifetime of what this call wrote (1 h when it wrote 1-hour breakpoints), None when not reported
    ttl_ms: int | None = None
    output: int | None = None
    #: False when the usage carried no cache figure at all (an OpenAI-style usage without cached_input_tokens)
    cache_reported: bool = True
    #: the write's 5-minute and 1-hour parts (Anthropic `usage.cache_creation`), None when the usage has no split
    write_5m: int | None = None
    write_1h: int | None = None
    #: the prefix this call left cached, with the lifetime of each part (set by `judge`); None before it ran
    lifetimes: Lifetimes | None = None

    @property
    def prompt(self) -> int:
        """Prompt tokens = uncached input + cache read + cache write (the Anthropic mapping)."""
        return self.input + self.cache_read + self.cache_write

    @property
    def empty(self) -> bool:
        """No prompt figures at all: an aborted or failed call, which says nothing about the cache."""
        return self.prompt == 0


@dataclass(slots=True)
class CacheVerdict:
    """The decision and the figures it rests on (kept on the turn so a reader can check it)."""

    kind: str
    reason: str
    evidence: dict[str, Any]


def expected_read(previous: CallUsage | None, style: Style = ANTHROPIC) -> int | None:
    """What a warm cache reads back of the previous call's prompt (None when there is no previous call)."""
    if previous is None:
        return None
    if style == OPENAI:
        if not previous.cache_reported or previous.prompt < OPENAI_MIN_CACHEABLE:
            return 0
        return previous.prompt // BLOCK * BLOCK
    return previous.cache_read + previous.cache_write


def judge(
    current: CallUsage,
    previous: CallUsage | None,
    *,
    style: Style = ANTHROPIC,
    gap_ms: int | None = None,
    resumed_from: str | None = None,
) -> CacheVerdict:
    """Classify one call against the previous call (with usage) of the same conversation thread.

    `gap_ms` overrides the gap between the two calls' start times (Codex measures it from the previous call's
    end to the request); `resumed_from` names the session whose copied calls precede this one (its `previous`
    is the last of them). See the module docstring for the rule. It records on `current` the prefix it leaves
    cached (`CallUsage.lifetimes`), which the next call is judged against."""
    evidence = _evidence(current, previous, style, gap_ms)
    if style == ANTHROPIC:
        current.lifetimes = _left_cached(current, previous)
    if resumed_from is not None:
        evidence["resumed_from"] = resumed_from
    verdict = _decide(current, previous, style, evidence)
    if resumed_from is not None and verdict.kind == RESEND and verdict.reason in ("cache_miss", "prefix_rewritten"):
        verdict.reason = RESUME
    return verdict


def _decide(current: CallUsage, previous: CallUsage | None, style: Style, evidence: dict[str, Any]) -> CacheVerdict:
    if previous is None:
        return CacheVerdict("bootstrap", "first_call", evidence)
    expected = evidence["expected_read"]
    if not expected or not current.cache_reported:
        small = previous.prompt < (OPENAI_MIN_CACHEABLE if style == OPENAI else MIN_CACHEABLE)
        return CacheVerdict("delta", "below_cache_minimum" if small else "uncached", evidence)
    shortfall = evidence["shortfall"]
    if shortfall < (BLOCK if style == OPENAI else 1):
        return CacheVerdict("delta", "cache_hit", evidence)
    not_read = current.input + current.cache_write if style == ANTHROPIC else current.input
    evidence["excess"] = max(0, min(not_read, shortfall))
    gap, ttl = evidence["gap_ms"], evidence["ttl_ms"]
    if ttl is not None and gap is not None and gap >= ttl:
        return CacheVerdict(RESEND, "cache_expired", evidence)
    if current.cache_read == 0:
        return CacheVerdict(RESEND, "cache_miss", evidence)
    return CacheVerdict(RESEND, "prefix_rewritten", evidence)


def _evidence(current: CallUsage, previous: CallUsage | None, style: Style, gap_ms: int | None) -> dict[str, Any]:
    """Previous and current figures, the gap and the lifetime, and the rule's own figures: what a reader needs to
    check a verdict and to tell a TTL expiry from a rewrite. (One dict literal per branch, the keys in the one
    order the report writes them: filling a dict of Nones and then setting seven keys was ~2 % of reading
    the 100 MB Claude Code history, ~14,300 judgements.)"""
    read = current.cache_read
    prompt = current.input + read + current.cache_write
    if previous is None:
        return {
            "prompt": prompt, "input": current.input, "cache_read": read, "cache_write": current.cache_write,
            "prev_prompt": None, "prev_cache_read": None, "prev_cache_write": None, "gap_ms": gap_ms,
            "ttl_ms": None, "read_share_of_prev": None, "rule": style, "write_5m": current.write_5m,
            "write_1h": current.write_1h, "expected_read": None, "shortfall": None, "excess": 0,
        }  # fmt: skip
    prev_read, prev_write = previous.cache_read, previous.cache_write
    prev_prompt = previous.input + prev_read + prev_write
    if gap_ms is None and current.ts_ms is not None and previous.ts_ms is not None:
        gap_ms = max(0, current.ts_ms - previous.ts_ms)
    expected = expected_read(previous, style)
    shortfall = max(0, (expected or 0) - read)
    ttl: int | None = None
    if style == ANTHROPIC:
        cached = _cached_by(previous)
        # the lifetime of what was not read back (where the read stopped), else of what the previous call wrote
        ttl = _ttl_at(cached, read) if shortfall else _last_ttl(cached)
    return {
        "prompt": prompt, "input": current.input, "cache_read": read, "cache_write": current.cache_write,
        "prev_prompt": prev_prompt, "prev_cache_read": prev_read, "prev_cache_write": prev_write, "gap_ms": gap_ms,
        "ttl_ms": ttl, "read_share_of_prev": round(read / prev_prompt, 4) if prev_prompt else None, "rule": style,
        "write_5m": current.write_5m, "write_1h": current.write_1h, "expected_read": expected,
        "shortfall": shortfall, "excess": 0,
    }  # fmt: skip


def _cached_by(call: CallUsage) -> Lifetimes:
    """The prefix `call` left cached (its read + write), as lifetime segments; one segment of the call's own
    write lifetime (5 min when unknown) when `judge` has not recorded them."""
    if call.lifetimes is not None:
        return call.lifetimes
    end = call.cache_read + call.cache_write
    return ((end, call.ttl_ms or TTL_5M_MS),) if end else ()


def _ttl_at(cached: Lifetimes, position: int) -> int:
    """The lifetime of the cached token at `position` (the first one not read back)."""
    for end, ttl in cached:
        if position < end:
            return ttl
    return _last_ttl(cached)


def _last_ttl(cached: Lifetimes) -> int:
    return cached[-1][1] if cached else TTL_5M_MS


def _left_cached(current: CallUsage, previous: CallUsage | None) -> Lifetimes:
    """What `current` leaves cached: the part of the previous prefix it read back (a hit refreshes it with the
    lifetime it had; a read beyond it, written by another thread or before a restart, gets this call's write
    lifetime), then its write, the 1-hour part first (Anthropic orders 1-hour breakpoints before 5-minute ones)."""
    read, default = current.cache_read, current.ttl_ms or TTL_5M_MS
    out: list[tuple[int, int]] = []
    start = 0
    for end, ttl in _cached_by(previous) if previous is not None else ():
        if start >= read:
            break
        out.append((min(end, read), ttl))
        start = end
    if start < read:
        out.append((read, default))
    hour, five = current.write_1h or 0, current.write_5m or 0
    if hour + five == current.cache_write and current.cache_write:
        if hour:
            out.append((read + hour, TTL_1H_MS))
        if five:
            out.append((read + hour + five, TTL_5M_MS))
    elif current.cache_write:
        out.append((read + current.cache_write, default))
    merged: list[tuple[int, int]] = []
    for end, ttl in out:
        if merged and merged[-1][1] == ttl:
            merged[-1] = (end, ttl)
        else:
            merged.append((end, ttl))
    return tuple(merged)


@dataclass(frozen=True, slots=True)
class WhyTexts:
    """One agent's wording of the verdicts its transcript's structure decides (a pi branch is a fork, a Claude
    Code rewind is one): `str.format` templates over the verdict's figures `read`, `prompt` (tokens) and its
    `reason`, and `gap` (this agent's `gap` template over `seconds` and `ttl_min`, or "" when the gap is
    unknown). The cache rule's own verdicts read the same for every agent (`explain`)."""

    compaction: str
    fork: str
    gap: str


def why(verdict: CacheVerdict, texts: WhyTexts) -> str:
    """The one-line `why` of a cache-judged call: a structural verdict in the agent's wording, else the rule's."""
    template = {COMPACTION: texts.compaction, "fork": texts.fork}.get(verdict.kind)
    if template is None:
        return explain(verdict)
    ev = verdict.evidence
    gap_ms = ev.get("gap_ms")
    ttl_min = (ev.get("ttl_ms") or 0) // 60_000
    gap = texts.gap.format(seconds=gap_ms / 1000, ttl_min=ttl_min) if isinstance(gap_ms, int) else ""
    return template.format(read=ev.get("cache_read"), prompt=ev.get("prompt"), reason=verdict.reason, gap=gap)


def decision(verdict: CacheVerdict, count: int | None, *, source: str = "cache") -> LoggedDecision:
    """The verdict as the turn's `logged` decision: the agent's own evidence, `source` naming which."""
    return LoggedDecision(kind=verdict.kind, reason=verdict.reason, count=count, source=source)


def structural(
    kind: str,
    reason: str,
    current: CallUsage,
    previous: CallUsage | None,
    *,
    style: Style = ANTHROPIC,
    gap_ms: int | None = None,
) -> CacheVerdict:
    """A verdict the transcript's structure decides (compaction, branch, rewind), with the cache figures attached.

    The cache's own reading stays in the evidence (`cache_kind`/`cache_reason`), so a fork that still hit the
    cache for its shared prefix can be told from one that re-processed everything. Its `excess` counts only on
    a re-send (a fork); a compaction replaced the history on purpose, so nothing of the previous prompt is
    expected back (`expected_read` null): the new summary's write is its expected cost, not waste."""
    by_cache = judge(current, previous, style=style, gap_ms=gap_ms)
    evidence = dict(by_cache.evidence)
    evidence["cache_kind"], evidence["cache_reason"] = by_cache.kind, by_cache.reason
    if kind == COMPACTION:
        evidence["expected_read"], evidence["shortfall"], evidence["excess"] = None, None, 0
    elif kind not in _RESENDS:
        evidence["excess"] = 0
    return CacheVerdict(kind, reason, evidence)


def explain(verdict: CacheVerdict) -> str:
    """One line a reader can check against the evidence, for the verdicts this rule gives (an agent words its
    structural verdicts itself). Each verdict's line formats only the figures it names (a call is explained
    once per judgement: ~14,300 times on the 100 MB Claude Code history, where building all five clauses
    for every line was ~1 % of the report)."""
    ev = verdict.evidence
    read, expected = ev.get("cache_read"), ev.get("expected_read")
    reason = verdict.reason
    if verdict.kind == "bootstrap":
        return f"first call of this thread: {ev.get('prompt')} prompt tokens, {read} read from cache"
    if reason == "cache_hit":
        blocks = " in 128-token blocks" if ev.get("rule") == OPENAI else " (its read + write)"
        return f"cache read {read} covers the {expected} the previous call cached{blocks}: only new input processed"
    if reason == "uncached":
        return "the previous call cached nothing (no cache read or write): nothing could be read back"
    if reason == "below_cache_minimum":
        return f"the previous prompt ({ev.get('prev_prompt')} tokens) was below the cache minimum: nothing was cached"
    gap = ev.get("gap_ms")
    after = f", {gap / 1000:.0f}s after the previous call" if isinstance(gap, int) else ""
    again = f"; {ev.get('excess')} tokens a warm cache would have read were processed again"
    if reason == "cache_expired":
        ttl = ev.get("ttl_ms")
        lifetime = f" (cache lifetime {ttl // 60_000} min)" if isinstance(ttl, int) else ""
        return f"cache expired: read {read} of the {expected} the previous call cached{after}{lifetime}{again}"
    if reason == "cache_miss":
        return f"nothing read back of the {expected} the previous call cached{after}, within its lifetime{again}"
    if reason == "prefix_rewritten":
        return f"prefix rewritten: read {read} of the {expected} the previous call cached{after}{again}"
    if reason == RESUME:
        source = ev.get("resumed_from")
        return (f"first call after resuming {source}: read {read} of the {expected} its last copied call "
                f"cached{after}{again}")  # fmt: skip
    return f"{verdict.kind}/{reason}: cache read {read} of {ev.get('prompt')} prompt tokens{after}"
