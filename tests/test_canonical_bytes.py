"""`canonical_bytes`, the UTF-8 fast path every digest takes, writes exactly `canonical_json(value).encode()`."""

from __future__ import annotations

import json
import random
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

import orjson
import pytest

from core.kernel.canonical import (
    UNDEFINED,
    _code_point_order,
    canonical_bytes,
    canonical_json,
    digest,
    exact_canonical_bytes,
    orjson_exact,
)

VECTORS = json.loads((Path(__file__).resolve().parent / "data" / "senpi-digest-vectors.json").read_text())


def _same(value: Any) -> None:
    """Equal bytes, or the same exception (a non-string key is an error for both)."""
    try:
        expected: Any = canonical_json(value).encode("utf-8")
    except Exception as exc:
        expected = type(exc)
    for writer in (canonical_bytes, exact_canonical_bytes):  # with and without the orjson sorted-keys path
        try:
            got: Any = writer(value)
        except Exception as exc:
            got = type(exc)
        assert got == expected


def test_orjson_escapes_every_string_like_encode_basestring() -> None:
    """The fast path hands strings to orjson: its escaping must match for every code point but surrogates."""
    text = "".join(chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF)
    assert orjson.dumps(text) == encode_basestring(text).encode("utf-8")
    with pytest.raises(TypeError):
        orjson.dumps("x\ud800")


@pytest.mark.parametrize("index", range(len(VECTORS["digests"])))
def test_fixture_vectors_through_the_fast_path(index: int) -> None:
    vector = VECTORS["digests"][index]
    assert canonical_bytes(vector["input"]) == vector["canonical"].encode("utf-8")
    assert digest(vector["input"]) == vector["sha256"]


@pytest.mark.parametrize(
    "value",
    [
        {"b": 1, "10": 2, "2": 3, "_": 4, "01": 5, "Zeta": 6, "alpha": 7, "filePath": 8, "file_path": 9},
        [1.0, -0.0, 1e21, 1e-7, 1e-6, 2**53 + 1, -(2**60), 2**70, float("nan"), float("inf"), True, False, None],
        {"a": UNDEFINED, "b": [UNDEFINED, None], "c": {"d": UNDEFINED}},
        {"s": 'a\u0000\u001f\u007f\b\f\n\r\t"\\\u2028\u2029é😀'},
        {"lone": "x\ud800y", "pair": "\ud83d\ude00"},  # a lone surrogate: the slow path escapes it
        {"x\udc00": 1},  # ... also in a key
        {"t": (1, "a", {"b": 2})},  # tuples and other shapes only the generic writer knows
        {"n": 3, 4: "int key"},
        "plain string",
        "",
        [],
        {},
    ],
)
def test_fast_path_equals_the_generic_writer(value: Any) -> None:
    _same(value)


def test_subclasses_circular_and_deep_values() -> None:
    class Text(str):
        pass

    class Obj(dict):  # type: ignore[type-arg]
        pass

    _same({"a": Text("t"), "b": Obj(z=1, a=2), "c": [Text("u")]})
    loop: dict[str, Any] = {"k": 1}
    loop["self"] = loop
    _same(loop)
    assert canonical_bytes(loop) == b'{"k":1,"self":"[circular]"}'
    deep: Any = "leaf"
    for i in range(400):
        deep = {"k": deep} if i % 2 else [deep]
    _same(deep)
    with pytest.raises(ValueError):
        canonical_bytes(UNDEFINED)


def test_random_values() -> None:
    rng = random.Random(5)
    alphabet = ["a", "B", "_", "-", "1", "0", "é", "\x01", "\u2028", "😀", " ", "$"]

    def word() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 5)))

    def value(depth: int) -> Any:
        roll = rng.random()
        if depth > 3 or roll < 0.4:
            return rng.choice([word(), rng.randint(-(2**60), 2**60), rng.random() * 10 ** rng.randint(-9, 25), None,
                               True, UNDEFINED, 0, -0.0])  # fmt: skip
        if roll < 0.7:
            return [value(depth + 1) for _ in range(rng.randint(0, 4))]
        return {word(): value(depth + 1) for _ in range(rng.randint(0, 5))}

    for _ in range(2000):
        v = value(0)
        if v is not UNDEFINED:
            _same(v)


def test_the_orjson_sorted_keys_path_is_taken_where_it_is_exact() -> None:
    """Plain message shapes go through `orjson.dumps(OPT_SORT_KEYS)`; anything whose bytes it would get wrong
    (localeCompare order that is not code-point order, array-index keys, floats, big integers, `undefined`)
    does not, and the bytes are the exact writer's either way."""
    message = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "é 😀 \u2028"},
            {"type": "toolCall", "id": "t1", "arguments": {"path": "a"}},
        ],
        "usage": {"input": 12, "output": 3, "cacheRead": 0},
        "stopReason": "stop",
    }
    assert orjson_exact(message, _code_point_order)
    assert canonical_bytes(message) == orjson.dumps(message, option=orjson.OPT_SORT_KEYS)
    _same(message)
    for inexact in (
        {"a": 1, "B": 2},  # localeCompare: a < B; code points: B < a
        {"a1": 1, "a_b": 2},  # localeCompare: a_b < a1
        {"10": 1, "2": 2},  # array indices come first, numerically
        {"x": 1.5},
        {"x": 2.0},  # JavaScript writes 2
        {"x": 2**53 + 1},
        {"x": UNDEFINED},
        {"x": (1, 2)},
    ):
        assert not orjson_exact(inexact, _code_point_order)
        _same(inexact)


def test_fixture_vectors_with_and_without_the_orjson_path() -> None:
    """The node-made vectors: both writers give node's bytes."""
    for vector in VECTORS["digests"]:
        assert exact_canonical_bytes(vector["input"]) == vector["canonical"].encode("utf-8")
        assert canonical_bytes(vector["input"]) == vector["canonical"].encode("utf-8")
