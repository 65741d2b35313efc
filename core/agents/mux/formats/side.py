"""mux / Xum side files in a workspace's session dir, recognised so that they are not reported as unknown.

Beside chat.jsonl a session dir holds (reference other-agents §B.1, §B.7): `devtools.jsonl` (opt-in request
log: `{type: run|step|step-update, …}`), `durable-events.jsonl` and `timeline.jsonl` (event envelopes
`{kind, v, seq, id, ts, …}`), `headless-usage.jsonl` (`{timestamp, source, model, usage, …}`) and
`session-usage.json` (`{byModel, version, …}`, pretty-printed, rewritten atomically). None of them says
anything the continuity question needs that chat.jsonl does not (devtools' exact per-step usage is opt-in and
not read yet), so their lines are validated (bad ones are problems, as everywhere) and produce no records.
"""

from __future__ import annotations

from typing import Any

from core.formats.base import Adapter, load_object
from core.model import Problem, Record

DEVTOOLS_TYPES = frozenset({"run", "step", "step-update"})


def is_mux_side(obj: dict[str, Any]) -> bool:
    """One of the side-file shapes above, by content."""
    if obj.get("type") in DEVTOOLS_TYPES and any(key in obj for key in ("run", "step", "stepId")):
        return True
    if isinstance(obj.get("kind"), str) and isinstance(obj.get("seq"), int) and isinstance(obj.get("v"), int):
        return isinstance(obj.get("id"), str)
    if isinstance(obj.get("byModel"), dict) and isinstance(obj.get("version"), int):
        return True
    return isinstance(obj.get("usage"), dict) and isinstance(obj.get("model"), str) and "source" in obj


class MuxSideAdapter(Adapter):
    """Side files: checked line by line, no records."""

    name = "mux-sidefile"
    routine_notices = frozenset({"replaced"})  # session-usage.json is rewritten atomically

    def sniff(self, path: str, obj: dict[str, Any]) -> bool:
        return is_mux_side(obj)

    def parse(self, path: str, lineno: int, offset: int, data: bytes) -> list[Record]:
        obj = load_object(path, lineno, offset, data)
        return [obj] if isinstance(obj, Problem) else []
