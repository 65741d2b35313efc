"""senpi's prompt serializers for the claude-sdk-oauth lane, byte for byte.

A flatten (or bootstrap, or a non-resident `disabled` call) sends the whole provider context as one SDK user
message built by `buildPromptBlocks`; a delta or fork sends only the transmitted messages from `from` on, built
by `buildDeltaPromptBlocks` (senpi-formats §4.6, §5; senpi-newer §7). `payloadBytes` is the UTF-8 size of the
text blocks after senpi's ultrawork dedupe (`core.agents.senpi.payload.dedupe`). To say what a call cost and why, this
module rebuilds those blocks exactly; `core.agents.senpi.payload.analyzer` measures them incrementally with the same
functions, so a full rebuild and the running totals can never disagree in their rules.

JavaScript semantics are reproduced where they show in the bytes: `JSON.stringify` of tool-call arguments
(insertion order, no spaces, non-ASCII unescaped, JS number formatting), template-literal interpolation of
odd values (`undefined`, `null`), `Array.prototype.join` turning `undefined` into "", `String.trim`'s
whitespace set, and UTF-16 lengths where senpi truncates strings.

Context tools are not on disk. senpi maps a non-built-in tool to `mcp__custom-tools__<name>` when it is one
of the request's context tools, and to a PascalCase fallback otherwise. A tool the model called, or whose
result is in the context, was offered to it, so `ToolNamer` in its default (inferring) mode treats every
non-built-in name it has seen in an assistant tool call or a tool result as a context tool. The PascalCase
fallback is therefore reached only with an explicit tool list (tests, or a caller that knows the toolset).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any, Literal

import orjson

from core.kernel.canonical import orjson_exact
from core.kernel.dedupe import Block

ENVELOPE_OPEN = "<conversation_history>\n"
ENVELOPE_CLOSE = "\n</conversation_history>"
ANCHOR = (
    "The above is the conversation history so far, provided as context. Respond as the assistant to the user "
    'message below only. Never emit "USER:" or "ASSISTANT:" labels or continue the transcript.'
)
SEE_IMAGE = "(see attached image)"
NOTE_OPEN = "<recovered_tool_results>\n"
NOTE_CLOSE = "\n</recovered_tool_results>"
DELTA_SEPARATOR = "\n\n"
LABEL_SEPARATOR = "\n\n"
CUSTOM_TOOL_PREFIX = "mcp__custom-tools__"
IMAGE_MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
FAILED_STOP_REASONS = frozenset({"error", "aborted"})

#: `mapPiToolNameToSdk` built-ins, keyed by the lower-cased senpi name.
OLD_TOOL_NAMES: Mapping[str, str] = {
    "read": "Read", "write": "Write", "edit": "Edit", "bash": "Bash", "grep": "Grep", "find": "Glob", "glob": "Glob",
}  # fmt: skip
#: Since 2026.9.30 `write`/`edit` go through the custom-tools MCP server (senpi-newer §7.4).
NEW_TOOL_NAMES: Mapping[str, str] = {"read": "Read", "bash": "Bash", "grep": "Grep", "find": "Glob", "glob": "Glob"}


@dataclass(frozen=True, slots=True)
class SerializerRules:
    """What differs between builds in how messages become blocks (data, not version checks)."""

    name: str
    #: "old": `text` -> text, anything else -> image (v2026.8.x); "new": the shared content mapper with
    #: `[... omitted ...]` placeholders (2026.9.3+, senpi-newer §7.1)
    content_mapper: Literal["old", "new"]
    builtin_tools: Mapping[str, str]
    #: history roles emitted with no label and no content (newer builds: `system`, `configurationUpdate`)
    skip_roles: frozenset[str]
    #: `convertToLlm` drops errored/aborted assistant turns from the context (2026.9.4-2+)
    drop_failed_assistants: bool
    #: a hidden `environment-context` message directly followed by a user message becomes that message's
    #: leading text block (2026.9.24-3+, senpi-newer §5.2)
    fold_environment: bool = False


_SKIPPED = frozenset({"system", "configurationUpdate"})
RULES_OLD = SerializerRules("2026.8", "old", OLD_TOOL_NAMES, frozenset(), False)
RULES_MAPPER = SerializerRules("2026.9.3", "new", OLD_TOOL_NAMES, _SKIPPED, True)
RULES_FOLD = SerializerRules("2026.9.24-3", "new", OLD_TOOL_NAMES, _SKIPPED, True, fold_environment=True)
RULES_NEW = SerializerRules("2026.9.30", "new", NEW_TOOL_NAMES, _SKIPPED, True, fold_environment=True)
ENVIRONMENT_CUSTOM_TYPE = "environment-context"


# ---------------------------------------------------------------------------------------------- JavaScript
class _Missing:
    """A property that is absent (JavaScript `undefined`), as opposed to present and `null`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
