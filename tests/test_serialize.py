"""The flatten and delta serializers against hand-computed expectations (senpi-formats §5, senpi-newer §7)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from core.agents.senpi.payload.serialize import (
    ANCHOR,
    MISSING,
    RULES_MAPPER,
    RULES_NEW,
    RULES_OLD,
    ToolNamer,
    WatchedExecution,
    _plain_keys,
    blocks_text,
    content_blocks,
    delta_blocks,
    exact_js_stringify,
    flatten_blocks,
    js_stringify,
    open_tool_calls,
    pascal_case,
    tool_watch_note,
    utf16_truncate,
)
from core.kernel.canonical import js_number, orjson_exact
from core.kernel.dedupe import payload_bytes, utf8_len
from tests.realdata import messages as transcript_messages


def user(*texts: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": t} for t in texts]}


def result(call_id: str, name: str, *texts: str) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": call_id, "toolName": name,
            "content": [{"type": "text", "text": t} for t in texts]}  # fmt: skip


def call(call_id: str, name: str, args: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": call_id, "name": name, "arguments": args}


def assistant(*blocks: dict[str, Any], stop: str = "stop") -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks), "stopReason": stop}


def texts(blocks: list[dict[str, Any]]) -> list[str]:
    return [b["text"] if b["type"] == "text" else f"<image {b['source']['media_type']}>" for b in blocks]


def inferred(rules: Any, messages: list[dict[str, Any]]) -> ToolNamer:
    namer = ToolNamer(rules)
    for msg in messages:
        namer.observe_message(msg)
    return namer


def test_reference_example_is_byte_exact_and_449_bytes() -> None:
    """The test vector of `claude-sdk-oauth-prompt-bridge.test.ts` (senpi-formats §5.1)."""
    messages = [
        user("Find it"),
        assistant(call("call-1", "repoSearch", {"query": "needle"})),
        result("call-1", "repoSearch", "match"),
        user("Explain the match"),
    ]
    blocks = flatten_blocks(messages, RULES_OLD, inferred(RULES_OLD, messages))
    assert blocks == [{"type": "text", "text": t} for t in [
        "<conversation_history>\n",
        "USER:\n",
        "Find it",
        "\n\nASSISTANT:\n",
        'Historical tool call (non-executable): mcp__custom-tools__repoSearch args={"query":"needle"}',
        "\n\nTOOL RESULT (historical mcp__custom-tools__repoSearch, id=call-1):\n",
        "match",
        "\n</conversation_history>",
        ANCHOR,
        "Explain the match",
    ]]  # fmt: skip
    assert payload_bytes(blocks) == 449


def test_single_message_has_no_envelope_and_is_198_bytes() -> None:
    blocks = flatten_blocks([user("Hello")], RULES_OLD, ToolNamer(RULES_OLD))
    assert texts(blocks) == [ANCHOR, "Hello"]
    assert utf8_len(ANCHOR) == 193
    assert payload_bytes(blocks) == 198


def test_labels_separators_and_builtin_tool_names() -> None:
    messages = [
        user("a"),
        assistant({"type": "text", "text": "t"}, call("toolu_1", "bash", {"command": "ls"}),
                  call("toolu_2", "find", {"pattern": "*.py"})),
        result("toolu_1", "bash", "out"),
        result("toolu_2", "find", "x.py"),
    ]  # fmt: skip
    blocks = flatten_blocks(messages, RULES_OLD, inferred(RULES_OLD, messages))
    # no final user message (the context ends with a tool result): history is everything, anchor last
    assert texts(blocks) == [
        "<conversation_history>\n",
        "USER:\n",
        "a",
        "\n\nASSISTANT:\n",
        't\nHistorical tool call (non-executable): Bash args={"command":"ls"}\n'
        'Historical tool call (non-executable): Glob args={"pattern":"*.py"}',
        "\n\nTOOL RESULT (historical Bash, id=toolu_1):\n",
        "out",
        "\n\nTOOL RESULT (historical Glob, id=toolu_2):\n",
        "x.py",
        "\n</conversation_history>",
        ANCHOR,
    ]
    # hand count: envelope 23 + 24, "USER:\n" 6, "a" 1, "\n\nASSISTANT:\n" 13,
    # assistant text "t\n" 2 + (39 + 10 + 16) + "\n" 1 + (39 + 10 + 18), each tool label 2 + 42 + 1, anchor 193
    assert payload_bytes(blocks) == 23 + 6 + 1 + 13 + (2 + 65 + 1 + 67) + 45 + 3 + 45 + 4 + 24 + 193


def test_assistant_text_renders_thinking_text_and_unknown_blocks() -> None:
    messages = [
        user("q"),
        assistant(
            {"type": "thinking", "thinking": "let me think", "thinkingSignature": "sig", "startedAt": 1, "endedAt": 2},
            {"type": "thinking", "thinking": ""},
            {"type": "text", "text": "answer"},
            {"type": "redacted_thinking", "data": "x"},
            {"type": "text"},
        ),
        user("next"),
    ]
    blocks = flatten_blocks(messages, RULES_OLD, ToolNamer(RULES_OLD))
    # empty pieces are kept (join with "\n"); a missing `text` joins as ""
    assert blocks[4]["text"] == "let me think\n\nanswer\n[redacted_thinking]\n"


def test_assistant_with_no_text_keeps_its_label_only() -> None:
    messages = [user("q"), assistant(), user("r")]
    assert texts(flatten_blocks(messages, RULES_OLD, ToolNamer(RULES_OLD)))[:5] == [
        "<conversation_history>\n", "USER:\n", "q", "\n\nASSISTANT:\n", "\n</conversation_history>",
    ]  # fmt: skip


def test_tool_call_arguments_are_javascript_json_in_insertion_order() -> None:
    args = {"zeta": 1.0, "alpha": "héllo ✓", "n": [1.5, 1e21, 1e-7, None, True], "o": {"b": '\x01\n"', "a": 0}}
    messages = [user("q"), assistant(call("c", "bash", args))]
    blocks = flatten_blocks(messages, RULES_OLD, ToolNamer(RULES_OLD))
    assert blocks[4]["text"] == (
        "Historical tool call (non-executable): Bash "
        'args={"zeta":1,"alpha":"héllo ✓","n":[1.5,1e+21,1e-7,null,true],"o":{"b":"\\u0001\\n\\"","a":0}}'
    )


def test_javascript_number_and_key_order() -> None:
    cases = {1.0: "1", -0.0: "0", 100.0: "100", 0.1: "0.1", 1e21: "1e+21", 1e20: "100000000000000000000",
             1e-6: "0.000001", 1e-7: "1e-7", 1.5e-10: "1.5e-10", 2.5e25: "2.5e+25", 12345678901234567890.0:
             "12345678901234567000", 2**53 + 1: "9007199254740992", 7: "7"}  # fmt: skip
    for value, expected in cases.items():
        assert js_number(value) == expected, value
    assert js_stringify({"b": 1, "10": 2, "2": 3, "a": {"01": 4, "1": 5}}) == '{"2":3,"10":2,"b":1,"a":{"1":5,"01":4}}'
    assert js_stringify(float("nan")) == "null"
    assert js_stringify("\u2028\x7f") == '"\u2028\x7f"'


def test_image_only_message_gets_see_attached_image() -> None:
    image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    messages = [{"role": "user", "content": [image]}, assistant({"type": "text", "text": "seen"}),
                {"role": "user", "content": [image, {"type": "text", "text": "  \n"}]}]  # fmt: skip
    blocks = flatten_blocks(messages, RULES_OLD, ToolNamer(RULES_OLD))
    assert texts(blocks) == [
        "<conversation_history>\n", "USER:\n", "<image image/png>", "(see attached image)",
        "\n\nASSISTANT:\n", "seen", "\n</conversation_history>", ANCHOR,
        "<image image/png>", "  \n", "(see attached image)",
    ]  # fmt: skip
    assert blocks[2]["source"] == {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}
    # images are not counted; whitespace-only text does not count as text (but its bytes do)
    assert payload_bytes(blocks) == 23 + 6 + 20 + 13 + 4 + 24 + 193 + 3 + 20


def test_empty_and_string_content() -> None:
    messages = [{"role": "user", "content": ""}, {"role": "user", "content": "plain"},
                {"role": "user", "content": "\u00a0\ufeff"}]  # fmt: skip
    blocks = flatten_blocks(messages, RULES_OLD, ToolNamer(RULES_OLD))
    assert texts(blocks) == [
        "<conversation_history>\n", "USER:\n", "(see attached image)", "\n\nUSER:\n", "plain",
        "\n</conversation_history>", ANCHOR, "\u00a0\ufeff", "(see attached image)",
    ]  # fmt: skip


def test_custom_tool_names_inferred_explicit_and_pascal_case() -> None:
    messages = [user("q"), assistant(call("c1", "my_tool-x", {})), result("c1", "my_tool-x", "r")]
    # inferred: the model called it, so it was a context tool
    assert "mcp__custom-tools__my_tool-x args={}" in blocks_text(
        flatten_blocks(messages, RULES_OLD, inferred(RULES_OLD, messages))
    )
    # explicit context tools without it: PascalCase fallback
    explicit = flatten_blocks(messages, RULES_OLD, ToolNamer(RULES_OLD, context_tools=["repoSearch"]))
    assert texts(explicit)[4:6] == [
        "Historical tool call (non-executable): MyToolX args={}",
        "\n\nTOOL RESULT (historical MyToolX, id=c1):\n",
    ]
    assert pascal_case("__a--b c9d__") == "ABC9d"
    # built-ins are matched case-insensitively; a custom tool keeps its registered spelling
    namer = ToolNamer(RULES_OLD, context_tools=["repoSearch"])
    assert (namer.sdk_name("READ"), namer.sdk_name("reposearch")) == ("Read", "mcp__custom-tools__repoSearch")


def test_write_and_edit_names_by_build() -> None:
    messages = [user("q"), assistant(call("c1", "write", {"path": "a"})), result("c1", "write", "ok")]
    old = texts(flatten_blocks(messages, RULES_OLD, inferred(RULES_OLD, messages)))
    new = texts(flatten_blocks(messages, RULES_NEW, inferred(RULES_NEW, messages)))
    assert old[4] == 'Historical tool call (non-executable): Write args={"path":"a"}'
    assert new[4] == 'Historical tool call (non-executable): mcp__custom-tools__write args={"path":"a"}'
    assert new[5] == "\n\nTOOL RESULT (historical mcp__custom-tools__write, id=c1):\n"
    # newer build, write not among the context tools: PascalCase
    assert ToolNamer(RULES_NEW, context_tools=[]).sdk_name("edit") == "Edit"
    # the 2026.9.3 mapper still had the old built-in map
    assert ToolNamer(RULES_MAPPER).sdk_name("write") == "Write"


def test_delta_serializer() -> None:
    messages = [result("toolu_A", "bash", "a1", "a2"), result("toolu_B", "read", "b"),
                {"role": "user", "content": ""}, user("go")]  # fmt: skip
    blocks = delta_blocks(messages, RULES_OLD, ToolNamer(RULES_OLD))
    assert texts(blocks) == [
        "Tool result (Bash, id=toolu_A):\n", "a1", "a2", "\n\n", "Tool result (Read, id=toolu_B):\n", "b",
        "\n\n", "", "\n\n", "go",
    ]  # fmt: skip
    assert payload_bytes(blocks) == 32 + 2 + 2 + 2 + 32 + 1 + 2 + 0 + 2 + 2
    image_only = delta_blocks([{"role": "user", "content": [{"type": "image", "data": "x", "mimeType": "image/png"}]}],
                              RULES_OLD, ToolNamer(RULES_OLD))  # fmt: skip
    assert texts(image_only) == ["<image image/png>"]  # no `(see attached image)` in a delta


def test_new_content_mapper_placeholders() -> None:
    content = [
        "raw string",
        {"type": "text"},
        {"type": "image", "data": "x", "mimeType": "image/bmp"},
        {"type": "image", "mimeType": "image/png"},
        {"type": "audio"},
        42,
        {"type": "image", "data": "x", "mimeType": "image/webp"},
    ]
    new, visible = content_blocks(content, RULES_NEW)
    assert visible
    assert texts(new) == [
        "raw string",
        "[unsupported content block omitted: text]",
        "[image block omitted: unsupported media type image/bmp]",
        "[image block omitted: missing data]",
        "[unsupported content block omitted: audio]",
        "[unsupported content block omitted]",
        "<image image/webp>",
    ]
    old, old_visible = content_blocks(content, RULES_OLD)
    assert [b["type"] for b in old] == ["image", "text", "image", "image", "image", "image", "image"]
    assert not old_visible
    # a placeholder counts as text in a flatten: no `(see attached image)` after it
    only_bad = [{"role": "user", "content": [{"type": "image", "data": "x", "mimeType": "image/tiff"}]}]
    assert texts(flatten_blocks(only_bad, RULES_NEW, ToolNamer(RULES_NEW))) == [
        ANCHOR, "[image block omitted: unsupported media type image/tiff]",
    ]  # fmt: skip


def test_newer_builds_drop_failed_assistants_and_skip_roles() -> None:
    messages = [user("q"), assistant({"type": "text", "text": "partial"}, stop="error"),
                {"role": "system", "content": "sys"}, user("retry")]  # fmt: skip
    old = texts(flatten_blocks(messages, RULES_OLD, ToolNamer(RULES_OLD)))
    new = texts(flatten_blocks(messages, RULES_NEW, ToolNamer(RULES_NEW)))
    assert old == ["<conversation_history>\n", "USER:\n", "q", "\n\nASSISTANT:\n", "partial",
                   "\n\nTOOL RESULT (historical Undefined, id=undefined):\n", "sys", "\n</conversation_history>",
                   ANCHOR, "retry"]  # fmt: skip
    assert new == ["<conversation_history>\n", "USER:\n", "q", "\n</conversation_history>", ANCHOR, "retry"]
    # the failed assistant was last: old builds have no final user message, newer ones do
    tail = [user("q"), assistant({"type": "text", "text": "x"}, stop="aborted")]
    assert texts(flatten_blocks(tail, RULES_NEW, ToolNamer(RULES_NEW))) == [ANCHOR, "q"]
    assert texts(flatten_blocks(tail, RULES_OLD, ToolNamer(RULES_OLD)))[-1] == ANCHOR


def test_recovered_tool_results_note() -> None:
    messages = [
        user("q"),
        {**assistant(call("c1", "bash", {"command": "a"}), call("c2", "repoSearch", {})), "timestamp": 10},
        result("c1", "bash", "done"),
        {**assistant(call("c3", "bash", {"command": "b"})), "timestamp": 20},
        user("continue"),
    ]
    namer = inferred(RULES_OLD, messages)
    pending = open_tool_calls(messages)
    assert list(pending) == ["c2", "c3"]
    completed = {"c3": WatchedExecution("c3", "bash", "x" * 1300, False)}
    note = tool_watch_note(pending, completed, namer)
    assert note == (
        "TOOL RESULT (recovered Bash, id=c3, status=ok):\n" + "x" * 1200 + "\n...[truncated]\n\n"
        "TOOL RESULT (missing execution mcp__custom-tools__repoSearch, id=c2, status=error):\n"
        "Tool execution did not complete or its result was not observed. Do not guess. Call the tool again."
    )
    blocks = texts(flatten_blocks(messages, RULES_OLD, namer, note))
    assert blocks[-6:] == [
        "\n</conversation_history>", "<recovered_tool_results>\n", note, "\n</recovered_tool_results>", ANCHOR,
        "continue",
    ]  # fmt: skip


def test_utf8_and_utf16_lengths() -> None:
    assert utf8_len("añ✓😀") == 1 + 2 + 3 + 4
    assert payload_bytes([{"type": "text", "text": "😀"}, {"type": "image"}]) == 4
    # senpi truncates by UTF-16 units: an emoji is two
    assert utf16_truncate("😀😀ab", 3, "~") == "😀\ud83d~"
    assert utf8_len("\ud83d") == 3


@pytest.mark.parametrize("rules", [RULES_OLD, RULES_MAPPER, RULES_NEW])
def test_every_build_agrees_on_plain_text(rules: Any) -> None:
    messages = [user("Find it"), assistant({"type": "text", "text": "ok"}), user("more")]
    assert payload_bytes(flatten_blocks(messages, rules, ToolNamer(rules))) == 23 + 6 + 7 + 13 + 2 + 24 + 193 + 4


# ---------------------------------------------------------------------------------------------- JSON.stringify
def _stringify_both(value: Any) -> Any:
    """`js_stringify` (the orjson path where it is exact) and the exact writer alone give the same text, or
    raise the same error (a non-string key, which JSON never holds)."""
    out = []
    for writer in (js_stringify, exact_js_stringify):
        try:
            out.append(writer(value))
        except Exception as exc:
            out.append(type(exc))
    assert out[0] == out[1], value
    return out[0]


@pytest.mark.parametrize(
    "value",
    [
        {"path": "a.py", "limit": 20, "flag": True, "none": None, "nested": {"list": [1, "x", [], {}]}},
        {"b": 1, "10": 2, "2": 3, "a": {"01": 4, "1": 5}},  # array-index keys first: the exact writer
        {"s": 'a\u0000\u001f\u007f\b\f\n\r\t"\\\u2028\u2029é😀'},
        {"lone": "x\ud800y"},  # orjson refuses a lone surrogate; JavaScript escapes it
        {"x\udc00": 1},
        [1.0, -0.0, 1e21, 1e-7, 2**53, 2**53 + 1, -(2**60), float("nan"), float("inf")],
        {"t": (1, "a")},
        {"m": MISSING, "k": [MISSING]},
        {"n": 3, 4: "int key"},
        "plain",
        "",
        [],
        {},
        True,
        None,
        7,
    ],
)
def test_js_stringify_fast_path_equals_the_exact_writer(value: Any) -> None:
    _stringify_both(value)


def test_js_stringify_fast_path_on_deep_and_random_values() -> None:
    deep: Any = "leaf"
    for i in range(300):
        deep = {"k": deep} if i % 2 else [deep]
    _stringify_both(deep)
    rng = random.Random(11)
    alphabet = ["a", "B", "_", "1", "0", "01", "é", "\x01", "\u2028", "😀", " ", '"']

    def word() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4)))

    def value(depth: int) -> Any:
        roll = rng.random()
        if depth > 3 or roll < 0.4:
            return rng.choice([word(), rng.randint(-(2**60), 2**60), rng.random() * 10 ** rng.randint(-9, 25), None,
                               True, False, 0, -0.0, MISSING])  # fmt: skip
        if roll < 0.7:
            return [value(depth + 1) for _ in range(rng.randint(0, 4))]
        return {word(): value(depth + 1) for _ in range(rng.randint(0, 5))}

    for _ in range(2000):
        _stringify_both(value(0))


def test_js_stringify_fast_path_on_every_tool_call_of_the_realdata() -> None:
    """Every `toolCall.arguments` of the realdata transcripts (881 in pi's, codex's and the others' files): the
    same text both ways, and the orjson path taken for the plain ones."""
    roots = [Path(__file__).resolve().parents[1].parent / "shared" / "realdata"]
    files = [p for root in roots if root.is_dir() for p in sorted(root.rglob("*.jsonl"))]
    if not files:
        pytest.skip("no realdata here")
    seen = fast = 0
    for message in transcript_messages(files):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "toolCall":
                args = block.get("arguments", MISSING)
                _stringify_both(args)
                seen += 1
                fast += orjson_exact(args, _plain_keys)
    assert seen == 0 or fast > seen // 2


def test_utf16_truncate_is_javascripts_slice() -> None:
    """`utf16_truncate` against the whole text's UTF-16 units cut at the limit, for texts shorter and longer
    than the limit in code points and in units (ASCII, BMP, astral pairs, lone surrogates)."""

    def reference(text: str, limit: int, suffix: str) -> str:
        units = text.encode("utf-16-le", "surrogatepass")
        return text if len(units) // 2 <= limit else units[: limit * 2].decode("utf-16-le", "surrogatepass") + suffix

    rng = random.Random(3)
    alphabet = ["a", "é", "✓", "😀", "\ud83d", "\ude00", "\n"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        limit = rng.randint(0, 45)
        assert utf16_truncate(text, limit, "…") == reference(text, limit, "…"), (text, limit)
