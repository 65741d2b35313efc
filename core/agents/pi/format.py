"""pi coding agent session files (`~/.pi/agent/sessions/--<cwd>--/<ts>_<uuid>.jsonl`), v1 to v3.

senpi is a pi fork and writes the same v3 layout, so both produce the same records (`SessionHeader`,
`TranscriptEntry`) and share every analysis; only the header tells whose file it is, and only where the
content allows (reference other-agents §A.3, §D.1):

- v1 headers have no `version` (and carry `provider`/`modelId`/`thinkingLevel`), v2 headers say 2: senpi
  only ever wrote v3;
- a v3 header's session id is `randomUUID()` (a version-4 UUID) in pi, a UUIDv7 (or a caller-chosen id) in
  senpi.

A v3 pi file whose id does not settle it falls to the senpi transcript adapter; that is harmless, because
the per-call verdict for turns without a senpi continuity diagnostic comes from the cache evidence either
way (`core.agents.shared.pi_family.turns`).

Normalizations, so that analyses see one shape:

- v1 entries have no `id`/`parentId`: state chains them in file order (the v1 layout is linear);
- v1 `compaction` entries name the first kept entry by index (`firstKeptEntryIndex`, counting the header
  as entry 0); it becomes `firstKeptEntryId` `#<line>`, the id state gives id-less entries;
- v2 `hookMessage` messages are the v3 `custom` role (pi's own v2 -> v3 migration).
"""

from __future__ import annotations

import re
from typing import Any

from core.agents.shared.pi_family.transcript import TranscriptAdapter
from core.formats.base import opt_int
from core.model import Record, TranscriptEntry

FORMAT = "pi-transcript"
UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$", re.IGNORECASE)
_LEGACY_HEADER_KEYS = ("provider", "modelId", "thinkingLevel")


def is_pi_session(version: Any, session_id: str) -> bool:
    """True when a header's version and session id can only be pi's (see the module docstring)."""
    if version is None or (isinstance(version, int) and not isinstance(version, bool) and version < 3):
        return True
    return bool(UUID4.match(session_id))


def is_pi_header(obj: dict[str, Any]) -> bool:
    """True when a `session` header can only be pi's: `is_pi_session`, or the legacy v1 header keys."""
    if obj.get("type") != "session" or not isinstance(obj.get("id"), str):
        return False
    return is_pi_session(obj.get("version"), obj["id"]) or any(key in obj for key in _LEGACY_HEADER_KEYS)


class PiSessionAdapter(TranscriptAdapter):
    """pi session files: the pi-family transcript records, plus the v1/v2 normalizations above.

    Like every transcript it resets its session when the file is replaced (`resets_on_replace`), which pi
    does when it migrates a v1/v2 file to v3 on load (a whole-file rewrite).
    """

    name = FORMAT

    def sniff(self, path: str, obj: dict[str, Any]) -> bool:
        return is_pi_header(obj) and "cwd" in obj

    def parse(self, path: str, lineno: int, offset: int, data: bytes) -> list[Record]:
        records = super().parse(path, lineno, offset, data)
        for record in records:
            if isinstance(record, TranscriptEntry):
                _normalize(record)
        return records


def _normalize(entry: TranscriptEntry) -> None:
    obj = entry.obj
    if entry.type == "compaction" and not isinstance(obj.get("firstKeptEntryId"), str):
        index = opt_int(obj, "firstKeptEntryIndex")
        if index is not None and index > 0:
            # entries[] includes the header at index 0, which is line 1: entry i sits on line i + 1
            obj["firstKeptEntryId"] = f"#{index + 1}"
    msg = entry.message
    if msg is not None and msg.get("role") == "hookMessage":
        msg["role"] = "custom"
