"""mux / Xum `partial.json`: the assistant message while it streams, one pretty-printed JSON document.

mux rewrites it atomically (temp file + rename) as parts arrive and deletes it just before the stream's row
is committed into chat.jsonl (reference other-agents §B.1-B.2), so the last version read is the capture of
what streamed, and the committed row with the same `id` is its commit: the capture-vs-commit pair
(`core.agents.mux.audit`). The engine joins a pretty-printed document's lines back into one before it
reaches this adapter (`core.formats.document`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.agents.mux.formats.chat import is_mux_message
from core.formats.base import Adapter, load_object
from core.model import Problem, Record, Where


@dataclass(slots=True)
class MuxPartial:
    """One version of partial.json (the in-flight assistant message, `metadata.partial: true`)."""

    where: Where
    row_id: str
    obj: dict[str, Any]


def is_partial(obj: dict[str, Any]) -> bool:
    """An in-flight message: the row shape with `metadata.partial: true` and no `workspaceId` (rows have one)."""
    meta = obj.get("metadata")
    return is_mux_message(obj) and isinstance(meta, dict) and meta.get("partial") is True and "workspaceId" not in obj


class MuxPartialAdapter(Adapter):
    """partial.json documents. Being replaced on every write and deleted at stream end is how it works."""

    name = "mux-partial"
    routine_notices = frozenset({"replaced", "deleted", "recreated"})

    def sniff(self, path: str, obj: dict[str, Any]) -> bool:
        return is_partial(obj)

    def parse(self, path: str, lineno: int, offset: int, data: bytes) -> list[Record]:
        obj = load_object(path, lineno, offset, data)
        if isinstance(obj, Problem):
            return [obj]
        if not is_partial(obj):
            return [Problem(path, lineno, offset, "partial.json is not an in-flight mux message")]
        return [MuxPartial(Where(path, lineno, offset, len(data)), obj["id"], obj)]  # type: ignore[list-item]
