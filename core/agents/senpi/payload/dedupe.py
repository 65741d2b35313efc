"""senpi's two ultrawork dedupe rules on serialized prompt blocks, and every policy on one payload.

senpi collapses repeated `<ultrawork-mode>` spans in every flatten before it measures `payloadBytes`
(`prompt-directive-dedupe.ts`); the rule changed in 2026.10.10-10 (senpi-formats §5.2, senpi-newer §7.3):

- keep-last (up to 2026.10.10-8): in every text block, final message included, every span but the last
  becomes `[ultrawork directive superseded; …]`. Moving the kept copy rewrites an earlier block each time a
  new directive arrives, so the prompt never shares a prefix with the previous one.
- keep-identical-previous (2026.10.10-10+): only inside the replayed history (blocks before the one that is
  exactly `\\n</conversation_history>`), a span identical to the span just before it becomes
  `[ultrawork directive repeated; …]`.

Both fail closed (change nothing) when the opening/closing tags, counted across all blocks, nest.

`simulate_all` puts both beside this tool's keep-first proposal (`core.kernel.dedupe`).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence

from core.agents.senpi.payload.serialize import ENVELOPE_CLOSE
from core.kernel.dedupe import Block, DedupeResult, keep_first_identical, payload_bytes, replace_spans, utf8_len
from core.kernel.directives import TextScan, scan_text, ultrawork_depth

KEEP_LAST = "keep-last"
KEEP_IDENTICAL_PREVIOUS = "keep-identical-previous"
SENPI_RULES = (KEEP_LAST, KEEP_IDENTICAL_PREVIOUS)
PLACEHOLDER_SUPERSEDED = "[ultrawork directive superseded; the latest ultrawork directive block below applies]"
PLACEHOLDER_REPEATED = "[ultrawork directive repeated; identical to the ultrawork directive just above]"
PLACEHOLDER_BYTES = {
    KEEP_LAST: utf8_len(PLACEHOLDER_SUPERSEDED),
    KEEP_IDENTICAL_PREVIOUS: utf8_len(PLACEHOLDER_REPEATED),
}


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
        out[i] = {**blocks[i], "text": replace_spans(blocks[i]["text"], edits)}
    after = payload_bytes(out)
    return DedupeResult(rule, out, before, after, collapsed=collapsed, kept=len(spans) - collapsed, markers=collapsed)


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
    "PLACEHOLDER_REPEATED",
    "PLACEHOLDER_SUPERSEDED",
    "has_nested_ultrawork",
    "senpi_dedupe",
    "simulate_all",
]
