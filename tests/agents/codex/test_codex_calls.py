"""Which token_count lines are calls, and each call's verdict, on rollouts with known answers (one per reason)."""

from __future__ import annotations

from pathlib import Path

import orjson

from core.agents.codex.calls import CodexCall, RolloutCalls, id_from_name, source_of
from core.agents.codex.rollout import CodexLine, CodexRolloutAdapter
from core.model import Problem
from tests.agents.codex.codex_lines import SID, T0, Rollout

MIN = 60_000


def calls_of(rollout: Rollout, path: str = f"/h/sessions/2026/08/22/rollout-2026-08-22T11-00-00-{SID}.jsonl"):
    adapter, reader, out = CodexRolloutAdapter(), RolloutCalls(path), []
    offset = 0
    for lineno, data in enumerate(rollout.lines, 1):
        for record in adapter.parse(path, lineno, offset, data):
            assert not isinstance(record, Problem), record
            assert isinstance(record, CodexLine)
            call = reader.feed(record)
            if call is not None:
                out.append(call)
        offset += len(data) + 1
    return reader, out


def verdicts(calls: list[CodexCall]) -> list[tuple[str, str]]:
    return [(c.verdict.kind, c.verdict.reason) for c in calls]


def story() -> Rollout:
    """Every verdict a main rollout can get, with the figures that decide it."""
    r = Rollout()
    r.user(T0 + 1_000, "add a --since flag")
    r.call(T0 + 5_000, 12_000, 4_096)  # first call: the system prompt prefix was cached by earlier sessions
    r.call(T0 + 8_000, 12_500, 11_904)  # reads 12,000 // 128 * 128: a hit
    r.call(T0 + 11_000, 13_000, 12_288)  # one block short of 12,416: an older, shorter prefix matched
    r.user(T0 + 20 * MIN, "now make it async")
    r.call(T0 + 20 * MIN + 4_000, 14_000, 0, tool=False)  # nothing read back after 20 min idle
    r.token_count(T0 + 20 * MIN + 4_001)  # 0.105's back-to-back copy: not a call
    r.token_count(
        T0 + 20 * MIN + 9_000,
        last={
            "input_tokens": 0,
            "cached_input_tokens": 0,
            "output_tokens": 0,
            "reasoning_output_tokens": 0,
            "total_tokens": 9_207,
        },
    )
    r.emit(T0 + 20 * MIN + 9_001, "compacted", {"message": "", "replacement_history": [{"type": "message"}] * 3})
    r.event(T0 + 20 * MIN + 9_001, "context_compacted")
    r.call(T0 + 20 * MIN + 12_000, 8_000, 6_784)  # after the compaction: the history was replaced on purpose
    r.user(T0 + 21 * MIN, "try the other model", model="gpt-5.2-codex")
    r.call(T0 + 21 * MIN + 3_000, 8_500, 0, model="gpt-5.2-codex")  # the cache is per model
    r.user(T0 + 22 * MIN, "stop", model="gpt-5.2-codex")
    r.event(T0 + 22 * MIN + 900, "turn_aborted", reason="interrupted")  # the request made no usage
    r.user(T0 + 23 * MIN, "go on", model="gpt-5.2-codex")
    r.call(T0 + 23 * MIN + 2_000, 9_000, 8_448, model="gpt-5.2-codex", tool=False)  # judged against the last usage
    r.event(T0 + 23 * MIN + 2_500, "turn_aborted", reason="interrupted")  # after its call: no request was open
    return r


def test_calls_are_changes_of_the_total_and_each_reason_has_its_figures() -> None:
    reader, calls = calls_of(story())
    assert reader.calls == len(calls) == 8 and reader.meta.session_id == SID and reader.meta.thread == "main"
    assert verdicts(calls) == [
        ("bootstrap", "first_call"),
        ("delta", "cache_hit"),
        ("re-send", "prefix_rewritten"),
        ("re-send", "cache_miss"),
        ("compaction", "context_compacted"),
        ("re-send", "cache_miss"),
        ("aborted", "interrupted"),
        ("delta", "cache_hit"),
    ]
    first, hit, rewritten, miss, compacted, switched, aborted, after = calls
    assert first.verdict.evidence["expected_read"] is None and first.verdict.evidence["excess"] == 0
    assert first.tokens == {"input": 7_904, "cache_read": 4_096, "cache_write": 0, "output": 100}
    assert (hit.verdict.evidence["expected_read"], hit.verdict.evidence["shortfall"]) == (11_904, 0)
    assert hit.verdict.evidence["gap_ms"] == 41  # from the previous usage line to the next request (turn_context)
    ev = rewritten.verdict.evidence
    assert (ev["expected_read"], ev["shortfall"], ev["excess"]) == (12_416, 128, 128)
    ev = miss.verdict.evidence
    assert (ev["expected_read"], ev["excess"], ev["ttl_ms"]) == (12_928, 12_928, None)
    assert ev["gap_ms"] == 20 * MIN + 5 - 11_000 and "after 1189s idle" in miss.why  # shown, never "expired"
    ev = compacted.verdict.evidence
    assert ev["compaction"] == {
        "at": "2026-08-22T09:20:09.001Z",
        "line": 26,
        "replacement_items": 3,
        "estimated_tokens": 9_207,
    }
    assert (ev["expected_read"], ev["excess"], ev["cache_kind"], ev["cache_reason"]) == (
        None,
        0,
        "re-send",
        "prefix_rewritten",
    )
    assert switched.verdict.evidence["model_switch"] == {"from": "gpt-5.4", "to": "gpt-5.2-codex"}
    assert "model switch gpt-5.4 -> gpt-5.2-codex" in switched.why and switched.model == "gpt-5.2-codex"
    assert aborted.usage is None and aborted.tokens is None and aborted.model == "gpt-5.2-codex"
    assert aborted.where.line == 44 and "turn aborted (interrupted)" in aborted.why
    assert after.verdict.evidence["prev_prompt"] == 8_500  # the aborted call has no prompt to compare with
    assert [c.number for c in calls] == list(range(8))


