"""Hand-built senpi transcripts, event recordings and sidecars for the continuity tests.

Each builder writes exactly what senpi writes (senpi-formats §6, §8): entries chained by `parentId`, the
continuity diagnostic on every assistant, markers / invalidations just before the assistant entry. Hashes
for sidecars come from `core.agents.senpi.fingerprint` and `core.kernel.hashing`, whose vectors `test_canonical.py` pins to Node's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.agents import agent_of, sniff
from core.agents.senpi.fingerprint import TIMING_STRIPPED, assistant_content_hash, sent_message_hash
from core.engine import Engine
from core.formats.base import load_object
from core.kernel.hashing import prefix_digest
from core.model import Problem
from core.state import SessionState, State
from core.timeutil import iso_ms, parse_iso_ms

MODEL = "claude-opus-4-8"


def thinking(text: str = "let me think", *, timed: int | None = None, signature: str = "sig") -> dict[str, Any]:
    block: dict[str, Any] = {"type": "thinking", "thinking": text, "thinkingSignature": signature}
    if timed is not None:
        block["startedAt"] = timed
        block["endedAt"] = timed + 400
    return block


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_call(call_id: str, name: str = "bash", **arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments or {"command": "ls"}}


@dataclass
class Transcript:
    """A senpi session transcript under construction; `write()` puts it where senpi would."""

    session_id: str = "0198f0a1-0000-7000-8000-000000000001"
    start: str = "2026-08-20T10:00:00.000Z"
    provider: str = "claude-sdk-oauth"
    model: str = MODEL
    cwd: str = "/home/dev/shop"
    lines: list[dict[str, Any]] = field(default_factory=list)
    clock: int = 0
    last_id: str | None = None
    counter: int = 0
    messages: list[dict[str, Any]] = field(default_factory=list)  # assistants, in order

    def __post_init__(self) -> None:
        self.clock = parse_iso_ms(self.start) or 0
        self.lines.append({"type": "session", "version": 3, "id": self.session_id, "timestamp": self.start,
                           "cwd": self.cwd})  # fmt: skip
        self._entry({"type": "model_change", "provider": self.provider, "modelId": self.model})
        self._entry({"type": "thinking_level_change", "thinkingLevel": "high"})

    # ------------------------------------------------------------------ plumbing
    def tick(self, ms: int = 1_000) -> int:
        self.clock += ms
        return self.clock

    def _id(self) -> str:
        self.counter += 1
        return f"{self.counter:08x}"

    def _entry(self, body: dict[str, Any], *, payload_first: bool = False, parent: str | None = None) -> str:
        entry_id = self._id()
        meta = {"id": entry_id, "parentId": parent or self.last_id, "timestamp": iso_ms(self.tick(5))}
        entry = {**body, **meta} if payload_first else {"type": body["type"], **meta, **body}
        self.lines.append(entry)
        self.last_id = entry_id
        return entry_id

    # ------------------------------------------------------------------ entries
    def user(self, value: str | list[dict[str, Any]], *, parent: str | None = None) -> str:
        content = [text(value)] if isinstance(value, str) else value
        return self._entry({"type": "message", "message": {"role": "user", "content": content,
                                                            "timestamp": self.tick()}}, parent=parent)  # fmt: skip

    def tool_result(self, call_id: str, output: str = "ok", name: str = "bash") -> str:
        msg = {"role": "toolResult", "toolCallId": call_id, "toolName": name, "content": [text(output)],
               "isError": False, "timestamp": self.tick()}  # fmt: skip
        return self._entry({"type": "message", "message": msg})

    def custom_message(self, custom_type: str, content: str, details: dict[str, Any] | None = None) -> str:
        body = {"type": "custom_message", "customType": custom_type, "content": content, "display": False,
                "details": details or {}}  # fmt: skip
        return self._entry(body, payload_first=True)

    def marker(self) -> str:
        body = {
            "type": "custom",
            "customType": "claude-sdk-oauth-binding",
            "data": {"schemaVersion": 2, "marker": True},
        }
        return self._entry(body, payload_first=True)

    def invalidation(self, reason: str) -> str:
        data = {"schemaVersion": 1, "invalidated": True, "reason": reason}
        return self._entry({"type": "custom", "customType": "claude-sdk-oauth-binding", "data": data},
                           payload_first=True)  # fmt: skip

    def compaction(self, summary: str, first_kept: str) -> str:
        body = {"type": "compaction", "summary": summary, "firstKeptEntryId": first_kept, "tokensBefore": 5000,
                "details": {}, "fromHook": False}  # fmt: skip
        return self._entry(body)

    def thinking_level(self, level: str) -> str:
        """The user switches the thinking level (senpi writes the entry only when the level changes)."""
        return self._entry({"type": "thinking_level_change", "thinkingLevel": level})

    def label(self, target: str, name: str) -> str:
        return self._entry({"type": "label", "targetId": target, "label": name})

    def assistant_message(
        self,
        content: list[dict[str, Any]],
        kind: str | None,
        reason: str | None,
        count: int | None,
        *,
        stop: str = "stop",
        start_ms: int | None = None,
    ) -> dict[str, Any]:
        start = start_ms if start_ms is not None else self.tick()
        msg: dict[str, Any] = {
            "role": "assistant", "content": content, "api": "claude-sdk-oauth", "provider": self.provider,
            "model": self.model,
            "usage": {"input": 6, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 26,
                      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": stop, "timestamp": start,
        }  # fmt: skip
        if kind is not None and reason is not None:
            details: dict[str, Any] = {"kind": kind, "reason": reason}
            if count is not None:
                details["deltaMessages"] = count
            if kind in ("flatten", "bootstrap") and count is not None:
                details["payloadBytes"] = 1000
                details["collapsedDirectives"] = 0
            msg["diagnostics"] = [{"type": "claude_sdk_oauth_session_continuity", "timestamp": self.tick(900),
                                   "details": details}]  # fmt: skip
        if stop == "error":
            msg["errorMessage"] = "Claude SDK OAuth query failed"
        return msg

    def assistant(
        self,
        content: list[dict[str, Any]],
        kind: str | None,
        reason: str | None,
        count: int | None,
        *,
        stop: str = "stop",
        start_ms: int | None = None,
    ) -> str:
        msg = self.assistant_message(content, kind, reason, count, stop=stop, start_ms=start_ms)
        self.messages.append(msg)
        return self._entry({"type": "message", "message": msg})

    # ------------------------------------------------------------------ files
    def path_in(self, agent: Path) -> Path:
        stamp = self.start.replace(":", "-").replace(".", "-")
        return agent / "sessions" / "--home-dev-shop--" / f"{stamp}_{self.session_id}.jsonl"

    def write(self, agent: Path) -> Path:
        path = self.path_in(agent)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in self.lines))
        return path

    def sidecar(self, agent: Path, *, marker_id: str, sent: list[dict[str, Any]], assistant: dict[str, Any],
                rule: str = TIMING_STRIPPED, **overrides: Any) -> Path:  # fmt: skip
        hashes = [sent_message_hash(m) for m in sent]
        data = {
            "schemaVersion": 1, "sessionPath": str(self.path_in(agent)), "sessionId": self.session_id,
            "markerEntryId": marker_id, "sdkSessionId": "sdk-1", "sentCount": len(hashes),
            "sentPrefixHash": prefix_digest(hashes), "assistantContentHash": assistant_content_hash(assistant, rule),
            "lastAssistantUuid": "uuid-1", "accountName": "default", "modelId": self.model,
            "systemPromptHash": "0" * 64, "toolsetHash": "1" * 64,
        }  # fmt: skip
        data.update(overrides)
        path = Path(str(self.path_in(agent)) + ".claude-sdk-oauth-binding.json")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, separators=(",", ":")) + "\n")
        return path


def user_msg(value: str) -> dict[str, Any]:
    return {"role": "user", "content": [text(value)]}


def result_msg(call_id: str, output: str = "ok", name: str = "bash") -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": call_id, "toolName": name, "content": [text(output)]}


def run(paths: list[Path]) -> State:
    """Read the files like the app does (sources -> adapters -> state)."""
    engine = Engine(list(paths))
    engine.drain()
    engine.close()
    return engine.state


def feed(state: State, path: Path) -> None:
    """Apply one file's records to `state` directly: lets a test choose the order files are read in."""
    adapter = None
    offset = 0
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            data = raw.rstrip(b"\n")
            if adapter is None:
                obj = load_object(str(path), lineno, offset, data)
                if not isinstance(obj, Problem):
                    adapter = sniff(str(path), obj)
            if adapter is not None and data.strip():
                for record in adapter.parse(str(path), lineno, offset, data):
                    state.apply(record, agent_of(adapter))
            offset += len(raw)


