"""A deterministic senpi simulator: writes an agent dir exactly as senpi would have written it.

Why this exists: the analysis in ``core.analysis`` recomputes senpi's fingerprints, continuity decisions and
prompt payloads from what senpi leaves on disk. To test it we need data whose *true* values are known. This
module is an independent re-implementation of senpi's behaviour (reference: ``shared/reference/senpi-formats.md``
and ``senpi-newer.md``); it deliberately imports nothing from ``core.analysis`` or ``core.formats`` so that a
cross-check between the two means something.

It writes ``logs/session.log`` (+ ``session.log.1`` by real size-based rotation), ``logs/compaction.log``,
transcripts under ``sessions/``, restart sidecars where the simulated build writes them, and ``--mode json``
event recordings under ``events/``. Every write is stamped by one shared clock and merged across concurrent
sessions in time order, so the files interleave like the real shared log. ``Manifest`` lists the true values
of every turn.

Entry point: :func:`generate`. Command line: ``python -m core.demo.simulate --out DIR --scenario demo``.

Where the reference leaves a question open, this simulator chooses (and the manifest records the result):

* Builds before 2026.8.18-3 write no marker or invalidation entries and no sidecar, so the old-build demo
  session's rewritten commits are visible only in its event recording and in the next call's log line.
* The pending close cause is consumed by every observation emit, not only when it re-attributes a reason.
* In-memory bindings carry no ``sentPrefixHash`` (only sidecar-restored ones do); a rewritten commit forgets
  the in-memory binding only in builds that write invalidation entries.
* A failed call (pump error) closes the live entry with the error text and leaves a retry-checkpoint binding.
* ``message_update`` partials carry no transient ``index``/``partialJson`` at the last update, and no thinking
  ``startedAt``/``endedAt`` at all (agent-core copies them on just before ``message_end``).
* Ultrawork nesting (fail closed): a text block with an unclosed opening tag, or a closing tag before any
  opening tag, counts as a directive split across blocks.
* The new-omo reminder's ``customType`` is ``omo-ultrawork:reminder``; new builds put the environment-context
  message right before the user message (after the omo directive), so it folds into that user message.
* ``--mode json`` lines carry no clock of their own; their write times are in the manifest's ``replay``.
"""

from __future__ import annotations

import argparse
import calendar
import dataclasses
import hashlib
import heapq
import json
import os
import random
import re
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

GENERATOR_VERSION = "1"
JsonObj = dict[str, Any]

# ---------------------------------------------------------------------------------------------------------------
# JavaScript JSON: JSON.stringify output and senpi's canonical digest
# ---------------------------------------------------------------------------------------------------------------


def js_number(value: int | float) -> str:
    """Format a number as JavaScript's ``Number.prototype.toString`` does (JSON.stringify uses it).

    Python and JavaScript agree on the shortest round-trip digits but not on where they switch to
    exponent notation (``1e-07`` vs ``1e-7``, ``1e-05`` vs ``0.00001``), so we re-place the digits.
    """
    if isinstance(value, bool):
        raise TypeError("booleans are not numbers here")
    if isinstance(value, int):
        return str(value)
    if value != value or value in (float("inf"), float("-inf")):
        return "null"
    if value == 0:
        return "0"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    sign = "-" if value < 0 else ""
    dec = Decimal(repr(abs(value)))
    _, digit_tuple, exponent = dec.as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    assert isinstance(exponent, int)
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
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        body = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + body


def js_dumps(value: Any) -> str:
    """``JSON.stringify(value)``: compact, keys in insertion order, JavaScript number and string rules."""
    parts: list[str] = []
    _dump(value, parts, sort=False)
    return "".join(parts)


def canonical_json(value: Any) -> str:
    """senpi's ``JSON.stringify(canonical(value))``: keys sorted in JavaScript ``localeCompare`` order."""
    parts: list[str] = []
    _dump(value, parts, sort=True)
    return "".join(parts)


