"""What mux's analysis records beyond the common `Turn` and session fields, typed (`Turn.facts`,
`SessionState.facts`). Plain data, cheap to import (the agent declaration reads it for the report)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class MuxTurn:
    """One assistant row's turn: where it sits in the history, what its context held, its audit."""

    history_sequence: int
    messages: int  # messages the turn's context sent
    new_messages: int  # of which new since the previous turn
    request_history_sequence: int | None = None
    after_edit: bool = False  # the first turn after a history edit removed rows
    #: the thinking-replay audit of the row (the report's `turns[].audit`)
    audit: dict[str, Any] | None = None


@dataclass(slots=True)
class MuxSession:
    """Per-workspace results: rows per thinking-replay audit flag (the report's `sessions[].audit`)."""

    audit: dict[str, int] | None = None