def test_the_previous_prompt_below_the_cache_minimum_and_a_provider_without_cache_figures() -> None:
    r = Rollout()
    r.user(T0, "hi")
    r.call(T0 + 1_000, 900, 0)
    r.call(T0 + 2_000, 1_500, 0)
    _, calls = calls_of(r)
    # nothing was cacheable, so nothing cached was lost: not a re-send (the kernel's rule for every agent)
    assert verdicts(calls) == [("bootstrap", "first_call"), ("delta", "below_cache_minimum")]
    assert calls[1].verdict.evidence["excess"] == 0
    r = Rollout()
    r.user(T0, "hi")
    for ms, prompt in ((1_000, 5_000), (2_000, 6_000)):
        r.total["input_tokens"] += prompt
        r.total["total_tokens"] += prompt
        r.token_count(T0 + ms, last={"input_tokens": prompt, "output_tokens": 0, "total_tokens": prompt})
    _, calls = calls_of(r)
    assert verdicts(calls) == [("bootstrap", "first_call"), ("delta", "uncached")]  # no evidence of a re-send


def test_lines_with_only_a_total_or_only_a_last_usage_and_no_turn_context() -> None:
    """Older and re-serialized files: a total without `last_token_usage` counts its change; a `last_token_usage`
    without a total counts when it changes. 0.34 writes no turn_context: the model is null, never guessed."""
    r = Rollout(version="0.34.0")
    r.event(T0, "user_message", message="hi")
    for ms, total in ((1_000, 2_000), (2_000, 2_000), (3_000, 5_000)):
        r.event(
            T0 + ms,
            "token_count",
            info={
                "total_token_usage": {
                    "input_tokens": total,
                    "cached_input_tokens": 0,
                    "output_tokens": 10,
                    "total_tokens": total + 10,
                }
            },
        )
    _, calls = calls_of(r)
    assert [c.usage.input for c in calls if c.usage] == [2_000, 3_000] and {c.model for c in calls} == {None}
    r = Rollout()
    r.event(T0, "user_message", message="hi")
    for ms, prompt in ((1_000, 2_000), (2_000, 2_000), (3_000, 2_100)):
        r.event(
            T0 + ms,
            "token_count",
            info={"last_token_usage": {"input_tokens": prompt, "cached_input_tokens": 0, "output_tokens": 10}},
        )
    _, calls = calls_of(r)
    assert [c.usage.input for c in calls if c.usage] == [2_000, 2_100]


def test_cache_writes_of_newer_clis_are_kept_apart_from_the_uncached_input() -> None:
    r = Rollout(version="0.152.1")
    r.user(T0, "hi")
    usage = {
        "input_tokens": 10_000,
        "cached_input_tokens": 2_048,
        "cache_write_input_tokens": 7_000,
        "output_tokens": 20,
        "total_tokens": 10_020,
    }
    r.event(T0 + 1_000, "token_count", info={"total_token_usage": usage, "last_token_usage": usage})
    _, calls = calls_of(r)
    assert calls[0].tokens == {"input": 952, "cache_read": 2_048, "cache_write": 7_000, "output": 20}


def test_sources_threads_and_ids() -> None:
    assert source_of("cli") == ("cli", "main", None) and source_of(None) == (None, "main", None)
    assert source_of({"subagent": "review"}) == ("subagent:review", "review", None)
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": "019d-parent", "depth": 1, "agent_nickname": "scout"}}}
    assert source_of(spawn) == ("subagent:thread_spawn", "scout", "019d-parent")
    assert source_of({"subagent": {"other": "guardian"}}) == ("subagent:guardian", "guardian", None)
    assert id_from_name(f"/x/rollout-2026-08-22T11-00-00-{SID}.jsonl") == SID
    assert id_from_name("/x/notes.jsonl") == "notes"
    reader, _ = calls_of(Rollout(source={"subagent": "review"}))
    assert (reader.meta.thread, reader.meta.source) == ("review", "subagent:review")


def test_a_rollout_without_session_meta_takes_its_id_from_its_name(tmp_path: Path) -> None:
    r = Rollout()
    r.lines = r.lines[1:]
    r.user(T0, "hi")
    r.call(T0 + 1_000, 2_000, 0)
    reader, calls = calls_of(r)
    assert reader.meta.session_id == SID and reader.meta.where is None and len(calls) == 1
    assert orjson.loads(r.lines[0])["type"] == "response_item"
