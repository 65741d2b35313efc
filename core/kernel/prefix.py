"""Where a re-written prefix stopped matching, told from the prompt sizes of the calls before it.

A call that reads back less of the cache than the previous call left there (`prefix_rewritten`, `resume`)
says exactly how many tokens of its prompt still matched: its `cache_read`. The transcript holds no request
bodies, but it does say how big each earlier prompt of the same conversation was (input + cache read + cache
write, in tokens) and how many messages it sent: the call whose prompt first grew past the matched size is
the one that first sent the content where the two prompts part. So the change lies in the messages that call
added, or, when even the first prompt of the conversation was longer than the match, in that first prompt
(the system prompt, the tools, or its first messages). An earlier call that read back exactly the matched
size marks a boundary the provider itself drew, usually the end of the system prompt and tools.

Spotter 4d5611e5 #150 matched 21,478 tokens: the first call after the compaction (#74) read back the same
21,478 (system prompt and tools; its prompt was 36,081), so everything from the compaction summary on,
77,251 tokens, was written again, 5 s after a `<task-notification>` user message.

Pure: an agent records each call of a conversation (`PromptHistory.record`), keeps a `view` of what came
before each new call, and asks the view to `locate` a shortfall; `reset` when the conversation is replaced (a
compaction). Calls are named by id and start time (a turn index moves when a sub-agent's calls are filed in).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PromptHistory", "PromptView"]

#: calls kept per conversation: enough to place a change in a long session (spotter's longest: 221 calls)
MAX_CALLS = 4096


@dataclass(frozen=True, slots=True)
class _Point:
    ref: str  # the call's id (Claude Code: its message id)
    at: str | None  # when it started (ISO)
    prompt: int  # prompt tokens
    read: int  # cache read tokens
    messages: int  # messages in its prompt


@dataclass(frozen=True, slots=True)
class PromptView:
    """The calls of a conversation before one call: what that call's shortfall is placed against. A view stays
    valid however the history goes on (a reset or a trim starts new lists)."""

    calls: list[_Point]
    prompts: list[int]
    upto: int

    def locate(self, matched: int) -> dict[str, Any] | None:
        """Where a prompt that matched the cache for `matched` tokens parted from the earlier prompts: None when
        no earlier call is known."""
        calls, prompts = self.calls[: self.upto], self.prompts[: self.upto]
        if not calls:
            return None
        out: dict[str, Any] = {"tokens": matched, "first_sent_by": None, "matched_whole_prompt_of": None,
                               "messages": None, "same_read_as": None, "where": ""}  # fmt: skip
        same = next((c for c in calls if c.read == matched and matched), None)
        if same is not None:
            out["same_read_as"] = same.ref
        if matched <= 0:
            out["where"] = "nothing matched: the first tokens of the prompt (system prompt or tools) differ"
            return out
        at = bisect.bisect_right(prompts, matched)  # calls [0, at) had prompts the match covered
        if at >= len(calls):
            last = calls[-1]
            out["matched_whole_prompt_of"] = last.ref
            out["where"] = f"after the whole prompt of the call at {_clock(last.at)} ({last.prompt:,} tokens)"
            return out
        first = calls[at]
        out["first_sent_by"] = first.ref
        if at == 0:
            messages = f"{first.messages} message{'' if first.messages == 1 else 's'}"
            where = f"within the first prompt of this conversation (the call at {_clock(first.at)}: "
            where += f"{first.prompt:,} tokens, {messages})"
            if same is not None:
                where += (f", at the {matched:,} tokens the call at {_clock(same.at)} also read back: the system "
                          "prompt and tools matched, the messages after them did not")  # fmt: skip
            else:
                where += ": in the system prompt, the tools or its first messages"
            out["where"] = where
            return out
        before = calls[at - 1]
        out["matched_whole_prompt_of"] = before.ref
        lo, hi = before.messages + 1, first.messages
        out["messages"] = [lo, hi] if hi >= lo else None
        what = f"messages {lo}-{hi}" if hi > lo else f"message {lo}" if hi == lo else "what it added"
        whole = f"the whole prompt of the call at {_clock(before.at)} ({before.prompt:,} tokens) matched"
        out["where"] = f"in {what} of the conversation, first sent by the call at {_clock(first.at)}: {whole}"
        return out


@dataclass(slots=True)
class PromptHistory:
    """The prompt sizes of one conversation's calls since it started or was last replaced."""

    calls: list[_Point] = field(default_factory=list)
    prompts: list[int] = field(default_factory=list)

    def reset(self) -> None:
        self.calls, self.prompts = [], []

    def record(self, ref: str, at: str | None, prompt: int, read: int, messages: int) -> None:
        """A call of this conversation (in order): its id and start, prompt and cache read tokens, messages sent."""
        if self.prompts and prompt < self.prompts[-1]:
            self.reset()  # the conversation shrank (a compaction the transcript did not mark): start over
        if len(self.calls) >= MAX_CALLS:
            half = MAX_CALLS // 2
            self.calls, self.prompts = self.calls[half:], self.prompts[half:]
        self.calls.append(_Point(ref, at, prompt, read, messages))
        self.prompts.append(prompt)

    def view(self) -> PromptView:
        return PromptView(self.calls, self.prompts, len(self.calls))


def _clock(at: str | None) -> str:
    """'2026-02-12T20:30:31.624Z' -> '20:30:31' (the turn table's time column)."""
    if not at or "T" not in at:
        return at or "?"
    return at.split("T", 1)[1][:8]
