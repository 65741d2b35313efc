"""mux / Xum chat history rows (`<home>/sessions/<workspaceId>/chat.jsonl` and `chat-archive.jsonl`).

A row is an AI-SDK `UIMessage` plus `MuxMetadata`, with `workspaceId` added as its last key (reference
other-agents §B.2-B.4). chat.jsonl is not append-only: an empty assistant placeholder row is appended when a
stream starts, and the whole file is rewritten (write to a temp file, rename) when it ends, replacing the
placeholder under the same `metadata.historySequence`. The adapter turns each line into a `MuxRow`; treating
a re-read row as an update of the row with the same sequence is `core.agents.mux.audit`'s job, and the
raw-line digest lets it skip the rows a rewrite left unchanged without looking at them.

`merge_parts` is the normalization every consumer of a row's content needs: a persisted row holds one
`text`/`reasoning` part per streamed delta, so consecutive parts of one type are coalesced (Anthropic
signatures arrive on the last part of a run, OpenAI/xAI item ids on the first) before anything is
fingerprinted or compared, and per-part timestamps (stream timing, not content) are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import xxhash

from core.formats.base import Adapter, load_object, opt_int, opt_str
from core.model import Problem, Record, Where

FORMAT = "mux-chat"
ROLES = frozenset({"user", "assistant", "system"})
#: Per-part fields that describe streaming, not what the model produced (dropped by `merge_parts`).
STREAM_FIELDS = frozenset({"timestamp", "executionStartedAt"})


@dataclass(slots=True)
class MuxRow:
    """One chat history row. `sequence` is `metadata.historySequence` (the row's identity across rewrites)."""

    where: Where
    workspace: str | None
    row_id: str
    role: str
    sequence: int | None
    digest: int  # xxh3 of the raw line: a rewrite leaves most rows byte-identical
    obj: dict[str, Any]

    @property
    def metadata(self) -> dict[str, Any]:
        meta = self.obj.get("metadata")
        return meta if isinstance(meta, dict) else {}

    @property
    def parts(self) -> list[Any]:
        parts = self.obj.get("parts")
        return parts if isinstance(parts, list) else []


def is_mux_message(obj: dict[str, Any]) -> bool:
    """The `MuxMessage` shape: string id, known role, a `parts` list (metadata optional)."""
    return (
        isinstance(obj.get("id"), str)
        and obj.get("role") in ROLES
        and isinstance(obj.get("parts"), list)
        and isinstance(obj.get("metadata", {}), dict)
    )


class MuxChatAdapter(Adapter):
    """chat.jsonl / chat-archive.jsonl rows. A rewrite is the normal write path, not a problem to report."""

    name = FORMAT
    #: source notices that are this format's ordinary way of writing (the engine does not report them)
    routine_notices = frozenset({"replaced"})

    def sniff(self, path: str, obj: dict[str, Any]) -> bool:
        return is_mux_message(obj) and isinstance(obj.get("workspaceId"), str)

    def parse(self, path: str, lineno: int, offset: int, data: bytes) -> list[Record]:
        obj = load_object(path, lineno, offset, data)
        if isinstance(obj, Problem):
            return [obj]
        if not is_mux_message(obj):
            return [Problem(path, lineno, offset, "chat row without string id, known role and parts list")]
        meta = obj.get("metadata")
        sequence = opt_int(meta, "historySequence") if isinstance(meta, dict) else None
        row = MuxRow(
            Where(path, lineno, offset, len(data)),
            opt_str(obj, "workspaceId"),
            obj["id"],
            obj["role"],
            sequence,
            xxhash.xxh3_64_intdigest(data),
            obj,
        )
        return [row]  # type: ignore[list-item]


def merge_parts(parts: list[Any]) -> list[dict[str, Any]]:
    """Coalesce consecutive `text`/`reasoning` delta parts; keep other parts; drop stream timing fields.

    A merged reasoning part keeps the replay metadata of its run: the last non-empty `signature` and
    `providerOptions.anthropic`, the first `providerOptions.openai`/`xai` (where each provider puts them).
    """
    merged: list[dict[str, Any]] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        clean = {k: v for k, v in part.items() if k not in STREAM_FIELDS}
        last = merged[-1] if merged else None
        if kind in ("text", "reasoning") and last is not None and last.get("type") == kind:
            last["text"] = str(last.get("text", "")) + str(clean.get("text", ""))
            if kind == "reasoning":
                _merge_replay_metadata(last, clean)
            continue
        if kind in ("text", "reasoning"):
            clean["text"] = str(clean.get("text", ""))
            clean.pop("state", None)
            if isinstance(clean.get("providerOptions"), dict):
                clean["providerOptions"] = dict(clean["providerOptions"])  # merged into below: never the row's own
        merged.append(clean)
    return merged


def _merge_replay_metadata(into: dict[str, Any], part: dict[str, Any]) -> None:
    signature = part.get("signature")
    if isinstance(signature, str) and signature:
        into["signature"] = signature
    options = part.get("providerOptions")
    if not isinstance(options, dict):
        return
    target = into.setdefault("providerOptions", {})
    if not isinstance(target, dict):
        return
    for provider, values in options.items():
        if provider == "anthropic" or provider not in target:
            target[provider] = values
