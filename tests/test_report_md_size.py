"""The Markdown report pastes into one GitHub issue at any history size (issue 18 item 3).

A 21-session history gave 69,410 characters (the limit for an issue body or comment is 65,536). Now the
document opens with the one-sentence answer, groups repeated findings (×N), lists top-N rows with "… and N
more", and lowers its detail until it is under `BUDGET`.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from core.demo.sim.generator import generate
from core.demo.sim.sink import DEFAULT_ROTATE_BYTES
from core.engine import Engine
from core.report import ReportOptions, build_report, render
from core.report.headline import headline, plain_text
from core.report.markdown import BUDGET, LIMIT, render_markdown, size


@pytest.fixture(scope="module")
def corpus21(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The review's case: the bench corpus of 21 sessions (462 turns), written by the demo simulator."""
    out = tmp_path_factory.mktemp("corpus21") / "agent"
    generate(out, "corpus", seed=7, scale=1.0, rotate_bytes=DEFAULT_ROTATE_BYTES, sessions=21)
    engine = Engine([out])
    engine.read_all()
    try:
        return build_report(engine, ReportOptions(now_ms=0))
    finally:
        engine.close()


def test_the_21_session_history_fits_and_opens_with_the_answer(corpus21: dict[str, Any]) -> None:
    assert len(corpus21["sessions"]) == 21
    md = render(corpus21, "md")
    assert size(md) <= BUDGET < LIMIT
    lines = md.splitlines()
    assert lines[0] == "# Continuity report"
    sentence = lines[2]
    assert sentence.startswith("**") and "re-sent history" in sentence and "the main cause is `" in sentence
    assert "### ×" in md and "rewritten turns in " in md  # repeated diffs grouped
    for heading in ("## Summary", "## Sessions", "## Rewritten turns", "## Problems", "## Sources"):
        assert f"\n{heading}\n" in md


def _synthetic(sessions: int, turns_per: int, rng: random.Random) -> dict[str, Any]:
    """A report dict as build_report makes them, at a size no test fixture reaches (thousands of sessions)."""
    reasons = [f"reason_{i:03d}_{'x' * (i % 40)}" for i in range(300)]
    out_sessions, turns = [], []
    for s in range(sessions):
        sid = f"01a{s:05d}-0000-7000-8000-{s:012d}"
        by_kind = {"bootstrap": 1, "delta": 0, "fork": 0, "flatten": 0, "disabled": 0}
        for i in range(turns_per):
            kind = rng.choice(["delta", "delta", "fork", "flatten"]) if i else "bootstrap"
            by_kind[kind] = by_kind.get(kind, 0) + (1 if i else 0)
            rewritten = kind != "delta" and rng.random() < 0.5
            diff = [{"path": f".content[{rng.randint(0, 39)}].startedAt", "change": "missing_in_capture",
                     "volatile": True, "capture": None, "commit": rng.randint(0, 10**13)}]  # fmt: skip
            turns.append({
                "session": sid, "index": i, "ts": "2026-08-05T08:15:09.467Z", "entry_id": f"{i:08x}",
                "logged": {"kind": kind, "reason": rng.choice(reasons), "count": i, "payload_bytes": 1000 * i},
                "recomputed": None, "payload_bytes": 900 * i, "payload_bytes_raw": 1000 * i,
                "directives": {f"tag-{i % 30}": {"copies": 2, "bytes": 500}},
                "commit": {"outcome": "rewritten", "source": "events", "class": "volatile-only", "diff": diff}
                if rewritten else {"outcome": "clean", "source": "events", "class": None, "diff": []},
                "avoidable": rewritten, "payload_bytes_if_stable": 10 if rewritten else None,
                "agreement": rng.random() > 0.05, "disagreement": f"kind: logged {kind}, replay delta at {i}",
                "why": "w" * 200,
            })  # fmt: skip
        out_sessions.append({"id": sid, "cwd": f"/home/me/project-{s}", "turns": turns_per, "by_kind": by_kind,
                             "rewritten": 0, "payload_bytes_total": 10**6})  # fmt: skip
    by_reason = {r: {"fork": rng.randint(0, 99), "flatten": rng.randint(0, 99)} for r in reasons}
    return {
        "schema": "continuity.report/1", "generated_at": "2026-12-01T00:00:00.000Z", "tool_version": "0.1.0",
        "selection": {"session": None, "since": None, "until": None, "sessions_matched": sessions},
        "sources": [{"path": f"sessions/--p{i}--/{i:06d}.jsonl", "format": "senpi-transcript", "bytes": i * 10,
                     "lines": i, "bad_lines": i % 7 == 0} for i in range(sessions + 3)],
        "continuity": {"events": 10**6, "by_kind": {"bootstrap": 5, "delta": 6, "fork": 7, "flatten": 8},
                       "by_reason": by_reason, "resend_share": 0.5,
                       "streaks": [{"kind": "fork", "reason": r, "length": 9, "start": "a", "end": "b",
                                    "count_first": 1, "count_last": 9} for r in reasons],
                       "peak_count": {"value": 9, "at": "x", "kind": "fork"},
                       "closes": {f"close_{i}": i for i in range(200)}},
        "sessions": out_sessions,
        "turns": turns,
        "directives": {"tags": {f"tag-{i}": {"injections": i, "variants": 1, "bytes_per_copy": 250,
                                             "copies_in_largest_payload": 2, "bytes_in_largest_payload": 500}
                                for i in range(300)},
                       "largest_payload": {"session": out_sessions[0]["id"], "index": 1, "payload_bytes_raw": 10**6},
                       "dedupe": None},
        "counterfactual": {"resends_logged": 9000, "resends_avoidable": 4000, "bytes_logged": 10**9,
                           "bytes_if_stable": 10**8},
        "problems": [{"path": f"sessions/--p{i % 50}--/x.jsonl", "line": i, "offset": i * 99,
                      "error": f"invalid JSON at byte {i}" if i % 3 else f"kind {i % 40} unknown"}
                     for i in range(1000)],
        "problems_total": 12_345,
        "redactions": {"enabled": True, "total": 0, "by_kind": {}},
    }  # fmt: skip


