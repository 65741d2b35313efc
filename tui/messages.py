"""Messages the worker threads post to the UI (Textual's `post_message` is thread-safe).

`SnapshotReady` is coalesced: when the UI falls behind, a queued snapshot is replaced by the newer one
instead of piling up, so a burst of ingestion costs one repaint, never a backlog of stale ones.
"""

from __future__ import annotations

from pathlib import Path

from textual.message import Message

from tui.view import Snapshot


class SnapshotReady(Message):
    """The newest state of everything on screen."""

    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__()
        self.snapshot = snapshot

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SnapshotReady)


class ExportDone(Message):
    """The `e` export finished: the files written, or why it failed."""

    def __init__(self, paths: list[Path], error: str | None = None, summary: str = "") -> None:
        super().__init__()
        self.paths = paths
        self.error = error
        self.summary = summary
        """What the export included (turns, sessions, the filter), for the toast."""
