"""What a stateless-API agent re-sends on each call, kept as counts: messages, content bytes, directive copies.

Claude Code and mux/Xum send their whole conversation on every provider call, so every tagged block injected
into it (`<system-reminder>`, `<ultrawork-mode>`, …) rides along in every later call until a compaction. The
transcripts do not store request bodies; what they do store (message contents) is counted once, when it
enters the conversation, and the running totals are what each call carries. Tags are found by the directive
ledger's own scanner (`core.kernel.directives.scan_text`), and the session's `DirectiveLedger` is fed the
same blocks, so the directive pane and the report read these agents exactly as they read senpi.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from core.kernel.directives import DirectiveLedger, Seen, scan_text


def content_size(content: Any) -> int:
    """Bytes of a message's content as stored (compact JSON): the transcript's view of what was sent."""
    if content is None:
        return 0
    try:
        return len(orjson.dumps(content))
    except TypeError:
        return 0


@dataclass(slots=True)
class ContextCounter:
    """One conversation's running totals since its last compaction, and where the previous call left them."""

    messages: int = 0
    bytes: int = 0
    tags: dict[str, list[int]] = field(default_factory=dict)  # tag -> [copies, bytes]
    messages_at_call: int = 0
    bytes_at_call: int = 0

    def add(
        self, content: Any, texts: list[tuple[str, bool]], ledger: DirectiveLedger | None, key: str | None, seen: Seen
    ) -> None:
        """One message entered the conversation. `texts` are its (text, user_role) pieces to scan for tags."""
        self.messages += 1
        self.bytes += content_size(content)
        for position, (text, user_role) in enumerate(texts):
            scan = scan_text(text, any_tag=user_role)
            if not scan.blocks:
                continue
            if ledger is not None:
                ledger.record((key, position) if key is not None else None, scan.blocks, seen, user_role=user_role)
            for block in scan.blocks:
                slot = self.tags.setdefault(block.tag, [0, 0])
                slot[0] += 1
                slot[1] += block.nbytes

    def grow(self, content: Any) -> None:
        """More content of a message already counted (another block line of the same assistant call)."""
        self.bytes += content_size(content)

    def resize(self, delta: int) -> None:
        """A message already counted changed size (a mux row rewritten when its stream ended)."""
        self.bytes += delta

    def call(self, ledger: DirectiveLedger | None, turn_index: int) -> tuple[int, int, int, int, dict[str, Any] | None]:
        """A call is made now: (messages sent, new messages, bytes sent, new bytes, directive copies per
        recognized tag). New messages are those added since the previous call apart from its own reply (what
        senpi counts as `deltaMessages`); new bytes are all the previous prompt did not hold, its reply included
        (what the cache had not seen). The call's own reply then joins the conversation."""
        new_messages = self.messages - self.messages_at_call
        new_bytes = self.bytes - self.bytes_at_call
        directives = {
            tag: {"copies": copies, "bytes": size}
            for tag, (copies, size) in self.tags.items()
            if ledger is None or ledger.is_recognized(tag)
        }
        if ledger is not None:
            ledger.note_call(turn_index)
        sent = (self.messages, new_messages, self.bytes, new_bytes, directives or None)
        self.bytes_at_call = self.bytes
        self.messages += 1  # the reply
        self.messages_at_call = self.messages
        return sent

    def reset(self) -> None:
        """A compaction replaced the conversation with a summary."""
        self.messages = self.bytes = self.messages_at_call = self.bytes_at_call = 0
        self.tags = {}


def claude_texts(content: Any) -> Iterator[tuple[str, bool]]:
    """(text, user_role) pieces of an Anthropic-shaped user message: prompt text is user-role (any tag may
    be a directive), tool results are not (file contents are full of tags; only known tags count there)."""
    if isinstance(content, str):
        yield content, True
        return
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            yield block["text"], True
        elif kind == "tool_result":
            inner = block.get("content")
            if isinstance(inner, str):
                yield inner, False
            elif isinstance(inner, list):
                for part in inner:
                    if isinstance(part, dict) and isinstance(part.get("text"), str):
                        yield part["text"], False
