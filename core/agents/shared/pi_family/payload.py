"""What each pi-family call re-sends, as counts: messages, content bytes and directive copies.

pi sends its whole context on every call, so the context the provider-context tracker rebuilds
(`core.agents.shared.pi_family.context`) is the payload. Its messages are counted once, as they enter, with
`core.agents.shared.stateless.ContextCounter`: a compaction starts the count over from its new context, and a
branch switch makes the next call recount the context of the new branch (its entries re-read by offset,
once). Message bodies are never kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.agents.shared.pi_family.context import COMPACTION_PREFIX, COMPACTION_SUFFIX, ProviderContext, entry_messages
from core.agents.shared.stateless import ContextCounter
from core.kernel.directives import DirectiveLedger, Seen
from core.model import TranscriptEntry, Turn, Where, entry_key

if TYPE_CHECKING:
    from core.kernel.pipeline import Session
    from core.kernel.ports import Reread


def message_texts(msg: dict[str, Any]) -> list[tuple[str, bool]]:
    """(text, user_role) pieces to scan for tags: prompts and injected messages are user-role, tool results
    are not (file contents are full of tags; only known tags count there), assistant replies are not scanned."""
    role = msg.get("role")
    if role not in ("user", "toolResult"):
        return []
    content = msg.get("content")
    if isinstance(content, str):
        return [(content, role == "user")]
    if not isinstance(content, list):
        return []
    return [
        (block["text"], role == "user")
        for block in content
        if isinstance(block, dict) and isinstance(block.get("text"), str)
    ]


class PiPayload:
    """Running counts of one session's active context. `stale` after a branch switch until the next call."""

    def __init__(self, reread: Reread) -> None:
        self.reread = reread  # a branch switch re-reads the new branch's context, once
        self.counter = ContextCounter()
        self.stale = False

    def entry(self, entry: TranscriptEntry, context: ProviderContext, ledger: DirectiveLedger | None) -> None:
        """An entry of the active branch was delivered (not a replay): count what it added to the context."""
        if self.stale:
            return
        key = _key(entry.id, entry.where)
        if context.reset is not None:
            self.counter.reset()
            for position, msg in enumerate(context.reset):
                self._add(msg, ledger, key if position == 0 else None, position, entry.timestamp)
            return
        for position, msg in enumerate(context.added):
            if msg.get("role") != "assistant":  # the reply is counted with its call
                self._add(msg, ledger, key, position, entry.timestamp)

    def call(
        self, entry: TranscriptEntry, turn: Turn, context: ProviderContext, ledger: DirectiveLedger | None
    ) -> tuple[int, int, int, int, dict[str, Any] | None]:
        """A new call: what it sent (see `ContextCounter.call`); its reply then joins the context."""
        if self.stale:
            self._rebuild(context, ledger)
        sent = self.counter.call(ledger, turn.index)
        self.counter.grow((entry.message or {}).get("content"))
        return sent

    def _add(
        self, msg: dict[str, Any], ledger: DirectiveLedger | None, key: str | None, position: int, ts: str | None
    ) -> None:
        texts = message_texts(msg)
        self.counter.add(
            msg.get("content"),
            texts,
            ledger if key is not None else None,
            f"{key}:{position}" if key is not None else None,
            Seen(ts, key),
        )

    def _rebuild(self, context: ProviderContext, ledger: DirectiveLedger | None) -> None:
        """Recount the context of the branch now active (all but the call's own reply, the last item)."""
        self.counter = ContextCounter()
        self.stale = False
        cached: tuple[Where | None, list[dict[str, Any]]] = (None, [])
        for item in context.items[:-1]:
            if item.where is not cached[0]:
                reread = self.reread.entry(item.where)
                cached = (item.where, _messages(reread) if reread is not None else [])
            messages = cached[1]
            if item.position < len(messages):
                msg = messages[item.position]
                self._add(msg, ledger, _key(item.entry_id, item.where), item.position, None)


def _messages(entry: TranscriptEntry) -> list[dict[str, Any]]:
    if entry.type == "compaction":
        summary = COMPACTION_PREFIX + str(entry.obj.get("summary", "")) + COMPACTION_SUFFIX
        return [{"role": "user", "content": [{"type": "text", "text": summary}]}]
    return entry_messages(entry.obj)


def _key(entry_id: str | None, where: Where) -> str:
    return entry_key(entry_id, where.line)


def ledger_of(session: Session) -> DirectiveLedger | None:
    return session.analyzer(DirectiveLedger)