_JS_WHITESPACE = frozenset("\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
                           "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")  # fmt: skip
_SURROGATE = re.compile("[\ud800-\udfff]")
_NON_ALNUM = re.compile(r"[^a-zA-Z0-9]+")
_INDEX_KEY_MAX = 2**32 - 2


def js_number(value: int | float) -> str:
    """`Number.prototype.toString` (what `JSON.stringify` prints): Python and JavaScript share the shortest
    round-trip digits but not where exponent notation starts, nor how integers past 2**53 print."""
    if isinstance(value, int):
        if abs(value) <= 2**53:
            return str(value)
        value = float(value)
    if value != value or value in (float("inf"), float("-inf")):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    _, digit_tuple, exponent = Decimal(repr(abs(value))).as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    k = len(digits)
    n = len(digit_tuple) + exponent  # value = 0.<digits> * 10**n
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        body = (digits if k == 1 else digits[0] + "." + digits[1:]) + ("e+" if e >= 0 else "e-") + str(abs(e))
    return sign + body


def _js_string_literal(text: str) -> str:
    """A JSON string literal as JavaScript writes it (lone surrogates escaped, ES2019 well-formed)."""
    out = encode_basestring(text)
    if _SURROGATE.search(out):
        out = _SURROGATE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", out)
    return out


def _is_index_key(key: str) -> bool:
    return key.isdigit() and key.isascii() and (key == "0" or key[0] != "0") and int(key) <= _INDEX_KEY_MAX


def _js_keys(obj: Mapping[str, Any]) -> list[str]:
    """JavaScript property order: array-index keys ascending, then the rest in insertion order."""
    keys = list(obj)
    index_keys = [k for k in keys if _is_index_key(k)]
    if not index_keys:
        return keys
    index_keys.sort(key=int)
    return index_keys + [k for k in keys if not _is_index_key(k)]


def js_stringify(value: Any) -> str | None:
    """`JSON.stringify(value)` with no spacing; None where JavaScript returns `undefined`.

    orjson writes the same bytes for the values a look-only walk vouches for (`core.kernel.canonical.orjson_exact`
    with `_plain_keys`: every tool call's arguments of the 100 MB bench corpus), in C; anything else goes through
    the exact writer (`exact_js_stringify`), and `tests/test_serialize.py` checks the two agree."""
    if value is MISSING:
        return None
    if orjson_exact(value, _plain_keys):
        try:
            return orjson.dumps(value).decode("utf-8")
        except TypeError:  # a lone surrogate (orjson refuses it; JavaScript escapes it), or orjson's depth limit
            pass
    return exact_js_stringify(value)


def exact_js_stringify(value: Any) -> str | None:
    """`js_stringify` without the orjson path (the fallback, and its check in the tests)."""
    if value is MISSING:
        return None
    out: list[str] = []
    _emit(value, out)
    return "".join(out)


@lru_cache(maxsize=4096)
def _plain_keys(keys: tuple[Any, ...]) -> bool:
    """Every key is a string and none is an array index, so JavaScript keeps them in insertion order (as
    orjson writes them); index keys would come first, ascending (`_js_keys`)."""
    return all(type(key) is str and not _is_index_key(key) for key in keys)


def _emit(value: Any, out: list[str]) -> None:
    if value is None or value is MISSING:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_js_string_literal(value))
    elif isinstance(value, int | float):
        out.append(js_number(value))
    elif isinstance(value, Mapping):
        out.append("{")
        first = True
        for key in _js_keys(value):
            if value[key] is MISSING:
                continue
            if not first:
                out.append(",")
            first = False
            out.append(_js_string_literal(str(key)))
            out.append(":")
            _emit(value[key], out)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _emit(item, out)
        out.append("]")
    else:
        out.append(_js_string_literal(str(value)))


def js_template(value: Any) -> str:
    """`${value}` inside a JavaScript template literal."""
    if isinstance(value, str):
        return value
    if value is MISSING:
        return "undefined"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, list):
        return ",".join("" if item is None or item is MISSING else js_template(item) for item in value)
    return "[object Object]"


