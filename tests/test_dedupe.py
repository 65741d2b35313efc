"""senpi's ultrawork dedupe in both builds' rules, and this tool's keep-first simulation."""

from __future__ import annotations

from typing import Any

from core.agents.senpi.payload.dedupe import (
    KEEP_IDENTICAL_PREVIOUS,
    KEEP_LAST,
    PLACEHOLDER_REPEATED,
    PLACEHOLDER_SUPERSEDED,
    senpi_dedupe,
)
from core.agents.senpi.payload.serialize import ANCHOR, ENVELOPE_CLOSE, ENVELOPE_OPEN
from core.kernel.dedupe import MARKER_TEXT, keep_first_identical, keep_first_step, marker, payload_bytes
from core.kernel.directives import scan_text

A = "<ultrawork-mode>\nA body\n</ultrawork-mode>"
B = "<ultrawork-mode>\nB body, longer\n</ultrawork-mode>"


def blocks(*items: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": t} for t in items]


def history(*contents: str, final: str | None = None) -> list[dict[str, Any]]:
    """A flatten-shaped block list: envelope, one USER section per content, anchor, optional final."""
    out = [ENVELOPE_OPEN]
    for i, content in enumerate(contents):
        out += ["USER:\n" if i == 0 else "\n\nUSER:\n", content]
    out += [ENVELOPE_CLOSE, ANCHOR]
    if final is not None:
        out.append(final)
    return blocks(*out)


def test_placeholders_are_exact() -> None:
    assert PLACEHOLDER_SUPERSEDED == (
        "[ultrawork directive superseded; the latest ultrawork directive block below applies]"
    )
    assert PLACEHOLDER_REPEATED == "[ultrawork directive repeated; identical to the ultrawork directive just above]"
    assert marker("system-reminder") == (
        "<system-reminder>[directive unchanged - identical to the first occurrence above]</system-reminder>"
    )
    assert MARKER_TEXT == "[directive unchanged - identical to the first occurrence above]"


def test_keep_last_replaces_every_span_but_the_last_final_included() -> None:
    payload = history(f"do X\n{A}\ntail", f"{B}", final=f"{A}\nnow")
    result = senpi_dedupe(payload, KEEP_LAST)
    assert result.collapsed == 2
    assert [b["text"] for b in result.blocks][2] == f"do X\n{PLACEHOLDER_SUPERSEDED}\ntail"
    assert result.blocks[4]["text"] == PLACEHOLDER_SUPERSEDED
    assert result.blocks[-1]["text"] == f"{A}\nnow"  # the last span, in the final message, is kept
    assert result.bytes_before == payload_bytes(payload)
    assert result.bytes_after == result.bytes_before - len(A) - len(B) + 2 * len(PLACEHOLDER_SUPERSEDED)
    assert payload[2]["text"] == f"do X\n{A}\ntail"  # the input is not mutated


def test_keep_last_with_one_span_or_none_changes_nothing() -> None:
    for payload in (history("no directive"), history(A)):
        result = senpi_dedupe(payload, KEEP_LAST)
        assert result.collapsed == 0 and result.blocks == payload


def test_two_spans_in_one_block() -> None:
    result = senpi_dedupe(blocks(f"{A} and {A}"), KEEP_LAST)
    assert result.blocks[0]["text"] == f"{PLACEHOLDER_SUPERSEDED} and {A}"
    assert result.collapsed == 1


def test_nesting_across_blocks_fails_closed_in_both_rules() -> None:
    nested = blocks("<ultrawork-mode>outer ", f"{A}", " tail</ultrawork-mode>", A)
    for rule in (KEEP_LAST, KEEP_IDENTICAL_PREVIOUS):
        result = senpi_dedupe(nested, rule)
        assert result.nested and result.collapsed == 0 and result.blocks == nested


def test_lone_tags_are_not_nesting() -> None:
    # a close with no open is ignored; a trailing unclosed open never takes depth above one
    payload = blocks("</ultrawork-mode> stray", A, A, "<ultrawork-mode> never closed")
    result = senpi_dedupe(payload, KEEP_LAST)
    assert not result.nested and result.collapsed == 1
    assert result.blocks[1]["text"] == PLACEHOLDER_SUPERSEDED and result.blocks[2]["text"] == A


def test_keep_identical_previous_a_a_b_a() -> None:
    payload = history(A, A, B, A, final=A)
    result = senpi_dedupe(payload, KEEP_IDENTICAL_PREVIOUS)
    contents = [result.blocks[i]["text"] for i in (2, 4, 6, 8)]
    assert contents == [A, PLACEHOLDER_REPEATED, B, A]
    assert result.blocks[-1]["text"] == A  # after the closer nothing is collapsed
    assert result.collapsed == 1
    assert result.bytes_after == payload_bytes(payload) - len(A) + len(PLACEHOLDER_REPEATED)


def test_keep_identical_previous_needs_the_history_closer() -> None:
    payload = blocks(ANCHOR, A, A)  # a single-message flatten has no envelope: nothing is in scope
    assert senpi_dedupe(payload, KEEP_IDENTICAL_PREVIOUS).collapsed == 0


def test_keep_first_keeps_first_copies_and_variants() -> None:
    reminder = "<system-reminder>\nR\n</system-reminder>"
    payload = history(A, f"{reminder} x", A, B, f"{A}{reminder}", B, final=f"{A}\ngo")
    result = keep_first_identical(payload)
    contents = [result.blocks[i]["text"] for i in (2, 4, 6, 8, 10, 12)] + [result.blocks[-1]["text"]]
    mark_a, mark_r, mark_b = marker("ultrawork-mode"), marker("system-reminder"), marker("ultrawork-mode")
    assert contents == [A, f"{reminder} x", mark_a, B, f"{mark_a}{mark_r}", mark_b, f"{mark_a}\ngo"]
    assert (result.kept, result.markers) == (3, 5)
    assert result.saved == 3 * (len(A) - len(mark_a)) + (len(B) - len(mark_b)) + (len(reminder) - len(mark_r))
    assert result.bytes_after == payload_bytes(result.blocks)


def test_keep_first_respects_tags_and_scope() -> None:
    payload = blocks(A, A, "<other>x</other>", "<other>x</other>")
    only_uw = keep_first_identical(payload, tags={"ultrawork-mode"})
    assert [b["text"] for b in only_uw.blocks] == [A, marker("ultrawork-mode"), "<other>x</other>", "<other>x</other>"]
    scoped = keep_first_identical(payload, scope=["any", None, "known", "any"])
    assert [b["text"] for b in scoped.blocks] == [A, A, "<other>x</other>", "<other>x</other>"]


def test_a_block_inside_a_replaced_block_goes_with_it() -> None:
    outer = f"<omo-senpi-task>\n{A}\n</omo-senpi-task>"
    result = keep_first_identical(blocks(outer, outer))
    assert result.blocks[1]["text"] == marker("omo-senpi-task")
    assert (result.kept, result.markers) == (2, 1)  # the outer block and the ultrawork inside it


def test_incremental_step_matches_the_block_simulation() -> None:
    texts_ = [A, f"x{B}y{A}", B, f"{A}{A}", "<system-reminder>r</system-reminder>" * 2]
    full = keep_first_identical(blocks(*texts_))
    seen: set[tuple[str, int]] = set()
    saved = markers = kept = 0
    for i, t in enumerate(texts_):
        s, m, k = keep_first_step([(i, tb) for tb in scan_text(t, any_tag=True).blocks], seen)
        saved, markers, kept = saved + s, markers + m, kept + k
    assert (saved, markers, kept) == (full.saved, full.markers, full.kept)
