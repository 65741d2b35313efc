"""Which pi-family transcript entries are provider calls, and the `Turn` summary each one starts with.

One assistant message entry is one provider call (senpi and pi alike). What the entry itself says of the
call is read once, here: model, provider, api, stop reason, the token usage, and the continuity decision
senpi persists on the message as a diagnostic (`claude_sdk_oauth_session_continuity`, the last one wins; pi
writes none). Everything else about the call is the analyzers' to fill in.
"""

from __future__ import annotations

import sys
from typing import Any

from core.formats.base import as_int, interned
from core.model import CONTINUITY_EVENT, LoggedDecision, TranscriptEntry, Turn
from core.timeutil import any_ms, parse_iso_ms

#: The `api` of the lane senpi decides continuity for itself (reference senpi-newer §3): its calls carry senpi's
#: own continuity diagnostic; every other lane (and every pi call) is a stateless API judged by the cache.
RESIDENT_API = "claude-sdk-oauth"


class PiFamilyCalls:
    """`core.agents.base.TranscriptCalls` for senpi and pi transcripts."""

    __slots__ = ()

    def is_call(self, entry: TranscriptEntry) -> bool:
        return entry.type == "message" and entry.role == "assistant"

    def new_turn(self, session_id: str, index: int, entry: TranscriptEntry) -> Turn:
        msg = entry.message or {}
        return Turn(
            session=session_id,
            index=index,
            entry_id=entry.id,
            ts=entry.timestamp,
            ts_ms=any_ms(msg.get("timestamp")) or parse_iso_ms(entry.timestamp),
            where=entry.where,
            model=interned(msg.get("model")),
            provider=interned(msg.get("provider")),
            api=interned(msg.get("api")),
            stop_reason=interned(msg.get("stopReason")),
            logged=logged_decision(msg),
            tokens=tokens_of(msg),
        )


PI_FAMILY_CALLS = PiFamilyCalls()


def logged_decision(msg: dict[str, Any]) -> LoggedDecision | None:
    """The continuity diagnostic persisted on an assistant message (the last one wins)."""
    diagnostics = msg.get("diagnostics")
    if not isinstance(diagnostics, list):
        return None
    found: LoggedDecision | None = None
    for diag in diagnostics:
        if not isinstance(diag, dict) or diag.get("type") != CONTINUITY_EVENT:
            continue
        details = diag.get("details")
        if not isinstance(details, dict):
            continue
        kind, reason = details.get("kind"), details.get("reason")
        if not isinstance(kind, str) or not isinstance(reason, str):
            continue
        found = LoggedDecision(
            kind=sys.intern(kind),
            reason=sys.intern(reason),
            count=as_int(details.get("deltaMessages")),
            payload_bytes=as_int(details.get("payloadBytes")),
            collapsed_directives=as_int(details.get("collapsedDirectives")),
            ts_ms=any_ms(diag.get("timestamp")),
        )
    return found


#: pi-family `usage` keys -> the report's token names
USAGE_KEYS = (("input", "input"), ("cacheRead", "cache_read"), ("cacheWrite", "cache_write"), ("output", "output"))


def tokens_of(msg: dict[str, Any]) -> dict[str, int] | None:
    usage = msg.get("usage")
    if not isinstance(usage, dict):
        return None
    out: dict[str, int] = {}
    for src, dst in USAGE_KEYS:
        value = as_int(usage.get(src))
        if value is not None:
            out[dst] = value
    return out or None