def _dump(value: Any, out: list[str], *, sort: bool) -> None:
    """Append the JSON text of ``value`` to ``out``; one recursive walk shared by both serializations."""
    if isinstance(value, str):
        out.append(encode_basestring(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int | float):
        out.append(js_number(value))
    elif isinstance(value, dict):
        keys = sorted(value, key=locale_key) if sort else list(value)
        out.append("{")
        for i, key in enumerate(keys):
            if i:
                out.append(",")
            out.append(encode_basestring(key))
            out.append(":")
            _dump(value[key], out, sort=sort)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _dump(item, out, sort=sort)
        out.append("]")
    else:
        raise TypeError(f"not JSON-serializable: {type(value).__name__}")


# ICU root collation, primary level, for ASCII: whitespace, then punctuation in CLDR order, then symbols,
# then digits, then letters (case-insensitive). Case is a tertiary difference, lowercase first.
_PUNCT_ORDER = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
_PRIMARY: dict[str, int] = {ch: i for i, ch in enumerate(_PUNCT_ORDER)}
_PRIMARY.update({d: 100 + int(d) for d in "0123456789"})
_PRIMARY.update({c: 200 + ord(c) - ord("a") for c in "abcdefghijklmnopqrstuvwxyz"})


def locale_key(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Sort key emulating ``String.prototype.localeCompare`` (ICU, en-US) for the keys senpi hashes.

    Full primary strings are compared first (so ``file_path`` < ``filePath``: ``_`` sorts before letters),
    then the case of each character (``ab`` < ``aB`` < ``Ab``). Non-ASCII characters sort after letters by
    code point, which is enough for the key sets this simulator generates.
    """
    primary = tuple(_PRIMARY.get(ch.lower(), 1000 + ord(ch)) for ch in text)
    tertiary = tuple(1 if ch.isupper() else 0 for ch in text)
    return primary, tertiary


def digest(value: Any) -> str:
    """``sessionSyncDigest``: lowercase hex SHA-256 of the canonical JSON of ``value``."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def sent_message_hash(message: JsonObj) -> str:
    """Hash of one transmitted message (§3.4): user → {role, content}; toolResult adds the tool ids."""
    if message["role"] == "toolResult":
        return digest(
            {
                "role": "toolResult",
                "toolCallId": message["toolCallId"],
                "toolName": message["toolName"],
                "content": message["content"],
            }
        )
    return digest({"role": message["role"], "content": message["content"]})


def prefix_digest(hashes: list[str], n: int | None = None) -> str:
    """``sentHashPrefixDigest``: digest of the JSON array of the first ``n`` hashes."""
    return digest(hashes[: len(hashes) if n is None else n])


HASH_VERBATIM = "verbatim"  # builds before v2026.8.11-2
HASH_TIMING_STRIPPED = "timing-stripped"  # v2026.8.11-2 … 2026.9.7
HASH_PROJECTED = "projected"  # 2026.9.7-2 and later


def _project_block(block: JsonObj, rule: str) -> JsonObj:
    """The part of one assistant content block that ``assistantContentHash`` sees under ``rule``."""
    kind = block.get("type")
    if rule == HASH_VERBATIM:
        return block
    if rule == HASH_TIMING_STRIPPED:
        if kind != "thinking":
            return block
        return {k: v for k, v in block.items() if k not in ("startedAt", "endedAt")}
    if kind == "text":
        return {"type": "text", "text": block.get("text")}
    if kind == "thinking":
        return {
            "type": "thinking",
            "thinking": block.get("thinking"),
            "thinkingSignature": block.get("thinkingSignature"),
        }
    if kind == "toolCall":
        return {
            "type": "toolCall",
            "id": block.get("id"),
            "name": block.get("name"),
            "arguments": block.get("arguments"),
        }
    return block


def assistant_content_hash(message: JsonObj, rule: str) -> str:
    """``assistantContentHash`` (§3.5 / newer §5.1) of an assistant message under one build's rule."""
    return digest(
        {
            "role": message["role"],
            "api": message["api"],
            "provider": message["provider"],
            "model": message["model"],
            "content": [_project_block(b, rule) for b in message["content"]],
        }
    )


# ---------------------------------------------------------------------------------------------------------------
# Build profiles: the rules that differ between senpi releases
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Build:
    """What one simulated senpi release does differently. Data, not scattered version checks."""

    version: str
    provider: str  # assistant ``provider`` and model_change provider
    hash_rule: str  # assistantContentHash variant of the commit-boundary check
    markers: bool  # marker/invalidation entries and the sidecar (>= 2026.8.18-3)
    session_id_on_log: bool  # sessionId on continuity/close lines and the AgentSession stamp (>= 2026.9.29)
    failed_kind: bool  # terminal failures log kind ``failed`` instead of count-less ``flatten``
    new_dedupe: bool  # ultrawork dedupe rule of 2026.10.10-10
    first_turn_no_assistant: bool  # "first turn" = no assistant in context (09-09) instead of |H| <= 1
    env_context: bool  # hidden environment-context message, folded into the following user (2026.9.24-3)
    drop_failed_assistants: bool  # convertToLlm drops errored/aborted assistant turns (2026.9.4-2)
    write_edit_custom: bool  # write/edit offered as mcp__custom-tools__ (2026.9.30)
    timeout_retry: bool  # retry-checkpoint decision (2026.8.20)
    new_omo: bool  # omo delivers the ultrawork directive as a hidden custom message
    file_at_first_user: bool  # the transcript is created at the first user message, not the first assistant
    split_options_reason: bool  # options_changed split into system_prompt_changed / toolset_changed (2026.9.7-2)
    fork_at_newest_boundary: bool  # binding forks at the newest mapped boundary in the prefix (2026.9.29)


OLD_BUILD = Build(
    version="2026.8.4-2",
    provider="claude-sdk-oauth",
    hash_rule=HASH_VERBATIM,
    markers=False,
    session_id_on_log=False,
    failed_kind=False,
    new_dedupe=False,
    first_turn_no_assistant=False,
    env_context=False,
    drop_failed_assistants=False,
    write_edit_custom=False,
    timeout_retry=False,
    new_omo=False,
    file_at_first_user=False,
    split_options_reason=False,
    fork_at_newest_boundary=False,
)

NEW_BUILD = Build(
    version="2026.10.10-12",
    provider="anthropic-subscription",
    hash_rule=HASH_PROJECTED,
    markers=True,
    session_id_on_log=True,
    failed_kind=True,
    new_dedupe=True,
    first_turn_no_assistant=True,
    env_context=True,
    drop_failed_assistants=True,
    write_edit_custom=True,
    timeout_retry=True,
    new_omo=True,
    file_at_first_user=True,
    split_options_reason=True,
    fork_at_newest_boundary=True,
)

API_ID = "claude-sdk-oauth"

# ---------------------------------------------------------------------------------------------------------------
# Directive texts injected by the omo plugin (§7)
# ---------------------------------------------------------------------------------------------------------------

ULTRAWORK_SPAN_BYTES = 24_871
"""Size of one ``<ultrawork-mode>…</ultrawork-mode>`` span of the simulated omo version, tags included."""

_ULW_HEAD = (
    "<ultrawork-mode>\n\n**MANDATORY**: First user-visible line this turn MUST be exactly:\n"
    "`ULTRAWORK MODE ENABLED!`\n\n[CODE RED] Maximum precision. "
)
_ULW_TAIL = "\n\nWhen the plan is clear and verified, stop exploring and act.\n\n</ultrawork-mode>"
_ULW_RULES = (
    "Read every file you are about to change before you change it, and read its callers too.",
    "Never guess an API: open its definition, its tests and one real call site first.",
    "Split the work into independent parts and run the independent parts in parallel.",
    "Keep a todo list for anything with more than two steps and keep it current.",
    "After each edit run the narrowest test that proves it, then the wider suite.",
    "A failing test is information: read the whole failure before touching code.",
    "Do not stop at the first plausible cause; confirm it with a reproduction.",
    "Prefer the smallest change that fixes the cause, not the symptom.",
    "Report what you verified and how, and say plainly what you did not verify.",
    "Delegate exploration to background tasks when it does not block the next step.",
)


def _build_ultrawork_span() -> str:
    """The old-omo directive span, padded deterministically to exactly ``ULTRAWORK_SPAN_BYTES`` bytes."""
    lines: list[str] = []
    size = len(_ULW_HEAD) + len(_ULW_TAIL)
    section = 0
    while size < ULTRAWORK_SPAN_BYTES:
        section += 1
        rule = _ULW_RULES[section % len(_ULW_RULES)]
        line = f"\n\n## Rule {section}\n{rule} This applies to every step of this turn without exception."
        lines.append(line)
        size += len(line)
    body = "".join(lines)
    overshoot = len(_ULW_HEAD) + len(body) + len(_ULW_TAIL) - ULTRAWORK_SPAN_BYTES
    body = body[: len(body) - overshoot]
    span = _ULW_HEAD + body + _ULW_TAIL
    assert len(span.encode("utf-8")) == ULTRAWORK_SPAN_BYTES
    return span


ULTRAWORK_SPAN = _build_ultrawork_span()
ULTRAWORK_DIRECTIVE = ULTRAWORK_SPAN + "\n"  # SENPI_ULTRAWORK_DIRECTIVE ends with a newline
ULTRAWORK_REMINDER = (
    "<omo-ultrawork-reminder>ultrawork mode is already armed for this session - the ultrawork directive above "
    "remains binding; re-read it and continue.</omo-ultrawork-reminder>"
)
TASK_USAGE_OLD = "\n".join(
    (
        "<omo-senpi-task>",
        "You can delegate work to background subagents with the task tool family: task_create starts one,",
        "task_status reports progress and task_result collects its final answer. Give each task a",
        "self-contained brief; subagents do not see this conversation.",
        "</omo-senpi-task>",
    )
)
TASK_USAGE_NEW = "\n".join(
    (
        "<omo-senpi-task>",
        "Background task results are automatically delivered: start a task with task(category, prompt) and keep",
        "working; its result arrives as a message when it finishes. Do not poll.",
        "</omo-senpi-task>",
    )
)
ULTRAWORK_TRIGGER = re.compile(r"ultrawork|ulw(?!-)", re.IGNORECASE)


def is_ulw_prompt(text: str) -> bool:
    """omo's trigger (§7.1): ``ultrawork``, or ``ulw`` not directly followed by ``-``, case-insensitive."""
    return bool(ULTRAWORK_TRIGGER.search(text)) and not ("<ultrawork-mode>" in text and "</ultrawork-mode>" in text)


def environment_context(cwd: str, date: str) -> str:
    """The hidden environment-context text of newer builds (newer §5.2)."""
    return f"<environment_context>\n  <cwd>{cwd}</cwd>\n  <current_date>{date}</current_date>\n</environment_context>"


# ---------------------------------------------------------------------------------------------------------------
# Prompt serialization (§5): flatten with envelope, ultrawork dedupe, delta, payloadBytes
# ---------------------------------------------------------------------------------------------------------------

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


def _text(text: str) -> JsonObj:
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
        blocks = [_text(content)] if content else []
    else:
        blocks = []
        for block in content:
            if block.get("type") == "text":
                blocks.append(_text(block["text"]))
            elif block.get("type") == "image":
                blocks.append(_image(block))
    if not any(b["type"] == "text" and b["text"].strip() for b in blocks):
        blocks.append(_text("(see attached image)"))
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
        blocks.append(_text(HISTORY_OPEN))
        for i, message in enumerate(history):
            sep = "" if i == 0 else "\n\n"
            role = message["role"]
            if role == "user":
                blocks.append(_text(f"{sep}USER:\n"))
                blocks.extend(_content_blocks(message["content"]))
            elif role == "assistant":
                blocks.append(_text(f"{sep}ASSISTANT:\n"))
                text = _assistant_text(message, context_tools, build)
                if text:
                    blocks.append(_text(text))
            else:
                name = sdk_tool_name(message["toolName"], context_tools, build)
                blocks.append(_text(f"{sep}TOOL RESULT (historical {name}, id={message['toolCallId']}):\n"))
                blocks.extend(_content_blocks(message["content"]))
        blocks.append(_text(HISTORY_CLOSE))
    blocks.append(_text(ANCHOR))
    if final is not None:
        blocks.extend(_content_blocks(final["content"]))
    return blocks


def delta_prompt_blocks(messages: list[JsonObj], context_tools: frozenset[str], build: Build) -> list[JsonObj]:
    """``buildDeltaPromptBlocks`` (§5.3): only the new transmitted messages, ``\\n\\n``-separated."""
    blocks: list[JsonObj] = []
    for i, message in enumerate(messages):
        if i:
            blocks.append(_text("\n\n"))
        if message["role"] == "toolResult":
            name = sdk_tool_name(message["toolName"], context_tools, build)
            blocks.append(_text(f"Tool result ({name}, id={message['toolCallId']}):\n"))
        content = message["content"]
        if isinstance(content, str):
            blocks.append(_text(content))
        else:
            for block in content:
                blocks.append(_text(block["text"]) if block.get("type") == "text" else _image(block))
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


# ---------------------------------------------------------------------------------------------------------------
# Continuity: registry entry, binding, decision (§4.3 / newer §6) and the observation mapping (§2.6)
# ---------------------------------------------------------------------------------------------------------------

IDLE_TTL_MS = 30 * 60_000
REASONS = frozenset(
    [
        "prefix_matched",
        "registry_miss",
        "idle_ttl",
        "capacity",
        "model_selected",
        "thinking_level_selected",
        "bound_account_token_expiring",
        "account_changed",
        "model_changed",
        "toolset_changed",
        "system_prompt_changed",
        "assistant_stream_diverged",
        "sent_stream_diverged",
        "options_changed",
        "history_rolled_back",
        "assistant_rewritten",
        "transcript_missing",
        "cross_root_unsupported",
        "branch_diverged",
        "branch_boundary_unavailable",
        "branch_resume",
        "tainted_compaction",
        "tainted_fork",
        "tainted_abort",
        "tainted_assistant_provenance_unverified",
        "resume_initialization_failed",
        "resume_initialization_aborted",
        "resume_mode_off",
        "query_failed",
        "turn_attribution_failed",
        "abort_timeout",
        "extensions_removed",
        "session_shutdown",
        "timeout_retry",
        "other",
        "session_unconfirmed",
        "credential_refreshed",
    ]
)


def sanitize_close_cause(text: str) -> str:
    """``sanitizeCloseCause`` (§2.4): vocabulary values pass, known error texts map, the rest is ``other``."""
    if text in REASONS:
        return text
    low = text.lower()
    if "did not terminate" in low or "interrupt failed" in low:
        return "abort_timeout"
    if any(
        s in low
        for s in ("user_message_uuid did not match", "result arrived before replay claim", "pre-replay buffer overflow")
    ):
        return "turn_attribution_failed"
    if any(
        s in low
        for s in ("query ended before", "claude sdk oauth query", "claude code", "anthropic subscription query")
    ):
        return "query_failed"
    return "other"


def sanitize_reason(text: str) -> str:
    """``sanitizeReason`` (§2.4): vocabulary, ``tainted:<x>`` → ``tainted_<x>``, else the close-cause rule."""
    if text in REASONS:
        return text
    if text.startswith("tainted:") and f"tainted_{text[8:]}" in REASONS:
        return f"tainted_{text[8:]}"
    return sanitize_close_cause(text)


@dataclass(frozen=True)
class Fingerprint:
    """The identity a live entry or binding was created with; drift between two of them forces a resume."""

    account: str
    model: str
    system_prompt_hash: str
    toolset_hash: str


@dataclass
class Entry:
    """A live registry entry: one Claude Code query that holds the first ``sent_count`` transmitted messages."""

    sdk_session_id: str
    sent_hashes: list[str]
    sent_count: int
    uuids: dict[int, str]  # assistantUuidByIndex: a call's |H| -> its last top-level SDK assistant uuid
    fingerprint: Fingerprint
    last_used: int
    pending_fork: str | None = None


@dataclass
class Binding:
    """What senpi remembers to resume a closed entry (in memory; sidecar bindings carry a prefix digest)."""

    sdk_session_id: str
    sent_hashes: list[str]
    sent_count: int
    uuids: dict[int, str]
    last_assistant_uuid: str | None
    fingerprint: Fingerprint
    sent_prefix_hash: str | None = None
    unanswered_digest: str | None = None


@dataclass(frozen=True)
class Decision:
    """One result of ``decideNativeContinuity``."""

    kind: str  # bootstrap | delta | reattach | fork | flatten
    start: int = 0  # ``from``: index of the first transmitted message this call sends
    reason: str | None = None
    at_uuid: str | None = None


@dataclass(frozen=True)
class Observation:
    """The logged continuity record: session.log ``kind``/``reason``/``count`` and the diagnostic details."""

    kind: str
    reason: str
    count: int | None


@dataclass(frozen=True)
class CallStart:
    """Everything decided at the start of a provider call."""

    decision: Decision
    observation: Observation
    first_turn: bool
    flatten: bool  # the call sends the whole history (flatten serializer)
    closed: str | None  # reason of the close line written at call start, if a live entry was closed
    from_volatile: bool  # the decision consumed a pending fork left by a timing-only rewrite


_OBSERVED = {"delta": "incremental", "reattach": "resume", "fork": "resume", "flatten": "cold", "bootstrap": "cold"}


class Continuity:
    """senpi's per-session continuity state: live entry, binding, pending close cause; one decision per call.

    The methods follow the order senpi runs them in: :meth:`begin_call` (decision, closes, staged observation),
    :meth:`finish_call` (recordSyncedStream) and :meth:`commit` (the message_end boundary check).
    """

    def __init__(self, build: Build, new_sdk_session: Callable[[], str]) -> None:
        self.build = build
        self._new_sdk_session = new_sdk_session
        self.entry: Entry | None = None
        self.binding: Binding | None = None
        self.pending_close: str | None = None
        self.pending_from_volatile = False  # the pending fork came from a timing-only rewrite

    # -- closing -------------------------------------------------------------------------------------------
    def close(self, raw_reason: str) -> str | None:
        """Close the live entry (keeping a binding); returns the logged reason, or None without an entry."""
        if self.entry is None:
            return None
        self.binding = self._binding_from_entry(self.entry)
        self.entry = None
        self.pending_close = sanitize_reason(raw_reason)
        return self.pending_close

    def idle_expired(self, now: int) -> bool:
        return self.entry is not None and now - self.entry.last_used >= IDLE_TTL_MS

    def last_used(self) -> int | None:
        return self.entry.last_used if self.entry else None

    # -- the decision --------------------------------------------------------------------------------------
    def decide(self, hashes: list[str], fp: Fingerprint, now: int) -> Decision:
        """``decideNativeContinuity`` for this build, given the current hashes and identity."""
        entry = self.entry
        if entry is None:
            return Decision("bootstrap") if self.binding is None else self._from_binding(hashes, fp, self.binding)
        pending = entry.pending_fork
        if pending is not None:
            if pending == "compaction" and self.build.new_dedupe:
                return Decision("flatten", reason="tainted_compaction")
            reason = {"assistant_rewritten": "assistant_rewritten", "compaction": "tainted_compaction"}
            return self._fork_or_flatten(entry, entry.sent_count, reason.get(pending, "other"))
        s = _prefix_len(entry.sent_hashes[: entry.sent_count], hashes)
        if s < entry.sent_count:
            if len(hashes) < entry.sent_count and s == len(hashes):
                return self._fork_or_flatten(entry, len(hashes), "history_rolled_back")
            return self._fork_or_flatten(entry, s + 1, "sent_stream_diverged")
        if now - entry.last_used >= IDLE_TTL_MS:
            return Decision("reattach", entry.sent_count, "idle_ttl")
        drift = self._drift(entry.fingerprint, fp)
        if drift:
            return Decision("reattach", entry.sent_count, drift)
        return Decision("delta", entry.sent_count)

    def _drift(self, have: Fingerprint, want: Fingerprint) -> str | None:
        if have.account != want.account:
            return "account_changed"
        if have.model != want.model:
            return "model_changed"
        split = self.build.split_options_reason
        if have.system_prompt_hash != want.system_prompt_hash:
            return "system_prompt_changed" if split else "options_changed"
        if have.toolset_hash != want.toolset_hash:
            return "toolset_changed" if split else "options_changed"
        return None

    def _fork_or_flatten(self, entry: Entry, n: int, reason: str) -> Decision:
        below = [k for k in entry.uuids if 1 <= k <= n - 1]
        if not below:
            return Decision("flatten", reason=reason)
        k = max(below)
        return Decision("fork", k, reason, entry.uuids[k])

    def _from_binding(self, hashes: list[str], fp: Fingerprint, binding: Binding) -> Decision:
        drift = self._drift(binding.fingerprint, fp)
        if drift and (not self.build.split_options_reason or drift == "model_changed"):
            return Decision("flatten", reason=drift)
        retry = self._retry_checkpoint(hashes, binding)
        if retry is not None:
            return retry
        if binding.sent_prefix_hash is not None:
            intact = prefix_digest(hashes, binding.sent_count) == binding.sent_prefix_hash
            if len(hashes) >= binding.sent_count and intact:
                return Decision("reattach", binding.sent_count, drift or "registry_miss")
            rolled = len(hashes) < binding.sent_count
            return Decision("flatten", reason="history_rolled_back" if rolled else "sent_stream_diverged")
        s = _prefix_len(binding.sent_hashes, hashes)
        if s == binding.sent_count:
            return Decision("reattach", binding.sent_count, drift or "registry_miss")
        reason = "history_rolled_back" if s < binding.sent_count else "sent_stream_diverged"
        if not self.build.fork_at_newest_boundary:
            if not binding.last_assistant_uuid:
                return Decision("flatten", reason="registry_miss")
            return Decision("fork", s, reason, binding.last_assistant_uuid)
        within = [k for k in binding.uuids if 1 <= k <= s]
        if not within:
            return Decision("flatten", reason=reason if binding.last_assistant_uuid else "registry_miss")
        k = max(within)
        return Decision("fork", k, reason, binding.uuids[k])

    def _retry_checkpoint(self, hashes: list[str], binding: Binding) -> Decision | None:
        if not self.build.timeout_retry or binding.unanswered_digest is None:
            return None
        if prefix_digest(hashes) != binding.unanswered_digest or len(hashes) < binding.sent_count:
            return None
        if _prefix_len(binding.sent_hashes, hashes) != binding.sent_count:
            return None
        if not binding.last_assistant_uuid:
            return Decision("flatten", reason="timeout_retry")
        return Decision("fork", binding.sent_count, "timeout_retry", binding.last_assistant_uuid)

    # -- executing a call ----------------------------------------------------------------------------------
    def begin_call(self, hashes: list[str], fp: Fingerprint, now: int, *, has_assistant: bool) -> CallStart:
        """Decide, close/replace the entry the way ``createResidentAttempt`` does, and stage the observation."""
        if self.build.first_turn_no_assistant:
            first_turn = self.entry is None and self.binding is None and not has_assistant
        else:
            first_turn = self.entry is None and self.binding is None and len(hashes) <= 1
        decision = self.decide(hashes, fp, now)
        from_volatile = bool(self.entry and self.entry.pending_fork and self.pending_from_volatile)
        observed_reason = decision.reason or ("registry_miss" if decision.kind == "bootstrap" else None)
        closed: str | None = None
        if decision.kind in ("reattach", "fork"):
            source = self.binding if self.entry is None else self._binding_from_entry(self.entry)
            assert source is not None
            closed = self.close("reattach")
            start = decision.start
            self.entry = Entry(
                sdk_session_id=self._new_sdk_session() if decision.kind == "fork" else source.sdk_session_id,
                sent_hashes=hashes[:start],
                sent_count=start,
                uuids={k: v for k, v in source.uuids.items() if k <= start},
                fingerprint=fp,
                last_used=now,
            )
        elif decision.kind in ("flatten", "bootstrap"):
            closed = self.close(observed_reason or "registry_miss")
            self.entry = Entry(self._new_sdk_session(), [], 0, {}, fp, now)
        observation = self._observe(decision, observed_reason, first_turn, len(hashes))
        self.pending_from_volatile = False
        flatten = decision.kind in ("flatten", "bootstrap")
        return CallStart(decision, observation, first_turn, flatten, closed, from_volatile)

    def _observe(self, decision: Decision, reason: str | None, first_turn: bool, n: int) -> Observation:
        """``observeSessionSyncDecision`` (§2.6); the pending close cause is consumed at emit."""
        observed = _OBSERVED[decision.kind]
        pending, self.pending_close = self.pending_close, None
        if observed == "incremental":
            return Observation("delta", "prefix_matched", n - decision.start)
        if observed == "resume":
            if reason == "registry_miss" and pending:
                final = pending
            else:
                final = "branch_resume" if reason is None else sanitize_reason(reason)
            return Observation("fork", final, n - decision.start)
        final = pending if reason == "registry_miss" and pending else sanitize_reason(reason or "registry_miss")
        kind = "bootstrap" if first_turn and final == "registry_miss" else "flatten"
        return Observation(kind, final, n)

    def finish_call(self, hashes: list[str], sdk_uuid: str, now: int) -> None:
        """``recordSyncedStream`` after a successful call, and the in-memory binding built from it."""
        entry = self.entry
        assert entry is not None
        entry.sent_hashes = list(hashes)
        entry.sent_count = len(hashes)
        entry.uuids[len(hashes)] = sdk_uuid
        entry.last_used = now
        self.binding = self._binding_from_entry(entry)

    def fail_call(self, hashes: list[str], error: str) -> str | None:
        """Every attempt failed: close the entry with the pump error, remember a retry checkpoint binding."""
        checkpoint = self._binding_from_entry(self.entry) if self.entry else self.binding
        closed = self.close(error)
        if checkpoint is not None:
            checkpoint.unanswered_digest = prefix_digest(hashes)
            self.binding = checkpoint
        return closed

    def commit_rewritten(self, volatile_only: bool) -> None:
        """A rewritten commit records the pending fork that the next call consumes."""
        if self.entry is not None:
            self.entry.pending_fork = "assistant_rewritten"
            self.pending_from_volatile = volatile_only
        if self.build.markers:
            self.binding = None  # invalidate: forget the in-memory binding

    @staticmethod
    def _binding_from_entry(entry: Entry) -> Binding:
        return Binding(
            sdk_session_id=entry.sdk_session_id,
            sent_hashes=entry.sent_hashes[: entry.sent_count],
            sent_count=entry.sent_count,
            uuids=dict(entry.uuids),
            last_assistant_uuid=entry.uuids.get(entry.sent_count),
            fingerprint=entry.fingerprint,
        )


def _prefix_len(a: list[str], b: list[str]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


# ---------------------------------------------------------------------------------------------------------------
# Deterministic ids, clock formatting and content
# ---------------------------------------------------------------------------------------------------------------


def iso_ms(ms: int) -> str:
    """JavaScript ``Date.prototype.toISOString`` of epoch milliseconds."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def parse_iso_ms(text: str) -> int:
    """Inverse of :func:`iso_ms`."""
    base = calendar.timegm(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S"))
    return base * 1000 + int(text[20:23])


def uuid7(ms: int, rng: random.Random) -> str:
    """A UUIDv7 (48-bit ms timestamp, version 7, variant 10) from a seeded generator."""
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | rng.getrandbits(12) << 64 | 0b10 << 62 | rng.getrandbits(62)
    return _uuid_text(value)


def uuid4(rng: random.Random) -> str:
    """A UUIDv4 from a seeded generator (Claude Code message uuids)."""
    value = rng.getrandbits(128) & ~(0xF << 76) | 0x4 << 76
    value = value & ~(0b11 << 62) | 0b10 << 62
    return _uuid_text(value)


def _uuid_text(value: int) -> str:
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def tool_call_id(rng: random.Random) -> str:
    return "toolu_01" + "".join(rng.choice(_B62) for _ in range(22))


def thinking_signature(rng: random.Random) -> str:
    return "Eq" + "".join(rng.choice(_B62 + "+/") for _ in range(rng.randint(180, 420))) + "=="


_WORDS = [
    "ledger",
    "account",
    "balance",
    "cursor",
    "page",
    "row",
    "batch",
    "stream",
    "retry",
    "job",
    "queue",
    "entry",
    "posting",
    "journal",
    "period",
    "snapshot",
    "reconcile",
    "import",
    "export",
    "window",
    "offset",
    "limit",
    "token",
    "checksum",
    "audit",
    "tenant",
    "currency",
    "amount",
    "settlement",
    "statement",
    "invoice",
    "schedule",
    "worker",
    "lease",
    "lock",
    "timeout",
    "backoff",
    "migration",
    "index",
    "schema",
]
_VERBS = [
    "load",
    "read",
    "parse",
    "apply",
    "build",
    "merge",
    "split",
    "flush",
    "fetch",
    "emit",
    "check",
    "verify",
    "commit",
    "rollback",
    "encode",
]


class Texts:
    """Seeded generators for the bulky parts of a session: source files, command output, prose."""

    def __init__(self, rng: random.Random, scale: float) -> None:
        self.rng = rng
        self.scale = scale

    def _n(self, lines: int) -> int:
        return max(3, int(lines * self.scale))

    def ident(self) -> str:
        return f"{self.rng.choice(_VERBS)}_{self.rng.choice(_WORDS)}"

    def source_file(self, path: str, lines: int) -> str:
        """A Python-looking module, the shape ``read`` returns."""
        rng = self.rng
        out = [f'"""{path}: {" ".join(rng.sample(_WORDS, 4))}."""', "", "from __future__ import annotations", ""]
        while len(out) < self._n(lines):
            name, arg = self.ident(), rng.choice(_WORDS)
            out += [
                f"def {name}({arg}: {rng.choice(['int', 'str', 'Row', 'Batch', 'Cursor'])}) -> None:",
                f'    """{rng.choice(_VERBS).capitalize()} the {arg} {rng.choice(_WORDS)}."""',
            ]
            for _ in range(rng.randint(2, 7)):
                call = f"{self.ident()}({arg}, {rng.choice(_WORDS)}={rng.randint(0, 999)})"
                out.append(f"    {rng.choice(_WORDS)} = {call}")
            out += [f"    return {rng.choice(_WORDS)}", ""]
        return "\n".join(out)

    def pytest_output(self, lines: int, failed: int = 0) -> str:
        rng, out = self.rng, ["============================= test session starts =============================="]
        out.append("platform linux -- Python 3.12.4, pytest-8.3.2, pluggy-1.5.0")
        n = self._n(lines)
        for i in range(n):
            status = "FAILED" if i < failed else "PASSED"
            out.append(
                f"tests/test_{rng.choice(_WORDS)}.py::test_{self.ident()}[{rng.choice(_WORDS)}] {status} "
                f"[{100 * (i + 1) // n:3d}%]"
            )
        out.append(
            f"======================== {n - failed} passed, {failed} failed in {rng.uniform(1, 40):.2f}s "
            "========================"
        )
        return "\n".join(out)

    def grep_output(self, pattern: str, lines: int) -> str:
        rng = self.rng
        return "\n".join(
            f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.py:{rng.randint(1, 900)}:    {self.ident()}({pattern})"
            for _ in range(self._n(lines))
        )

    def diagnostics(self, lines: int) -> str:
        rng = self.rng
        return "\n".join(
            f"src/{rng.choice(_WORDS)}.py:{rng.randint(1, 500)}:{rng.randint(1, 60)} "
            f'{rng.choice(["error", "warning", "hint"])}: "{rng.choice(_WORDS)}" is possibly unbound'
            for _ in range(self._n(lines))
        )

    def ast_matches(self, lines: int) -> str:
        rng = self.rng
        return "\n".join(
            f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.py:{rng.randint(1, 700)}: for row in "
            f"{self.ident()}({rng.choice(_WORDS)}):"
            for _ in range(self._n(lines))
        )

    def sentences(self, count: int) -> str:
        rng, out = self.rng, []
        for _ in range(count):
            a, b, c = rng.sample(_WORDS, 3)
            out.append(
                rng.choice(
                    (
                        f"The {a} path calls {self.ident()} before the {b} commits, so a retry can see a stale {c}.",
                        f"I should {rng.choice(_VERBS)} the {a} first and only then touch the {b} {c}.",
                        f"If the {a} {b} is empty the loop exits early and the {c} is never flushed.",
                        f"The test for {self.ident()} covers the {a} case but not an interrupted {b}.",
                        f"Keeping the {a} as a generator avoids holding every {b} in memory during the {c}.",
                    )
                )
            )
        return " ".join(out)


# ---------------------------------------------------------------------------------------------------------------
# The sink: one shared clock, writes applied in time order, size-based rotation, replay ops for the writer
# ---------------------------------------------------------------------------------------------------------------

SESSION_LOG = "logs/session.log"
DEFAULT_ROTATE_BYTES = 5 * 1024 * 1024


@dataclass
class Located:
    """Where a written line ended up: filled in by the sink, resolved after rotation."""

    log_file: str | None = None
    log_line: int | None = None
    offset: int | None = None


@dataclass
class Write:
    """One write senpi (or the event recorder) does at ``ms``: append bytes, or replace a whole file."""

    ms: int
    kind: str  # "append" | "replace"
    path: str
    data: bytes
    locate: Located | None = None


class Sink:
    """Applies writes to disk in global time order. Rotates ``session.log`` the way senpi does (§2.1)."""

    def __init__(self, root: Path, rotate_bytes: int, record_replay: bool) -> None:
        self.root = root
        self.rotate_bytes = rotate_bytes
        self.sizes: dict[str, int] = {}
        self.lines: dict[str, int] = {}
        self.generation = 0
        self.rotations: list[int] = []
        self._handles: dict[str, Any] = {}
        self._pending_locations: list[tuple[Located, int]] = []  # (location, generation) of session.log lines
        self.replay: list[list[Any]] | None = [] if record_replay else None
        self._replay_gen: list[int | None] = []

    def apply(self, write: Write) -> None:
        if write.kind == "replace":
            self._replace(write)
            return
        if write.path == SESSION_LOG:
            size = self.sizes.get(SESSION_LOG, 0)
            if size and size + len(write.data) > self.rotate_bytes:
                self._rotate(write.ms)
        offset = self.sizes.get(write.path, 0)
        line = self.lines.get(write.path, 0) + 1
        handle = self._handle(write.path)
        handle.write(write.data)
        self.sizes[write.path] = offset + len(write.data)
        self.lines[write.path] = self.lines.get(write.path, 0) + write.data.count(b"\n")
        if write.locate is not None:
            write.locate.log_file, write.locate.log_line, write.locate.offset = write.path, line, offset
            if write.path == SESSION_LOG:
                self._pending_locations.append((write.locate, self.generation))
        if self.replay is not None:
            self.replay.append([write.ms, "a", write.path, write.path, offset, len(write.data)])
            self._replay_gen.append(self.generation if write.path == SESSION_LOG else None)

    def _handle(self, rel: str) -> Any:
        handle = self._handles.get(rel)
        if handle is None:
            if len(self._handles) >= 64:
                self.close_all()
            path = self.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = self._handles[rel] = open(path, "ab")  # noqa: SIM115 - kept open across writes
        return handle

    def _rotate(self, ms: int) -> None:
        """Delete ``session.log.1`` and rename ``session.log`` to it: only one old generation survives."""
        self._close(SESSION_LOG)
        old = self.root / (SESSION_LOG + ".1")
        if old.exists():
            old.unlink()
        os.replace(self.root / SESSION_LOG, old)
        self.sizes[SESSION_LOG + ".1"] = self.sizes.pop(SESSION_LOG)
        self.lines[SESSION_LOG + ".1"] = self.lines.pop(SESSION_LOG, 0)
        self.generation += 1
        self.rotations.append(ms)
        if self.replay is not None:
            self.replay.append([ms, "r", SESSION_LOG])
            self._replay_gen.append(None)

    def _replace(self, write: Write) -> None:
        """Atomic whole-file write (temp file + rename), as senpi writes the sidecar."""
        path = self.root / write.path
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(write.data)
        os.replace(tmp, path)
        if self.replay is not None:
            self.replay.append([write.ms, "w", write.path])
            self._replay_gen.append(None)

    def _close(self, rel: str) -> None:
        handle = self._handles.pop(rel, None)
        if handle is not None:
            handle.close()

    def close_all(self) -> None:
        for rel in list(self._handles):
            self._close(rel)

    def finish(self) -> None:
        """Close files and resolve which generation of session.log each located line ended up in."""
        self.close_all()
        names = {self.generation: SESSION_LOG, self.generation - 1: SESSION_LOG + ".1"}
        for located, gen in self._pending_locations:
            located.log_file = names.get(gen)
            if located.log_file is None:
                located.log_line = located.offset = None
        if self.replay is not None:
            kept = []
            for op, gen in zip(self.replay, self._replay_gen, strict=True):
                if gen is not None:
                    if gen not in names:
                        continue
                    op[3] = names[gen]
                kept.append(op)
            self.replay = kept


# ---------------------------------------------------------------------------------------------------------------
# Manifest: the true values of everything written
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class TurnTruth:
    """One provider call (= one assistant message) and what senpi decided, logged and sent for it."""

    index: int  # assistant messages of the session from 0, in file order
    prompt: int  # user prompt this call answers, from 0
    entry_id: str = ""
    ts: str = ""  # assistant message.timestamp (call start)
    log: Located = field(default_factory=Located)  # the continuity line in session.log
    log_ts: str = ""
    kind: str = ""  # logged kind
    reason: str = ""
    count: int | None = None
    decision: str = ""  # internal decision: bootstrap | delta | reattach | fork | flatten
    decision_from: int = 0
    decision_reason: str | None = None
    first_turn: bool = False
    sent_messages: int = 0  # |H|: transmitted messages in the provider context
    logged_payload_bytes: int | None = None  # payloadBytes in the diagnostic (flatten/bootstrap only)
    collapsed_directives: int | None = None  # collapsedDirectives in the diagnostic
    payload_bytes: int = 0  # UTF-8 text bytes actually sent (flatten after dedupe, or the delta)
    payload_bytes_raw: int = 0  # the same before the dedupe
    directive_copies: int = 0  # <ultrawork-mode> spans in the serialized prompt, before the dedupe
    directive_bytes: int = 0
    commit: str = ""  # clean | rewritten | failed
    volatile_only_rewrite: bool = False  # rewritten only because thinking startedAt/endedAt were stamped late
    resend_from_volatile: bool = False  # this call re-sent history because of a volatile-only rewrite
    close_before: str | None = None  # reason of a close line logged at this call's start
    stable_kind: str = ""  # what a build with a stable fingerprint would have logged
    stable_reason: str = ""
    stable_count: int | None = None
    stable_payload_bytes: int = 0
    stop_reason: str = ""
    thinking: bool = False
    tool_calls: int = 0
    marker: bool = False
    invalidation: bool = False
    capture_hash: str = ""  # assistantContentHash of the last message_update partial (build rule)
    commit_hash: str = ""  # assistantContentHash of the committed message (build rule)
    hash_verbatim: str = ""
    hash_timing_stripped: str = ""
    hash_projected: str = ""


@dataclass
class CloseTruth:
    """One ``claude_sdk_oauth_session_close`` line."""

    ts: str
    reason: str
    raw: str
    when: str  # call_start | idle_reaper | thinking_level | failure | shutdown
    log: Located = field(default_factory=Located)


@dataclass
class SessionTruth:
    """A simulated senpi session and its files (paths relative to the agent dir)."""

    session_id: str
    build: str
    provider: str
    model: str
    cwd: str
    transcript: str
    events: str | None
    sidecar: str | None
    started: str
    ended: str = ""
    prompts: int = 0
    ulw_prompts: int = 0
    turns: list[TurnTruth] = field(default_factory=list)
    closes: list[CloseTruth] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    hostile_entry_ids: list[str] = field(default_factory=list)


@dataclass
class ProblemTruth:
    """A deliberately bad line: where it is and what is wrong with it."""

    path: str
    kind: str  # bad_json | truncated | invalid_utf8 | torn
    log: Located = field(default_factory=Located)


@dataclass
class FileTruth:
    path: str
    bytes: int
    lines: int


@dataclass
class Manifest:
    """The true values behind a generated agent dir. JSON-dumpable with :meth:`to_json`."""

    scenario: str
    seed: int
    scale: float
    generator_version: str = GENERATOR_VERSION
    agent_dir_virtual: str = ""  # the agent dir senpi "ran" in (sidecar sessionPath values point inside it)
    rotate_bytes: int = DEFAULT_ROTATE_BYTES
    rotations: list[str] = field(default_factory=list)
    ultrawork_span_bytes: int = ULTRAWORK_SPAN_BYTES
    started: str = ""
    ended: str = ""
    sessions: list[SessionTruth] = field(default_factory=list)
    problems: list[ProblemTruth] = field(default_factory=list)
    files: list[FileTruth] = field(default_factory=list)
    replay: list[list[Any]] | None = None  # the writes in time order, for DemoWriter (demo only)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), ensure_ascii=False, separators=(",", ":"))

    @staticmethod
    def load(path: Path) -> JsonObj:
        """The manifest as plain JSON (tests and the writer only need dict access)."""
        return json.loads(path.read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------------------------------------------
# Session scripts
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolSpec:
    """One tool call the model makes and the result the tool returns."""

    name: str
    args: JsonObj
    output: str
    duration_ms: int = 400


@dataclass(frozen=True)
class CallSpec:
    """One provider call: optional thinking, then text and/or tool calls; or a terminal failure."""

    thinking: bool = False
    text: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class PromptSpec:
    """One user prompt and the calls of the agent run it starts."""

    text: str
    calls: tuple[CallSpec, ...]
    gap_ms: int = 60_000  # time since the previous activity
    thinking_level: str | None = None  # the user changes the thinking level right before this prompt
    hostile: bool = False


@dataclass(frozen=True)
class SessionSpec:
    """Everything fixed about one session; prompts are produced lazily so a corpus streams."""

    build: Build
    cwd: str
    model: str
    start_ms: int
    prompts: Callable[[Texts], Iterator[PromptSpec]]
    context_tools: frozenset[str]
    account: str = "personal"
    thinking_level: str = "high"
    omo: bool = True
    record_events: bool = False
    bad_transcript_lines: bool = False
    compaction_log: bool = True


AGENT_HOME = "/home/mika/.senpi/agent"
_PRICES = {"input": 5e-6, "output": 25e-6, "cacheRead": 0.5e-6, "cacheWrite": 6.25e-6}


def _usage(inp: int, out: int, cache_read: int, cache_write: int) -> JsonObj:
    """pi's Usage object with costs at the model's list prices (rounded like a float sum would print)."""
    tokens = {"input": inp, "output": out, "cacheRead": cache_read, "cacheWrite": cache_write}
    cost = {k: round(v * _PRICES[k], 8) for k, v in tokens.items()}
    cost["total"] = round(sum(cost.values()), 8)
    return {**tokens, "totalTokens": inp + out + cache_read + cache_write, "cost": cost}


_ZERO_USAGE = _usage(0, 0, 0, 0)


def sanitize_terminal_failure(error_message: str) -> str:
    """``sanitizeTerminalFailure`` for an Error: a non-``other`` close cause, else ``query_failed``."""
    cause = sanitize_close_cause(error_message)
    return cause if cause != "other" else "query_failed"


# ---------------------------------------------------------------------------------------------------------------
# One session: transcript entries, --mode json events and log lines, driven by the continuity state machine
# ---------------------------------------------------------------------------------------------------------------


class SessionSim:
    """Plays one session script and yields its writes step by step, each step sorted by time.

    The provider context (``self.context``) and the transmitted-message hashes (``self.hashes``) grow as
    messages arrive; each call runs the real decision (``self.continuity``) and, for the counterfactual, the
    same decision with a fingerprint that never changes for volatile fields (``self.shadow``).
    """

    def __init__(self, spec: SessionSpec, rng: random.Random, scale: float) -> None:
        self.spec = spec
        self.build = spec.build
        self.rng = rng
        self.texts = Texts(rng, scale)
        self.clock = spec.start_ms
        self.session_id = uuid7(spec.start_ms, rng)
        encoded = re.sub(r"[/\\:]", "-", spec.cwd.lstrip("/\\"))
        stamp = iso_ms(spec.start_ms).replace(":", "-").replace(".", "-")
        self.transcript = f"sessions/--{encoded}--/{stamp}_{self.session_id}.jsonl"
        self.sidecar = self.transcript + ".claude-sdk-oauth-binding.json" if spec.build.markers else None
        self.events = f"events/{self.session_id}.jsonl" if spec.record_events else None
        self.thinking_level = spec.thinking_level
        self.context: list[JsonObj] = []
        self.transmitted: list[JsonObj] = []
        self.hashes: list[str] = []
        self.has_assistant = False
        self.context_chars = 0
        self.env_date: str | None = None
        self.ulw_armed = False
        self.continuity = Continuity(spec.build, self._new_sdk_session)
        self.shadow = Continuity(spec.build, self._new_sdk_session)
        self.truth = SessionTruth(
            session_id=self.session_id,
            build=spec.build.version,
            provider=spec.build.provider,
            model=spec.model,
            cwd=spec.cwd,
            transcript=self.transcript,
            events=self.events,
            sidecar=None,
            started=iso_ms(self.clock),
        )
        self.problems: list[ProblemTruth] = []
        self._buffer: list[bytes] | None = []
        self._ids: set[str] = set()
        self._last_id: str | None = None
        self._writes: list[Write] = []
        self._run_messages: list[JsonObj] = []
        self._turn_open = False
        self._compaction_generation = 0
        self._stale_compaction = False

    # -- plumbing ------------------------------------------------------------------------------------------
    def _new_sdk_session(self) -> str:
        return uuid7(self.clock, self.rng)

    def _new_id(self) -> str:
        while True:
            entry_id = f"{self.rng.getrandbits(32):08x}"
            if entry_id not in self._ids:
                self._ids.add(entry_id)
                return entry_id

    def _step(self) -> list[Write]:
        writes, self._writes = sorted(self._writes, key=lambda w: w.ms), []
        return writes

    def _emit(self, ms: int, path: str, data: bytes, locate: Located | None = None, kind: str = "append") -> None:
        self._writes.append(Write(ms, kind, path, data, locate))

    def _entry(self, entry: JsonObj, ms: int, locate: Located | None = None) -> str:
        """Append one transcript entry (buffered until senpi creates the file)."""
        line = (js_dumps(entry) + "\n").encode("utf-8")
        if self._buffer is not None:
            self._buffer.append(line)
        else:
            self._emit(ms, self.transcript, line, locate)
        return entry.get("id", "")

    def _flush_transcript(self, ms: int) -> None:
        """senpi creates the session file with everything buffered so far in one write."""
        if self._buffer is not None:
            self._emit(ms, self.transcript, b"".join(self._buffer))
            self._buffer = None

    def _link(self, entry_id: str) -> str | None:
        parent, self._last_id = self._last_id, entry_id
        return parent

    def _message_entry(self, message: JsonObj, ms: int) -> str:
        entry_id = self._new_id()
        entry = {
            "type": "message",
            "id": entry_id,
            "parentId": self._link(entry_id),
            "timestamp": iso_ms(ms),
            "message": message,
        }
        return self._entry(entry, ms)

    def _custom_entry(self, custom_type: str, data: JsonObj, ms: int) -> str:
        entry_id = self._new_id()
        entry = {
            "type": "custom",
            "customType": custom_type,
            "data": data,
            "id": entry_id,
            "parentId": self._link(entry_id),
            "timestamp": iso_ms(ms),
        }
        return self._entry(entry, ms)

    def _event(self, event: JsonObj, ms: int) -> None:
        if self.events is not None:
            self._emit(ms, self.events, (js_dumps(event) + "\n").encode("utf-8"))

    def _message_events(self, message: JsonObj, ms: int) -> None:
        self._event({"type": "message_start", "message": message}, ms)
        self._event({"type": "message_end", "message": message}, ms)
        self._run_messages.append(message)

    def _log(self, ms: int, event: str, data: JsonObj, level: str = "info", locate: Located | None = None) -> None:
        line = {"ts": iso_ms(ms), "level": level, "event": event, **data}
        self._emit(ms, SESSION_LOG, (js_dumps(line) + "\n").encode("utf-8"), locate)

    def _stamp(self) -> JsonObj:
        """The AgentSession logger's context stamp of newer builds (sessionId, provider, model first)."""
        if not self.build.session_id_on_log:
            return {}
        return {"sessionId": self.session_id, "provider": self.build.provider, "model": self.spec.model}

    def _log_close(self, ms: int, raw: str, reason: str, when: str) -> None:
        close = CloseTruth(iso_ms(ms), reason, raw, when)
        data: JsonObj = {"reason": reason}
        if self.build.session_id_on_log:
            data["sessionId"] = self.session_id
        self._log(ms, "claude_sdk_oauth_session_close", data, locate=close.log)
        self.truth.closes.append(close)

    def _log_continuity(self, ms: int, obs: Observation, turn: TurnTruth) -> None:
        data: JsonObj = {"kind": obs.kind, "reason": obs.reason}
        if obs.count is not None:
            data["count"] = obs.count
        if self.build.session_id_on_log:
            data["sessionId"] = self.session_id
        self._log(ms, "claude_sdk_oauth_session_continuity", data, locate=turn.log)
        turn.log_ts = iso_ms(ms)

    def _compaction(self, ms: int, event: str) -> None:
        if self.spec.compaction_log:
            line = {
                "ts": iso_ms(ms),
                "level": "debug",
                "event": event,
                "generation": self._compaction_generation,
                "origin": "speculative",
            }
            self._emit(ms, "logs/compaction.log", (js_dumps(line) + "\n").encode("utf-8"))

    def _fingerprint(self) -> Fingerprint:
        """Opaque identity hashes; the thinking level is part of ``toolsetHash`` (§4.8)."""
        tools = sorted(self.spec.context_tools)
        toolset = {
            "tools": tools,
            "reasoning": {"thinking": self.thinking_level != "off", "effort": self.thinking_level},
            "cwd": self.spec.cwd,
        }
        return Fingerprint(
            self.spec.account, self.spec.model, digest(f"system prompt for {self.spec.cwd}"), digest(toolset)
        )

    # -- context -------------------------------------------------------------------------------------------
    def _transmit(self, llm: JsonObj, chars: int) -> None:
        self.context.append(llm)
        self.transmitted.append(llm)
        self.hashes.append(sent_message_hash(llm))
        self.context_chars += chars

    def _custom_message(
        self, custom_type: str, content: str, ms: int, details: JsonObj | None, transmit: bool = True
    ) -> None:
        """A hidden extension message: a ``custom_message`` entry, a user-role message in the context."""
        entry_id = self._new_id()
        entry: JsonObj = {"type": "custom_message", "customType": custom_type, "content": content, "display": False}
        message: JsonObj = {"role": "custom", "customType": custom_type, "content": content, "display": False}
        if details is not None:
            entry["details"] = details
            message["details"] = details
        message["timestamp"] = ms
        entry.update({"id": entry_id, "parentId": self._link(entry_id), "timestamp": iso_ms(ms)})
        self._entry(entry, ms)
        self._message_events(message, ms)
        if transmit:
            self._transmit({"role": "user", "content": [_text(content)]}, len(content))

    # -- the session ---------------------------------------------------------------------------------------
    def run(self) -> Iterator[list[Write]]:
        """The whole session as steps of writes; each step's writes are later than the previous step's."""
        self._start()
        yield self._step()
        for number, prompt in enumerate(self.spec.prompts(self.texts)):
            yield from self._prompt(number, prompt)
        self.clock += self.rng.randint(5_000, 60_000)
        closed = self.continuity.close("quit")
        self.shadow.close("quit")
        if closed:
            self._log_close(self.clock, "quit", closed, "shutdown")
        self._flush_transcript(self.clock)
        if self.spec.bad_transcript_lines:
            self._bad_transcript_lines()
        self._finish_truth()
        yield self._step()
        self._release()

    def _release(self) -> None:
        """Drop the history once the session is over: only its truth stays, so a corpus streams."""
        self.context, self.transmitted, self.hashes = [], [], []
        self.continuity = self.shadow = Continuity(self.build, self._new_sdk_session)

    def _start(self) -> None:
        ms = self.clock
        self._entry(
            {"type": "session", "version": 3, "id": self.session_id, "timestamp": iso_ms(ms), "cwd": self.spec.cwd}, ms
        )
        entry_id = self._new_id()
        self._entry(
            {
                "type": "model_change",
                "id": entry_id,
                "parentId": self._link(entry_id),
                "timestamp": iso_ms(ms + 1),
                "provider": self.build.provider,
                "modelId": self.spec.model,
            },
            ms,
        )
        entry_id = self._new_id()
        self._entry(
            {
                "type": "thinking_level_change",
                "id": entry_id,
                "parentId": self._link(entry_id),
                "timestamp": iso_ms(ms + 2),
                "thinkingLevel": self.thinking_level,
            },
            ms,
        )
        self._event(
            {"type": "session", "version": 3, "id": self.session_id, "timestamp": iso_ms(ms), "cwd": self.spec.cwd}, ms
        )
        self.clock += 2

    def _prompt(self, number: int, prompt: PromptSpec) -> Iterator[list[Write]]:
        self.clock += prompt.gap_ms
        self._reap_if_idle()
        if prompt.thinking_level:
            self._change_thinking_level(prompt.thinking_level)
        self._user_input(number, prompt)
        yield self._step()
        for index, call in enumerate(prompt.calls):
            if index:
                self._event({"type": "turn_start"}, self.clock)
            self._call(number, call)
            yield self._step()
        self._event({"type": "agent_end", "messages": self._run_messages}, self.clock)
        self._run_messages = []
        yield self._step()

    def _reap_if_idle(self) -> None:
        """The idle reaper (an unref'd 30-minute timer) closes a live entry that nobody used."""
        last_used = self.continuity.last_used()
        if last_used is None:
            return
        reap_at = last_used + IDLE_TTL_MS + self.rng.randint(200, 59_000)
        if reap_at < self.clock:
            closed = self.continuity.close("idle_ttl")
            self.shadow.close("idle_ttl")
            if closed:
                self._log_close(reap_at, "idle_ttl", closed, "idle_reaper")

    def _change_thinking_level(self, level: str) -> None:
        ms = self.clock
        self.thinking_level = level
        entry_id = self._new_id()
        self._entry(
            {
                "type": "thinking_level_change",
                "id": entry_id,
                "parentId": self._link(entry_id),
                "timestamp": iso_ms(ms),
                "thinkingLevel": level,
            },
            ms,
        )
        closed = self.continuity.close("thinking_level_selected")
        self.shadow.close("thinking_level_selected")
        if closed:
            self._log_close(ms + 1, "thinking_level_selected", closed, "thinking_level")
        self.clock += self.rng.randint(2_000, 9_000)

    def _user_input(self, number: int, prompt: PromptSpec) -> None:
        """The user's prompt with what omo and senpi add around it (§7, newer §5.2)."""
        ms, build, text = self.clock, self.build, prompt.text
        ulw = self.spec.omo and is_ulw_prompt(text)
        self.truth.prompts += 1
        self.truth.ulw_prompts += int(ulw)
        self._event({"type": "agent_start"}, ms)
        self._event({"type": "turn_start"}, ms)
        if ulw and not build.new_omo:
            text = ULTRAWORK_DIRECTIVE + "\n" + text
        if ulw and build.new_omo:
            if not self.ulw_armed:
                self._custom_message("omo-ultrawork:directive", ULTRAWORK_DIRECTIVE, ms, None)
                self.ulw_armed = True
            else:
                self._custom_message("omo-ultrawork:reminder", ULTRAWORK_REMINDER, ms, None)
            ms += 1
        env_blocks: list[JsonObj] = []
        date = iso_ms(ms)[:10]
        if build.env_context and self.env_date != date:
            env = environment_context(self.spec.cwd, date)
            self._custom_message(
                "environment-context", env, ms, {"cwd": self.spec.cwd, "currentDate": date}, transmit=False
            )
            env_blocks = [_text(env)]  # folded into the user message that follows (2026.9.24-3)
            self.env_date = date
            ms += 1
        content = [_text(text)]
        message = {"role": "user", "content": content, "timestamp": ms}
        entry_id = self._message_entry(message, ms)
        if prompt.hostile:
            self.truth.hostile_entry_ids.append(entry_id)
        self._message_events(message, ms)
        self._transmit(
            {"role": "user", "content": env_blocks + content}, len(text) + sum(len(b["text"]) for b in env_blocks)
        )
        if build.file_at_first_user:
            self._flush_transcript(ms)
        if number == 0 and self.spec.omo:
            ms += self.rng.randint(1, 4)
            self._custom_message("senpi-task.usage", TASK_USAGE_NEW if build.new_omo else TASK_USAGE_OLD, ms, {})
        if self.rng.random() < 0.4:
            self._compaction_generation += 1
            self._compaction(ms + 3, "speculative_started")
            self._stale_compaction = True  # logged during the first call, when new messages make it stale
        self.clock = ms + self.rng.randint(5, 40)

    # -- one provider call ---------------------------------------------------------------------------------
    def _call(self, number: int, call: CallSpec) -> None:
        """Decide, stream, log, commit, persist: one assistant message in the order senpi does it (§8 step 4)."""
        rng = self.rng
        t0 = self.clock + rng.randint(3, 25)
        hashes = list(self.hashes)
        fp = self._fingerprint()
        start = self.continuity.begin_call(hashes, fp, t0, has_assistant=self.has_assistant)
        stable = self.shadow.begin_call(hashes, fp, t0, has_assistant=self.has_assistant)
        turn = TurnTruth(index=len(self.truth.turns), prompt=number, ts=iso_ms(t0))
        self.truth.turns.append(turn)
        payload = self._payload(start)
        self._record_decision(turn, start, stable, payload, len(hashes))
        if start.closed:
            resumed = start.decision.kind in ("reattach", "fork")
            raw = "reattach" if resumed else (start.decision.reason or "registry_miss")
            self._log_close(t0 + rng.randint(1, 4), raw, start.closed, "call_start")
            turn.close_before = start.closed
        if self._stale_compaction:
            self._compaction(t0 + rng.randint(300, 700), "speculative_stale")
            self._stale_compaction = False
        if call.error:
            self._failed_call(turn, call.error, t0, hashes)
            return
        base = self._assistant_base(t0)
        self._event({"type": "message_start", "message": {**base, "content": []}}, t0)
        final, partial, t_end = self._stream(base, call, t0 + rng.randint(700, 2_200) + payload.bytes // 40)
        t_result = t_end + rng.randint(40, 250)
        log_ms = t_result + rng.randint(2, 12)
        obs = start.observation
        details: JsonObj = {"kind": obs.kind, "reason": obs.reason}
        if obs.count is not None:
            details["deltaMessages"] = obs.count
        if start.flatten:
            details["payloadBytes"] = payload.bytes
            details["collapsedDirectives"] = payload.collapsed
        diagnostic = {
            "type": "claude_sdk_oauth_session_continuity",
            "timestamp": log_ms - rng.choice((0, 0, 1)),
            "details": details,
        }
        message = {
            **base,
            "content": final,
            "usage": self._call_usage(start.flatten, payload, final),
            "stopReason": "toolUse" if call.tools else "stop",
            "diagnostics": [diagnostic],
        }
        sdk_uuid = uuid4(rng)
        self.continuity.finish_call(hashes, sdk_uuid, t_result)
        self.shadow.finish_call(hashes, sdk_uuid, t_result)
        self._log_continuity(log_ms, obs, turn)
        self._event({"type": "message_end", "message": message}, log_ms + 1)
        ms = self._commit(turn, message, {**message, "content": partial}, hashes, sdk_uuid, fp, log_ms)
        turn.entry_id = self._message_entry(message, ms)
        self._flush_transcript(ms)  # older builds create the file at the first assistant message
        self.context.append(message)
        self.has_assistant = True
        self.context_chars += sum(len(js_dumps(b)) for b in final)
        self._run_messages.append(message)
        turn.stop_reason = message["stopReason"]
        turn.thinking = call.thinking
        turn.tool_calls = len(call.tools)
        results = self._run_tools(call, [b for b in final if b["type"] == "toolCall"], ms + rng.randint(1, 5))
        self._event({"type": "turn_end", "message": message, "toolResults": results}, self.clock)

    def _payload(self, start: CallStart) -> Payload:
        """Serialize what this call sends (flatten or delta) and measure it."""
        tools = self.spec.context_tools
        if start.flatten:
            blocks = flatten_prompt_blocks(self.context, tools, self.build)
        else:
            blocks = delta_prompt_blocks(self.transmitted[start.decision.start :], tools, self.build)
        return measure_payload(blocks, self.build, flatten=start.flatten)

    def _record_decision(self, turn: TurnTruth, start: CallStart, stable: CallStart, payload: Payload, n: int) -> None:
        obs = start.observation
        turn.kind, turn.reason, turn.count = obs.kind, obs.reason, obs.count
        turn.decision, turn.decision_from = start.decision.kind, start.decision.start
        turn.decision_reason = start.decision.reason
        turn.first_turn = start.first_turn
        turn.sent_messages = n
        turn.payload_bytes, turn.payload_bytes_raw = payload.bytes, payload.bytes_raw
        turn.directive_copies, turn.directive_bytes = payload.directive_copies, payload.directive_bytes
        if start.flatten:
            turn.logged_payload_bytes, turn.collapsed_directives = payload.bytes, payload.collapsed
        turn.resend_from_volatile = start.from_volatile and obs.kind in ("fork", "flatten")
        turn.stable_kind, turn.stable_reason = stable.observation.kind, stable.observation.reason
        turn.stable_count = stable.observation.count
        turn.stable_payload_bytes = self._payload(stable).bytes

    def _assistant_base(self, t0: int) -> JsonObj:
        """The provider's empty-output template: key order of every assistant message it produces."""
        return {
            "role": "assistant",
            "content": [],
            "api": API_ID,
            "provider": self.build.provider,
            "model": self.spec.model,
            "usage": _ZERO_USAGE,
            "stopReason": "stop",
            "timestamp": t0,
        }

    def _call_usage(self, flatten: bool, payload: Payload, final: list[JsonObj]) -> JsonObj:
        out = sum(len(js_dumps(b)) for b in final) // 4 + 12
        if flatten:
            return _usage(6, out, 0, payload.bytes // 4 + 2_800)
        return _usage(6, out, self.context_chars // 4 + 2_800, payload.bytes // 4)

    def _update(self, base: JsonObj, partial: list[JsonObj], event: JsonObj, ms: int) -> None:
        snapshot = {**base, "content": list(partial)}
        self._event(
            {"type": "message_update", "message": snapshot, "assistantMessageEvent": {**event, "partial": snapshot}}, ms
        )

    def _stream(self, base: JsonObj, call: CallSpec, t: int) -> tuple[list[JsonObj], list[JsonObj], int]:
        """Stream the content blocks as ``message_update`` events. Returns (final, last partial, end time).

        Partials never carry thinking ``startedAt``/``endedAt``: agent-core copies them onto the message only
        after the last ``message_update``, which is what made old builds commit such turns as rewritten.
        """
        rng, final, partial = self.rng, [], []
        if call.thinking:
            text, signature = self.texts.sentences(rng.randint(3, 7)), thinking_signature(rng)
            started, i = t, len(partial)
            partial.append({"type": "thinking", "thinking": "", "thinkingSignature": ""})
            self._update(base, partial, {"type": "thinking_start", "contentIndex": i}, t)
            half = len(text) // 2
            for piece, upto in ((text[:half], half), (text[half:], len(text))):
                t += rng.randint(300, 2_500)
                partial[i] = {"type": "thinking", "thinking": text[:upto], "thinkingSignature": ""}
                self._update(base, partial, {"type": "thinking_delta", "contentIndex": i, "delta": piece}, t)
            t += rng.randint(20, 200)
            partial[i] = {"type": "thinking", "thinking": text, "thinkingSignature": signature}
            self._update(base, partial, {"type": "thinking_end", "contentIndex": i, "content": text}, t)
            final.append({**partial[i], "startedAt": started, "endedAt": t})
        if call.text:
            i = len(partial)
            partial.append({"type": "text", "text": ""})
            t += rng.randint(50, 400)
            self._update(base, partial, {"type": "text_start", "contentIndex": i}, t)
            t += rng.randint(200, 2_000)
            partial[i] = {"type": "text", "text": call.text}
            self._update(base, partial, {"type": "text_delta", "contentIndex": i, "delta": call.text}, t)
            t += rng.randint(5, 60)
            self._update(base, partial, {"type": "text_end", "contentIndex": i, "content": call.text}, t)
            final.append(partial[i])
        for tool in call.tools:
            i, call_id = len(partial), tool_call_id(rng)
            partial.append({"type": "toolCall", "id": call_id, "name": tool.name, "arguments": {}, "partialJson": ""})
            t += rng.randint(50, 400)
            self._update(base, partial, {"type": "toolcall_start", "contentIndex": i}, t)
            args_json = js_dumps(tool.args)
            partial[i] = {
                "type": "toolCall",
                "id": call_id,
                "name": tool.name,
                "arguments": tool.args,
                "partialJson": args_json,
            }
            t += rng.randint(100, 1_500)
            self._update(base, partial, {"type": "toolcall_delta", "contentIndex": i, "delta": args_json}, t)
            block = {"type": "toolCall", "id": call_id, "name": tool.name, "arguments": tool.args}
            partial[i] = block
            t += rng.randint(5, 60)
            self._update(base, partial, {"type": "toolcall_end", "contentIndex": i, "toolCall": block}, t)
            final.append(block)
        return final, partial, t

    def _commit(
        self,
        turn: TurnTruth,
        message: JsonObj,
        captured: JsonObj,
        hashes: list[str],
        sdk_uuid: str,
        fp: Fingerprint,
        log_ms: int,
    ) -> int:
        """The message_end boundary check (§3.6/§3.7) and its entries; returns the assistant entry's time."""
        rule = self.build.hash_rule
        turn.capture_hash = assistant_content_hash(captured, rule)
        turn.commit_hash = assistant_content_hash(message, rule)
        turn.hash_verbatim = assistant_content_hash(message, HASH_VERBATIM)
        turn.hash_timing_stripped = assistant_content_hash(message, HASH_TIMING_STRIPPED)
        turn.hash_projected = assistant_content_hash(message, HASH_PROJECTED)
        rewritten = turn.capture_hash != turn.commit_hash
        turn.volatile_only_rewrite = (
            rewritten and assistant_content_hash(captured, HASH_TIMING_STRIPPED) == turn.hash_timing_stripped
        )
        turn.commit = "rewritten" if rewritten else "clean"
        if rewritten:
            self.continuity.commit_rewritten(turn.volatile_only_rewrite)
        if assistant_content_hash(captured, HASH_PROJECTED) != turn.hash_projected:
            self.shadow.commit_rewritten(False)
        ms = log_ms + self.rng.randint(2, 6)
        if not self.build.markers:
            return ms + self.rng.randint(1, 3)
        if rewritten:
            self._custom_entry(
                "claude-sdk-oauth-binding",
                {"schemaVersion": 1, "invalidated": True, "reason": "assistant_rewritten"},
                ms,
            )
            turn.invalidation = True
        else:
            marker_id = self._custom_entry("claude-sdk-oauth-binding", {"schemaVersion": 2, "marker": True}, ms)
            turn.marker = True
            self._write_sidecar(ms + 1, marker_id, message, hashes, sdk_uuid, fp)
        return ms + self.rng.randint(2, 4)

    def _write_sidecar(
        self, ms: int, marker_id: str, message: JsonObj, hashes: list[str], sdk_uuid: str, fp: Fingerprint
    ) -> None:
        """The restart sidecar (§4.7), rewritten atomically at every clean resident commit."""
        entry = self.continuity.entry
        assert entry is not None and self.sidecar is not None
        record = {
            "schemaVersion": 1,
            "sessionPath": f"{AGENT_HOME}/{self.transcript}",
            "sessionId": self.session_id,
            "markerEntryId": marker_id,
            "sdkSessionId": entry.sdk_session_id,
            "sentCount": len(hashes),
            "sentPrefixHash": prefix_digest(hashes),
            "assistantContentHash": assistant_content_hash(message, self.build.hash_rule),
            "lastAssistantUuid": sdk_uuid,
            "accountName": fp.account,
            "modelId": fp.model,
            "systemPromptHash": fp.system_prompt_hash,
            "toolsetHash": fp.toolset_hash,
        }
        self._emit(ms, self.sidecar, (js_dumps(record) + "\n").encode("utf-8"), kind="replace")
        self.truth.sidecar = self.sidecar

    def _run_tools(self, call: CallSpec, blocks: list[JsonObj], t: int) -> list[JsonObj]:
        """Execute the tool calls one after another; each result is an entry and a transmitted message."""
        results = []
        for tool, block in zip(call.tools, blocks, strict=True):
            self._event(
                {"type": "tool_execution_start", "toolCallId": block["id"], "toolName": tool.name, "args": tool.args}, t
            )
            t += tool.duration_ms + self.rng.randint(0, 50)
            content = [_text(tool.output)]
            self._event(
                {
                    "type": "tool_execution_end",
                    "toolCallId": block["id"],
                    "toolName": tool.name,
                    "result": {"content": content},
                    "isError": False,
                },
                t,
            )
            result = {
                "role": "toolResult",
                "toolCallId": block["id"],
                "toolName": tool.name,
                "content": content,
                "isError": False,
                "timestamp": t,
            }
            self._message_events(result, t)
            t += self.rng.randint(0, 2)
            self._message_entry(result, t)
            self._transmit(result, len(tool.output))
            results.append(result)
        self.clock = t
        return results

    def _failed_call(self, turn: TurnTruth, error: str, t0: int, hashes: list[str]) -> None:
        """Every attempt failed (§2.5 path 3 / newer ``failed``): close, terminal line, provider_error."""
        rng, build = self.rng, self.build
        base = self._assistant_base(t0)
        self._event({"type": "message_start", "message": base}, t0)
        t_fail = t0 + rng.randint(2_500, 12_000)
        closed = self.continuity.fail_call(hashes, error)
        self.shadow.fail_call(hashes, error)
        if closed:
            self._log_close(t_fail, error, closed, "failure")
        obs = Observation("failed" if build.failed_kind else "flatten", sanitize_terminal_failure(error), None)
        turn.kind, turn.reason, turn.count = obs.kind, obs.reason, None
        turn.stable_kind, turn.stable_reason, turn.stable_count = obs.kind, obs.reason, None
        turn.logged_payload_bytes = turn.collapsed_directives = None
        log_ms = t_fail + rng.randint(1, 3)
        self._log_continuity(log_ms, obs, turn)
        err_ms = log_ms + rng.randint(2, 6)
        shown = error if len(error) <= 200 else error[:197] + "..."
        self._log(err_ms, "provider_error", {**self._stamp(), "kind": "error", "error": shown}, level="warn")
        diagnostic = {
            "type": "claude_sdk_oauth_session_continuity",
            "timestamp": log_ms,
            "details": {"kind": obs.kind, "reason": obs.reason},
        }
        message = {**base, "stopReason": "error", "diagnostics": [diagnostic], "errorMessage": error}
        self._event({"type": "message_end", "message": message}, err_ms + 1)
        ms = err_ms + rng.randint(2, 4)
        turn.entry_id = self._message_entry(message, ms)
        self._flush_transcript(ms)
        if not build.drop_failed_assistants:
            self.context.append(message)
            self.has_assistant = True
        self._run_messages.append(message)
        turn.commit, turn.stop_reason = "failed", "error"
        self._event({"type": "turn_end", "message": message, "toolResults": []}, ms)
        self.clock = ms

    # -- the end of a session ------------------------------------------------------------------------------
    def _bad_transcript_lines(self) -> None:
        """Lines a crash or a broken tool leaves behind: bad JSON, invalid UTF-8, a line cut mid-write."""
        ms, parent = self.clock, self._last_id
        stamp = iso_ms(ms).encode()
        lines = (
            ("bad_json", b'{"type":"custom","customType":"pi-rules.scan","data":{"rules":3},,"id":"0badc0de"}\n'),
            (
                "invalid_utf8",
                b'{"type":"custom","customType":"pi-rules.scan","data":{"note":"\xff\xfe\xfa mangled"},'
                b'"id":"0badf00d","parentId":"' + str(parent).encode() + b'","timestamp":"' + stamp + b'"}\n',
            ),
            (
                "truncated",
                b'{"type":"message","id":"5eed5eed","parentId":"0badf00d","timestamp":"'
                + stamp
                + b'","message":{"role":"user","content":[{"type":"text","text":"this line was cut off mi',
            ),
        )
        for i, (kind, data) in enumerate(lines):
            problem = ProblemTruth(self.transcript, kind)
            self._emit(ms + 1_000 * (i + 1), self.transcript, data, problem.log)
            self.problems.append(problem)
        self.clock = ms + 1_000 * len(lines)

    def _finish_truth(self) -> None:
        self.truth.ended = iso_ms(self.clock)
        counts: dict[str, int] = {}
        for turn in self.truth.turns:
            counts[turn.kind] = counts.get(turn.kind, 0) + 1
        self.truth.counts = counts


# ---------------------------------------------------------------------------------------------------------------
# Scenario building blocks
# ---------------------------------------------------------------------------------------------------------------


def _read(tx: Texts, path: str, lines: int) -> ToolSpec:
    return ToolSpec("read", {"path": path}, tx.source_file(path, lines), tx.rng.randint(15, 120))


def _bash(tx: Texts, command: str, output: str, ms: int) -> ToolSpec:
    return ToolSpec("bash", {"command": command, "timeout": 300}, output, ms + tx.rng.randint(0, 900))


def _grep(tx: Texts, pattern: str, lines: int) -> ToolSpec:
    return ToolSpec(
        "grep",
        {"pattern": pattern, "path": "src", "ignoreCase": False},
        tx.grep_output(pattern, lines),
        tx.rng.randint(40, 300),
    )


def _edit(tx: Texts, path: str) -> ToolSpec:
    old = f"rows = {tx.ident()}(session).all()"
    new = f"rows = {tx.ident()}(session, batch_size={tx.rng.choice((500, 1000, 5000))})"
    return ToolSpec(
        "edit",
        {"path": path, "edits": [{"oldText": old, "newText": new}]},
        f"Successfully replaced 1 block(s) in {path}.",
        tx.rng.randint(10, 60),
    )


def _write(tx: Texts, path: str, lines: int) -> ToolSpec:
    return ToolSpec(
        "write",
        {"path": path, "content": tx.source_file(path, lines)},
        f"Successfully wrote {path}.",
        tx.rng.randint(10, 60),
    )


def _lsp(tx: Texts, path: str, lines: int) -> ToolSpec:
    return ToolSpec(
        "lsp_diagnostics", {"filePath": path, "severity": "all"}, tx.diagnostics(lines), tx.rng.randint(400, 2_500)
    )


def _ast(tx: Texts, pattern: str, lines: int) -> ToolSpec:
    return ToolSpec(
        "ast_grep_search",
        {"pattern": pattern, "lang": "python", "paths": ["src/"]},
        tx.ast_matches(lines),
        tx.rng.randint(200, 1_200),
    )


def _answer(tx: Texts, lead: str, sentences: int = 3) -> str:
    return f"{lead}\n\n{tx.sentences(sentences)}"


OLD_TOOLS = frozenset(
    {
        "read",
        "bash",
        "edit",
        "write",
        "grep",
        "find",
        "ls",
        "lsp_diagnostics",
        "ast_grep_search",
        "task_create",
        "task_status",
        "task_result",
    }
)
NEW_TOOLS = frozenset(
    {"read", "bash", "edit", "write", "grep", "find", "ls", "lsp_diagnostics", "ast_grep_search", "task"}
)
HOSTILE_TEXT = (
    "The log viewer breaks on this line, can you see why? [bold red]x[/] then [link=http://x]click me[/link] "
    "then a title change \x1b]0;pwned\x07 then \x1b[2J\x1b[31mred\x1b[0m and a bidi override "
    "\u202egnp.exe\u202c here."
)


def _old_session_prompts(tx: Texts) -> Iterator[PromptSpec]:
    """Old build, thinking on: flatten chain after a rewritten first turn, a fork chain, idle, level change."""
    c, enabled = CallSpec, "ULTRAWORK MODE ENABLED!"
    yield PromptSpec(
        "ulw refactor the ledger reconciliation job so it streams rows instead of loading the table",
        (
            c(
                True,
                f"{enabled}\n\nReading the reconciliation job first.",
                (_read(tx, "src/ledger/reconcile.py", 240),),
            ),
            c(True, None, (_grep(tx, "fetch_all_rows", 70), _ast(tx, "for $ROW in $Q.all()", 45))),
            c(True, None, (_edit(tx, "src/ledger/reconcile.py"),)),
            c(True, None, (_bash(tx, "uv run pytest tests/ledger -q", tx.pytest_output(130), 9_000),)),
            c(True, _answer(tx, "The job now streams rows in batches of 1000.")),
        ),
        gap_ms=14_000,
    )
    yield PromptSpec(
        "ulw also make the retry loop idempotent and add a regression test for a crash mid-batch",
        (
            c(
                True,
                f"{enabled}\n\nChecking how retries re-enter the batch loop.",
                (_read(tx, "src/ledger/retry.py", 160),),
            ),
            c(True, None, (_edit(tx, "src/ledger/retry.py"), _write(tx, "tests/ledger/test_retry_crash.py", 40))),
            c(
                True,
                None,
                (_bash(tx, "uv run pytest tests/ledger/test_retry_crash.py -q", tx.pytest_output(25), 4_000),),
            ),
            c(True, _answer(tx, "Retries are idempotent now; the regression test kills the worker mid-batch.")),
        ),
        gap_ms=95_000,
    )
    yield PromptSpec(
        "what does the language server say about the ledger package now?",
        (
            c(False, "Asking the language server.", (_lsp(tx, "src/ledger", 35),)),
            c(False, None, (_read(tx, "src/ledger/cursor.py", 120),)),
            c(True, None, (_edit(tx, "src/ledger/cursor.py"),)),
            c(True, None, (_lsp(tx, "src/ledger", 8),)),
            c(True, None, (_read(tx, "src/ledger/__init__.py", 60),)),
            c(True, _answer(tx, "Two real issues were left; both are fixed and the remaining hints are noise.")),
        ),
        gap_ms=140_000,
    )
    yield PromptSpec(
        "ok, run the full suite and fix whatever breaks",
        (
            c(True, None, (_bash(tx, "uv run pytest -q", tx.pytest_output(260, failed=2), 38_000),)),
            c(True, None, (_edit(tx, "src/ledger/statement.py"),)),
            c(False, _answer(tx, "Both failures came from the old eager loader; the suite is green now.")),
        ),
        gap_ms=70_000,
    )
    yield PromptSpec(
        "back. summarize what changed, for the PR description",
        (c(False, _answer(tx, "## Summary\n- reconciliation streams rows\n- idempotent retries\n- lint fixes", 4)),),
        gap_ms=42 * 60_000,
    )
    yield PromptSpec(
        "ulw write the migration note and double-check the rollback path",
        (
            c(True, f"{enabled}\n\nReading the migration first.", (_read(tx, "migrations/0042_stream_rows.py", 90),)),
            c(True, _answer(tx, "The note is in docs/migrations.md; rollback restores the eager loader flag.")),
        ),
        gap_ms=50_000,
        thinking_level="medium",
    )


def _new_session_prompts(tx: Texts) -> Iterator[PromptSpec]:
    """New build, healthy: bootstrap, deltas, one failed call and the fork that resumes after it."""
    c, enabled = CallSpec, "ULTRAWORK MODE ENABLED!"
    yield PromptSpec(
        "ulw add cursor pagination to the /accounts endpoint",
        (
            c(
                True,
                f"{enabled}\n\nLocating the endpoint.",
                (_bash(tx, "rg -n 'def list_accounts' src", tx.grep_output("list_accounts", 6), 300),),
            ),
            c(True, None, (_read(tx, "src/api/accounts.py", 180), _read(tx, "src/api/pagination.py", 90))),
            c(True, None, (_edit(tx, "src/api/accounts.py"), _edit(tx, "src/api/pagination.py"))),
            c(True, None, (_bash(tx, "uv run pytest tests/api -q", tx.pytest_output(80), 7_000),)),
            c(False, _answer(tx, "Pagination is in; `next_cursor` is returned when more rows exist.")),
        ),
        gap_ms=9_000,
    )
    yield PromptSpec(
        "ulw the cursor must be opaque: base64 it and reject tampered values",
        (
            c(True, f"{enabled}\n\nMaking the cursor opaque.", (_edit(tx, "src/api/pagination.py"),)),
            c(True, None, (_bash(tx, "uv run pytest tests/api -q", tx.pytest_output(84), 7_500),)),
            c(False, _answer(tx, "Cursors are base64 JSON with an HMAC; tampered cursors get a 400.")),
        ),
        gap_ms=120_000,
    )
    yield PromptSpec(
        "run the integration suite against the staging snapshot",
        (c(error="Anthropic Subscription query ended before a result was received (exit code 1)"),),
        gap_ms=80_000,
    )
    yield PromptSpec(
        "try again",
        (
            c(True, None, (_bash(tx, "make integration", tx.pytest_output(150), 21_000),)),
            c(False, _answer(tx, "Integration suite passed against the snapshot.")),
        ),
        gap_ms=25_000,
    )
    yield PromptSpec(
        "thanks, commit it with a conventional message",
        (
            c(
                False,
                None,
                (
                    _bash(
                        tx,
                        "git commit -am 'feat(api): opaque cursor pagination for /accounts'",
                        "[main 4f2a9c1] feat(api): opaque cursor pagination\n 3 files changed",
                        400,
                    ),
                ),
            ),
            c(False, "Committed as 4f2a9c1."),
        ),
        gap_ms=40_000,
    )


def _hostile_session_prompts(tx: Texts) -> Iterator[PromptSpec]:
    """A short new-build session whose first prompt carries markup, escape sequences and a bidi override."""
    yield PromptSpec(
        HOSTILE_TEXT,
        (CallSpec(False, _answer(tx, "Those are terminal escape sequences.")),),
        gap_ms=6_000,
        hostile=True,
    )
    yield PromptSpec("thanks", (CallSpec(False, "You're welcome."),), gap_ms=30_000)


def _demo_specs() -> list[SessionSpec]:
    b_start = parse_iso_ms("2026-10-12T14:03:10.517Z")
    return [
        SessionSpec(
            OLD_BUILD,
            "/home/mika/work/ledger-api",
            "claude-opus-4-8",
            parse_iso_ms("2026-08-07T09:12:04.311Z"),
            _old_session_prompts,
            OLD_TOOLS,
            record_events=True,
        ),
        SessionSpec(
            NEW_BUILD,
            "/home/mika/work/ledger-api",
            "claude-opus-4-8",
            b_start,
            _new_session_prompts,
            NEW_TOOLS,
            record_events=True,
        ),
        SessionSpec(
            NEW_BUILD,
            "/home/mika/scratch/log-viewer",
            "claude-opus-4-8",
            b_start + 401_233,
            _hostile_session_prompts,
            NEW_TOOLS,
            bad_transcript_lines=True,
            compaction_log=False,
        ),
    ]


_CORPUS_TASKS = (
    "fix the flaky test in the {w} module",
    "add a {w} endpoint with validation",
    "profile the {w} import job",
    "rename {w} to {x} across the codebase",
    "why is the {w} {x} slow?",
    "write docs for the {w} {x}",
    "review the diff of the {w} branch",
    "migrate the {w} table to the new {x} schema",
)


def _corpus_prompts(old: bool) -> Callable[[Texts], Iterator[PromptSpec]]:
    """A random session script; content is generated only when the session reaches it."""

    def prompts(tx: Texts) -> Iterator[PromptSpec]:
        rng = tx.rng
        for _ in range(rng.randint(3, 8)):
            w, x = rng.sample(_WORDS, 2)
            text = rng.choice(_CORPUS_TASKS).format(w=w, x=x)
            if rng.random() < 0.3:
                text = "ulw " + text
            calls: list[CallSpec] = []
            if not old and rng.random() < 0.05:
                calls.append(CallSpec(error="Anthropic Subscription query ended before a result was received"))
            else:
                for _ in range(rng.randint(1, 5)):
                    tools = tuple(_corpus_tool(tx) for _ in range(rng.choice((1, 1, 1, 2, 3))))
                    calls.append(CallSpec(rng.random() < 0.65, None, tools))
                calls.append(CallSpec(rng.random() < 0.5, _answer(tx, "Done.")))
            gap = rng.randint(35, 50) * 60_000 if rng.random() < 0.07 else rng.randint(10_000, 300_000)
            level = rng.choice(("low", "medium", "high")) if rng.random() < 0.05 else None
            yield PromptSpec(text, tuple(calls), gap_ms=gap, thinking_level=level)

    return prompts


def _corpus_tool(tx: Texts) -> ToolSpec:
    rng = tx.rng
    kind = rng.choice(("read", "read", "bash", "grep", "edit", "lsp", "ast"))
    path = f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}.py"
    if kind == "read":
        return _read(tx, path, rng.randint(80, 700))
    if kind == "bash":
        return _bash(tx, "uv run pytest -q", tx.pytest_output(rng.randint(40, 400)), rng.randint(2_000, 40_000))
    if kind == "grep":
        return _grep(tx, tx.ident(), rng.randint(10, 200))
    if kind == "lsp":
        return _lsp(tx, path, rng.randint(5, 120))
    if kind == "ast":
        return _ast(tx, "for $X in $Y.all()", rng.randint(5, 150))
    return _edit(tx, path)


CORPUS_SESSIONS = 240


def _corpus_specs(seed: int, sessions: int | None = None) -> Iterator[SessionSpec]:
    """Hundreds of sessions, a few overlapping at any time; half on the old build, every 8th recorded.

    ``sessions`` overrides ``CORPUS_SESSIONS``: a benchmark grows a corpus the way history grows, with more
    sessions rather than only longer tool outputs (``bench/corpus.py``)."""
    count = CORPUS_SESSIONS if sessions is None else sessions
    rng = random.Random(f"{seed}/corpus/plan")
    t = parse_iso_ms("2026-08-05T08:00:00.000Z")
    for index in range(count):
        old = index < count // 2
        if index == count // 2:
            t = parse_iso_ms("2026-10-11T08:00:00.000Z")
        t += rng.randint(60_000, 14 * 60_000)
        cwd = f"/home/mika/work/{rng.choice(_WORDS)}-{rng.choice(('api', 'svc', 'web', 'cli'))}"
        build, tools = (OLD_BUILD, OLD_TOOLS) if old else (NEW_BUILD, NEW_TOOLS)
        yield SessionSpec(
            build,
            cwd,
            rng.choice(("claude-opus-4-8", "claude-sonnet-4-6")),
            t,
            _corpus_prompts(old),
            tools,
            record_events=index % 8 == 0,
        )


# ---------------------------------------------------------------------------------------------------------------
# generate(): merge all sessions' writes by time into one agent dir
# ---------------------------------------------------------------------------------------------------------------

DEMO_ROTATE_BYTES = 6 * 1024
_OUTPUTS = ("logs", "sessions", "events", "manifest.json")


def _prepare_output(out_dir: Path) -> None:
    """Start from an empty dir; only a previous simulator output (it has a manifest.json) is cleared."""
    if out_dir.exists() and any(out_dir.iterdir()):
        if not (out_dir / "manifest.json").exists():
            raise FileExistsError(f"{out_dir} is not empty and holds no simulator manifest.json")
        for name in _OUTPUTS:
            target = out_dir / name
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
    out_dir.mkdir(parents=True, exist_ok=True)


def _session_stream(
    index: int, spec: SessionSpec, seed: int, scenario: str, scale: float, sims: dict[int, SessionSim]
) -> Iterator[tuple[int, int, int, Write]]:
    """One session's writes as (ms, session index, sequence, write), checked to be in time order."""
    sim = SessionSim(spec, random.Random(f"{seed}/{scenario}/{index}"), scale)
    sims[index] = sim
    seq, last = 0, -1
    for step in sim.run():
        for write in step:
            if write.ms < last:
                raise AssertionError(f"session {index} went back in time at {iso_ms(write.ms)}")
            last = write.ms
            yield write.ms, index, seq, write
            seq += 1


def _log_problems(ms: int) -> list[tuple[str, Write]]:
    """Bad lines at the end of session.log: bad JSON, invalid UTF-8, and a torn line (a crashed writer's
    unterminated prefix with the next process's line appended to it)."""
    ts = [iso_ms(ms + 1_000 * i).encode() for i in range(1, 4)]
    lines = (
        (
            "bad_json",
            b'{"ts":"' + ts[0] + b'","level":"info","event":"claude_sdk_oauth_session_continuity",'
            b'"kind":"delta","reason":}\n',
        ),
        (
            "invalid_utf8",
            b'{"ts":"' + ts[1] + b'","level":"warn","event":"provider_error","kind":"error",'
            b'"error":"\xc3\x28 socket hang up"}\n',
        ),
        (
            "torn",
            b'{"ts":"'
            + ts[2]
            + b'","level":"info","event":"claude_sdk_oauth_sess{"ts":"'
            + ts[2]
            + b'","level":"debug","event":"queue_enqueue","mode":"steer","count":1}\n',
        ),
    )
    return [
        (kind, Write(ms + 1_000 * (i + 1), "append", SESSION_LOG, data, Located()))
        for i, (kind, data) in enumerate(lines)
    ]


def generate(
    out_dir: Path,
    scenario: str = "demo",
    *,
    seed: int = 7,
    scale: float = 1.0,
    rotate_bytes: int | None = None,
    sessions: int | None = None,
) -> Manifest:
    """Write a simulated senpi agent dir into ``out_dir`` and return the true values behind it.

    ``scenario`` is ``"demo"`` (three sessions, ~2 MB, bundled with the app) or ``"corpus"`` (hundreds of
    sessions for benchmarks; ``scale`` multiplies tool-output sizes). The same arguments always produce the
    same bytes. ``rotate_bytes`` is session.log's rotation threshold (senpi: 5 MiB; the demo uses a small one
    so that its small log still rotates once). ``sessions`` sets the corpus's session count (default
    ``CORPUS_SESSIONS``; ignored by the demo). ``out_dir/manifest.json`` holds the returned manifest.
    """
    if scenario not in ("demo", "corpus"):
        raise ValueError(f"unknown scenario {scenario!r}")
    out_dir = Path(out_dir)
    _prepare_output(out_dir)
    demo = scenario == "demo"
    threshold = rotate_bytes or (DEMO_ROTATE_BYTES if demo else DEFAULT_ROTATE_BYTES)
    sink = Sink(out_dir, threshold, record_replay=demo)
    specs = _demo_specs() if demo else _corpus_specs(seed, sessions)
    sims: dict[int, SessionSim] = {}
    streams = [_session_stream(i, spec, seed, scenario, scale, sims) for i, spec in enumerate(specs)]
    first = last = None
    for ms, _, _, write in heapq.merge(*streams):
        first = ms if first is None else first
        last = ms
        sink.apply(write)
    assert first is not None and last is not None
    manifest = Manifest(scenario, seed, scale, agent_dir_virtual=AGENT_HOME, rotate_bytes=threshold)
    for kind, write in _log_problems(last):
        sink.apply(write)
        assert write.locate is not None
        manifest.problems.append(ProblemTruth(SESSION_LOG, kind, write.locate))
        last = write.ms
    sink.finish()
    manifest.started, manifest.ended = iso_ms(first), iso_ms(last)
    manifest.rotations = [iso_ms(ms) for ms in sink.rotations]
    for index in sorted(sims):
        manifest.sessions.append(sims[index].truth)
        manifest.problems.extend(sims[index].problems)
    manifest.files = _file_truths(out_dir)
    manifest.replay = sink.replay
    (out_dir / "manifest.json").write_text(manifest.to_json() + "\n", encoding="utf-8")
    return manifest


def _file_truths(out_dir: Path) -> list[FileTruth]:
    files = []
    for path in sorted(p for p in out_dir.rglob("*") if p.is_file() and p.name != "manifest.json"):
        data = path.read_bytes()
        files.append(FileTruth(path.relative_to(out_dir).as_posix(), len(data), data.count(b"\n")))
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write a simulated senpi agent dir (deterministic).")
    parser.add_argument("--out", type=Path, required=True, help="output agent dir")
    parser.add_argument("--scenario", choices=("demo", "corpus"), default="demo")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--rotate-bytes", type=int, default=None)
    parser.add_argument("--sessions", type=int, default=None, help=f"corpus sessions (default {CORPUS_SESSIONS})")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    manifest = generate(
        args.out,
        args.scenario,
        seed=args.seed,
        scale=args.scale,
        rotate_bytes=args.rotate_bytes,
        sessions=args.sessions,
    )
    total = sum(f.bytes for f in manifest.files)
    turns = sum(len(s.turns) for s in manifest.sessions)
    print(
        f"{args.out}: {len(manifest.sessions)} sessions, {turns} turns, {len(manifest.files)} files, "
        f"{total / 1e6:.1f} MB in {time.perf_counter() - started:.1f}s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
