"""Claude Code transcripts (`~/.claude/projects/<encoded-cwd>/<session-id>.jsonl`, and sub-agent files under
`<session-id>/subagents/agent-<id>.jsonl`).

One line = one record. Lines are threaded by `parentUuid -> uuid`; one API call spans several `assistant`
lines (one content block each) sharing `message.id` and `requestId` (reference other-agents §C). Grouping the
lines of a call, de-duplicating copies and judging the call is `core.agents.claude_code.calls`' job: the adapter
only validates the envelope and lifts the fields every consumer needs, so the handler never re-parses.

The format is internal to Claude Code and changes between releases, so every key but `type` is optional
and unknown line types are records like any other (bookkeeping lines are ignored downstream, not rejected).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.formats.base import Adapter, load_object, opt_str
from core.model import Problem, Record, Where
from core.timeutil import parse_iso_ms

FORMAT = "claude-code"

#: Line types that occur without the conversation envelope (`parentUuid`, `sessionId`, …), with a key that
#: only Claude Code writes next to them: enough to recognise a file that starts with bookkeeping.
_BOOKKEEPING_KEYS: dict[str, str] = {
    "summary": "leafUuid",
    "file-history-snapshot": "snapshot",
    "ai-title": "aiTitle",
    "custom-title": "customTitle",
    "queue-operation": "operation",
}


@dataclass(slots=True)
class ClaudeLine:
    """One Claude Code transcript line with its envelope lifted out; `obj` is the whole parsed line."""

    where: Where
    type: str
    uuid: str | None
    parent_uuid: str | None
    session_id: str | None
    timestamp: str | None
    ts_ms: int | None
    sidechain: bool
    agent_id: str | None
    obj: dict[str, Any]

    @property
    def message(self) -> dict[str, Any] | None:
        msg = self.obj.get("message")
        return msg if isinstance(msg, dict) else None


def is_claude_line(obj: dict[str, Any]) -> bool:
    """True for a line only Claude Code writes: the conversation envelope, or a known bookkeeping line."""
    kind = obj.get("type")
    if not isinstance(kind, str):
        return False
    if "parentUuid" in obj and isinstance(obj.get("sessionId"), str):
        return True
    key = _BOOKKEEPING_KEYS.get(kind)
    return key is not None and key in obj


def agent_progress(line: ClaudeLine) -> ClaudeLine | None:
    """The sub-agent message an `agent_progress` line carries, as a sidechain line of that agent.

    Before sub-agent files existed, Claude Code streamed a sub-agent's messages into the parent transcript as
    `{"type":"progress","data":{"type":"agent_progress","agentId":…,"message":{"type":"assistant",
    "message":{…, "usage":…},"requestId":…}}}`; ccusage counts the usage found there. When the same message is
    also in a sub-agent file, its `message.id` (and `uuid`) make it one call.
    """
    data = line.obj.get("data")
    inner = data.get("message") if isinstance(data, dict) and data.get("type") == "agent_progress" else None
    if not isinstance(inner, dict) or not isinstance(inner.get("message"), dict):
        return None
    kind = inner.get("type")
    if kind not in ("assistant", "user"):
        return None
    timestamp = opt_str(inner, "timestamp") or line.timestamp
    agent = opt_str(data, "agentId") or opt_str(line.obj, "parentToolUseID") or "progress"
    obj = {**inner, "isSidechain": True, "agentId": agent}
    return ClaudeLine(
        line.where,
        kind,
        opt_str(inner, "uuid"),
        opt_str(inner, "parentUuid"),
        opt_str(inner, "sessionId") or line.session_id,
        timestamp,
        parse_iso_ms(timestamp),
        True,
        agent,
        obj,
    )


class ClaudeCodeAdapter(Adapter):
    """Claude Code session and sub-agent transcripts: `ClaudeLine` records, bad lines as `Problem`s."""

    name = FORMAT

    def sniff(self, path: str, obj: dict[str, Any]) -> bool:
        return is_claude_line(obj)

    def parse(self, path: str, lineno: int, offset: int, data: bytes) -> list[Record]:
        obj = load_object(path, lineno, offset, data)
        if isinstance(obj, Problem):
            return [obj]
        get = obj.get  # (the envelope's string fields inline: five `opt_str` calls were ~10 % of this method)
        kind = get("type")
        if not isinstance(kind, str):
            return [Problem(path, lineno, offset, "Claude Code line without string type")]
        if kind == "assistant" and not isinstance(get("message"), dict):
            return [Problem(path, lineno, offset, "assistant line without a message object")]
        timestamp, uuid, parent, session, agent = (
            get("timestamp"),
            get("uuid"),
            get("parentUuid"),
            get("sessionId"),
            get("agentId"),
        )
        timestamp = timestamp if isinstance(timestamp, str) else None
        return [
            ClaudeLine(
                Where(path, lineno, offset, len(data)),
                kind,
                uuid if isinstance(uuid, str) else None,
                parent if isinstance(parent, str) else None,
                session if isinstance(session, str) else None,
                timestamp,
                parse_iso_ms(timestamp),
                get("isSidechain") is True,
                agent if isinstance(agent, str) else None,
                obj,
            )
        ]  # type: ignore[list-item]
