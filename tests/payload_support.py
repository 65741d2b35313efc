"""Writing small senpi transcripts for the payload, serializer and directive tests.

A `Transcript` appends entries the way senpi chains them (8-hex ids, `parentId`, one shared clock) and writes
the file; `ingest` runs it through the real engine (sources -> adapter -> state -> analyses).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.engine import Engine
from core.state import SessionState

CONTINUITY = "claude_sdk_oauth_session_continuity"


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


@dataclass
class Transcript:
    """An in-memory transcript; `write()` puts it on disk as senpi would."""

    directory: Path
    session_id: str = "0198f0a1-0000-7000-8000-000000000001"
    provider: str = "claude-sdk-oauth"
    date: str = "2026-08-22"
    lines: list[dict[str, Any]] = field(default_factory=list)
    leaf: str | None = None
    clock: int = 0

    def __post_init__(self) -> None:
        self.lines.append(
            {"type": "session", "version": 3, "id": self.session_id, "timestamp": self._iso(), "cwd": "/home/dev/p"}
        )

    @property
    def path(self) -> Path:
        return self.directory / f"{self.date}T09-00-00-000Z_{self.session_id}.jsonl"

    def _iso(self) -> str:
        self.clock += 1
        return f"{self.date}T09:{self.clock // 60 % 60:02d}:{self.clock % 60:02d}.000Z"

    def add(self, entry: dict[str, Any], parent: str | None = ...) -> str:  # type: ignore[assignment]
        """Append an entry (its `parentId` is the current leaf unless given) and make it the leaf."""
        entry_id = f"{len(self.lines):08x}"
        parent_id = self.leaf if parent is ... else parent
        etype = entry.pop("type")
        if etype in ("custom", "custom_message"):
            obj = {"type": etype, **entry, "id": entry_id, "parentId": parent_id, "timestamp": self._iso()}
        else:
            obj = {"type": etype, "id": entry_id, "parentId": parent_id, "timestamp": self._iso(), **entry}
        self.lines.append(obj)
        self.leaf = entry_id
        return entry_id

    def user(self, *blocks: Any, content: Any = None) -> str:
        body = content if content is not None else [text(b) if isinstance(b, str) else b for b in blocks]
        return self.add({"type": "message", "message": {"role": "user", "content": body, "timestamp": self.clock}})

    def custom_message(self, content: Any, custom_type: str = "omo-ultrawork:directive") -> str:
        return self.add(
            {"type": "custom_message", "customType": custom_type, "content": content, "display": False, "details": {}}
        )

    def tool_result(self, call_id: str, name: str, *blocks: Any, content: Any = None, is_error: bool = False) -> str:
        body = content if content is not None else [text(b) if isinstance(b, str) else b for b in blocks]
        msg = {"role": "toolResult", "toolCallId": call_id, "toolName": name, "content": body, "isError": is_error,
               "timestamp": self.clock}  # fmt: skip
        return self.add({"type": "message", "message": msg})

    def assistant(
        self,
        *content: dict[str, Any],
        kind: str | None = None,
        count: int | None = None,
        payload_bytes: int | None = None,
        collapsed: int | None = None,
        stop: str = "stop",
        usage: dict[str, int] | None = None,
        reason: str | None = None,
    ) -> str:
        msg: dict[str, Any] = {
            "role": "assistant", "content": list(content), "api": "claude-sdk-oauth", "provider": self.provider,
            "model": "claude-opus-4-8",
            "usage": usage or {"input": 6, "output": 180, "cacheRead": 0, "cacheWrite": 6274, "totalTokens": 6460},
            "stopReason": stop, "timestamp": self.clock * 1000,
        }  # fmt: skip
        if kind is not None:
            details: dict[str, Any] = {"kind": kind, "reason": reason or _reason(kind)}
            if count is not None:
                details["deltaMessages"] = count
            if payload_bytes is not None:
                details["payloadBytes"] = payload_bytes
                details["collapsedDirectives"] = collapsed or 0
            msg["diagnostics"] = [{"type": CONTINUITY, "timestamp": self.clock * 1000, "details": details}]
        return self.add({"type": "message", "message": msg})

    def compaction(self, summary: str, first_kept: str) -> str:
        return self.add(
            {"type": "compaction", "summary": summary, "firstKeptEntryId": first_kept, "tokensBefore": 1000}
        )

    def write(self) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path.write_text("".join(json.dumps(obj, ensure_ascii=False) + "\n" for obj in self.lines), "utf-8")
        return self.path


def _reason(kind: str) -> str:
    return {"delta": "prefix_matched", "bootstrap": "registry_miss", "disabled": "resume_mode_off"}.get(
        kind, "assistant_rewritten"
    )


def ingest(*paths: Path) -> Engine:
    engine = Engine(list(paths))
    engine.drain()
    return engine


def only_session(engine: Engine) -> SessionState:
    sessions = list(engine.state.sessions.values())
    assert len(sessions) == 1, [s.key for s in sessions]
    return sessions[0]
