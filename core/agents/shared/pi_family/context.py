"""The provider context of each call, rebuilt from transcript entries the way pi/senpi's `convertToLlm` does.

Both the verdict replay (sent-message hashes) and the payload reconstruction (serializers) need the messages
the agent put in front of the model at each call. This analyzer runs first for every entry and publishes
only what the entry *added* (`added`) or, after a compaction, the whole new context (`reset`); later
analyzers consume those in the same `on_entry` call. It keeps no message bodies between entries: a
compaction re-reads the kept entries from disk by offset.

Conversion (senpi-formats §3.4, senpi-newer §5.2 "Conversion texts, identical in OLD and NEW"):
message entries with role user/assistant/toolResult pass through; `bashExecution` becomes a user text
(unless `excludeFromContext`); `custom_message` becomes a user message (string content wrapped in one text
block); `branch_summary` and `compaction` become user texts with their fixed envelopes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.kernel.pipeline import SessionAnalyzer
from core.model import TranscriptEntry, Turn, Where

if TYPE_CHECKING:
    from core.kernel.pipeline import Session
    from core.kernel.ports import Reread

COMPACTION_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUFFIX = "\n</summary>"
BRANCH_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
BRANCH_SUFFIX = "</summary>"

LLM_ROLES = frozenset({"user", "assistant", "toolResult"})


def bash_execution_text(msg: dict[str, Any]) -> str:
    """senpi/pi's user text for a `bashExecution` message."""
    text = f"Ran `{msg.get('command', '')}`\n"
    output = msg.get("output")
    text += f"```\n{output}\n```" if isinstance(output, str) and output else "(no output)"
    if msg.get("cancelled"):
        text += "\n\n(command cancelled)"
    else:
        code = msg.get("exitCode")
        if isinstance(code, int) and not isinstance(code, bool) and code != 0:
            text += f"\n\nCommand exited with code {code}"
    if msg.get("truncated") and isinstance(msg.get("fullOutputPath"), str):
        text += f"\n\n[Output truncated. Full output: {msg['fullOutputPath']}]"
    return text


def _user(text: str, timestamp: Any = None) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": timestamp}


def entry_messages(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The LLM messages one transcript entry contributes to the context (before compaction handling)."""
    etype = obj.get("type")
    if etype == "message":
        msg = obj.get("message")
        if not isinstance(msg, dict):
            return []
        role = msg.get("role")
        if role in LLM_ROLES:
            return [msg]
        if role == "bashExecution":
            return [] if msg.get("excludeFromContext") else [_user(bash_execution_text(msg), msg.get("timestamp"))]
        if role == "custom":
            return [_custom_as_user(msg.get("content"), msg.get("timestamp"))]
        if role == "branchSummary":
            return [_user(BRANCH_PREFIX + str(msg.get("summary", "")) + BRANCH_SUFFIX, msg.get("timestamp"))]
        if role == "compactionSummary":
            return [_user(COMPACTION_PREFIX + str(msg.get("summary", "")) + COMPACTION_SUFFIX, msg.get("timestamp"))]
        return []
    if etype == "custom_message":
        return [_custom_as_user(obj.get("content"), obj.get("timestamp"))]
    if etype == "branch_summary":
        return [_user(BRANCH_PREFIX + str(obj.get("summary", "")) + BRANCH_SUFFIX, obj.get("timestamp"))]
    return []


def _custom_as_user(content: Any, timestamp: Any) -> dict[str, Any]:
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    return {"role": "user", "content": content if content is not None else [], "timestamp": timestamp}


def is_transmitted(msg: dict[str, Any]) -> bool:
    """A message that counts in the sent-message hashes H (user/toolResult, not a user with `content: []`)."""
    role = msg.get("role")
    if role == "toolResult":
        return True
    if role != "user":
        return False
    content = msg.get("content")
    return not (isinstance(content, list) and len(content) == 0)


@dataclass(slots=True)
class ContextItem:
    """One message of the current context: where it came from, never its body."""

    entry_id: str | None
    where: Where
    role: str
    transmitted: bool
    position: int  # index among the messages the entry contributed


class ProviderContext(SessionAnalyzer):
    """Tracks the active branch's provider context; publishes per entry what changed.

    After `on_entry` returns, for the analyzers that run after it on the same entry:
    - `added`: the converted messages this entry appended (possibly empty);
    - `reset`: None, or the complete new context (list of messages) when a compaction replaced it;
      consumers then rebuild their running state from `reset` instead of appending `added`.
    - `items`: the current context (pointers only).
    """

    def __init__(self, session: Session, reread: Reread) -> None:
        self.reread = reread  # a compaction re-reads the entries it keeps
        self.items: list[ContextItem] = []
        self.branch_marks: list[int] = []  # len(items) after each branch entry, for cutting back
        self.added: list[dict[str, Any]] = []
        self.reset: list[dict[str, Any]] | None = None
        self.compacted = False

    @property
    def transmitted_count(self) -> int:
        return sum(1 for item in self.items if item.transmitted)

    def on_entry(self, session: Session, entry: TranscriptEntry, turn: Turn | None) -> None:
        self.reset = None
        if entry.type == "compaction":
            self.reset = self._compact(session, entry)
            self.added = []
            self.compacted = True
        else:
            self.added = entry_messages(entry.obj)
            for position, msg in enumerate(self.added):
                self.items.append(
                    ContextItem(entry.id, entry.where, str(msg.get("role")), is_transmitted(msg), position)
                )
        self.branch_marks.append(len(self.items))

    def park(self, session: Session) -> None:
        """The session is done (`State.park`): the context pointers only serve the next entry."""
        self.items = []
        self.branch_marks = []
        self.added = []
        self.reset = None

    def on_branch(self, session: Session, keep: int) -> None:
        del self.branch_marks[keep:]
        size = self.branch_marks[-1] if self.branch_marks else 0
        del self.items[size:]
        self.added = []
        self.reset = None

    def _compact(self, session: Session, entry: TranscriptEntry) -> list[dict[str, Any]]:
        """Context after a compaction: its summary, then the kept messages from `firstKeptEntryId` on."""
        summary = _user(
            COMPACTION_PREFIX + str(entry.obj.get("summary", "")) + COMPACTION_SUFFIX, entry.obj.get("timestamp")
        )
        first_kept = entry.obj.get("firstKeptEntryId")
        kept_items: list[ContextItem] = []
        if isinstance(first_kept, str):
            start = next((i for i, item in enumerate(self.items) if item.entry_id == first_kept), None)
            if start is not None:
                kept_items = self.items[start:]
        messages: list[dict[str, Any]] = [summary]
        new_items = [ContextItem(entry.id, entry.where, "user", True, 0)]
        last_where: Where | None = None
        cached: list[dict[str, Any]] = []
        for item in kept_items:
            if item.where is not last_where:
                reread = self.reread.entry(item.where)
                cached = entry_messages(reread.obj) if reread is not None else []
                last_where = item.where
            if item.position < len(cached):
                messages.append(cached[item.position])
                new_items.append(item)
        self.items = new_items
        return messages
