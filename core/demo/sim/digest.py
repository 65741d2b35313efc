"""senpi's digests: ``sessionSyncDigest``, the sent-message hashes and ``assistantContentHash``.

Reference: ``senpi-formats.md`` §3.1-3.5 and ``senpi-newer.md`` §5.1. Three ``assistantContentHash`` rules exist
(verbatim, timing-stripped, projected); a :class:`~core.demo.sim.builds.Build` names the one it uses.
"""

from __future__ import annotations

import hashlib
from typing import Any

from core.demo.sim.jsjson import JsonObj, canonical_json


def digest(value: Any) -> str:
    """``sessionSyncDigest``: lowercase hex SHA-256 of the canonical JSON of ``value``."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def sent_message_hash(message: JsonObj) -> str:
    """Hash of one transmitted message (§3.4): user → {role, content}; toolResult adds the tool ids."""
    if message["role"] == "toolResult":
        return digest(
            {
                "role": "toolResult",
                "toolCallId": message["toolCallId"],
                "toolName": message["toolName"],
                "content": message["content"],
            }
        )
    return digest({"role": message["role"], "content": message["content"]})


def prefix_digest(hashes: list[str], n: int | None = None) -> str:
    """``sentHashPrefixDigest``: digest of the JSON array of the first ``n`` hashes."""
    return digest(hashes[: len(hashes) if n is None else n])


HASH_VERBATIM = "verbatim"  # builds before v2026.8.11-2
HASH_TIMING_STRIPPED = "timing-stripped"  # v2026.8.11-2 … 2026.9.7
HASH_PROJECTED = "projected"  # 2026.9.7-2 and later


def _project_block(block: JsonObj, rule: str) -> JsonObj:
    """The part of one assistant content block that ``assistantContentHash`` sees under ``rule``."""
    kind = block.get("type")
    if rule == HASH_VERBATIM:
        return block
    if rule == HASH_TIMING_STRIPPED:
        if kind != "thinking":
            return block
        return {k: v for k, v in block.items() if k not in ("startedAt", "endedAt")}
    if kind == "text":
        return {"type": "text", "text": block.get("text")}
    if kind == "thinking":
        return {
            "type": "thinking",
            "thinking": block.get("thinking"),
            "thinkingSignature": block.get("thinkingSignature"),
        }
    if kind == "toolCall":
        return {
            "type": "toolCall",
            "id": block.get("id"),
            "name": block.get("name"),
            "arguments": block.get("arguments"),
        }
    return block


def assistant_content_hash(message: JsonObj, rule: str) -> str:
    """``assistantContentHash`` (§3.5 / newer §5.1) of an assistant message under one build's rule."""
    return digest(
        {
            "role": message["role"],
            "api": message["api"],
            "provider": message["provider"],
            "model": message["model"],
            "content": [_project_block(b, rule) for b in message["content"]],
        }
    )
