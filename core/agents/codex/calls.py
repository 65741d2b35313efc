"""Codex model calls from one rollout's lines, in order: which `token_count` is a call, and its verdict.

The rule that reproduces Codex's own totals (reviews/codex-format.md, checked on all 13 files with calls):
a call is an `event_msg/token_count` with non-null `info` whose `total_token_usage` differs from the previous
non-null one in the file, and its usage is that line's `last_token_usage`. From 0.47 on Codex writes each
call's line again after the next `turn_context` (0.105: three times), so counting lines counts calls 1.17-3.01
times over. The lines Codex writes at a compaction have all four usage fields 0 and an unchanged total: not
calls (the compaction request's own tokens are recorded nowhere). A line without `total_token_usage` (older
or re-serialized files) counts when its `last_token_usage` differs from the previous line's; a line with a
total but no `last_token_usage` counts the change of the total.

Beyond the token counts, the rollout's structure says:

- `compaction`: a `compacted` line and/or `event_msg/context_compacted` make the next call a compaction;
- `aborted`: an `event_msg/turn_aborted` while a request was open (a user message, a `turn_context`, a tool
  output or a compaction since the last call) and no usage arrived: the request was made and produced none.
  In the real set that is 11 calls, e.g. the whole of the 0.118 file `019d6de0`, whose one request streamed
  reasoning before the user interrupted it;
- the model: the latest `turn_context.model` (once per call up to 0.105, once per turn from 0.118). 0.34 writes
  no `turn_context`: such calls have no model (null, never a guess; a price needs a model);
- the idle gap before a request: from the previous call's usage line to the newest request-opening line
  before this call. OpenAI publishes no cache lifetime, so the gap is evidence, never a verdict.

Pure: no IO, no state. `handler.py` turns each `CodexCall` into a `Turn`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from core.agents.codex.rollout import CodexLine, TokenUsage
from core.kernel.cache_verdict import (
    COMPACTION,
    OPENAI,
    OPENAI_MIN_CACHEABLE,
    CacheVerdict,
    CallUsage,
    judge,
    structural,
)
from core.model import ABORTED, Where

MAIN = "main"

#: `response_item` types whose arrival means the next request is about to be made (its input is complete).
_TOOL_OUTPUTS = frozenset(
    {"function_call_output", "custom_tool_call_output", "local_shell_call_output", "mcp_tool_call_output"}
)


@dataclass(slots=True)
class RolloutMeta:
    """What `session_meta` says about the rollout (all optional: a rollout may lack the line)."""

    session_id: str
    cwd: str | None = None
    started: str | None = None
    cli_version: str | None = None
    originator: str | None = None
    source: str | None = None
    provider: str | None = None
    thread: str = MAIN
    parent_thread_id: str | None = None
    forked_from_id: str | None = None
    where: Where | None = None


@dataclass(slots=True)
class CodexCall:
    """One model call: its usage (None when aborted), the verdict, and where the rollout recorded it."""

    number: int
    where: Where
    timestamp: str | None
    ts_ms: int | None
    model: str | None
    turn_id: str | None
    usage: TokenUsage | None
    verdict: CacheVerdict
    why: str

    @property
    def tokens(self) -> dict[str, int] | None:
        """The report's Anthropic-shaped mapping (schema "Additions"): input = input - cached (- cache write),
        cache_read = cached, cache_write = 0 (Codex reports none before 0.152), output includes reasoning."""
        usage = self.usage
        if usage is None:
            return None
        return {
            "input": max(0, usage.input - usage.cached - usage.cache_write),
            "cache_read": usage.cached,
            "cache_write": usage.cache_write,
            "output": usage.output,
        }


@dataclass(slots=True)
class _Previous:
    """The last call with usage: what the next call is judged against."""

    prompt: CallUsage
    ended_ms: int | None
    model: str | None


@dataclass(slots=True)
class RolloutCalls:
    """Feeds on one rollout's lines in file order; `feed` returns the call a line completed, if any."""

    path: str
    meta: RolloutMeta = field(init=False)
    calls: int = 0
    lines: int = 0
    model: str | None = None
    turn_id: str | None = None
    _total: TokenUsage | None = None
    _last: TokenUsage | None = None
    _previous: _Previous | None = None
    _open: bool = False  # a request-opening line came since the last call
    _open_ms: int | None = None  # when the newest one was written
    _compaction: dict[str, Any] | None = None
    _estimate: int | None = None  # total_tokens of a zero-usage line since the last call (Codex's compaction estimate)

    def __post_init__(self) -> None:
        self.meta = RolloutMeta(session_id=id_from_name(self.path))

    # ------------------------------------------------------------------ lines
    def feed(self, line: CodexLine) -> CodexCall | None:
        self.lines += 1
        if line.type == "event_msg":
            if line.kind == "token_count":
                return self._token_count(line)
            if line.kind == "user_message":
                self._opened(line)
            elif line.kind == "context_compacted":
                self._compacted(line)
            elif line.kind == "turn_aborted":
                return self._aborted(line)
            elif line.kind == "task_started" and isinstance(line.payload.get("turn_id"), str):
                self.turn_id = line.payload["turn_id"]
        elif line.type == "response_item":
            if line.kind in _TOOL_OUTPUTS:
                self._opened(line)
        elif line.type == "turn_context":
            model = line.payload.get("model")
            if isinstance(model, str) and model:
                self.model = model
            turn_id = line.payload.get("turn_id")
            if isinstance(turn_id, str):
                self.turn_id = turn_id
            self._opened(line)
        elif line.type == "compacted":
            self._compacted(line)
        elif line.type == "session_meta" and self.meta.where is None:
            self._session_meta(line)
        return None

    def _opened(self, line: CodexLine) -> None:
        self._open = True
        if line.ts_ms is not None:
            self._open_ms = line.ts_ms

    def _session_meta(self, line: CodexLine) -> None:
        payload = line.payload
        meta = self.meta
        meta.where = line.where
        for key, value in (
            ("session_id", payload.get("id")),
            ("cwd", payload.get("cwd")),
            ("cli_version", payload.get("cli_version")),
            ("originator", payload.get("originator")),
            ("provider", payload.get("model_provider")),
            ("forked_from_id", payload.get("forked_from_id")),
        ):
            if isinstance(value, str) and value:
                setattr(meta, key, value)
        started = payload.get("timestamp")
        meta.started = started if isinstance(started, str) else line.timestamp
        meta.source, meta.thread, meta.parent_thread_id = source_of(payload.get("source"))

    def _compacted(self, line: CodexLine) -> None:
        if self._compaction is None:
            self._compaction = {"at": line.timestamp, "line": line.where.line}
        if line.type == "compacted":
            history = line.payload.get("replacement_history")
            if isinstance(history, list):
                self._compaction["replacement_items"] = len(history)
        self._opened(line)

    # ------------------------------------------------------------------ calls
    def _token_count(self, line: CodexLine) -> CodexCall | None:
        total, last = line.total, line.last
        if total is None and last is None:
            return None  # `info: null`: rate limits only
        if total is not None:
            changed = self._total is None or total.key() != self._total.key()
            usage = last if last is not None else total.minus(self._total)
            self._total = total
        else:
            changed = self._last is None or last is None or last.key() != self._last.key()
            usage = last
        if last is not None:
            self._last = last
        if usage is None:
            return None
        if usage.empty:  # written at a compaction (total unchanged): its total_tokens estimates the new context
            self._estimate = usage.total or self._estimate
            return None
        return self._call(line, usage) if changed else None

    def _call(self, line: CodexLine, usage: TokenUsage | None, aborted: str = "") -> CodexCall:
        previous = self._previous
        gap = None
        if previous is not None and previous.ended_ms is not None:
            opened = self._open_ms if self._open and self._open_ms is not None else line.ts_ms
            gap = max(0, opened - previous.ended_ms) if opened is not None else None
        compaction, self._compaction = self._compaction, None
        prompt = None
        if usage is None:
            verdict = CacheVerdict(ABORTED, aborted, {"gap_ms": gap})
        else:
            prompt = CallUsage(max(0, usage.input - usage.cached - usage.cache_write), usage.cached, usage.cache_write,
                               line.ts_ms, output=usage.output, cache_reported=usage.cached_reported)  # fmt: skip
            prior = previous.prompt if previous is not None else None
            if compaction is not None:  # the history was replaced on purpose: nothing of it is expected back
                verdict = structural(COMPACTION, "context_compacted", prompt, prior, style=OPENAI, gap_ms=gap)
            else:
                verdict = judge(prompt, prior, style=OPENAI, gap_ms=gap)
            verdict.evidence["reasoning_output"] = usage.reasoning
            verdict.evidence["total_tokens"] = usage.total
        if compaction is not None:
            if self._estimate is not None:
                compaction["estimated_tokens"] = self._estimate
            verdict.evidence["compaction"] = compaction
        if previous is not None and previous.model and self.model and previous.model != self.model:
            verdict.evidence["model_switch"] = {"from": previous.model, "to": self.model}
        if self.turn_id is not None:
            verdict.evidence["turn_id"] = self.turn_id
        call = CodexCall(
            self.calls, line.where, line.timestamp, line.ts_ms, self.model, self.turn_id, usage, verdict, ""
        )
        call.why = why(call)
        self.calls += 1
        self._open, self._open_ms = False, None
        self._estimate = None
        if prompt is not None:
            self._previous = _Previous(prompt, line.ts_ms, self.model)
        return call

    def _aborted(self, line: CodexLine) -> CodexCall | None:
        """A turn aborted while its request was open: that request is a call with no usage."""
        if not self._open:
            return None  # aborted between requests (e.g. while a tool ran): no request was lost
        reason = line.payload.get("reason")
        return self._call(line, None, reason if isinstance(reason, str) and reason else "turn_aborted")


