"""The restart sidecar `<transcript>.jsonl.claude-sdk-oauth-binding.json`: one JSON line, ≤16 KiB."""

from __future__ import annotations

from typing import Any

from core.formats.base import Adapter, load_object
from core.model import Problem, Record, Sidecar, Where

SIDECAR_SUFFIX = ".claude-sdk-oauth-binding.json"


class SidecarAdapter(Adapter):
    name = "senpi-sidecar"
    # senpi writes the sidecar atomically (temp file + rename) after every clean turn and deletes it on
    # invalidation: a replaced, deleted or recreated sidecar is its normal life, not a problem
    routine_notices = frozenset({"replaced", "deleted", "recreated"})

    def sniff(self, path: str, obj: dict[str, Any]) -> bool:
        return path.endswith(SIDECAR_SUFFIX) or ("sentPrefixHash" in obj and "markerEntryId" in obj)

    def parse(self, path: str, lineno: int, offset: int, data: bytes) -> list[Record]:
        obj = load_object(path, lineno, offset, data)
        if isinstance(obj, Problem):
            return [obj]
        return [Sidecar(Where(path, lineno, offset, len(data)), obj)]
