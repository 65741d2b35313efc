"""What the drill-down shows of a mux row: the streamed `partial.json` version against the committed row.

Both sides get their per-delta parts merged (`merge_parts`), as the audit compared them. mux replaces
partial.json on every write and deletes it when the stream ends, so the capture is usually gone by the time a
row is opened: the Commit block above still holds the diff taken when it was read, and the screen says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from core.agents.mux.formats.chat import merge_parts
from core.kernel.drilldown import CaptureCommit, recorded_line

if TYPE_CHECKING:
    from core.kernel.pipeline import Session
    from core.kernel.ports import Reread
    from core.model import Turn, Where

COMMIT_LABEL = "commit · chat.jsonl row, parts merged"


def _row(where: Where | None, reread: Reread) -> dict[str, Any] | None:
    raw = reread.line(where) if where is not None else None
    if raw is None:
        return None
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(obj, dict):
        return None
    parts = obj.get("parts")
    return {**obj, "parts": merge_parts(parts if isinstance(parts, list) else [])}


def load_capture_commit(turn: Turn, session: Session | None, reread: Reread) -> CaptureCommit:
    """The row's last streamed version (when partial.json still holds it) and its committed row."""
    info = turn.commit
    commit = _row(info.commit_where if info is not None else turn.where, reread) or _row(turn.where, reread)
    if commit is None:
        return recorded_line(turn, session, reread)
    if info is None or info.capture_where is None:
        note = "no partial.json version of this row was read while it streamed: nothing to compare"
        return CaptureCommit(None, commit, note, COMMIT_LABEL)
    capture = _row(info.capture_where, reread)
    if capture is None or capture.get("id") != commit.get("id"):
        note = "partial.json has moved on (mux deletes it when the stream ends): the Commit block holds the diff"
        return CaptureCommit(None, commit, note, COMMIT_LABEL)
    return CaptureCommit(capture, commit, "streamed partial.json vs committed row, parts merged", COMMIT_LABEL)
