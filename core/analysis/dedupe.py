"""Directive dedupe on serialized prompt blocks: senpi's two ultrawork rules, and this tool's proposal.

senpi collapses repeated `<ultrawork-mode>` spans in every flatten before it measures `payloadBytes`
(`prompt-directive-dedupe.ts`); the rule changed in 2026.10.10-10 (senpi-formats §5.2, senpi-newer §7.3):

- keep-last (up to 2026.10.10-8): in every text block, final message included, every span but the last
  becomes `[ultrawork directive superseded; …]`. Moving the kept copy rewrites an earlier block each time a
  new directive arrives, so the prompt never shares a prefix with the previous one.
- keep-identical-previous (2026.10.10-10+): only inside the replayed history (blocks before the one that is
  exactly `\\n</conversation_history>`), a span identical to the span just before it becomes
  `[ultrawork directive repeated; …]`.

Both fail closed (change nothing) when the opening/closing tags, counted across all blocks, nest.

The tool's own simulation, `keep_first_identical`, shows what a prompt-cache-friendly policy would save for
every directive tag: keep the first copy of each byte-identical block, replace later copies with
`<tag>[directive unchanged - identical to the first occurrence above]</tag>`, leave variants alone. Each
decision depends only on what came before, so the result over a prefix of the messages is a byte prefix of
the result over all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass

from core.analysis.serialize import ENVELOPE_CLOSE, Block, payload_bytes, utf8_len
from core.kernel.directives import ULTRAWORK, TagBlock, TextScan, scan_text, ultrawork_depth

KEEP_LAST = "keep-last"
KEEP_IDENTICAL_PREVIOUS = "keep-identical-previous"
SENPI_RULES = (KEEP_LAST, KEEP_IDENTICAL_PREVIOUS)
PLACEHOLDER_SUPERSEDED = "[ultrawork directive superseded; the latest ultrawork directive block below applies]"
PLACEHOLDER_REPEATED = "[ultrawork directive repeated; identical to the ultrawork directive just above]"
PLACEHOLDER_BYTES = {
    KEEP_LAST: utf8_len(PLACEHOLDER_SUPERSEDED),
    KEEP_IDENTICAL_PREVIOUS: utf8_len(PLACEHOLDER_REPEATED),
}
MARKER_TEXT = "[directive unchanged - identical to the first occurrence above]"


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


def _scans(blocks: Sequence[Block], scanner: Callable[[str], TextScan]) -> list[TextScan | None]:
    return [scanner(b["text"]) if b.get("type") == "text" else None for b in blocks]


def has_nested_ultrawork(scans: Sequence[TextScan | None]) -> bool:
    """senpi's `hasNestedDirective`: tag depth over the whole block sequence exceeds one."""
    depth = 0
    for scan in scans:
        if scan is None or not scan.ultrawork_tokens:
            continue
        nested, depth = ultrawork_depth(scan.ultrawork_tokens, depth)
        if nested:
            return True
    return False


def _replace(text: str, spans: Sequence[tuple[int, int, str]]) -> str:
    """Replace non-overlapping (start, end, replacement) spans, given in text order."""
    out: list[str] = []
    pos = 0
    for start, end, replacement in spans:
        out.append(text[pos:start])
        out.append(replacement)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def senpi_dedupe(blocks: Sequence[Block], rule: str) -> DedupeResult:
    """`dedupeUltraworkBlocks` of the build: keep-last or keep-identical-previous. Input is not mutated."""
    before = payload_bytes(blocks)
    scans = _scans(blocks, scan_text)
    if has_nested_ultrawork(scans):
        return DedupeResult(rule, list(blocks), before, before, nested=True)
    spans = [(i, b) for i, scan in enumerate(scans) if scan is not None for b in scan.ultrawork]
    replace: dict[int, list[tuple[int, int, str]]] = {}
    if rule == KEEP_LAST:
        for i, span in spans[:-1]:
            replace.setdefault(i, []).append((span.start, span.end, PLACEHOLDER_SUPERSEDED))
        collapsed = max(len(spans) - 1, 0)
    elif rule == KEEP_IDENTICAL_PREVIOUS:
        closer = next((i for i, b in enumerate(blocks) if b.get("type") == "text" and b["text"] == ENVELOPE_CLOSE), -1)
        previous: int | None = None
        collapsed = 0
        for i, span in spans:
            if i >= closer:
                break
            if span.digest == previous:
                replace.setdefault(i, []).append((span.start, span.end, PLACEHOLDER_REPEATED))
                collapsed += 1
            previous = span.digest
    else:
        raise ValueError(f"unknown senpi dedupe rule {rule!r}")
    out = list(blocks)
    for i, edits in replace.items():
        out[i] = {**blocks[i], "text": _replace(blocks[i]["text"], edits)}
    after = payload_bytes(out)
    return DedupeResult(rule, out, before, after, collapsed=collapsed, kept=len(spans) - collapsed, markers=collapsed)


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
            out[i] = {**block, "text": _replace(block["text"], edits)}
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


def simulate_all(
    blocks: Sequence[Block], tags: Container[str] | None = None, scope: Sequence[str | None] | None = None
) -> dict[str, DedupeResult]:
    """Every policy on one payload: senpi's two ultrawork rules and keep-first over the directive tags."""
    return {
        "keep_last_ultrawork": senpi_dedupe(blocks, KEEP_LAST),
        "keep_identical_previous_ultrawork": senpi_dedupe(blocks, KEEP_IDENTICAL_PREVIOUS),
        "keep_first_identical_all_tags": keep_first_identical(blocks, tags, scope),
    }


__all__ = [
    "KEEP_IDENTICAL_PREVIOUS",
    "KEEP_LAST",
    "MARKER_TEXT",
    "PLACEHOLDER_REPEATED",
    "PLACEHOLDER_SUPERSEDED",
    "ULTRAWORK",
    "DedupeResult",
    "has_nested_ultrawork",
    "keep_first_identical",
    "keep_first_step",
    "marker",
    "senpi_dedupe",
    "simulate_all",
]
