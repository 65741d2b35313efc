"""The bundled list prices: USD per million tokens, as the providers publish them for their own APIs.

Read on 2026-12-01 from the providers' pricing pages (stored copies, `search` tool):

- Anthropic: https://platform.claude.com/docs/en/about-claude/pricing ("Model pricing": base input, 5m cache
  writes, 1h cache writes, cache hits and refreshes, output), and the model pages for Claude Opus 5
  (https://platform.claude.com/docs/about-claude/models/whats-new-opus-5) and Claude Sonnet 5
  (https://platform.claude.com/docs/zh-CN/models/sonnet-5/overview). Cache writes are 1.25x (5 min) and 2x
  (1 h) of base input, cache reads 0.1x, on every model listed here.
- OpenAI: https://developers.openai.com/api/docs/pricing (standard tier): input, cached input, output. The
  gpt-5-codex and codex-mini-latest rows were read on their own model pages
  (https://developers.openai.com/api/docs/models/gpt-5-codex, …/codex-mini-latest); the GPT-5.1, 5.2, 5.3 and
  5.4 rows as that page is quoted, with the same figures, by GitHub's Copilot price table
  (github/docs `data/tables/copilot/models-and-pricing.yml`) and benchlm.ai's "OpenAI API pricing" (2026).
  OpenAI charges nothing extra to write its cache; `cache_read` holds the cached-input price.

Left out on purpose (a call of these models has a null cost, never a guess; `--prices FILE` adds them):
models whose price depends on the prompt length beyond what is listed (Claude Haiku 5.5's two bands), models
whose cache price changed during 2026 with no dated official row here (Claude Sonnet 5.5, Opus 5.5), and
limited-availability ones (Fable, Mythos). Where a price holds only up to a prompt size, `max_prompt` says so
and a longer prompt is unpriced: Sonnet 4 and 4.5 bill prompts over 200K tokens (their 1M-context beta) at
higher rates, GPT-5.4 prompts over 270K tokens.
"""

from __future__ import annotations

SOURCE = "bundled list prices (Anthropic and OpenAI pricing pages)"
AS_OF = "2026-12-01"
URLS = (
    "https://platform.claude.com/docs/en/about-claude/pricing",
    "https://developers.openai.com/api/docs/pricing",
)

# model id: (input, output, cache_write_5m, cache_write_1h, cache_read, max_prompt or None)
_OPUS_45 = (5.0, 25.0, 6.25, 10.0, 0.50, None)
_OPUS_4 = (15.0, 75.0, 18.75, 30.0, 1.50, None)
_SONNET_4 = (3.0, 15.0, 3.75, 6.0, 0.30, None)
_SONNET_4_200K = (3.0, 15.0, 3.75, 6.0, 0.30, 200_000)
_HAIKU_45 = (1.0, 5.0, 1.25, 2.0, 0.10, None)

ANTHROPIC: dict[str, tuple[float, float, float, float, float, int | None]] = {
    "claude-opus-5": _OPUS_45,
    "claude-opus-4-8": _OPUS_45,
    "claude-opus-4-7": _OPUS_45,
    "claude-opus-4-6": _OPUS_45,
    "claude-opus-4-5": _OPUS_45,
    "claude-opus-4-1": _OPUS_4,
    "claude-opus-4-0": _OPUS_4,
    "claude-opus-4": _OPUS_4,
    "claude-3-opus": _OPUS_4,
    "claude-sonnet-5": (2.0, 10.0, 2.50, 4.0, 0.20, None),
    "claude-sonnet-4-6": _SONNET_4,
    "claude-sonnet-4-5": _SONNET_4_200K,
    "claude-sonnet-4-0": _SONNET_4_200K,
    "claude-sonnet-4": _SONNET_4_200K,
    "claude-3-7-sonnet": _SONNET_4,
    "claude-haiku-4-5": _HAIKU_45,
    "claude-3-5-haiku": (0.80, 4.0, 1.0, 1.6, 0.08, None),
    "claude-3-haiku": (0.25, 1.25, 0.30, 0.50, 0.03, None),
}  # fmt: skip

# model id: (input, cached input, output, max_prompt or None)
_GPT_5 = (1.25, 0.125, 10.0, None)
_GPT_52 = (1.75, 0.175, 14.0, None)

OPENAI: dict[str, tuple[float, float, float, int | None]] = {
    "gpt-5": _GPT_5,
    "gpt-5-codex": _GPT_5,
    "gpt-5.1": _GPT_5,
    "gpt-5.1-codex": _GPT_5,
    "gpt-5.1-codex-max": _GPT_5,
    "gpt-5-mini": (0.25, 0.025, 2.0, None),
    "gpt-5.2": _GPT_52,
    "gpt-5.2-codex": _GPT_52,
    "gpt-5.3-codex": _GPT_52,
    "gpt-5.4": (2.50, 0.25, 15.0, 270_000),
    "codex-mini-latest": (1.50, 0.375, 6.0, None),
}  # fmt: skip
