"""Structural diff with jq-style paths, and the volatility policy that flags each change."""

from __future__ import annotations

import pytest

from core.kernel import volatility
from core.kernel.diff import classify, describe, diff, diff_with_count, jq_path
from core.kernel.volatility import DEFAULT_POLICY, VolatilityPolicy, configure, parse_pattern

COMMIT = {
    "role": "assistant",
    "content": [
        {"type": "thinking", "thinking": "t", "thinkingSignature": "sig", "startedAt": 5, "endedAt": 9},
        {"type": "text", "text": "hi"},
    ],
}
CAPTURE = {
    "role": "assistant",
    "content": [{"type": "thinking", "thinking": "t", "thinkingSignature": "sig"}, {"type": "text", "text": "hi"}],
}


def test_missing_timing_in_capture_is_volatile_only() -> None:
    changes = diff(CAPTURE, COMMIT)
    assert [(c.path, c.change, c.volatile, c.capture, c.commit) for c in changes] == [
        (".content[0].startedAt", "missing_in_capture", True, None, 5),
        (".content[0].endedAt", "missing_in_capture", True, None, 9),
    ]
    assert classify(changes) == "volatile-only"
    assert describe(changes) == ".content[0].startedAt, .content[0].endedAt"


def test_nested_array_and_type_changes() -> None:
    a = {
        "content": [{"type": "toolCall", "arguments": {"cmd": "ls", "opts": [1, 2, 3]}}, {"type": "text", "text": "x"}]
    }
    b = {"content": [{"type": "toolCall", "arguments": {"cmd": "ls -la", "opts": [1, "2"]}}], "extra": True}
    changes = diff(a, b)
    got = [(c.path, c.change) for c in changes]
    assert got == [
        (".content[0].arguments.cmd", "changed"),
        (".content[0].arguments.opts[1]", "type_changed"),
        (".content[0].arguments.opts[2]", "missing_in_commit"),
        (".content[1]", "missing_in_commit"),
        (".extra", "missing_in_capture"),
    ]
    assert classify(changes) == "semantic"
    assert not any(c.volatile for c in changes)


def test_numbers_compare_as_javascript_numbers() -> None:
    assert diff({"n": 1}, {"n": 1.0}) == []
    assert [c.change for c in diff({"n": 1}, {"n": True})] == ["type_changed"]
    assert [c.change for c in diff({"n": None}, {"n": 0})] == ["type_changed"]
    assert [c.change for c in diff([1], {"0": 1})] == ["type_changed"]
    assert diff({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2}]}) == []
    assert classify([]) is None


def test_jq_paths() -> None:
    assert jq_path([]) == "."
    assert jq_path([0]) == ".[0]"
    assert jq_path(["content", 3, "arguments", "file_path"]) == ".content[3].arguments.file_path"
    assert jq_path(["a b", "c"]) == '.["a b"].c'


def test_thinking_rule_needs_a_thinking_block() -> None:
    # startedAt on a text block is not what the default rule names
    a = {"content": [{"type": "text", "text": "x"}]}
    b = {"content": [{"type": "text", "text": "x", "startedAt": 1}]}
    assert [c.volatile for c in diff(a, b)] == [False]


def test_streaming_fields_are_volatile() -> None:
    a = {"content": [{"type": "toolCall", "id": "1", "partialJson": "{", "index": 0}]}
    b = {"content": [{"type": "toolCall", "id": "1"}]}
    changes = diff(a, b)
    assert [(c.path, c.change, c.volatile) for c in changes] == [
        (".content[0].partialJson", "missing_in_commit", True),
        (".content[0].index", "missing_in_commit", True),
    ]


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("textSignature", ["content", 1, "textSignature"], True),
        ("textSignature", ["content", 1, "text"], False),
        (".content[*].textSignature", ["content", 4, "textSignature"], True),
        (".content[1].textSignature", ["content", 4, "textSignature"], False),
        (".content[type=text].textSignature", ["content", 1, "textSignature"], True),
        (".content[type=text].textSignature", ["content", 0, "textSignature"], False),
        ("..id", ["content", 2, "arguments", "id"], True),
        (".content.*", ["content", 2], False),
        (".*", ["usage"], True),
        ('.["a b"]', ["a b"], True),
    ],
)
def test_pattern_syntax(pattern: str, path: list, hit: bool) -> None:
    doc = {"content": [{"type": "thinking"}, {"type": "text"}, {"type": "toolCall", "arguments": {"id": 1}}]}
    pol = VolatilityPolicy(()).with_patterns([pattern])
    assert pol.is_volatile(path, doc) is hit


@pytest.mark.parametrize("bad", ["", ".content[", "content..", ".a[b", "[x=]]"])
def test_bad_patterns_say_why(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_pattern(bad)


def test_user_patterns_and_strip() -> None:
    try:
        pol = configure(["textSignature"])
        assert volatility.policy() is pol
        a = {"content": [{"type": "text", "text": "x", "textSignature": "s1"}]}
        b = {"content": [{"type": "text", "text": "x", "textSignature": "s2"}]}
        assert classify(diff(a, b)) == "volatile-only"
        assert pol.strip(b) == {"content": [{"type": "text", "text": "x"}]}
        assert [r["pattern"] for r in pol.describe()][-1] == "textSignature"
    finally:
        configure([])
    assert volatility.policy() == DEFAULT_POLICY


def test_diff_values_are_summaries_and_capped() -> None:
    big = {"content": [{"type": "text", "text": "y" * 5000}]}
    changes = diff({"content": []}, big)
    assert changes[0].path == ".content[0]" and isinstance(changes[0].commit, str)
    assert changes[0].commit.startswith("<object with 2 keys")
    many_a = {f"k{i}": i for i in range(300)}
    many_b = {f"k{i}": i + 1 for i in range(300)}
    changes, left_out = diff_with_count(many_a, many_b)
    assert len(changes) == 200 and left_out == 100
