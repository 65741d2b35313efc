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

`stable_xxh3` is this tool's fingerprint: xxh3-64 over the canonical JSON of the same five fields minus
every field the volatility policy names. Two messages with equal stable fingerprints differ at most in
volatile fields, which is what the counterfactual replay needs.

`HashChain` holds `H` as a persistent linked list whose nodes carry a running SHA-256 of the JSON array
text, so a prefix digest of any length already seen costs O(1) and a snapshot of `H` is one pointer.
"""

from __future__ import annotations

import hashlib
from typing import Any

import xxhash

from core.kernel.canonical import UNDEFINED, canonical_bytes, digest, get
from core.kernel.volatility import VolatilityPolicy, policy

VERBATIM = "verbatim"
TIMING_STRIPPED = "timing-stripped"
PROJECTED = "projected"
HASH_RULES: tuple[str, ...] = (VERBATIM, TIMING_STRIPPED, PROJECTED)

#: report field names of the three rules (`fingerprints` in report-schema.md; projected is an addition)
FINGERPRINT_KEYS = {TIMING_STRIPPED: "senpi_sha256", VERBATIM: "senpi_sha256_verbatim",
                    PROJECTED: "senpi_sha256_projected"}  # fmt: skip

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
    return {
        "role": get(message, "role"),
        "api": get(message, "api"),
        "provider": get(message, "provider"),
        "model": get(message, "model"),
        "content": content,
    }


def assistant_content_hash(message: dict[str, Any], rule: str = TIMING_STRIPPED) -> str:
    """senpi's `assistantContentHash` under one of the three rules (`HASH_RULES`)."""
    if rule not in HASH_RULES:
        raise ValueError(f"unknown hash rule {rule!r}")
    return digest(hashed_fields(message, rule))


def assistant_hashes(message: dict[str, Any]) -> dict[str, str]:
    """`assistantContentHash` under every rule: {rule: sha256 hex}."""
    return {rule: assistant_content_hash(message, rule) for rule in HASH_RULES}


def stable_xxh3(message: dict[str, Any], volatility: VolatilityPolicy | None = None) -> str:
    """This tool's fingerprint: xxh3-64 hex of the hashed fields minus every volatile field."""
    stripped = (volatility or policy()).strip(hashed_fields(message, VERBATIM))
    return xxhash.xxh3_64_hexdigest(canonical_bytes(stripped))


def fingerprints(message: dict[str, Any], volatility: VolatilityPolicy | None = None) -> dict[str, str]:
    """The `fingerprints` object of a turn: every senpi rule plus `stable_xxh3`.

    Most messages look the same under several rules (no thinking timing, no transient fields), so each
    distinct projection is serialized once: deep equality of the objects is far cheaper than the text.
    """
    verbatim = hashed_fields(message, VERBATIM)
    objects = {rule: (verbatim if rule == VERBATIM else hashed_fields(message, rule)) for rule in HASH_RULES}
    stripped = (volatility or policy()).strip(verbatim)
    seen: list[tuple[dict[str, Any], bytes]] = []

    def text_of(obj: dict[str, Any]) -> bytes:
        for other, data in seen:
            if other == obj:
                return data
        data = canonical_bytes(obj)
        seen.append((obj, data))
        return data

    out = {FINGERPRINT_KEYS[rule]: hashlib.sha256(text_of(obj)).hexdigest() for rule, obj in objects.items()}
    out["stable_xxh3"] = xxhash.xxh3_64_hexdigest(text_of(stripped))
    return out


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


def prefix_digest(hashes: list[str] | tuple[str, ...], count: int | None = None) -> str:
    """senpi's `prefixDigest(H, n)`: the digest of the JSON array of the first `n` hashes."""
    items = hashes if count is None else hashes[:count]
    return digest(list(items))


_EMPTY_PREFIX = hashlib.sha256(b"[")


class HashChain:
    """One node of a persistent list of sent-message hashes (`H`), newest last.

    `parent` is the list without this node's hash; `length` its position (1-based). The running SHA-256
    covers the JSON text `["h1","h2",…,"h<length>"` so `prefix_digest()` only appends `]`.
    """

    __slots__ = ("_state", "hash", "length", "parent")

    def __init__(self, parent: HashChain | None, value: str) -> None:
        self.parent = parent
        self.hash = value
        self.length = 1 if parent is None else parent.length + 1
        state = (_EMPTY_PREFIX if parent is None else parent._state).copy()
        state.update((f'"{value}"' if parent is None else f',"{value}"').encode("ascii"))
        self._state = state

    def prefix_digest(self) -> str:
        """`prefixDigest(H)` of the list ending at this node."""
        state = self._state.copy()
        state.update(b"]")
        return state.hexdigest()

    def ancestor(self, length: int) -> HashChain | None:
        """The node ending the prefix of `length` hashes (None for 0 or when longer than this list)."""
        if length <= 0 or length > self.length:
            return None
        node: HashChain | None = self
        while node is not None and node.length > length:
            node = node.parent
        return node

    def to_list(self) -> list[str]:
        out: list[str] = []
        node: HashChain | None = self
        while node is not None:
            out.append(node.hash)
            node = node.parent
        out.reverse()
        return out


