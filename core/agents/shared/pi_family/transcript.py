"""pi-family session transcripts (senpi's and pi's `sessions/--<cwd>--/<ts>_<uuid>.jsonl`), version 3.

Line 1 is the `session` header; every later line is an entry with `type`, `id`, `parentId`, `timestamp`.
Every entry type (message, custom, custom_message, compaction, model_change, thinking_level_change,
branch_summary, label, session_info, context_edit, and any unknown type) becomes a `TranscriptEntry`;
interpretation (turns, markers, diagnostics) is analysis's job.
"""

from __future__ import annotations

from typing import Any

from core.formats.base import Adapter, load_object, opt_int, opt_str
from core.model import Problem, Record, SessionHeader, TranscriptEntry, Where


class TranscriptAdapter(Adapter):
    """A pi-family transcript: a `session` header, then entries. One file is one session's whole history: its
    session can be parked and rebuilt from it, and a replaced file starts the session over."""

    parkable = True
    resets_on_replace = True

    def sniff(self, path: str, obj: dict[str, Any]) -> bool:
        return obj.get("type") == "session" and isinstance(obj.get("id"), str) and "cwd" in obj

    def parse(self, path: str, lineno: int, offset: int, data: bytes) -> list[Record]:
        obj = load_object(path, lineno, offset, data)
        if isinstance(obj, Problem):
            return [obj]
        where = Where(path, lineno, offset, len(data))
        etype = obj.get("type")
        if not isinstance(etype, str):
            return [Problem(path, lineno, offset, "transcript entry without string type")]
        if etype == "session":
            sid = opt_str(obj, "id")
            if sid is None:
                return [Problem(path, lineno, offset, "session header without string id")]
            return [
                SessionHeader(
                    where,
                    sid,
                    opt_int(obj, "version"),
                    opt_str(obj, "timestamp"),
                    opt_str(obj, "cwd"),
                    opt_str(obj, "parentSession"),
                )
            ]
        if etype == "message" and not isinstance(obj.get("message"), dict):
            return [Problem(path, lineno, offset, "message entry without a message object")]
        return [
            TranscriptEntry(where, etype, opt_str(obj, "id"), opt_str(obj, "parentId"), opt_str(obj, "timestamp"), obj)
        ]
