"""senpi's digest, byte for byte: `sha256(JSON.stringify(stableValue(value)))` (senpi-formats §3.1–3.3).

senpi (`session-sync.ts`) canonicalizes a value by dropping `undefined` object values and sorting object
keys with `localeCompare`, rebuilds each object with `Object.fromEntries`, and hashes the UTF-8 bytes of
`JSON.stringify`. Reproducing its hashes from Python needs four JavaScript behaviours that Python's
`json` does not have, each of which changes the bytes and therefore the hash:

* key order: `localeCompare` (ICU collation, `core.kernel.collation`), not code-point order; and
  because the sorted entries are turned back into an object, keys that are array indices ("0", "17")
  come first in ascending numeric order, as JavaScript orders such properties;
* numbers: `1` not `1.0`, `-0` as `0`, `1e+21`, `1e-7`, `0.000001`, shortest round-trip digits;
  integers beyond 2^53 lose precision as JavaScript numbers do; NaN/Infinity print as `null`;
* strings: only `"`, `\\` and controls are escaped (`\\b \\f \\n \\r \\t`, others as lowercase `\\u00xx`);
  non-ASCII, U+2028/U+2029 and DEL are written as they are; lone surrogates become `\\udxxx`;
* `undefined`: Python has none, so `UNDEFINED` stands for it: dropped as an object value, `null` in an
  array. Callers building senpi's projections (`{role, api, provider, model, content}`) use it for a
  field the message lacks, exactly as JavaScript reads a missing property.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable
from decimal import Decimal
from functools import lru_cache
from json.encoder import encode_basestring  # C implementation: escapes like JSON.stringify, keeps non-ASCII
from typing import Any

import orjson

from core.kernel.collation import collation_key


class _Undefined:
    """JavaScript's `undefined`: what reading a missing property gives."""

    _instance: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNDEFINED"

    def __bool__(self) -> bool:
        return False


UNDEFINED: Any = _Undefined()

_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]{0,9}")
_MAX_ARRAY_INDEX = 2**32 - 2
_MAX_SAFE = 2**53
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def get(obj: dict[str, Any], key: str) -> Any:
    """`obj[key]` with JavaScript semantics: `UNDEFINED` when the key is absent."""
    return obj.get(key, UNDEFINED)


def _is_array_index(key: str) -> bool:
    return _ARRAY_INDEX.fullmatch(key) is not None and int(key) <= _MAX_ARRAY_INDEX


def sorted_keys(obj: dict[str, Any]) -> list[str]:
    """The order `JSON.stringify(Object.fromEntries(entries.sort(localeCompare)))` writes keys in."""
    return list(_key_order(tuple(obj)))


@lru_cache(maxsize=4096)
def _key_order(keys: tuple[str, ...]) -> tuple[str, ...]:
    """Cached per key tuple: objects of one shape (`{type, text}`, tool-call blocks, …) repeat endlessly."""
    index_keys = [k for k in keys if _is_array_index(k)]
    other = [k for k in keys if not _is_array_index(k)]
    index_keys.sort(key=int)
    other.sort(key=collation_key)  # stable: ties keep insertion order, like V8's stable sort
    return tuple(index_keys + other)


def js_number(value: int | float) -> str:
    """`JSON.stringify(number)`: ECMAScript Number::toString for finite numbers, `null` otherwise."""
    if isinstance(value, int):
        if -_MAX_SAFE <= value <= _MAX_SAFE:
            return str(value)
        try:
            value = float(value)
        except OverflowError:
            return "null"
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"  # also -0
    if value.is_integer() and abs(value) <= _MAX_SAFE:
        return str(int(value))  # exact below 2^53; above, the shortest digits padded with zeros (below)
    sign, digits_t, exponent = Decimal(repr(value)).as_tuple()
    digits = "".join(map(str, digits_t)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    exponent += len(digits_t) - len(digits)
    k = len(digits)
    n = k + exponent  # value = 0.digits × 10^n
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        text = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return ("-" if sign else "") + text


def js_string(text: str) -> str:
    """`JSON.stringify(string)` (well-formed variant: lone surrogates escaped)."""
    out = encode_basestring(text)
    if _LONE_SURROGATE.search(out):
        out = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)
    return out


