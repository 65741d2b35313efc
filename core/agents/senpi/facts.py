"""What senpi's analyses record beyond the common `Turn` and session fields: typed, one record per call and one
per session (`Turn.facts`, `SessionState.facts`). Plain data, cheap to import (the agent declaration reads the
session record for the report without importing the analyses)."""

from __future__ import annotations

from typing import Any, Literal

from msgspec import Struct, field

from core.model import Serializer


class PayloadInfo(Struct):
    """How the payload analysis measured one call (`core.agents.senpi.payload.analyzer`)."""

    serializer: Serializer
    profile: str  # the serializer profile whose rules measured it
    basis: Literal["logged", "recomputed", "log"] | None  # where the decision came from
    prompt_tokens: int | None  # input + cache read + cache write billed (`Turn.tokens` stays as reported)
    #: flatten: what senpi's ultrawork dedupe collapsed, and what each of its two rules would save
    collapsed: int | None = None
    senpi_saved: dict[str, int] | None = None
    recovered_tool_results: bool = False  # the flatten carried the tool watch's recovered results note
    #: delta: the messages sent, and the logged count when the context holds fewer transmitted messages
    count: int | None = None
    count_logged: int | None = None
    #: this tool's keep-first dedupe on the same payload: bytes after, saved, markers written, blocks kept
    keep_first: dict[str, int] = field(default_factory=dict)
    delta_if_stable: int = 0  # what a delta of the messages new since the previous call would have sent


class SenpiCall(Struct):
    """senpi's record of one call (`Turn.facts`): what the payload analysis measured, and the
    `claude_sdk_oauth_session_close` lines senpi wrote inside the call (`core.agents.senpi.continuity.closes`)."""

    payload: PayloadInfo | None = None
    #: reasons of the close lines that pair with this call, in time order; None when the call has no logged
    #: decision to pair them by
    closes: list[str] | None = None


def senpi_call(turn: Any) -> SenpiCall:
    """The turn's `SenpiCall`, made on first use (the payload analysis and the close pairing both fill it)."""
    facts = turn.facts
    if not isinstance(facts, SenpiCall):
        facts = turn.facts = SenpiCall()
    return facts


def payload_info(turn: Any) -> PayloadInfo | None:
    facts = turn.facts
    return facts.payload if isinstance(facts, SenpiCall) else None


class SenpiSession(Struct):
    """Per-session results of senpi's replay and payload cross-check."""

    #: agreement of the replay with the logged decisions (profile, rate, disagreements)
    verdicts: dict[str, Any] | None = None
    #: would a restart reattach from the sidecar, or flatten, and why (the report's `sidecar_verdict`)
    sidecar_verdict: dict[str, Any] | None = None
    #: logged `payloadBytes` the reconstruction did not reproduce (a bug here until shown otherwise)
    payload_mismatches: list[dict[str, Any]] = field(default_factory=list)
    payload_checked: int = 0
    payload_profile: str | None = None
