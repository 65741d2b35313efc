"""Fingerprints: senpi's own hashes (to recompute what the agent computed) and this tool's stable one.

senpi hashes two things (senpi-formats §3.4–3.5, senpi-newer §5.1):

* every transmitted message (user / toolResult) -> the sent-message hashes `H`, and prefix digests of `H`,
  which decide delta vs re-send;
* every assistant message -> `assistantContentHash`, compared between the last `message_update` (capture)
  and `message_end` (commit) to decide `clean` vs `rewritten`.

`assistantContentHash` changed twice, so three rules exist and the analysis keeps all of them:

=================  ========================  ==============================================================
rule               builds                    what it hashes of `content`
=================  ========================  ==============================================================
verbatim           < v2026.8.11-2            every block as it is (thinking timing included)
timing-stripped    v2026.8.11-2 … 2026.9.7   thinking blocks without `startedAt` / `endedAt`
projected          >= 2026.9.7-2             text {type,text}; thinking {type,thinking,thinkingSignature};
                                             toolCall {type,id,name,arguments}; other blocks whole
=================  ========================  ==============================================================

`fingerprints` adds this tool's `stable_xxh3` (`core.kernel.hashing`, which also holds `H` as a persistent
`HashChain` with prefix digests in O(1)).
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal

import xxhash

from core.kernel.canonical import canonical_bytes, digest, get
from core.kernel.hashing import message_fields
from core.kernel.volatility import DEFAULT_RULES, VolatilityPolicy, policy

HashRule = Literal["verbatim", "timing-stripped", "projected"]
VERBATIM: HashRule = "verbatim"
TIMING_STRIPPED: HashRule = "timing-stripped"
PROJECTED: HashRule = "projected"
HASH_RULES: tuple[HashRule, ...] = (VERBATIM, TIMING_STRIPPED, PROJECTED)

#: report field names of the three rules (`fingerprints` in report-schema.md; projected is an addition)
FINGERPRINT_KEYS = {
    TIMING_STRIPPED: "senpi_sha256",
    VERBATIM: "senpi_sha256_verbatim",
    PROJECTED: "senpi_sha256_projected",
}

_TIMING = ("startedAt", "endedAt")


def _timing_stripped_block(block: Any) -> Any:
    if isinstance(block, dict) and block.get("type") == "thinking":
        return {k: v for k, v in block.items() if k not in _TIMING}
    return block


def _projected_block(block: Any) -> Any:
    if not isinstance(block, dict):
        return block
    btype = block.get("type")
    if btype == "text":
        return {"type": btype, "text": get(block, "text")}
    if btype == "thinking":
        return {"type": btype, "thinking": get(block, "thinking"), "thinkingSignature": get(block, "thinkingSignature")}
    if btype == "toolCall":
        return {"type": btype, "id": get(block, "id"), "name": get(block, "name"), "arguments": get(block, "arguments")}
    return block


def hashed_fields(message: dict[str, Any], rule: str = VERBATIM) -> dict[str, Any]:
    """The object senpi's `assistantContentHash` digests under `rule` (missing fields are undefined)."""
    content = get(message, "content")
    if isinstance(content, list):
        if rule == TIMING_STRIPPED:
            content = [_timing_stripped_block(b) for b in content]
        elif rule == PROJECTED:
            content = [_projected_block(b) for b in content]
    elif rule not in HASH_RULES:
        raise ValueError(f"unknown hash rule {rule!r}")
    return message_fields(message, content, keep_content=False)


def assistant_content_hash(message: dict[str, Any], rule: str = TIMING_STRIPPED) -> str:
    """senpi's `assistantContentHash` under one of the three rules (`HASH_RULES`)."""
    if rule not in HASH_RULES:
        raise ValueError(f"unknown hash rule {rule!r}")
    return digest(hashed_fields(message, rule))


def assistant_hashes(message: dict[str, Any]) -> dict[str, str]:
    """`assistantContentHash` under every rule: {rule: sha256 hex}."""
    return {rule: assistant_content_hash(message, rule) for rule in HASH_RULES}


def fingerprints(message: dict[str, Any], volatility: VolatilityPolicy | None = None) -> dict[str, str]:
    """The `fingerprints` object of a turn: every senpi rule plus `stable_xxh3`.

    Most messages look the same under several rules (no thinking timing, no transient fields), so each
    distinct projection is serialized once: deep equality of the objects is far cheaper than the text.
    """
    verbatim = hashed_fields(message, VERBATIM)
    objects = {rule: (verbatim if rule == VERBATIM else hashed_fields(message, rule)) for rule in HASH_RULES}
    rules = volatility or policy()
    stripped = _stripped(verbatim, objects[TIMING_STRIPPED], rules)
    seen: list[tuple[dict[str, Any], bytes]] = []

    def text_of(obj: dict[str, Any]) -> bytes:
        for other, data in seen:
            if other is obj or other == obj:
                return data
        data = canonical_bytes(obj)
        seen.append((obj, data))
        return data

    out = {FINGERPRINT_KEYS[rule]: hashlib.sha256(text_of(obj)).hexdigest() for rule, obj in objects.items()}
    out["stable_xxh3"] = xxhash.xxh3_64_hexdigest(text_of(stripped))
    return out


def _stripped(verbatim: dict[str, Any], timing_stripped: dict[str, Any], rules: VolatilityPolicy) -> dict[str, Any]:
    """`rules.strip(verbatim)`, or an object equal to it that is already made.

    Nothing volatile in it (almost every message): `verbatim` itself. A message with thinking timing (about a
    third of the 100 MB corpus' assistant messages) under the default rules: its timing-stripped projection,
    when that holds no key a rule ends with (`keeps_all`): the default rules then drop exactly the thinking
    blocks' `startedAt`/`endedAt` (`.content[type=thinking].*`; `index` and `partialJson` are nowhere), which
    is what the projection left out, and it is hashed once for both (`strip` asked the rules per key and
    copied). `tests/test_volatility_keeps_all.py` compares with `strip`."""
    if rules.keeps_all(verbatim):
        return verbatim
    if rules.rules == DEFAULT_RULES and rules.keeps_all(timing_stripped):
        return timing_stripped
    return rules.strip(verbatim)


def sent_message_hash(message: dict[str, Any]) -> str:
    """The hash of one transmitted message (user -> {role, content}; toolResult -> + toolCallId, toolName)."""
    if message.get("role") == "toolResult":
        value = {
            "role": "toolResult",
            "toolCallId": get(message, "toolCallId"),
            "toolName": get(message, "toolName"),
            "content": get(message, "content"),
        }
    else:
        value = {"role": get(message, "role"), "content": get(message, "content")}
    return digest(value)


__all__ = [
    "FINGERPRINT_KEYS",
    "HASH_RULES",
    "PROJECTED",
    "TIMING_STRIPPED",
    "VERBATIM",
    "assistant_content_hash",
    "assistant_hashes",
    "fingerprints",
    "hashed_fields",
    "sent_message_hash",
]