def _write(value: Any, parts: list[str], path: list[int]) -> None:
    if isinstance(value, str):  # the common case first; lone surrogates are escaped once, in canonical_json
        parts.append(encode_basestring(value))
    elif isinstance(value, dict):
        if id(value) in path:
            parts.append('"[circular]"')
            return
        path.append(id(value))
        parts.append("{")
        first = True
        for key in _key_order(tuple(value)):
            item = value[key]
            if item is UNDEFINED:
                continue
            if not first:
                parts.append(",")
            first = False
            parts.append(encode_basestring(key))
            parts.append(":")
            _write(item, parts, path)
        parts.append("}")
        path.pop()
    elif isinstance(value, list | tuple):
        if id(value) in path:
            parts.append('"[circular]"')
            return
        path.append(id(value))
        parts.append("[")
        for i, item in enumerate(value):
            if i:
                parts.append(",")
            _write(item, parts, path)
        parts.append("]")
        path.pop()
    elif value is None or value is UNDEFINED:
        parts.append("null")
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif isinstance(value, int | float):
        parts.append(js_number(value))
    else:  # bigint-like or foreign objects: senpi writes their string form
        parts.append(js_string(str(value)))


def canonical_json(value: Any) -> str:
    """The exact text senpi hashes for `value`."""
    if value is UNDEFINED:
        raise ValueError("JSON.stringify(undefined) is not a string; senpi never hashes undefined")
    parts: list[str] = []
    _write(value, parts, [])
    text = "".join(parts)
    if _LONE_SURROGATE.search(text):
        text = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


# ---------------------------------------------------------------------------------------------- fast path
# Every hash is taken over UTF-8 bytes, and the hashed texts are large (~60 MB of canonical JSON per 100 MB of
# transcripts): escaping each string with `encode_basestring`, searching the whole text for lone surrogates and
# encoding it again cost more than walking the objects. `canonical_bytes` writes the UTF-8 directly, with
# orjson escaping each string (byte-identical to `encode_basestring` for every code point but the surrogates,
# checked by `tests/test_canonical.py`, and orjson refuses a lone surrogate). Anything it does not cover
# exactly (a lone surrogate, a tuple or a subclass, a non-string key, depth past `_FAST_DEPTH`, which is where a
# circular value would go) makes it write the whole value again with `canonical_json`, so the bytes never differ.


class _Slow(Exception):
    """The fast writer met something only `canonical_json` handles exactly."""


_FAST_DEPTH = 200
_MAX_PLANS = 4096


@lru_cache(maxsize=_MAX_PLANS)
def _key_plan(keys: tuple[str, ...]) -> tuple[tuple[str, bytes, bytes], ...]:
    """(key, `"key":`, `,"key":`) in the order `JSON.stringify` writes the keys (see `_key_order`)."""
    if any(type(key) is not str for key in keys):
        raise _Slow
    try:
        return tuple((key, orjson.dumps(key) + b":", b"," + orjson.dumps(key) + b":") for key in _key_order(keys))
    except TypeError:  # a lone surrogate in a key
        raise _Slow from None


def _write_bytes(value: Any, parts: list[bytes], depth: int) -> None:
    """`_write`, as UTF-8, for dicts and lists (exact types) and the leaves `_leaf_bytes` takes."""
    append = parts.append
    dumps = orjson.dumps
    if depth > _FAST_DEPTH:
        raise _Slow
    if type(value) is dict:
        append(b"{")
        first = True
        for key, head, comma_head in _key_plan(tuple(value)):
            item = value[key]
            if item is UNDEFINED:
                continue
            if first:
                first = False
                append(head)
            else:
                append(comma_head)
            kind = type(item)
            if kind is str:
                append(dumps(item))
            elif kind is dict or kind is list:
                _write_bytes(item, parts, depth + 1)
            else:
                _leaf_bytes(item, parts)
        append(b"}")
    elif type(value) is list:
        append(b"[")
        first = True
        for item in value:
            if first:
                first = False
            else:
                append(b",")
            kind = type(item)
            if kind is str:
                append(dumps(item))
            elif kind is dict or kind is list:
                _write_bytes(item, parts, depth + 1)
            else:
                _leaf_bytes(item, parts)
        append(b"]")
    else:
        _leaf_bytes(value, parts)


def _leaf_bytes(value: Any, parts: list[bytes]) -> None:
    kind = type(value)
    if kind is str:
        parts.append(orjson.dumps(value))
    elif value is None or value is UNDEFINED:
        parts.append(b"null")
    elif value is True:
        parts.append(b"true")
    elif value is False:
        parts.append(b"false")
    elif kind is int or kind is float:
        parts.append(js_number(value).encode("ascii"))
    else:  # tuples, subclasses, foreign objects: the generic writer's business
        raise _Slow


