"""What the index stores as BLOBs: typed data, encoded with msgspec's MessagePack and decoded back into the
same declared types, never into anything else; and the rule on strings from data.

- **Typed, never executed.** A value is turned into plain data (`msgspec.to_builtins`: dicts, lists, str, int,
  float, bool, None) before it is written, and a BLOB is decoded with `msgspec.convert` into the dataclass the
  code declares for it (`Turn`, `SessionHeader`, an agent's declared facts type, …), which checks every field's
  type on the way. A BLOB that does not decode into its type is damage (`Corrupt`): the store's content for
  that scope is dropped and the files are read again. Nothing is ever unpickled or evaluated: a crafted BLOB
  can at worst be refused.
- **Secrets.** Strings kept from data (paths, ids, models, reasons, tags) must be ones the report's redaction
  leaves unchanged (`check_strings`): a value that redaction would change is a secret in the data, and what it
  belongs to is not stored (its file is read again at the next start). So the store never holds a secret and a
  resumed run shows exactly what a cold one shows.
- **No message text.** What is stored is what the surfaces read: call summaries and pointers. The one field
  that can carry message content, a rewritten call's field diff, is kept only when its values are numbers or
  absent (thinking timings); a diff of text makes its session `NotKept`.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

import msgspec

from core.kernel.pipeline import NotKept
from core.model import Turn
from core.report.redact import redact_text

__all__ = [
    "Corrupt", "NotKept", "calls_from_plain", "calls_to_plain", "check_strings", "decode", "deflate", "encode",
    "inflate", "pack", "plain", "strings_of",
]  # fmt: skip

T = TypeVar("T")

_BIG_INT = 1
"""MessagePack extension code of an int beyond 64 bits (a 128-bit digest): its signed big-endian bytes."""
_WIDE_KEYS = 2
"""... of a dict with such an int among its keys: its [key, value] pairs, packed."""


def _ext(code: int, data: memoryview) -> Any:
    if code == _BIG_INT:
        return int.from_bytes(data, "big", signed=True)
    if code == _WIDE_KEYS:
        pairs = _DECODER.decode(data)
        if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
            raise ValueError("a dict extension that holds no pairs")
        return {key: value for key, value in pairs}
    raise ValueError(f"an unknown MessagePack extension ({code})")


_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(ext_hook=_ext)
_CLEAN: dict[str, bool] = {}
"""Strings already found clean (paths, reasons and models repeat on every call)."""
_CLEAN_MAX = 200_000


class Corrupt(Exception):
    """A stored value that does not decode into its declared type: the store's data for the scope is dropped."""


def encode(value: Any) -> bytes:
    """Plain data (or dataclasses of it) as MessagePack."""
    return pack(msgspec.to_builtins(value))


def pack(data: Any) -> bytes:
    """Plain data as MessagePack; ints beyond 64 bits (digests) as an extension, keys too."""
    try:
        return _ENCODER.encode(data)
    except OverflowError:
        return _ENCODER.encode(_wide(data))


