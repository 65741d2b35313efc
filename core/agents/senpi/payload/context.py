"""Context messages as the payload analysis needs them, and rebuilding a call's context from disk.

`ProviderContext` publishes converted messages; the serializers additionally need to know which of them
was a hidden `environment-context` message and which a real user prompt (newer builds fold the first into
the second), and a stable key per transcript message for the directive ledger. State keeps pointers, not
bodies, so a branch switch, a compaction or a drill-down re-reads the entries it needs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.agents.senpi.payload.serialize import (
    ENVIRONMENT_CUSTOM_TYPE,
    TOOL_WATCH_CUSTOM_TYPE,
    WATCH_MAX_TRACKED,
    WatchedExecution,
    execution_from_entry,
    execution_from_result,
)
from core.agents.shared.pi_family.context import COMPACTION_PREFIX, COMPACTION_SUFFIX, entry_messages
from core.model import entry_key

if TYPE_CHECKING:
    from core.agents.shared.pi_family.context import ContextItem
    from core.kernel.pipeline import Session
    from core.kernel.ports import Reread
    from core.model import EntryNode, Turn

ENV, USER, OTHER = "env", "user", "other"


@dataclass(frozen=True, slots=True)
class CtxMsg:
    """One converted context message: the message, what it was on disk, and where it came from."""

    msg: dict[str, Any]
    kind: str  # "env" (environment-context custom message) | "user" (a user `message` entry) | "other"
    key: tuple[str, int] | None  # (entry id, position among the messages the entry contributed)
    ts: str | None = None  # the entry's timestamp


def message_kind(obj: Mapping[str, Any], msg: Mapping[str, Any]) -> str:
    """What a converted message was on disk (needed for the newer builds' environment fold)."""
    etype = obj.get("type")
    if etype == "custom_message" and obj.get("customType") == ENVIRONMENT_CUSTOM_TYPE:
        return ENV
    if etype == "message" and msg.get("role") == "user":
        inner = obj.get("message")
        if isinstance(inner, dict) and inner.get("role") == "user":
            return USER
    return OTHER


def context_messages_of(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages one entry contributes, a compaction included (its summary), as `ProviderContext` does."""
    if obj.get("type") == "compaction":
        text = COMPACTION_PREFIX + str(obj.get("summary", "")) + COMPACTION_SUFFIX
        return [{"role": "user", "content": [{"type": "text", "text": text}], "timestamp": obj.get("timestamp")}]
    return entry_messages(obj)


def reread_items(items: Sequence[ContextItem], reread: Reread) -> list[CtxMsg]:
    """Re-read the messages of the current context (`ProviderContext.items`) from disk."""
    out: list[CtxMsg] = []
    last_where = None
    obj: dict[str, Any] = {}
    cached: list[dict[str, Any]] = []
    for item in items:
        if item.where is not last_where:
            entry = reread.entry(item.where)
            obj = entry.obj if entry is not None else {}
            cached = context_messages_of(obj) if entry is not None else []
            last_where = item.where
        if item.position < len(cached):
            msg = cached[item.position]
            key = (item.entry_id, item.position) if item.entry_id is not None else None
            out.append(CtxMsg(msg, message_kind(obj, msg), key, obj.get("timestamp")))
    return out


def path_to(session: Session, turn: Turn) -> list[EntryNode] | None:
    """The branch entries before a call's assistant message, root first (from state's entry tree)."""
    node = session.nodes.get(entry_key(turn.entry_id, turn.where.line))
    if node is None:
        return None
    path: list[EntryNode] = []
    seen: set[str] = set()
    cursor = node.parent_id
    while cursor is not None and cursor not in seen:
        seen.add(cursor)
        parent = session.nodes.get(cursor)
        if parent is None:
            break
        path.append(parent)
        cursor = parent.parent_id
    path.reverse()
    return path


def replay_path(path: Sequence[EntryNode], reread: Reread) -> list[CtxMsg]:
    """`ProviderContext`'s rules over a path of entries: a compaction keeps its summary and the messages from
    `firstKeptEntryId` on. Reading starts at the last compaction's kept point, not at the root."""
    start = 0
    last_compaction = next((i for i in range(len(path) - 1, -1, -1) if path[i].type == "compaction"), None)
    if last_compaction is not None:
        entry = reread.entry(path[last_compaction].where)
        first_kept = entry.obj.get("firstKeptEntryId") if entry is not None else None
        start = next((i for i in range(last_compaction) if path[i].id == first_kept), last_compaction)
    items: list[CtxMsg] = []
    for node in path[start:]:
        entry = reread.entry(node.where)
        if entry is None:
            continue
        if entry.type == "compaction":
            first_kept = entry.obj.get("firstKeptEntryId")
            kept_from = next((i for i, m in enumerate(items) if m.key and m.key[0] == first_kept), len(items))
            summary = CtxMsg(context_messages_of(entry.obj)[0], OTHER, (node.id, 0), entry.timestamp)
            items = [summary, *items[kept_from:]]
            continue
        for position, msg in enumerate(entry_messages(entry.obj)):
            items.append(CtxMsg(msg, message_kind(entry.obj, msg), (node.id, position), entry.timestamp))
    return items


def completed_on_path(path: Sequence[EntryNode], reread: Reread) -> dict[str, WatchedExecution]:
    """The tool watch's record at a rebuilt call: tool results and tool-watch entries on the branch, in
    order, the newest 256 kept (only read when the call had unanswered tool calls)."""
    tracked: dict[str, WatchedExecution] = {}
    for node in path:
        if node.type not in ("custom", "message"):
            continue
        entry = reread.entry(node.where)
        if entry is None:
            continue
        if entry.type == "custom" and entry.obj.get("customType") == TOOL_WATCH_CUSTOM_TYPE:
            execution = execution_from_entry(entry.obj.get("data"))
        elif entry.type == "message" and entry.role == "toolResult" and entry.message is not None:
            execution = execution_from_result(entry.message)
        else:
            continue
        if execution is None:
            continue
        tracked.pop(execution.tool_call_id, None)
        tracked[execution.tool_call_id] = execution
        while len(tracked) > WATCH_MAX_TRACKED:
            del tracked[next(iter(tracked))]
    return tracked