def only_session(state: State) -> SessionState:
    sessions = [s for s in state.sessions.values() if s.turns]
    assert len(sessions) == 1, [s.key for s in state.sessions.values()]
    return sessions[0]


def decisions(session: SessionState) -> list[tuple[str, str, int | None] | None]:
    return [None if t.recomputed is None else (t.recomputed.kind, t.recomputed.reason, t.recomputed.count)
            for t in session.turns]  # fmt: skip


@dataclass
class Recording:
    """An event recording (`--mode json` lines) of assistant messages, with message-bearing updates."""

    session_id: str | None = None
    lines: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.session_id is not None:
            self.lines.append({"type": "session", "version": 3, "id": self.session_id,
                               "timestamp": "2026-08-20T10:00:00.000Z", "cwd": "/home/dev/shop"})  # fmt: skip

    def assistant(self, commit: dict[str, Any], capture: dict[str, Any] | None, *, delta_only: bool = False) -> None:
        base = {k: v for k, v in commit.items() if k not in ("content", "diagnostics")}
        self.lines.append({"type": "message_start", "message": {**base, "content": []}})
        if capture is not None:
            for i, block in enumerate(capture["content"]):
                partial = {**base, "content": capture["content"][: i + 1]}
                btype = block.get("type", "text")
                event: dict[str, Any] = {
                    "type": f"{'toolcall' if btype == 'toolCall' else btype}_end",
                    "contentIndex": i,
                }
                if btype == "toolCall":
                    event["toolCall"] = block
                else:
                    event["content"] = block.get("text", block.get("thinking", ""))
                if delta_only:
                    start: dict[str, Any] = {"type": f"{'toolcall' if btype == 'toolCall' else btype}_start",
                                             "contentIndex": i}  # fmt: skip
                    if btype == "toolCall":
                        start.update(id=block.get("id"), toolName=block.get("name"))
                    self.lines.append({"type": "message_update", "usage": {}, "assistantMessageEvent": start})
                    self.lines.append({"type": "message_update", "usage": {}, "assistantMessageEvent": event})
                else:
                    self.lines.append({"type": "message_update", "message": partial,
                                       "assistantMessageEvent": {**event, "partial": partial}})  # fmt: skip
        self.lines.append({"type": "message_end", "message": commit})

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in self.lines))
        return path
