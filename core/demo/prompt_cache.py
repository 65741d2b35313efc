"""The provider side of the demo: a prompt cache that decides what each call reads back and writes.

The demo agents send their whole conversation on every call, as the real ones do; what the usage on each call
says (read from cache, written to cache, uncached input) is decided here, from the content of the prompt and
the time, the way the providers document their caches. The generators never pick those numbers by hand, so a
5-minute idle gap, a changed block early in the prompt or a switch of model show in the usage exactly as far
as the cache model says, and the truths the generators record (`CallTruth`) are this model's, not the
analysis's.

- `AnthropicCache` (Claude Code, pi): a prompt is written up to its breakpoints (the end of the system prompt
  and tools, and the end of the conversation); a prefix stays alive for its lifetime (5 minutes, or 1 hour for
  1-hour writes) after it was last written or read; a call reads the longest alive prefix its prompt starts with
  and writes the rest. The cache is per model (the model is the first link of every prefix), and changing the
  thinking level keeps only the system prompt's prefix (Anthropic: thinking parameters invalidate message
  breakpoints, not the system prompt's).
- `OpenAICache` (Codex): the provider keeps each request's prompt plus the response it generated; a prompt of
  1,024 tokens or more reads back the longest kept prefix it starts with, in whole blocks of 128 tokens. It
  publishes no lifetime; it can drop its newest entries (the call falls back to an older, shorter prefix) or all
  of them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

TTL_5M_MS = 5 * 60_000
TTL_1H_MS = 60 * 60_000
OPENAI_BLOCK = 128
OPENAI_MIN = 1024


@dataclass(frozen=True, slots=True)
class Block:
    """One piece of a prompt: what it is (`key`, its content's identity) and how many tokens it takes."""

    key: str
    tokens: int


@dataclass(frozen=True, slots=True)
class AnthropicUse:
    input: int
    cache_read: int
    cache_write: int

    @property
    def prompt(self) -> int:
        return self.input + self.cache_read + self.cache_write


def _chain(seed: str, blocks: list[Block]) -> list[str]:
    """The identity of every prefix: `out[i]` names blocks[:i + 1] (under `seed`, the model)."""
    out, h = [], seed.encode()
    for block in blocks:
        h = hashlib.blake2b(h + b"\0" + block.key.encode(), digest_size=12).digest()
        out.append(h.hex())
    return out


class AnthropicCache:
    """Prefix cache with lifetimes, shared by every conversation of one account (a sub-agent with the same
    system prompt reads the parent's prefix of it)."""

    def __init__(self) -> None:
        self.alive: dict[str, int] = {}  # prefix identity -> expiry (epoch ms)

    def call(
        self,
        model: str,
        blocks: list[Block],
        now_ms: int,
        *,
        system_blocks: int,
        ttl_ms: int = TTL_5M_MS,
        uncached: int = 3,
    ) -> AnthropicUse:
        """One request: `blocks` is the whole prompt (system and tools first, `system_blocks` of them), `uncached`
        the tokens after the last breakpoint (the few input tokens every Claude call reports)."""
        chain = _chain(model, blocks)
        totals, running = [], 0
        for block in blocks:
            running += block.tokens
            totals.append(running)
        read_at = -1
        for i in range(len(chain) - 1, -1, -1):
            expiry = self.alive.get(chain[i])
            if expiry is not None and expiry > now_ms:
                read_at = i
                break
        read = totals[read_at] if read_at >= 0 else 0
        for i in {system_blocks - 1, len(chain) - 1, read_at} - {-1}:
            self.alive[chain[i]] = now_ms + ttl_ms  # written, or read (a read refreshes the lifetime)
        return AnthropicUse(uncached, read, totals[-1] - read)

    def keep_only(self, model: str, blocks: list[Block], system_blocks: int, now_ms: int) -> None:
        """Drop every prefix longer than the system prompt (a thinking-level change invalidates message
        breakpoints; the system prompt and tools stay cached)."""
        keep = _chain(model, blocks[:system_blocks])[-1]
        self.alive = {k: v for k, v in self.alive.items() if k == keep and v > now_ms}


@dataclass(frozen=True, slots=True)
class OpenAIUse:
    input: int  # the whole prompt, cached part included (OpenAI's convention)
    cached: int


class OpenAICache:
    """Kept (prompt + response) sequences, newest last; read back in 128-token blocks."""

    def __init__(self) -> None:
        self.kept: list[list[str]] = []

    def call(self, model: str, blocks: list[Block], response: Block | None) -> OpenAIUse:
        chain = _chain(model, blocks)
        totals, running = [], 0
        for block in blocks:
            running += block.tokens
            totals.append(running)
        best = 0
        if running >= OPENAI_MIN:
            for kept in self.kept:
                n = 0
                while n < len(kept) and n < len(chain) and kept[n] == chain[n]:
                    n += 1
                if n:
                    best = max(best, totals[n - 1])
        cached = best // OPENAI_BLOCK * OPENAI_BLOCK
        self.kept.append(_chain(model, [*blocks, response]) if response is not None else chain)
        return OpenAIUse(running, cached)

    def drop_newest(self, n: int) -> None:
        """The provider lost its `n` newest entries: the next call reads an older, shorter prefix."""
        del self.kept[-n:]

    def drop_all(self) -> None:
        self.kept.clear()
