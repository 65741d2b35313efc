"""Hash lists and this tool's stable fingerprint: the hashing every agent's analysis can use.

`HashChain` holds a list of sent-message hashes (senpi's `H`) as a persistent linked list whose nodes carry a
running SHA-256 of the JSON array text, so a prefix digest of any length already seen costs O(1) and a
snapshot of the list is one pointer. A parked session's lists never grow again and are frozen into blobs of
raw digests (`FrozenChain`: 32 bytes a hash instead of a ~300-byte node).

`stable_xxh3` is this tool's fingerprint of a message: xxh3-64 over the canonical JSON of its five hashed
fields (role, api, provider, model, content) minus every field the volatility policy names. Two messages
with equal stable fingerprints differ at most in volatile fields, which is what the counterfactual replay
needs. (senpi's own hash rules over the same fields are `core.agents.senpi.fingerprint`.)
"""

from __future__ import annotations

import hashlib
from typing import Any

import xxhash

from core.kernel.canonical import canonical_bytes, digest, get
from core.kernel.volatility import VolatilityPolicy, policy


def message_fields(message: dict[str, Any], content: Any = None, *, keep_content: bool = True) -> dict[str, Any]:
    """The five fields a message fingerprint covers (a missing one is JavaScript's undefined), with `content`
    replaced unless `keep_content`."""
    return {
        "role": get(message, "role"),
        "api": get(message, "api"),
        "provider": get(message, "provider"),
        "model": get(message, "model"),
        "content": get(message, "content") if keep_content else content,
    }


def stable_xxh3(message: dict[str, Any], volatility: VolatilityPolicy | None = None) -> str:
    """This tool's fingerprint: xxh3-64 hex of the hashed fields minus every volatile field."""
    stripped = (volatility or policy()).strip(message_fields(message))
    return xxhash.xxh3_64_hexdigest(canonical_bytes(stripped))


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
    "FrozenChain",
    "HashChain",
    "chain_digest",
    "chain_extend",
    "chain_length",
    "chain_prefix_len",
    "freeze",
    "message_fields",
    "prefix_digest",
    "stable_xxh3",
]