def why(call: CodexCall) -> str:
    """One line a reader can check against the evidence."""
    verdict, ev = call.verdict, call.verdict.evidence
    gap = ev.get("gap_ms")
    after = f" after {gap / 1000:.0f}s idle" if isinstance(gap, int) else ""
    switch = ev.get("model_switch")
    switched = f", after a model switch {switch['from']} -> {switch['to']} (the cache is per model)" if switch else ""
    if verdict.kind == ABORTED:
        return f"turn aborted ({verdict.reason}) before the request reported any usage{after}"
    if verdict.kind == "bootstrap":
        return f"first call of this rollout: {ev['prompt']} prompt tokens, {ev['cache_read']} read from cache"
    if verdict.kind == COMPACTION:
        return (
            f"first call after a compaction: {ev['prompt']} prompt tokens, {ev['cache_read']} read from cache "
            f"(the replaced history is not expected back)"
        )
    if verdict.reason == "cache_hit":
        return (
            f"cache read {ev['cache_read']} covers the previous prompt {ev['prev_prompt']} "
            f"(expected {ev['expected_read']} in 128-token blocks){after}"
        )
    if verdict.reason == "below_cache_minimum":
        return (
            f"below_cache_minimum: the previous prompt ({ev['prev_prompt']} tokens) was under the "
            f"{OPENAI_MIN_CACHEABLE}-token minimum the cache stores: nothing could be read back{after}"
        )
    if verdict.reason == "uncached":
        return f"uncached: the provider reports no cached tokens ({ev['prompt']} prompt tokens){after}"
    return (
        f"{verdict.reason}: cache read {ev['cache_read']} of the expected {ev['expected_read']} "
        f"(previous prompt {ev['prev_prompt']}), {ev['excess']} tokens processed again{after}{switched}"
    )


