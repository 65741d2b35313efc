"""What a Codex call records beyond the common `Turn` fields (`Turn.facts`). Plain data, cheap to import (the
agent declaration reads it for the report)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class CodexCallFacts:
    """A Codex call's turn (`Turn.facts`; its conversation is `Turn.thread`: "main", or the sub-agent the rollout
    belongs to, "review", a thread_spawn nickname, …)."""

    turn_id: str | None  # Codex's own turn id (0.98+), shared by the calls of one user turn
