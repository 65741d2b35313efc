"""Agent event recordings: the JSON lines `senpi --mode json` / `pi --mode json` print, saved to a file.

Why read them: the transcript only holds each assistant message as committed at `message_end`. The
recording also holds what the provider streamed (`message_update`), i.e. senpi's *capture*, so the
capture-vs-commit difference of a rewritten turn can be shown field by field instead of inferred.

Lines are `{"type": …}` events: `agent_start`, `turn_start`, `message_start`, `message_update`,
`message_end`, `turn_end`, `agent_end`, `tool_execution_*`, `compaction_*`, `auto_retry_*`, `queue_update`,
… (other-agents.md §A.7, senpi `docs/json.md`). The first line may be the session header
`{"type":"session","version":3,"id":…,"cwd":…}`, which is also how a transcript starts; such a file is
taken as a recording only when its name says so (a parent directory `events/`, or `events` in the
file name), because nothing in the line itself tells the two apart. Every line becomes one `AgentEvent`;
interpretation (capture, commit, matching to a turn) is `core.agents.senpi.commit`'s job.
"""

from __future__ import annotations

import os
from typing import Any

from core.formats.base import Adapter, load_object
from core.model import AgentEvent, Problem, Record, Where

EVENT_TYPES = frozenset(
    {
        "agent_start", "agent_end", "turn_start", "turn_end", "message_start", "message_update", "message_end",
        "tool_execution_start", "tool_execution_update", "tool_execution_end", "auto_compaction_start",
        "auto_compaction_end", "compaction_start", "compaction_progress", "compaction_end", "auto_retry_start",
        "auto_retry_end", "queue_update", "session_info_changed", "thinking_level_changed", "system_prompt_change",
        "tool_hook_status", "summarization_retry_scheduled", "summarization_retry_attempt_start",
        "summarization_retry_finished",
    }
)  # fmt: skip


def named_as_recording(path: str) -> bool:
    """A file whose name or directory says it holds event recordings."""
    parent, name = os.path.split(path)
    return os.path.basename(parent) == "events" or "events" in name.lower()


class AgentEventsAdapter(Adapter):
    name = "agent-events"

    def sniff(self, path: str, obj: dict[str, Any]) -> bool:
        etype = obj.get("type")
        if etype in EVENT_TYPES and "ts" not in obj:
            return True
        return etype == "session" and isinstance(obj.get("id"), str) and named_as_recording(path)

    def parse(self, path: str, lineno: int, offset: int, data: bytes) -> list[Record]:
        obj = load_object(path, lineno, offset, data)
        if isinstance(obj, Problem):
            return [obj]
        etype = obj.get("type")
        if not isinstance(etype, str):
            return [Problem(path, lineno, offset, "event line without string type")]
        return [AgentEvent(Where(path, lineno, offset, len(data)), etype, obj)]