def source_of(value: Any) -> tuple[str | None, str, str | None]:
    """`session_meta.source` -> (source label, thread, parent thread id).

    Codex writes `"cli"`, `"exec"`, `"vscode"`, `"mcp"`, or for a sub-agent rollout `{"subagent": "review"}`
    (also `"compact"`, `"memory_consolidation"`), `{"subagent": {"thread_spawn": {"parent_thread_id", "depth",
    "agent_nickname", "agent_role"}}}` or `{"subagent": {"other": "<name>"}}` (codex-rs protocol
    `SubAgentSource`). A sub-agent rollout is its own conversation: its thread is the sub-agent's name.
    """
    if isinstance(value, str):
        return value, MAIN, None
    if not isinstance(value, dict):
        return None, MAIN, None
    sub = value.get("subagent")
    if isinstance(sub, str) and sub:
        return f"subagent:{sub}", sub, None
    if isinstance(sub, dict):
        spawn = sub.get("thread_spawn")
        if isinstance(spawn, dict):
            name = next(
                (v for k in ("agent_nickname", "agent_role", "agent_path") if isinstance(v := spawn.get(k), str) and v),
                "thread_spawn",
            )
            parent = spawn.get("parent_thread_id")
            return "subagent:thread_spawn", name, parent if isinstance(parent, str) else None
        other = sub.get("other")
        if isinstance(other, str) and other:
            return f"subagent:{other}", other, None
        return "subagent", "subagent", None
    custom = value.get("custom")
    return (custom if isinstance(custom, str) else None), MAIN, None


def id_from_name(path: str) -> str:
    """The session id a rollout's name carries (`rollout-<local time>-<uuid>.jsonl`): used until (or when no)
    `session_meta` says it."""
    stem = os.path.basename(path)
    stem = stem[: -len(".jsonl")] if stem.endswith(".jsonl") else stem
    tail = stem[-36:]
    if len(tail) == 36 and tail.count("-") == 4:
        return tail
    return stem


__all__ = ["MAIN", "CodexCall", "RolloutCalls", "RolloutMeta", "id_from_name", "source_of", "why"]
