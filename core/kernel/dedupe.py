"""Directive dedupe on serialized prompt blocks: this tool's keep-first proposal, and the blocks it works on.

The tool's own simulation, `keep_first_identical`, shows what a prompt-cache-friendly policy would save for
every directive tag: keep the first copy of each byte-identical block, replace later copies with
`<tag>[directive unchanged - identical to the first occurrence above]</tag>`, leave variants alone. Each
decision depends only on what came before, so the result over a prefix of the messages is a byte prefix of
the result over all of them (`keep_first_step` is that incremental form).

A prompt is a list of blocks (`{"type": "text", "text": …}` or an image); its size is the UTF-8 bytes of its
text blocks. An agent's own dedupe rules (senpi's ultrawork rules, `core.agents.senpi.payload.dedupe`) return
the same `DedupeResult`.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from core.kernel.directives import TagBlock, scan_text

Block = dict[str, Any]

MARKER_TEXT = "[directive unchanged - identical to the first occurrence above]"


def utf8_len(text: str) -> int:
    """`Buffer.byteLength(text, "utf8")`: a lone surrogate counts as the 3-byte replacement character."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def payload_bytes(blocks: Iterable[Block]) -> int:
    """`serializedPayloadBytes`: UTF-8 bytes of every text block; images excluded."""
    return sum(utf8_len(b["text"]) for b in blocks if b.get("type") == "text")


def marker(tag: str) -> str:
    """What keep-first puts in place of a repeated block."""
    return f"<{tag}>{MARKER_TEXT}</{tag}>"


@dataclass(slots=True)
class DedupeResult:
    """A dedupe applied to one payload: the new blocks and what changed."""

    policy: str
    blocks: list[Block]
    bytes_before: int
    bytes_after: int
    collapsed: int = 0  # senpi's `collapsedDirectives` (senpi rules) or markers written (keep-first)
    kept: int = 0  # directive blocks left in full
    markers: int = 0
    nested: bool = False  # senpi rules: failed closed on nesting

    @property
    def saved(self) -> int:
        return self.bytes_before - self.bytes_after


def replace_spans(text: str, spans: Sequence[tuple[int, int, str]]) -> str:
    """Replace non-overlapping (start, end, replacement) spans, given in text order."""
    out: list[str] = []
    pos = 0
    for start, end, replacement in spans:
        out.append(text[pos:start])
        out.append(replacement)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def keep_first_identical(
    blocks: Sequence[Block],
    tags: Container[str] | None = None,
    scope: Sequence[str | None] | None = None,
) -> DedupeResult:
    """This tool's simulation: the first copy of every byte-identical directive block stays, later copies
    become `marker(tag)`, variants stay.

    `tags` limits which tags count (default: every tag found). `scope[i]` says how block i is scanned:
    `"any"` (every tag name: user-role text), `"known"` (the known directive tags: tool results) or None
    (left alone: serializer scaffolding, assistant text). Without `scope` every text block is `"any"`.
    """
    before = payload_bytes(blocks)
    seen: set[tuple[str, int]] = set()
    out = list(blocks)
    kept = markers = 0
    for i, block in enumerate(blocks):
        mode = "any" if scope is None else scope[i]
        if block.get("type") != "text" or mode is None:
            continue
        scan = scan_text(block["text"], any_tag=mode == "any")
        edits: list[tuple[int, int, str]] = []
        replaced_end = -1
        for tb in scan.blocks:
            if tags is not None and tb.tag not in tags:
                continue
            if tb.start < replaced_end:
                continue  # inside a block already replaced: it goes with it
            key = (tb.tag, tb.digest)
            if key in seen:
                edits.append((tb.start, tb.end, marker(tb.tag)))
                replaced_end = tb.end
                markers += 1
            else:
                seen.add(key)
                kept += 1
        if edits:
            out[i] = {**block, "text": replace_spans(block["text"], edits)}
    after = payload_bytes(out)
    return DedupeResult("keep-first-identical", out, before, after, collapsed=markers, kept=kept, markers=markers)


def keep_first_step(
    blocks: Sequence[tuple[int, TagBlock]], seen: set[tuple[str, int]], tags: Container[str] | None = None
) -> tuple[int, int, int]:
    """Keep-first over one message's directive blocks, given as (text index, block) in order, against and
    into the running `seen` set. Returns (bytes saved, markers, kept): the incremental form of
    `keep_first_identical` used per turn by the payload analysis."""
    saved = markers = kept = 0
    replaced: tuple[int, int] = (-1, -1)  # (text index, end) of the last replaced block
    for index, tb in blocks:
        if tags is not None and tb.tag not in tags:
            continue
        if index == replaced[0] and tb.start < replaced[1]:
            continue
        key = (tb.tag, tb.digest)
        if key in seen:
            saved += tb.nbytes - utf8_len(marker(tb.tag))
            markers += 1
            replaced = (index, tb.end)
        else:
            seen.add(key)
            kept += 1
    return saved, markers, kept


__all__ = [
    "MARKER_TEXT",
    "Block",
    "DedupeResult",
    "keep_first_identical",
    "keep_first_step",
    "marker",
    "payload_bytes",
    "replace_spans",
    "utf8_len",
]
