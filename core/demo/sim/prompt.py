"""Prompt serialization (``senpi-formats.md`` §5): flatten with its envelope, ultrawork dedupe, delta, payloadBytes.

What one call sends to Claude Code: the whole history (flatten / bootstrap) or only the new transmitted
messages (delta), measured the way senpi's ``payloadBytes`` counts them (UTF-8 bytes of text blocks).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.demo.sim.builds import Build
from core.demo.sim.jsjson import JsonObj, js_dumps

ANCHOR = (
    "The above is the conversation history so far, provided as context. Respond as the assistant to the user "
    'message below only. Never emit "USER:" or "ASSISTANT:" labels or continue the transcript.'
)
HISTORY_OPEN = "<conversation_history>\n"
HISTORY_CLOSE = "\n</conversation_history>"
PLACEHOLDER_OLD = "[ultrawork directive superseded; the latest ultrawork directive block below applies]"
PLACEHOLDER_NEW = "[ultrawork directive repeated; identical to the ultrawork directive just above]"
_ULW_SPAN = re.compile(r"<ultrawork-mode>[\s\S]*?</ultrawork-mode>")
_BUILTIN_SDK_NAMES = {"read": "Read", "bash": "Bash", "grep": "Grep", "find": "Glob", "glob": "Glob"}


def text_block(text: str) -> JsonObj:
    return {"type": "text", "text": text}


def sdk_tool_name(name: str, context_tools: frozenset[str], build: Build) -> str:
    """``mapPiToolNameToSdk``: the tool name Claude Code sees, as printed in serializer labels."""
    if name in _BUILTIN_SDK_NAMES:
        return _BUILTIN_SDK_NAMES[name]
    if name in ("write", "edit") and not build.write_edit_custom:
        return name.capitalize()
    if name in context_tools:
        return f"mcp__custom-tools__{name}"
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", name) if part)


def _content_blocks(content: str | list[JsonObj]) -> list[JsonObj]:
    """Flatten's content rule: text and image blocks, plus ``(see attached image)`` when there is no text."""
    if isinstance(content, str):
        blocks = [text_block(content)] if content else []
    else:
        blocks = []
        for block in content:
            if block.get("type") == "text":
                blocks.append(text_block(block["text"]))
            elif block.get("type") == "image":
                blocks.append(_image(block))
    if not any(b["type"] == "text" and b["text"].strip() for b in blocks):
        blocks.append(text_block("(see attached image)"))
    return blocks


def _image(block: JsonObj) -> JsonObj:
    return {"type": "image", "source": {"type": "base64", "media_type": block["mimeType"], "data": block["data"]}}


def _assistant_text(message: JsonObj, context_tools: frozenset[str], build: Build) -> str:
    """One assistant message rendered for the history: text, raw thinking, non-executable tool calls."""
    pieces = []
    for block in message["content"]:
        kind = block.get("type")
        if kind == "text":
            pieces.append(block["text"])
        elif kind == "thinking":
            pieces.append(block["thinking"])
        elif kind == "toolCall":
            name = sdk_tool_name(block["name"], context_tools, build)
            pieces.append(f"Historical tool call (non-executable): {name} args={js_dumps(block['arguments'])}")
        else:
            pieces.append(f"[{kind}]")
    return "\n".join(pieces)


def flatten_prompt_blocks(messages: list[JsonObj], context_tools: frozenset[str], build: Build) -> list[JsonObj]:
    """``buildPromptBlocks`` (§5.1): the full history in an envelope, an anchor, then the final user message.

    ``messages`` is the provider context (after ``convertToLlm``): user, assistant and toolResult messages.
    """
    if build.drop_failed_assistants:
        messages = [m for m in messages if not _is_failed_assistant(m)]
    final = messages[-1] if messages and messages[-1]["role"] == "user" else None
    history = messages[:-1] if final is not None else messages
    blocks: list[JsonObj] = []
    if history:
        blocks.append(text_block(HISTORY_OPEN))
        for i, message in enumerate(history):
            sep = "" if i == 0 else "\n\n"
            role = message["role"]
            if role == "user":
                blocks.append(text_block(f"{sep}USER:\n"))
                blocks.extend(_content_blocks(message["content"]))
            elif role == "assistant":
                blocks.append(text_block(f"{sep}ASSISTANT:\n"))
                text = _assistant_text(message, context_tools, build)
                if text:
                    blocks.append(text_block(text))
            else:
                name = sdk_tool_name(message["toolName"], context_tools, build)
                blocks.append(text_block(f"{sep}TOOL RESULT (historical {name}, id={message['toolCallId']}):\n"))
                blocks.extend(_content_blocks(message["content"]))
        blocks.append(text_block(HISTORY_CLOSE))
    blocks.append(text_block(ANCHOR))
    if final is not None:
        blocks.extend(_content_blocks(final["content"]))
    return blocks