EMPTY_PREFIX_DIGEST = hashlib.sha256(b"[]").hexdigest()


class FrozenChain:
    """A hash list that never grows again (a parked session's, `State.park`), as one blob of raw digests.

    A `HashChain` node costs ~300 bytes (the node, a 64-character hex string, a running SHA-256); here a hash
    is 32 bytes. It answers what reading a finished list needs (`length`, `hash`, `ancestor`, `to_list`,
    `prefix_digest`: the sidecar verdict) and nothing that extends one; `freeze` keeps a list whose hashes are
    not all lowercase 64-digit hex (never the case for SHA-256 digests) as it is.
    """

    __slots__ = ("_blob", "length")

    def __init__(self, blob: bytes, length: int) -> None:
        self._blob = blob
        self.length = length

    @property
    def hash(self) -> str:
        return self._blob[(self.length - 1) * 32 : self.length * 32].hex()

    def ancestor(self, length: int) -> FrozenChain | None:
        if length <= 0 or length > self.length:
            return None
        return self if length == self.length else FrozenChain(self._blob, length)

    def to_list(self) -> list[str]:
        blob = self._blob
        return [blob[i * 32 : (i + 1) * 32].hex() for i in range(self.length)]

    def prefix_digest(self) -> str:
        return hashlib.sha256(("[" + ",".join(f'"{h}"' for h in self.to_list()) + "]").encode("ascii")).hexdigest()


def freeze(chain: HashChain | FrozenChain | None) -> HashChain | FrozenChain | None:
    """`chain` as a `FrozenChain` (see there), or as it is when its hashes are not SHA-256 hex digests."""
    if not isinstance(chain, HashChain):
        return chain
    hashes = chain.to_list()
    try:
        blob = b"".join(bytes.fromhex(h) for h in hashes)
    except ValueError:
        return chain
    if len(blob) != 32 * len(hashes) or any(blob[i * 32 : (i + 1) * 32].hex() != h for i, h in enumerate(hashes)):
        return chain
    return FrozenChain(blob, len(hashes))


def chain_length(chain: HashChain | FrozenChain | None) -> int:
    return 0 if chain is None else chain.length


def chain_digest(chain: HashChain | FrozenChain | None, length: int | None = None) -> str:
    """`prefixDigest(H, length)` for the list ending at `chain`."""
    node = chain if length is None else (chain.ancestor(length) if chain is not None else None)
    if length is not None and length > chain_length(chain):
        raise ValueError(f"prefix of {length} hashes asked of a list of {chain_length(chain)}")
    return EMPTY_PREFIX_DIGEST if node is None else node.prefix_digest()


def chain_prefix_len(a: HashChain | None, b: HashChain | None) -> int:
    """senpi's `prefix_len(a, b)`: how many leading hashes the two lists share."""
    la, lb = chain_length(a), chain_length(b)
    n = min(la, lb)
    if n == 0:
        return 0
    x, y = (a.ancestor(n) if a else None), (b.ancestor(n) if b else None)
    if x is y or (x is not None and y is not None and x.prefix_digest() == y.prefix_digest()):
        return n
    xs, ys = (x.to_list() if x else []), (y.to_list() if y else [])
    s = 0
    while s < n and xs[s] == ys[s]:
        s += 1
    return s


def chain_extend(chain: HashChain | None, hashes: list[str]) -> HashChain | None:
    for value in hashes:
        chain = HashChain(chain, value)
    return chain


__all__ = [
    "EMPTY_PREFIX_DIGEST",
    "FINGERPRINT_KEYS",
    "HASH_RULES",
    "PROJECTED",
    "TIMING_STRIPPED",
    "UNDEFINED",
    "VERBATIM",
    "HashChain",
    "assistant_content_hash",
    "assistant_hashes",
    "chain_digest",
    "chain_extend",
    "chain_length",
    "chain_prefix_len",
    "fingerprints",
    "hashed_fields",
    "prefix_digest",
    "sent_message_hash",
    "stable_xxh3",
]