def js_join_piece(value: Any) -> str:
    """An element of `Array.prototype.join`: `undefined` and `null` become the empty string."""
    if value is None or value is MISSING:
        return ""
    return js_template(value)


def has_visible_text(text: str) -> bool:
    """`text.trim().length > 0` with JavaScript's whitespace set (not Python's `str.isspace`)."""
    return any(ch not in _JS_WHITESPACE for ch in text)


def js_trim(text: str) -> str:
    start, end = 0, len(text)
    while start < end and text[start] in _JS_WHITESPACE:
        start += 1
    while end > start and text[end - 1] in _JS_WHITESPACE:
        end -= 1
    return text[start:end]


def utf16_truncate(text: str, limit: int, suffix: str) -> str:
    """JavaScript `text.length <= limit ? text : text.slice(0, limit) + suffix` (lengths in UTF-16 units).

    A text of more code points than `limit` is longer in UTF-16 units too, and its first `limit` code points
    hold at least `limit` units: only they are encoded (a tool result of 40 KB was encoded whole to keep 1,201
    units of it, for every result the tool watch tracks)."""
    if len(text) <= limit // 2 or (text.isascii() and len(text) <= limit):
        return text
    if len(text) > limit:
        units = text[:limit].encode("utf-16-le", "surrogatepass")
    else:
        units = text.encode("utf-16-le", "surrogatepass")
        if len(units) // 2 <= limit:
            return text
    return units[: limit * 2].decode("utf-16-le", "surrogatepass") + suffix


# ---------------------------------------------------------------------------------------------- tool names
def pascal_case(name: str) -> str:
    """senpi's fallback: split on runs of non-alphanumerics, drop empty parts, upper-case each first letter."""
    return "".join(part[0].upper() + part[1:] for part in _NON_ALNUM.split(name) if part)


class ToolNamer:
    """`mapPiToolNameToSdk` with a context-tool set that is either given or inferred from the transcript.

    Inferring (`context_tools=None`): every non-built-in name `observe`d (from assistant tool calls and tool
    results) is a context tool, because the model can only call a tool it was offered (see module docstring).
    """

    __slots__ = ("_custom", "_names", "infer", "rules")

    def __init__(self, rules: SerializerRules, context_tools: Iterable[str] | None = None) -> None:
        self.rules = rules
        self._custom: dict[str, str] = {}
        #: answers of `sdk_name` for string names, valid until the next `_add` (a lane asks for a few names
        #: many thousands of times)
        self._names: dict[str, str] = {}
        self.infer = context_tools is None
        for name in context_tools or ():
            self._add(name)

    def _add(self, name: str) -> None:
        lowered = name.lower()
        if lowered in self.rules.builtin_tools:
            return
        sdk = CUSTOM_TOOL_PREFIX + name
        self._custom.setdefault(name, sdk)
        self._custom.setdefault(lowered, sdk)
        self._names.clear()

    def observe(self, name: Any) -> None:
        if self.infer and isinstance(name, str) and name not in self._custom:
            self._add(name)

    def observe_message(self, msg: Mapping[str, Any]) -> None:
        """Learn the tool names one context message proves were offered."""
        role = msg.get("role")
        if role == "toolResult":
            self.observe(msg.get("toolName"))
        elif role == "assistant":
            content = msg.get("content")
            if isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "toolCall":
                        self.observe(block.get("name"))

    def sdk_name(self, name: Any) -> str:
        if type(name) is str:
            known = self._names.get(name)
            if known is not None:
                return known
        text = js_template(name)
        lowered = text.lower()
        sdk = (
            self._custom.get(text)
            or self._custom.get(lowered)
            or self.rules.builtin_tools.get(lowered)
            or pascal_case(text)
        )
        if type(name) is str:
            self._names[name] = sdk
        return sdk


# ---------------------------------------------------------------------------------------------- content
def text_block(text: str) -> Block:
    return {"type": "text", "text": text}


def _image_block(entry: Any) -> Block:
    get = entry.get if isinstance(entry, dict) else (lambda _key: None)
    return {"type": "image", "source": {"type": "base64", "media_type": get("mimeType"), "data": get("data")}}