def delta_prompt_blocks(messages: list[JsonObj], context_tools: frozenset[str], build: Build) -> list[JsonObj]:
    """``buildDeltaPromptBlocks`` (§5.3): only the new transmitted messages, ``\\n\\n``-separated."""
    blocks: list[JsonObj] = []
    for i, message in enumerate(messages):
        if i:
            blocks.append(text_block("\n\n"))
        if message["role"] == "toolResult":
            name = sdk_tool_name(message["toolName"], context_tools, build)
            blocks.append(text_block(f"Tool result ({name}, id={message['toolCallId']}):\n"))
        content = message["content"]
        if isinstance(content, str):
            blocks.append(text_block(content))
        else:
            for block in content:
                blocks.append(text_block(block["text"]) if block.get("type") == "text" else _image(block))
    return blocks


def _is_failed_assistant(message: JsonObj) -> bool:
    return message["role"] == "assistant" and message.get("stopReason") in ("error", "aborted")


@dataclass(frozen=True)
class DirectiveSpan:
    """One ``<ultrawork-mode>`` span found in a text block."""

    block: int
    start: int
    end: int
    text: str


def ultrawork_spans(blocks: list[JsonObj], limit: int | None = None) -> list[DirectiveSpan] | None:
    """Every directive span in serialization order, or None when a span is nested across blocks (fail closed).

    Nesting rule chosen here (the reference leaves it open): a text block holding an opening tag with no
    closing tag after it, or a closing tag before any opening tag, is a directive split across blocks.
    """
    spans: list[DirectiveSpan] = []
    end = len(blocks) if limit is None else limit
    for index in range(end):
        block = blocks[index]
        if block["type"] != "text" or "ultrawork-mode>" not in block["text"]:
            continue
        text = block["text"]
        last = 0
        for match in _ULW_SPAN.finditer(text):
            if "</ultrawork-mode>" in text[last : match.start()]:
                return None
            spans.append(DirectiveSpan(index, match.start(), match.end(), match.group(0)))
            last = match.end()
        rest = text[last:]
        if "<ultrawork-mode>" in rest or "</ultrawork-mode>" in rest:
            return None
    return spans


def dedupe_ultrawork(blocks: list[JsonObj], build: Build) -> tuple[list[JsonObj], int]:
    """senpi's ultrawork dedupe (§5.2 OLD keep-last; newer §7.3 repeat-of-previous). Returns (blocks, collapsed).

    The input list is never mutated; replaced blocks are new dicts.
    """
    limit = None
    if build.new_dedupe:
        closers = [i for i, b in enumerate(blocks) if b["type"] == "text" and b["text"] == HISTORY_CLOSE]
        if not closers:
            return blocks, 0
        limit = closers[0]
    spans = ultrawork_spans(blocks, limit)
    if not spans or len(spans) < 2:
        return blocks, 0
    if build.new_dedupe:
        replaced, reference = [], None
        for span in spans:
            if reference is not None and span.text == reference:
                replaced.append(span)
            else:
                reference = span.text
        placeholder = PLACEHOLDER_NEW
    else:
        replaced, placeholder = spans[:-1], PLACEHOLDER_OLD
    if not replaced:
        return blocks, 0
    out = list(blocks)
    by_block: dict[int, list[DirectiveSpan]] = {}
    for span in replaced:
        by_block.setdefault(span.block, []).append(span)
    for index, block_spans in by_block.items():
        text = blocks[index]["text"]
        for span in reversed(block_spans):
            text = text[: span.start] + placeholder + text[span.end :]
        out[index] = {**blocks[index], "text": text}
    return out, len(replaced)


def utf8_len(text: str) -> int:
    """UTF-8 byte length without copying ASCII text."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def payload_bytes(blocks: list[JsonObj]) -> int:
    """``serializedPayloadBytes``: UTF-8 bytes of the text of every text block (images excluded)."""
    return sum(utf8_len(b["text"]) for b in blocks if b["type"] == "text")


@dataclass(frozen=True)
class Payload:
    """What one call sent: bytes after senpi's dedupe, bytes before it, and the directive copies in it."""

    bytes: int
    bytes_raw: int
    directive_copies: int
    directive_bytes: int
    collapsed: int


def measure_payload(blocks: list[JsonObj], build: Build, *, flatten: bool) -> Payload:
    """Apply the dedupe (flatten only) and count bytes and directive copies of one serialized prompt."""
    spans = ultrawork_spans(blocks) or []
    raw = payload_bytes(blocks)
    if flatten:
        deduped, collapsed = dedupe_ultrawork(blocks, build)
        sent = payload_bytes(deduped)
    else:
        sent, collapsed = raw, 0
    return Payload(sent, raw, len(spans), sum(utf8_len(s.text) for s in spans), collapsed)
