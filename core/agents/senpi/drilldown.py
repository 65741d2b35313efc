"""Both sides of a turn's commit check, re-read from disk for the drill-down (what the detail screen shows).

State keeps pointers only (`turn.commit.capture_where` / `commit_where`), so opening a turn costs one or two
line reads through the re-read port: the commit from the recording's `message_end` when there is one, else the
transcript entry; the capture from the recording's last `message_update`, rebuilt from the streaming deltas
for a delta-only recording (senpi's newer `--mode json`), else inferred (the commit minus thinking timing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from core.agents.senpi.commit import CommitAnalyzer, RecordedCommit, _fill_unsent_fields, _reconstruct, strip_timing
from core.kernel.drilldown import CaptureCommit
from core.model import Turn, Where

if TYPE_CHECKING:
    from core.kernel.pipeline import Session
    from core.kernel.ports import Reread


def _reread_obj(where: Where, reread: Reread) -> dict[str, Any] | None:
    raw = reread.line(where)
    if raw is None:
        return None
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def _message_at(where: Where | None, reread: Reread) -> dict[str, Any] | None:
    if where is None:
        return None
    obj = _reread_obj(where, reread)
    if obj is None:
        return None
    message = obj.get("message")
    if isinstance(message, dict):
        return message
    event = obj.get("assistantMessageEvent")
    partial = event.get("partial") if isinstance(event, dict) else None
    return partial if isinstance(partial, dict) else None


def _reconstruct_range(start: Where, end: Where, reread: Reread) -> dict[str, Any] | None:
    """Re-read a delta-only recording from `message_start` to the last update and rebuild the capture."""
    data = reread.span(start, end)
    if data is None:
        return None
    base: dict[str, Any] | None = None
    blocks: list[dict[str, Any]] = []
    for line in data.splitlines():
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(obj, dict):
            continue
        if obj.get("type") == "message_start" and isinstance(obj.get("message"), dict):
            base = obj["message"]
        elif obj.get("type") == "message_update" and isinstance(obj.get("assistantMessageEvent"), dict):
            _reconstruct(blocks, obj["assistantMessageEvent"])
    return {**(base or {"role": "assistant"}), "content": blocks}


def load_capture_commit(turn: Turn, session: Session | None, reread: Reread) -> CaptureCommit:
    """Re-read the capture and the commit of a turn (full messages) from the pointers in `turn.commit`.

    The TUI calls this when a turn is opened; it costs one or two line reads. The commit comes from the
    recording's `message_end` when there is one, else from the transcript entry; the capture from the
    recording's last `message_update`, else it is inferred (commit minus thinking timing).
    """
    info = turn.commit
    commit = _message_at(info.commit_where, reread) if info is not None else None
    if commit is None:
        commit = _message_at(turn.where, reread)
    if commit is None:
        return CaptureCommit(None, None, "the transcript line changed since it was read")
    if info is None or info.capture_where is None:
        if info is not None and info.source == "events":
            return CaptureCommit(None, commit, "recorded without any message_update: a result-only turn")
        return CaptureCommit(strip_timing(commit), commit, "inferred: the commit minus thinking startedAt/endedAt")
    if info.diff_source == "events-reconstructed":
        rec = _find_recording(session, turn)
        start = rec.start_where if rec is not None else None
        capture = _reconstruct_range(start, info.capture_where, reread) if start is not None else None
        if capture is not None:
            capture = _fill_unsent_fields(capture, commit)
        return CaptureCommit(capture, commit, "capture rebuilt from streaming deltas; signatures from the commit")
    capture = _message_at(info.capture_where, reread)
    return CaptureCommit(capture, commit, "recorded: last message_update and message_end")


def _find_recording(session: Session | None, turn: Turn) -> RecordedCommit | None:
    analyzer = session.analyzer(CommitAnalyzer) if session is not None else None
    if analyzer is None:
        return None
    if turn.index < len(analyzer.facts):
        return analyzer.facts[turn.index].recording
    if session is not None and session.parked is not None:
        return analyzer.recordings.get(turn.index)
    return None
