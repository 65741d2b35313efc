"""The rules the mux/Xum analysis applies to one row, as pure functions (no state, no IO).

- `replay_facts`: coder/xum's thinking-replay rule (reference other-agents §B.5). On an Anthropic row,
  reasoning that follows a *demoted* server tool (one not stored in its natively replayable form:
  `providerExecuted`, a successful `web_search`, an array of `web_search_result`) is bound to blocks later
  requests cannot replay, so the row must carry the receipt `metadata.anthropicThinkingReplay: "off"`.
- `mux_usage`: a row's cache figures for `core.kernel.cache_verdict`, from the AI-SDK usage mux stores.
- `capture_vs_commit`: the differences between a streamed `partial.json` and its committed row that streaming
  progress does not explain.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.kernel.cache_verdict import CallUsage
from core.kernel.diff import diff
from core.model import DiffChange

RECEIPT_KEY = "anthropicThinkingReplay"
SERVER_TOOL_ID_PREFIX = "srvtoolu_"


# ---------------------------------------------------------------------------------------------- row facts
@dataclass(slots=True)
class ReplayFacts:
    """What the thinking-replay rule needs from one assistant row."""

    anthropic: bool
    needs_receipt: bool
    receipt: bool
    reasoning: bool
    server_tools: list[str] = field(default_factory=list)
    demoted: list[str] = field(default_factory=list)


def is_server_tool(part: dict[str, Any]) -> bool:
    """A provider-executed tool part (Anthropic `srvtoolu_…` ids survive the older mux's demotion)."""
    if part.get("type") != "dynamic-tool":
        return False
    call_id = part.get("toolCallId")
    return part.get("providerExecuted") is True or (
        isinstance(call_id, str) and call_id.startswith(SERVER_TOOL_ID_PREFIX)
    )


def natively_replayable(part: dict[str, Any]) -> bool:
    """coder/xum keeps a server tool natively only as a successful web_search with web_search_result items."""
    output = part.get("output")
    return (
        part.get("providerExecuted") is True
        and part.get("toolName") == "web_search"
        and part.get("state") == "output-available"
        and isinstance(output, list)
        and bool(output)
        and all(isinstance(item, dict) and item.get("type") == "web_search_result" for item in output)
    )


def _is_reasoning(part: dict[str, Any]) -> bool:
    if part.get("type") != "reasoning":
        return False
    text = part.get("text")
    return bool(isinstance(text, str) and text.strip()) or bool(_anthropic_signature(part))


def _anthropic_signature(part: dict[str, Any]) -> str | None:
    options = part.get("providerOptions")
    anthropic = options.get("anthropic") if isinstance(options, dict) else None
    signature = anthropic.get("signature") if isinstance(anthropic, dict) else None
    if isinstance(signature, str) and signature:
        return signature
    legacy = part.get("signature")
    return legacy if isinstance(legacy, str) and legacy else None


def replay_facts(parts: list[dict[str, Any]], metadata: dict[str, Any]) -> ReplayFacts:
    """Scan one row's (merged) parts in order: a demoted server tool followed by reasoning needs the receipt."""
    model = str(metadata.get("model") or "").lower()
    anthropic = "anthropic" in model or "claude" in model
    facts = ReplayFacts(
        anthropic=False, needs_receipt=False, receipt=metadata.get(RECEIPT_KEY) == "off", reasoning=False
    )
    demoted_before = False
    for part in parts:
        if _is_reasoning(part):
            facts.reasoning = True
            anthropic = anthropic or _anthropic_signature(part) is not None
            if demoted_before:
                facts.needs_receipt = True
        elif is_server_tool(part):
            call_id = str(part.get("toolCallId"))
            facts.server_tools.append(call_id)
            if not natively_replayable(part):
                facts.demoted.append(call_id)
                demoted_before = True
    facts.anthropic = anthropic
    facts.needs_receipt = facts.needs_receipt and anthropic
    return facts


def is_compaction_summary(metadata: dict[str, Any]) -> bool:
    """The row a compaction wrote (a durable context boundary): the first row of a new context segment."""
    typed = metadata.get("muxMetadata")
    return (
        metadata.get("compactionBoundary") is True
        or (isinstance(typed, dict) and typed.get("type") == "compaction-summary")
        or metadata.get("contextBoundaryKind") is not None
    )


# ---------------------------------------------------------------------------------------------- usage
def _num(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _split(usage: Any, write_hint: int) -> tuple[int, int, int, int] | None:
    """(uncached, read, write, total) prompt tokens of an AI-SDK usage object; None when it has none.

    `inputTokens` is either `{total, noCache, cacheRead, cacheWrite}` (newer AI SDK) or a number whose meaning
    varies by SDK version (with or without the cached part): when it is at least read + write it is taken as
    the total, otherwise as the uncached part.
    """
    if not isinstance(usage, dict):
        return None
    raw = usage.get("inputTokens")
    if isinstance(raw, dict):
        read, write = _num(raw.get("cacheRead")), _num(raw.get("cacheWrite")) or write_hint
        total = _num(raw.get("total")) or (_num(raw.get("noCache")) + read + write)
        return max(0, total - read - write), read, write, total
    if raw is None:
        return None
    number = _num(raw)
    read, write = _num(usage.get("cachedInputTokens")), write_hint
    total = number if number >= read + write else number + read + write
    return total - read - write, read, write, total


def _cache_write(provider_metadata: Any) -> int:
    anthropic = provider_metadata.get("anthropic") if isinstance(provider_metadata, dict) else None
    return _num(anthropic.get("cacheCreationInputTokens")) if isinstance(anthropic, dict) else 0


def mux_usage(metadata: dict[str, Any]) -> tuple[CallUsage | None, dict[str, Any]]:
    """The turn's figures for the cache rule, and what they were derived from (kept with the evidence)."""
    ts = metadata.get("timestamp")
    ts_ms = int(ts) if isinstance(ts, int | float) and not isinstance(ts, bool) else None
    total = _split(metadata.get("usage"), _cache_write(metadata.get("providerMetadata")))
    if total is None:
        return None, {}
    last = _split(metadata.get("contextUsage"), _cache_write(metadata.get("contextProviderMetadata"))) or total
    uncached_all, read_all, write_all, prompt_all = total
    _, _, _, prompt_last = last
    steps = prompt_all > prompt_last
    output = _num((metadata.get("usage") or {}).get("outputTokens"))
    basis = {
        "steps": "several" if steps else "one",
        "usage_prompt": prompt_all,
        "usage_cache_read": read_all,
        "usage_cache_write": write_all,
        "context_prompt": prompt_last,
        "estimated": steps,
    }
    if not steps:
        return CallUsage(uncached_all, read_all, write_all, ts_ms, None, output), basis
    read = max(0, min(read_all, prompt_last - write_all - uncached_all))
    write = min(write_all, prompt_last - read)
    return CallUsage(prompt_last - read - write, read, write, ts_ms, None, output), basis


def capture_vs_commit(capture: list[dict[str, Any]], commit: list[dict[str, Any]]) -> list[DiffChange]:
    """Differences between the streamed and the committed parts that streaming progress does not explain.

    Progress adds, a rewrite removes or changes: a text or reasoning part whose committed text extends the
    captured one, a tool part that went from `input-available` to a later state, keys that arrived after the
    capture (a signature, an output) and parts appended after the captured ones are progress; a value that
    changed or a key or part the commit no longer has is a rewrite. Paths are `.content[i]…` over the merged
    parts.
    """
    aligned: list[dict[str, Any]] = []
    for index, part in enumerate(capture):
        later = commit[index] if index < len(commit) else None
        if later is None or part.get("type") != later.get("type"):
            aligned.append(part)
            continue
        part = dict(part)
        text, final = part.get("text"), later.get("text")
        if isinstance(text, str) and isinstance(final, str) and final.startswith(text):
            part["text"] = final
        if part.get("type") == "dynamic-tool" and part.get("state") == "input-available":
            for key in ("state", "output"):
                if key in later:
                    part[key] = later[key]
        aligned.append(part)
    changes = diff({"content": aligned}, {"content": commit[: len(capture)]})
    return [change for change in changes if change.change != "missing_in_capture"]
