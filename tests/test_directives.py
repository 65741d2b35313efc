"""The directive scan, the per-session ledger, both dedupe simulations and the prompt-cache prefix property."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from core.agents.senpi.payload.dedupe import KEEP_LAST, senpi_dedupe, simulate_all
from core.agents.senpi.payload.serialize import (
    ENVELOPE_CLOSE,
    RULES_OLD,
    ToolNamer,
    blocks_text,
    delta_blocks,
    flatten_blocks,
)
from core.kernel.dedupe import keep_first_identical, marker, utf8_len
from core.kernel.directives import KNOWN_TAGS, DirectiveLedger, composition, scan_text, ultrawork_depth
from tests.payload_support import Transcript, ingest, only_session, text

A = "<ultrawork-mode>\nalpha ✓\n</ultrawork-mode>"
B = "<ultrawork-mode>\nbeta\n</ultrawork-mode>"
R = "<system-reminder>\nremember\n</system-reminder>"


def test_known_tags_are_the_documented_ones() -> None:
    assert KNOWN_TAGS == ("ultrawork-mode", "omo-ultrawork-reminder", "omo-senpi-task", "omo-fallback-architect",
                          "omo-fallback-architect-reminder", "system-reminder")  # fmt: skip


def test_scan_finds_blocks_with_sizes_and_digests() -> None:
    scan = scan_text(f"pre {A} mid {B} post {A}")
    assert [(b.tag, b.nbytes) for b in scan.blocks] == [("ultrawork-mode", utf8_len(A)), ("ultrawork-mode", len(B)),
                                                         ("ultrawork-mode", utf8_len(A))]  # fmt: skip
    first, second, third = scan.blocks
    assert first.digest == third.digest != second.digest
    assert scan.blocks[0].start == 4 and scan.blocks[0].end == 4 + len(A)
    assert scan.ultrawork_tokens == (True, False, True, False, True, False)


def test_nested_same_tag_pairs_like_senpis_non_greedy_span() -> None:
    text_ = "<ultrawork-mode>outer <ultrawork-mode>inner</ultrawork-mode> tail</ultrawork-mode>"
    scan = scan_text(text_)
    assert len(scan.blocks) == 1
    block = scan.blocks[0]
    assert (
        block.nested
        and text_[block.start : block.end] == "<ultrawork-mode>outer <ultrawork-mode>inner</ultrawork-mode>"
    )
    assert ultrawork_depth(scan.ultrawork_tokens, 0) == (True, 2)


def test_nested_different_tags_count_per_tag_but_only_the_outer_is_top_level() -> None:
    scan = scan_text(f"<omo-senpi-task>\n{R}\nuse tasks\n</omo-senpi-task>")
    assert [(b.tag, b.top) for b in scan.blocks] == [("omo-senpi-task", True), ("system-reminder", False)]


def test_unterminated_blocks_are_counted_not_measured() -> None:
    scan = scan_text(f"{A} then <system-reminder> never closed <ultrawork-mode> nor this")
    assert [b.tag for b in scan.blocks] == ["ultrawork-mode"]
    assert scan.unterminated == {"system-reminder": 1, "ultrawork-mode": 1}


def test_known_mode_ignores_other_tags_any_mode_finds_them() -> None:
    text_ = "<plan-context>x</plan-context> <div>y</div>"
    assert scan_text(text_).blocks == []
    assert [b.tag for b in scan_text(text_, any_tag=True).blocks] == ["plan-context", "div"]
    assert scan_text("no tags at all").blocks == []


def test_scan_stays_linear_on_hostile_text() -> None:
    """Megabytes of unterminated openers and tag soup: one pass, no quadratic pairing."""
    hostile = "<system-reminder>" * 150_000 + "<a>" * 300_000 + "x" * 1_000_000
    opened = "".join(f"<t{i}>" for i in range(20_000))
    closed = "".join(f"</t{i}>" for i in reversed(range(20_000)))
    onion = opened + "y" * 1_000_000 + closed  # 20,000 distinct tags nested around a megabyte
    start = time.perf_counter()
    scan_text(hostile)
    scan_text(hostile, any_tag=True)
    scan = scan_text(onion, any_tag=True)
    assert time.perf_counter() - start < 10.0
    assert [b.tag for b in scan.blocks] == ["t0"]  # only the outer block is a candidate


def both_simulations_payload() -> list[dict[str, Any]]:
    messages = [{"role": "user", "content": [text(f"{A}\nfirst")]},
                {"role": "assistant", "content": [text("ok")]},
                {"role": "user", "content": [text(f"{A}\nsecond {R}")]},
                {"role": "assistant", "content": [text("ok")]},
                {"role": "user", "content": [text(f"{B}\nthird {R}")]}]  # fmt: skip
    return flatten_blocks(messages, RULES_OLD, ToolNamer(RULES_OLD))


def test_both_simulations_on_one_payload() -> None:
    payload = both_simulations_payload()
    sims = simulate_all(payload)
    keep_last = sims["keep_last_ultrawork"]
    assert keep_last.collapsed == 2  # A, A, B: the last span (B, in the final message) is kept
    assert keep_last.saved == 2 * utf8_len(A) - 2 * len("[ultrawork directive superseded; the latest ultrawork "
                                                        "directive block below applies]")  # fmt: skip
    keep_first = sims["keep_first_identical_all_tags"]
    # A kept, second A marked, R kept, B kept (a variant), second R marked
    assert (keep_first.kept, keep_first.markers) == (3, 2)
    assert keep_first.saved == (utf8_len(A) - len(marker("ultrawork-mode"))) + (len(R) - len(marker("system-reminder")))
    keep_prev = sims["keep_identical_previous_ultrawork"]
    assert keep_prev.collapsed == 1  # the second A, identical to the one just above, in the history


message_pieces = st.sampled_from([A, B, R, "plain words ", "<ultrawork-mode>dangling ", "</ultrawork-mode>", "\n",
                                  "<plan-context>p</plan-context>", "<system-reminder>v2</system-reminder>"])  # fmt: skip
messages_strategy = st.lists(st.lists(message_pieces, min_size=0, max_size=6).map("".join), min_size=1, max_size=8)


@settings(max_examples=150, deadline=None)
@given(messages_strategy, st.data())
def test_keep_first_over_a_prefix_of_the_messages_is_a_byte_prefix(contents: list[str], data: st.DataObject) -> None:
    """Prompt-cache stability: simulating over the first N messages gives a byte prefix of simulating over all."""
    n = data.draw(st.integers(min_value=0, max_value=len(contents)))
    users = [{"role": "user", "content": [text(c)]} for c in contents]
    namer = ToolNamer(RULES_OLD)
    # the delta serializer's blocks
    whole = blocks_text(keep_first_identical(delta_blocks(users, RULES_OLD, namer)).blocks)
    part = blocks_text(keep_first_identical(delta_blocks(users[:n], RULES_OLD, namer)).blocks)
    assert whole.startswith(part)
    # the replayed history of a flatten (scaffolding left alone, transmitted text in scope)
    whole_h = blocks_text(_history_simulated(users))
    part_h = blocks_text(_history_simulated(users[:n]))
    assert whole_h.startswith(part_h)


def _history_simulated(users: list[dict[str, Any]]) -> list[dict[str, Any]]:
    sentinel = {"role": "toolResult", "toolCallId": "end", "toolName": "bash", "content": [text("end")]}
    origins: list[str] = []
    payload = flatten_blocks([*users, sentinel], RULES_OLD, ToolNamer(RULES_OLD), origins=origins)
    closer = next(i for i, b in enumerate(payload) if b["text"] == ENVELOPE_CLOSE)
    cut = closer - 2  # drop the sentinel's label and content
    scope = ["any" if o == "user" else None for o in origins]
    return keep_first_identical(payload[:cut], scope=scope[:cut]).blocks


def test_senpis_keep_last_is_not_prefix_stable() -> None:
    """Why the simulation matters: keep-last rewrites an earlier block when a new copy arrives."""
    users = [{"role": "user", "content": [text(A)]}, {"role": "user", "content": [text(A)]}]
    namer = ToolNamer(RULES_OLD)
    one = blocks_text(senpi_dedupe(delta_blocks(users[:1], RULES_OLD, namer), KEEP_LAST).blocks)
    two = blocks_text(senpi_dedupe(delta_blocks(users, RULES_OLD, namer), KEEP_LAST).blocks)
    assert not two.startswith(one)


# ---------------------------------------------------------------------------------------------- the ledger
def ledger_of(tmp_path: Path, build: Any) -> tuple[Any, DirectiveLedger]:
    transcript = Transcript(tmp_path)
    build(transcript)
    session = only_session(ingest(transcript.write()))
    ledger = session.analyzer(DirectiveLedger)
    assert isinstance(ledger, DirectiveLedger)
    return session, ledger


def test_ledger_counts_injections_variants_and_first_last_seen(tmp_path: Path) -> None:
    def build(t: Transcript) -> None:
        t.user(f"{A}\none")
        t.assistant(text("a"), kind="bootstrap", count=1)
        t.user(f"{A}\ntwo")
        t.assistant(text("b"), kind="delta", count=1)
        t.custom_message(B)
        t.user("three")
        t.assistant(text("c"), kind="delta", count=2)

    session, ledger = ledger_of(tmp_path, build)
    uw = ledger.tags["ultrawork-mode"]
    assert (uw.injections, uw.variant_count, uw.bytes_total) == (3, 2, 2 * utf8_len(A) + len(B))
    assert uw.bytes_per_copy == utf8_len(A)
    assert uw.first is not None and uw.first.turn == 0 and uw.last is not None and uw.last.turn == 2
    assert ledger.injections == {"ultrawork-mode": 3}
    assert session.turns[2].directives == {
        "ultrawork-mode": {"copies": 1, "bytes": len(B), "copies_sent": 1, "bytes_sent": len(B)}
    }  # a delta: sent as serialized
    row = ledger.summary()[0]
    assert row["tag"] == "ultrawork-mode" and row["variants"] == 2 and len(row["variant_list"]) == 2


def test_unknown_tags_count_once_their_identical_block_recurs(tmp_path: Path) -> None:
    plan = "<plan-context>\nstep 1\n</plan-context>"

    def build(t: Transcript) -> None:
        t.user(f"{plan}\nfirst <once>x</once>")
        t.assistant(text("a"), kind="bootstrap", count=1)
        t.tool_result("c0", "read", f"{plan} {plan}")  # tool output is data, not directives
        t.user(f"{plan}\nsecond")
        t.assistant(text("b"), kind="flatten", count=3)

    session, ledger = ledger_of(tmp_path, build)
    assert session.turns[0].directives == {}  # at the first call the block had not recurred yet
    assert ledger.recognized() == {"plan-context"}
    assert ledger.injections == {"plan-context": 2}
    assert session.turns[1].directives == {
        "plan-context": {"copies": 2, "bytes": 2 * len(plan), "copies_sent": 2, "bytes_sent": 2 * len(plan)}
    }  # senpi collapses ultrawork only


def test_ledger_on_nested_unterminated_and_variant_blocks(tmp_path: Path) -> None:
    task = f"<omo-senpi-task>\n{R}\n</omo-senpi-task>"

    def build(t: Transcript) -> None:
        t.custom_message(task, "senpi-task.usage")
        t.user("go <system-reminder> unterminated")
        t.assistant(text("a"), kind="flatten", count=2)
        t.user("<system-reminder>\nremember, v2\n</system-reminder>")
        t.assistant(text("b"), kind="flatten", count=3)

    session, ledger = ledger_of(tmp_path, build)
    reminder = ledger.tags["system-reminder"]
    assert (reminder.injections, reminder.variant_count, reminder.unterminated) == (2, 2, 1)
    assert ledger.tags["omo-senpi-task"].injections == 1
    last = session.turns[1]
    reminders = len(R) + len("<system-reminder>\nremember, v2\n</system-reminder>")
    assert last.directives == {
        "omo-senpi-task": {"copies": 1, "bytes": len(task), "copies_sent": 1, "bytes_sent": len(task)},
        "system-reminder": {"copies": 2, "bytes": reminders, "copies_sent": 2, "bytes_sent": reminders},
    }
    rows = composition(last)
    assert rows[0]["tag"] in ("omo-senpi-task", "system-reminder")
    assert all(0 < r["share"] < 1 for r in rows)


def test_recent_scans_are_shared_and_equal_a_fresh_scan() -> None:
    """`scan_text` keeps its last scans by text object: the same object gives the same scan, an equal text of
    another object and a text scanned again after the cache moved on give equal ones, both flags apart."""
    from core.kernel.directives import RECENT_SCANS, _scan

    text_ = f"x {A} <plan-context>p</plan-context> {A}"
    first = scan_text(text_, any_tag=True)
    assert scan_text(text_, any_tag=True) is first
    assert scan_text(text_) != first and scan_text(text_) == _scan(text_, False)
    copy = "".join(list(text_))
    assert copy is not text_ and scan_text(copy, any_tag=True) == first == _scan(text_, True)
    for i in range(RECENT_SCANS + 1):
        scan_text(f"<b>{i}</b>", any_tag=True)
    again = scan_text(text_, any_tag=True)
    assert again is not first and again == first