# ------------------------------------------------------------------------------- orjson sorted-keys path
# `orjson.dumps(value, option=OPT_SORT_KEYS)` writes exactly senpi's bytes when every object's keys sort the same
# by code point (orjson's order) as by `_key_order` (localeCompare, array indices first), no value is
# `UNDEFINED` (dropped by senpi, unknown to orjson), no number is a float (orjson writes `1.0`, JavaScript `1`)
# or an integer beyond 2^53 (JavaScript rounds it), and the containers are exact dicts and lists. That held for
# every hashed value of the 100 MB bench corpus (14,517 lines, 4,533 assistant and 6,562 sent projections:
# shared/reviews/performance.md §2). `orjson_exact` proves it with a walk that only looks (no writing, no
# per-string escaping: orjson does that in C), the key test cached per key tuple; a value it cannot vouch for
# goes to `_write_bytes`, and `tests/test_canonical_bytes.py` checks the three writers agree.


@lru_cache(maxsize=_MAX_PLANS)
def _code_point_order(keys: tuple[str, ...]) -> bool:
    """True when `_key_order(keys)` is plain code-point order (what orjson's OPT_SORT_KEYS writes)."""
    if any(type(key) is not str for key in keys):
        return False
    return _key_order(keys) == tuple(sorted(keys))


def orjson_exact(value: Any, keys_ok: Callable[[tuple[Any, ...]], bool], depth: int = 0) -> bool:
    """True when orjson writes `value` byte for byte as a JavaScript writer would, given `keys_ok`, the rule for
    one dict's keys (senpi's canonical JSON: `_code_point_order`, with OPT_SORT_KEYS; `JSON.stringify`: keys
    that are no array index, `core.agents.senpi.payload.serialize`): dicts whose keys pass, lists, strings, None,
    booleans and integers JavaScript holds exactly. A lone surrogate is not looked for: orjson refuses it
    (TypeError) and the caller falls back; floats, tuples and subclasses are left to the exact writer."""
    if depth > _FAST_DEPTH:
        return False
    kind = type(value)
    if kind is dict:
        if not keys_ok(tuple(value)):
            return False
        items: Any = value.values()
    elif kind is list:
        items = value
    else:
        return _exact_leaf(value)
    for item in items:
        kind = type(item)
        if kind is str:
            continue
        if kind is dict or kind is list:
            if not orjson_exact(item, keys_ok, depth + 1):
                return False
        elif not _exact_leaf(item):
            return False
    return True


def _exact_leaf(value: Any) -> bool:
    kind = type(value)
    if kind is str or value is None or kind is bool:
        return True
    return kind is int and -_MAX_SAFE <= value <= _MAX_SAFE


_SORT_KEYS = orjson.OPT_SORT_KEYS


def canonical_bytes(value: Any) -> bytes:
    """`canonical_json(value).encode("utf-8")`, written directly as UTF-8 (what every digest hashes)."""
    if value is UNDEFINED:
        raise ValueError("JSON.stringify(undefined) is not a string; senpi never hashes undefined")
    if orjson_exact(value, _code_point_order):
        try:
            return orjson.dumps(value, option=_SORT_KEYS)
        except TypeError:  # a lone surrogate (or orjson's own depth limit): the exact writers below
            pass
    return exact_canonical_bytes(value)


def exact_canonical_bytes(value: Any) -> bytes:
    """`canonical_bytes` without the orjson sorted-keys path (the fallback, and its check in the tests)."""
    if value is UNDEFINED:
        raise ValueError("JSON.stringify(undefined) is not a string; senpi never hashes undefined")
    parts: list[bytes] = []
    try:
        _write_bytes(value, parts, 0)
    except (_Slow, TypeError):  # TypeError: orjson refused a lone surrogate
        return canonical_json(value).encode("utf-8")
    return b"".join(parts)


def digest(value: Any) -> str:
    """senpi's `sessionSyncDigest(value)`: lowercase hex SHA-256 of the canonical JSON."""
    return hashlib.sha256(canonical_bytes(value)).hexdigest()


def digest_hex_list(hashes: list[str] | tuple[str, ...]) -> str:
    """`digest(hashes)` for a list of hex strings, without the generic walk (the prefix digest's hot path)."""
    return hashlib.sha256(("[" + ",".join(f'"{h}"' for h in hashes) + "]").encode("ascii")).hexdigest()