@pytest.mark.parametrize("sessions,turns_per", [(2_000, 23), (5_000, 4)])
def test_thousands_of_sessions_fit(sessions: int, turns_per: int) -> None:
    report = _synthetic(sessions, turns_per, random.Random(sessions))
    md = render_markdown(report)
    assert size(md) <= BUDGET, size(md)
    assert md.startswith("# Continuity report\n\n**")
    assert f"… and {sessions - 5:,} more sessions" in md or "more sessions in the JSON and HTML reports" in md
    assert "rewritten turns in " in md and "with the same diff" in md
    assert "more kinds of problem" in md or "| count |" in md


def test_a_report_of_giant_strings_is_cut_at_a_section_and_says_so() -> None:
    report = _synthetic(40, 3, random.Random(1))
    huge = "y" * 5000
    for turn in report["turns"]:
        turn["session"] = huge + turn["session"]
    for session in report["sessions"]:
        session["id"] = huge + session["id"]
        session["cwd"] = huge
    report["continuity"]["by_reason"] = {huge + str(i): {"fork": 1} for i in range(50)}
    assert size(render_markdown(report, budget=20_000)) <= 20_000  # display limits clip every cell (200 chars)
    md = render_markdown(report, budget=3_000)  # below what even the least detail needs: whole sections, then a note
    assert size(md) <= 3_000
    assert md.rstrip().endswith("it is in the JSON and HTML reports._")
    assert md.startswith("# Continuity report\n\n**")


def test_seventeen_rewritten_turns_with_one_diff_are_one_entry() -> None:
    report = _synthetic(1, 1, random.Random(2))
    template = report["turns"][0]
    report["turns"] = []
    for i in range(17):
        commit = {"outcome": "rewritten", "source": "events", "class": "volatile-only",
                  "diff": [{"path": ".content[0].startedAt", "change": "missing_in_capture", "volatile": True,
                            "capture": None, "commit": 1786093940882 + i},
                           {"path": ".content[0].endedAt", "change": "missing_in_capture", "volatile": True,
                            "capture": None, "commit": 1786093950000 + i}]}  # fmt: skip
        report["turns"].append({**template, "index": i, "commit": commit})
    md = render_markdown(report)
    section = md[md.index("## Rewritten turns") : md.index("## Problems")]
    assert section.count("### ") == 1
    assert "### ×17 rewritten turns of `" in section
    assert section.count(".content[0].startedAt") == 1 and section.count(".content[0].endedAt") == 1
    assert "turns 0, 1, 2, 3" in section


def test_the_sentence_takes_a_waste_section_when_the_report_has_one() -> None:
    report = _synthetic(3, 5, random.Random(3))
    without = plain_text(headline(report))
    assert "re-sent history" in without and "$" not in without
    report["waste"] = {"excess_tokens": 151_450, "share": 0.31,
                       "by_cause": {"cache_expired": 67_450, "prefix_rewritten": 24_000, "cache_miss": 47_100,
                                    "resume": 12_900},
                       "cost_usd": {"actual": 12.41, "excess": 4.12,
                                    "by_cause": {"cache_expired": 2.55, "prefix_rewritten": 1.28, "resume": 0.29}}}  # fmt: skip
    sentence = plain_text(headline(report))
    assert sentence.startswith("$4.12 of $12.41 (33 %) was spent re-writing cache that was already written "
                               "(151,450 tokens): 62 % cache expiry after an idle gap (cache_expired), 31 % prefix "
                               "rewrites (prefix_rewritten), 7 % resumed sessions (resume); ")  # fmt: skip
    report["waste"]["cost_usd"] = {"actual": None, "excess": None}
    sentence = plain_text(headline(report))
    assert sentence.startswith("151,450 tokens (31 % of what was not read from cache) were written again")
    md = render_markdown(report)
    assert md.splitlines()[2].startswith("**151,450 tokens (31 % of what was not read from cache) were written")
    assert "`cache_expired`" in md.splitlines()[2]
