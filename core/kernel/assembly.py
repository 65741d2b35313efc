"""What a record handler that assembles sessions across files tells the persistent index about them.

A Claude Code session is read from its transcript, its sub-agent files and the resumed copies another session's
file holds; a mux workspace from `chat-archive.jsonl`, `chat.jsonl` and `partial.json`. What such a handler
makes of one file can depend on what it read of another, so the index (`core.index.assembled`) stores and
loads whole *groups*: sessions that touched a common file or met each other's records (`links`), with every
file they were read from. What a group is known by across files (`ids`: Claude Code's message ids and claimed
session ids) lets a later run tell whether a file it reads would have met a stored group in a cold read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Assembly"]


@dataclass
class Assembly:
    """One handler's sessions as the index groups them."""

    touched: dict[str, set[str]] = field(default_factory=dict)
    """Session key -> every file whose records reached that session."""
    links: set[tuple[str, str]] = field(default_factory=set)
    """Pairs of session keys whose records met (a resumed copy, a replayed message, a contested session id)."""
    ids: dict[str, set[str]] = field(default_factory=dict)
    """Session key -> what another file's records would find it by (message ids, claimed session ids)."""
