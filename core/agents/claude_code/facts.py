"""What Claude Code's analysis records beyond the common `Turn` and session fields, typed (`Turn.facts`,
`SessionState.facts`). Plain data, cheap to import (the agent declaration reads it for the report)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class ClaudeCall:
    """What a Claude Code call's turn records beyond the common fields (`Turn.facts`)."""

    request_id: str | None
    sidechain: bool
    lines: int = 1  # transcript lines (content blocks) of the call


@dataclass(slots=True)
class ClaudeSession:
    """What a Claude Code session records beyond the common fields (`SessionState.facts`)."""

    api_errors: int = 0  # synthetic or API-error assistant lines (not calls)
    replayed_copies: int = 0  # a sub-agent's copies of parent messages, or a call seen again in another file