def _omitted(entry: Any) -> str:
    if isinstance(entry, dict) and isinstance(entry.get("type"), str):
        if entry["type"] == "image":
            if isinstance(entry.get("mimeType"), str) and isinstance(entry.get("data"), str):
                return f"[image block omitted: unsupported media type {entry['mimeType']}]"
            return "[image block omitted: missing data]"
        return f"[unsupported content block omitted: {entry['type']}]"
    return "[unsupported content block omitted]"


def _new_entry(entry: Any, out: list[Block]) -> bool:
    """`appendEntry` of the shared content mapper: returns whether it added visible text."""
    if isinstance(entry, str):
        out.append(text_block(entry))
        return has_visible_text(entry)
    if not isinstance(entry, dict):
        out.append(text_block(_omitted(entry)))
        return True
    kind = entry.get("type")
    if kind == "text":
        text = entry.get("text")
        if isinstance(text, str):
            out.append(text_block(text))
            return has_visible_text(text)
    elif kind == "image":
        mime, data = entry.get("mimeType"), entry.get("data")
        if isinstance(mime, str) and isinstance(data, str) and mime in IMAGE_MEDIA_TYPES:
            out.append({"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}})
            return False
    out.append(text_block(_omitted(entry)))
    return True


def content_blocks(content: Any, rules: SerializerRules, *, delta: bool = False) -> tuple[list[Block], bool]:
    """A message's content as SDK blocks, and whether it holds visible text.

    Flatten skips an empty whole-string content; delta sends it as one empty text block (both builds). The
    old mapper sends every non-`text` entry as an image; a `text` entry whose `text` is not a string (which
    would make senpi throw) is taken as "" here.
    """
    out: list[Block] = []
    if isinstance(content, str):
        if content or delta:
            out.append(text_block(content))
        return out, has_visible_text(content)
    if not isinstance(content, list):
        return out, False
    visible = False
    if rules.content_mapper == "old":
        for entry in content:
            if isinstance(entry, dict) and entry.get("type") == "text":
                text = entry.get("text")
                text = text if isinstance(text, str) else ""
                out.append(text_block(text))
                visible = visible or has_visible_text(text)
            else:
                out.append(_image_block(entry))
        return out, visible
    for entry in content:
        visible = _new_entry(entry, out) or visible
    return out, visible


def flatten_content(content: Any, rules: SerializerRules) -> list[Block]:
    """Content of a user / toolResult / final message in a flatten, with the `(see attached image)` rule."""
    blocks, visible = content_blocks(content, rules)
    if not visible:
        blocks.append(text_block(SEE_IMAGE))
    return blocks


def assistant_text(content: Any, namer: ToolNamer) -> str:
    """`contentToText`: text, raw thinking, historical tool calls and `[<type>]`, joined with newlines."""
    if not isinstance(content, list):
        return ""
    pieces: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            pieces.append("[undefined]")
            continue
        kind = block.get("type", MISSING)
        if kind == "text":
            pieces.append(js_join_piece(block.get("text", MISSING)))
        elif kind == "thinking":
            pieces.append(js_join_piece(block.get("thinking", MISSING)))
        elif kind == "toolCall":
            args = js_stringify(block.get("arguments", MISSING))
            name = namer.sdk_name(block.get("name", MISSING))
            pieces.append(f"Historical tool call (non-executable): {name} args={'undefined' if args is None else args}")
        else:
            pieces.append(f"[{js_template(kind)}]")
    return "\n".join(pieces)


def is_failed_assistant(msg: Mapping[str, Any]) -> bool:
    return msg.get("role") == "assistant" and msg.get("stopReason") in FAILED_STOP_REASONS


def fold_environment(env: Mapping[str, Any], user: Mapping[str, Any]) -> dict[str, Any]:
    """The user message an `environment-context` message is folded into: the env text leads its content."""
    env_content = env.get("content")
    lead = [text_block(env_content)] if isinstance(env_content, str) else list(env_content or [])
    content = user.get("content")
    rest = [text_block(content)] if isinstance(content, str) else list(content or [])
    return {**user, "content": lead + rest}


def fold_context(
    messages: Sequence[Mapping[str, Any]], kinds: Sequence[str], rules: SerializerRules
) -> list[Mapping[str, Any]]:
    """Apply the environment fold to a whole context; `kinds[i]` is "env", "user" (a real user message)
    or "other" for `messages[i]`."""
    if not rules.fold_environment:
        return list(messages)
    out: list[Mapping[str, Any]] = []
    i = 0
    while i < len(messages):
        if kinds[i] == "env" and i + 1 < len(messages) and kinds[i + 1] == "user":
            out.append(fold_environment(messages[i], messages[i + 1]))
            i += 2
            continue
        out.append(messages[i])
        i += 1
    return out


def present_messages(messages: Sequence[Mapping[str, Any]], rules: SerializerRules) -> list[Mapping[str, Any]]:
    """The context the serializer sees under these rules (newer builds drop failed assistant turns)."""
    if not rules.drop_failed_assistants:
        return list(messages)
    return [m for m in messages if not is_failed_assistant(m)]


def history_label(msg: Mapping[str, Any], rules: SerializerRules, namer: ToolNamer) -> str | None:
    """The label of one history message without its leading separator; None when the role is skipped."""
    role = msg.get("role")
    if role == "user":
        return "USER:"
    if role == "assistant":
        return "ASSISTANT:"
    if role in rules.skip_roles:
        return None
    tool = namer.sdk_name(msg.get("toolName", MISSING))
    return f"TOOL RESULT (historical {tool}, id={js_template(msg.get('toolCallId', MISSING))}):"


def history_body(msg: Mapping[str, Any], rules: SerializerRules, namer: ToolNamer) -> list[Block]:
    """The blocks after one history message's label (only called when `history_label` gave one)."""
    if msg.get("role") == "assistant":
        text = assistant_text(msg.get("content"), namer)
        return [text_block(text)] if text else []
    return flatten_content(msg.get("content"), rules)


def delta_message(msg: Mapping[str, Any], rules: SerializerRules, namer: ToolNamer) -> list[Block]:
    """One transmitted message as `buildDeltaPromptBlocks` renders it (without the separator before it)."""
    out: list[Block] = []
    if msg.get("role") == "toolResult":
        tool = namer.sdk_name(msg.get("toolName", MISSING))
        out.append(text_block(f"Tool result ({tool}, id={js_template(msg.get('toolCallId', MISSING))}):\n"))
    blocks, _ = content_blocks(msg.get("content"), rules, delta=True)
    out.extend(blocks)
    return out


# ---------------------------------------------------------------------------------------------- serializers
def flatten_blocks(
    messages: Sequence[Mapping[str, Any]],
    rules: SerializerRules,
    namer: ToolNamer,
    note: str | None = None,
    origins: list[str] | None = None,
) -> list[Block]:
    """`buildPromptBlocks`: envelope, labelled history, optional recovered tool results, anchor, final message.

    `origins`, when given, receives one tag per block saying where it came from (`envelope`, `label`,
    `user`, `toolResult`, `assistant`, `note`, `anchor`, `final`), so simulations can tell transmitted
    message text from serializer scaffolding.
    """
    msgs = present_messages(messages, rules)
    final = msgs[-1] if msgs and msgs[-1].get("role") == "user" else None
    history = msgs[:-1] if final is not None else msgs
    blocks: list[Block] = []

    def push(items: list[Block], origin: str) -> None:
        blocks.extend(items)
        if origins is not None:
            origins.extend([origin] * len(items))

    if history:
        push([text_block(ENVELOPE_OPEN)], "envelope")
        labelled = False
        for msg in history:
            label = history_label(msg, rules, namer)
            if label is None:
                continue
            push([text_block(f"{LABEL_SEPARATOR if labelled else ''}{label}\n")], "label")
            labelled = True
            push(history_body(msg, rules, namer), str(msg.get("role")))
        push([text_block(ENVELOPE_CLOSE)], "envelope")
    if note is not None and has_visible_text(note):
        push([text_block(NOTE_OPEN), text_block(js_trim(note)), text_block(NOTE_CLOSE)], "note")
    push([text_block(ANCHOR)], "anchor")
    if final is not None:
        push(flatten_content(final.get("content"), rules), "final")
    return blocks


def delta_blocks(messages: Sequence[Mapping[str, Any]], rules: SerializerRules, namer: ToolNamer) -> list[Block]:
    """`buildDeltaPromptBlocks(messages[from:])`: the transmitted messages only, `\\n\\n` between them."""
    blocks: list[Block] = []
    for i, msg in enumerate(messages):
        if i:
            blocks.append(text_block(DELTA_SEPARATOR))
        blocks.extend(delta_message(msg, rules, namer))
    return blocks


def blocks_text(blocks: Iterable[Block]) -> str:
    """The text blocks concatenated (for display and prefix comparisons)."""
    return "".join(b["text"] for b in blocks if b.get("type") == "text")


# ---------------------------------------------------------------------------------------------- tool-watch note
TOOL_WATCH_CUSTOM_TYPE = "claude-sdk-oauth-tool-watch"
WATCH_MAX_TRACKED = 256
WATCH_MAX_NOTES = 4
WATCH_TRACKED_CHARS = 4_000
WATCH_NOTE_CHARS = 1_200
TRUNCATED_SUFFIX = "\n...[truncated]"


@dataclass(frozen=True, slots=True)
class WatchedExecution:
    """A tool execution the tool watch recorded (from a tool result or a `claude-sdk-oauth-tool-watch` entry)."""

    tool_call_id: str
    tool_name: str
    content: str
    is_error: bool


def watch_content_text(content: Any) -> str:
    """The tool watch's own `contentToText` for a tool result's content."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        value = block if isinstance(block, dict) else None
        if value is not None and value.get("type") == "text" and isinstance(value.get("text"), str):
            part = value["text"]
        elif value is not None and value.get("type") == "image":
            mime = value.get("mimeType")
            part = f"[image:{mime if isinstance(mime, str) else 'unknown'}]"
        elif value is not None and isinstance(value.get("type"), str):
            part = f"[{value['type']}]"
        else:
            part = ""
        if part:
            parts.append(part)
    return utf16_truncate("\n".join(parts), WATCH_TRACKED_CHARS, TRUNCATED_SUFFIX)


def execution_from_result(msg: Mapping[str, Any]) -> WatchedExecution | None:
    call_id, name = msg.get("toolCallId"), msg.get("toolName")
    if not isinstance(call_id, str):
        return None
    content = watch_content_text(msg.get("content"))
    return WatchedExecution(call_id, js_template(name), content, msg.get("isError") is True)


def execution_from_entry(data: Any) -> WatchedExecution | None:
    """A `claude-sdk-oauth-tool-watch` custom entry's data (`toolWatchEntry`)."""
    if not isinstance(data, dict) or data.get("type") != "tool_execution_end":
        return None
    call_id, name, content = data.get("toolCallId"), data.get("toolName"), data.get("content")
    if not (isinstance(call_id, str) and isinstance(name, str) and isinstance(content, str)):
        return None
    return WatchedExecution(
        call_id, name, utf16_truncate(content, WATCH_TRACKED_CHARS, TRUNCATED_SUFFIX), data.get("isError") is True
    )


def open_tool_calls(messages: Sequence[Mapping[str, Any]]) -> dict[str, tuple[Any, float]]:
    """Tool calls of context assistants with no tool result in the context: id -> (name, assistant time)."""
    answered: set[Any] = set()
    pending: dict[str, tuple[Any, float]] = {}
    for msg in messages:
        role = msg.get("role")
        if role == "toolResult":
            answered.add(msg.get("toolCallId"))
        elif role == "assistant" and isinstance(msg.get("content"), list):
            ts = msg.get("timestamp")
            when = float(ts) if isinstance(ts, int | float) and not isinstance(ts, bool) else 0.0
            for block in msg["content"]:
                if isinstance(block, dict) and block.get("type") == "toolCall" and isinstance(block.get("id"), str):
                    pending[block["id"]] = (block.get("name"), when)
    return {k: v for k, v in pending.items() if k not in answered}


def tool_watch_note(
    pending: Mapping[str, tuple[Any, float]], completed: Mapping[str, WatchedExecution], namer: ToolNamer
) -> str | None:
    """`buildPromptNote`: up to four unanswered tool calls, newest first, recovered or reported missing."""
    if not pending:
        return None
    ordered = sorted(pending.items(), key=lambda item: -item[1][1])[:WATCH_MAX_NOTES]
    notes: list[str] = []
    for call_id, (name, _when) in ordered:
        execution = completed.get(call_id)
        if execution is None:
            notes.append(
                f"TOOL RESULT (missing execution {namer.sdk_name(name)}, id={call_id}, status=error):\n"
                "Tool execution did not complete or its result was not observed. Do not guess. Call the tool again."
            )
            continue
        status = "error" if execution.is_error else "ok"
        body = utf16_truncate(execution.content or "(empty tool result)", WATCH_NOTE_CHARS, TRUNCATED_SUFFIX)
        notes.append(
            f"TOOL RESULT (recovered {namer.sdk_name(execution.tool_name)}, id={call_id}, status={status}):\n{body}"
        )
    return "\n\n".join(notes) if notes else None