def _wide(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64:
        return msgspec.msgpack.Ext(_BIG_INT, value.to_bytes((value.bit_length() + 8) // 8, "big", signed=True))
    if isinstance(value, dict):
        if any(isinstance(k, int) and not -(2**63) <= k < 2**64 for k in value):
            return msgspec.msgpack.Ext(_WIDE_KEYS, _ENCODER.encode([[_wide(k), _wide(v)] for k, v in value.items()]))
        return {k: _wide(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_wide(v) for v in value]
    return value


def decode(data: bytes, kind: type[T] | Any) -> T:
    """MessagePack written by `encode`, converted into `kind` (every field's type checked); `Corrupt` if not."""
    try:
        return msgspec.convert(_DECODER.decode(data), kind)
    except (msgspec.DecodeError, msgspec.ValidationError, TypeError, ValueError) as exc:
        raise Corrupt(f"a stored {getattr(kind, '__name__', 'value')} does not decode: {exc}") from None


def plain(data: bytes) -> Any:
    """MessagePack as plain data, no type (an analyzer's own `keep` data, checked by its `resume`)."""
    try:
        return _DECODER.decode(data)
    except (msgspec.DecodeError, TypeError, ValueError) as exc:
        raise Corrupt(f"a stored value does not decode: {exc}") from None


# ---------------------------------------------------------------------------------------------- calls
_WHERES = ("capture_where", "commit_where", "evidence_where")
MAX_INFLATED = 256 * 1024 * 1024
"""A stored BLOB never inflates beyond this (a crafted one could be a zip bomb): refused as damage."""


def calls_to_plain(turns: list[Turn], key: str, session_id: str, facts_types: dict[str, type]) -> list[Any]:
    """A session's calls, whole, as plain data: every `Turn` field; `facts` as [type name, fields] for a type its
    agent declares; the transcript path and the session id left out where they are the session's own (they are
    on every call). `NotKept` when a call holds what is not stored (see the module docstring)."""
    out = []
    for turn in turns:
        data = msgspec.to_builtins(turn)
        facts = turn.facts
        if facts is not None:
            name = type(facts).__qualname__
            if facts_types.get(name) is not type(facts):
                raise NotKept(f"call facts of an undeclared type ({name})")
            data["facts"] = [name, data["facts"]]
        if data.get("session") == session_id:
            del data["session"]
        _drop_path(data.get("where"), key)
        commit = data.get("commit")
        if commit is not None:
            for change in commit.get("diff") or ():
                for side in ("capture", "commit"):
                    if not _scalar(change.get(side)):
                        raise NotKept("a rewritten call's diff holds message content")
            for name in _WHERES:
                _drop_path(commit.get(name), key)
        out.append(data)
    return out


def calls_from_plain(data: Any, key: str, session_id: str, facts_types: dict[str, type]) -> list[Turn]:
    """`calls_to_plain`'s data back into `Turn`s (every field's type checked); `Corrupt` if it is not that."""
    if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
        raise Corrupt("stored calls are not a list of records")
    facts_of = []
    for item in data:
        facts_of.append(item.pop("facts", None))
        item.setdefault("session", session_id)
        _put_path(item.get("where"), key)
        commit = item.get("commit")
        if isinstance(commit, dict):
            for name in _WHERES:
                _put_path(commit.get(name), key)
    try:
        turns = msgspec.convert(data, list[Turn])
        for turn, facts in zip(turns, facts_of, strict=True):
            if facts is None:
                continue
            if not (isinstance(facts, list) and len(facts) == 2 and facts[0] in facts_types):
                raise Corrupt("a stored call names facts of an undeclared type")
            turn.facts = msgspec.convert(facts[1], facts_types[facts[0]])
    except (msgspec.ValidationError, TypeError, ValueError) as exc:
        raise Corrupt(f"stored calls do not decode: {exc}") from None
    return turns


def _drop_path(where: Any, key: str) -> None:
    if isinstance(where, dict) and where.get("path") == key:
        del where["path"]


def _put_path(where: Any, key: str) -> None:
    if isinstance(where, dict):
        where.setdefault("path", key)


def _scalar(value: Any) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, str))


def deflate(data: bytes, level: int = 1) -> bytes:
    """A BLOB of plain data, compressed (the session and call records repeat their keys: ~3.5x smaller). A BLOB
    written once and read by every run can take a higher `level`: it inflates faster (the 1.1M-line log's 13.5 MB
    report view: 29 ms at level 1, 13 ms at 6)."""
    return zlib.compress(data, level)


def inflate(blob: bytes) -> bytes:
    """`deflate` undone, at most `MAX_INFLATED` bytes; `Corrupt` otherwise."""
    try:
        inflater = zlib.decompressobj()
        data = inflater.decompress(blob, MAX_INFLATED)
        if inflater.unconsumed_tail or not inflater.eof:
            raise Corrupt("a stored BLOB is truncated or inflates beyond its bound")
        return data
    except zlib.error as exc:
        raise Corrupt(f"a stored BLOB does not inflate: {exc}") from None


# ---------------------------------------------------------------------------------------------- secrets
def strings_of(value: Any) -> Iterator[str]:
    """Every string in plain data (dict keys too)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            for key, sub in item.items():
                if isinstance(key, str):
                    yield key
                stack.append(sub)
        elif isinstance(item, list | tuple):
            stack.extend(item)


def check_strings(values: Iterable[str]) -> str | None:
    """The redaction kind of the first string that the report's redaction would change, or None: such a
    string holds a secret and is never stored. All of them are first looked at together (one pass of the
    redaction over them joined by line breaks, which every pattern treats as a boundary): only when that finds
    something is each one looked at on its own."""
    todo = [value for value in dict.fromkeys(values) if value not in _CLEAN]
    if not todo:
        return None
    _, hits = redact_text("\n".join(todo))
    if not hits:
        if len(_CLEAN) < _CLEAN_MAX:
            _CLEAN.update(dict.fromkeys(todo, True))
        return None
    for value in todo:
        _, hits = redact_text(value)
        if hits:
            return hits[0]
    return None
