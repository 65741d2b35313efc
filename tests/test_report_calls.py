"""The summaries read calls, on the real files (issue 13): the Markdown's first lines and the HTML page state the
call figures a user of each agent expects, in tokens where bytes are not exact, with one legend order per run.

The Markdown summary said "continuity decisions 0" and re-send share "–" beside 937 pi calls; "largest
payload" named a 695-byte first call; Claude Code's payloads counted messages only (37 bytes for a prompt of
25,353 tokens); the pi page's legend order depended on PYTHONHASHSEED.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from functools import cache
from typing import Any

import pytest
from realdata import SETS, needs_realdata

from core.engine import Engine
from core.report import ReportOptions, build_report, render

FIRST_LINES = 24  # the headline, the selection, and the summary's call rows


@cache
def report(name: str) -> dict[str, Any]:
    engine = Engine([SETS[name]])
    engine.read_all()
    try:
        return build_report(engine, ReportOptions(now_ms=0))
    finally:
        engine.close()


@needs_realdata
@pytest.mark.parametrize("name", list(SETS))
def test_the_markdown_opens_with_the_call_figures(name: str) -> None:
    rep = report(name)
    calls = rep["calls"]
    head = render(rep, "md").splitlines()[:FIRST_LINES]
    text = "\n".join(head)
    judged = calls["total"] - calls["by_kind"]["aborted"]
    resends = sum(calls["by_kind"][k] for k in ("fork", "flatten", "re-send"))
    # (after the waste clause where the report has one: "…; none of the 70 calls re-sent history")
    opening = f"{resends:,} of {judged:,} calls" if resends else f"none of the {judged:,} calls re-sent history"
    assert opening in head[2].lower(), head[2]
    agents = ", ".join(f"`{agent}` {figures['total']:,}" for agent, figures in calls["by_agent"].items())
    assert f"| calls | {calls['total']:,} ({agents}) |" in text
    share = f"{resends / judged * 100:.1f} % ({resends:,} of {judged:,}"
    assert f"| re-send share of the calls (fork + flatten + re-send) | {share}" in text
    assert "| continuity decisions (log lines) | 0 |" not in text  # a unit that was not read is not a zero
    if calls["tokens"]:
        tokens = " · ".join(f"{calls['tokens'][k]:,}" for k in ("input", "cache_read", "cache_write", "output"))
        assert f"| tokens: input · cache read · cache write · output | {tokens} |" in text
    inexact = [agent for agent, figures in calls["by_agent"].items() if figures["payload"] == "tokens"]
    if inexact:  # no byte-exact payload: the largest prompt in tokens, and why
        assert "| largest prompt (tokens) | " in text and "tokens, not bytes" in text
        assert "| largest payload sent" not in text
    else:
        assert "| largest payload sent (after dedupe) | " in text


@needs_realdata
def test_a_senpi_summary_names_calls_and_log_lines_apart() -> None:
    text = "\n".join(render(report("senpi-live"), "md").splitlines()[:FIRST_LINES])
    assert "| calls | 15 (`senpi` 15) |" in text and "| continuity decisions (log lines) | 15 |" in text
    assert "| largest payload sent (after dedupe) | 6,782 bytes" in text  # bytes stay where they are exact


@needs_realdata
def test_the_claude_code_summary_gives_its_largest_prompt_in_tokens() -> None:
    md = render(report("cc-marot-spotter"), "md")
    row = next(line for line in md.splitlines() if line.startswith("| largest prompt (tokens) |"))
    assert row.startswith("| largest prompt (tokens) | 173,514 tokens (`4d5611e5-241a-462a-8d15-5122611a9569` turn")
    assert "claude-code transcripts hold no system prompt or tools: tokens, not bytes" in row
    page = render(report("cc-marot-spotter"), "html")
    assert "173,514 <small>turn 73</small>" in page and "prompt tokens" in page


@needs_realdata
def test_the_html_legends_are_the_same_in_every_run() -> None:
    """The payload graph's legend sorted kinds outside its colour table by a set's order."""

    def page(seed: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "tui.cli", "report", str(SETS["pi"]), "--format", "html", "--no-cache"],
            capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONHASHSEED": seed},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+Z", "<t>", done.stdout)

    first = page("1")
    assert first == page("2") == page("3")
    legends = re.findall(r'<p class="legend">(.*?)</p>', first)
    names = [re.findall(r"</span>([^<]+)</span>", legend) for legend in legends]
    assert names[0] == ["bootstrap", "delta", "re-send", "compaction", "aborted"]  # the calls over time
    assert names[1] == ["delta", "re-send"]  # the bars drawn (aborted calls have no prompt to draw)


@needs_realdata
@pytest.mark.parametrize("name", ["pi", "cc-marot-spotter", "mux", "codex", "senpi-live"])
def test_every_kind_drawn_is_in_its_legend(name: str) -> None:
    page = render(report(name), "html")
    sections = re.findall(r"<section><h2>(.*?)</h2>(.*?)</section>", page, re.S)
    for title, body in sections:
        legend = re.search(r'<p class="legend">(.*?)</p>', body)
        if legend is None:
            continue
        named = set(re.findall(r"</span>([^<]+)</span>", legend.group(1)))
        drawn = set(re.findall(r"<title>[^<]*?(?:: \d[\d,]* |· )([a-z-]+)(?: · |</title>)", body))
        assert drawn and drawn <= named, (title, drawn - named)


# ---------------------------------------------------------------------------------------------- log-only sessions
def test_sessions_only_newer_senpi_log_lines_name_are_listed(tmp_path) -> None:
    """senpi 2026.9.29+ writes `sessionId` on its log lines: a session whose transcript is not on disk is listed
    with its kinds from those lines (and `check --session` measures them), beside the transcripts' sessions."""
    import json

    from report_helpers import ts, write_agent

    agent = write_agent(tmp_path)
    gone = "019f0000-aaaa-7000-8000-00000000dead"
    lines = [(200, "bootstrap", "registry_miss", 1), (201, "delta", "prefix_matched", 1),
             (202, "flatten", "assistant_rewritten", 9), (203, "flatten", "assistant_rewritten", 10)]  # fmt: skip
    with (agent / "logs" / "session.log").open("a", encoding="utf-8") as fh:
        for seconds, kind, reason, count in lines:
            fh.write(json.dumps({"ts": ts(seconds), "level": "info", "event": "claude_sdk_oauth_session_continuity",
                                 "kind": kind, "reason": reason, "count": count, "sessionId": gone}) + "\n")  # fmt: skip
    engine = Engine([agent])
    engine.drain()
    try:
        rep = build_report(engine, ReportOptions(now_ms=0))
        only = build_report(engine, ReportOptions(now_ms=0, session="019f0000"))
    finally:
        engine.close()
    listed = {s["id"]: s for s in rep["sessions"]}
    assert gone in listed and len(listed) == 3
    entry = listed[gone]
    assert (entry["path"], entry["turns"], entry["log_lines"], entry["agent"]) == (None, 0, 4, "senpi")
    assert entry["by_kind"] == {"bootstrap": 1, "delta": 1, "fork": 0, "flatten": 2, "disabled": 0}
    assert rep["calls"]["total"] == sum(s["turns"] for s in rep["sessions"])  # log lines are not calls
    assert rep["continuity"]["events"] == 17  # every line read, as before
    assert [s["id"] for s in only["sessions"]] == [gone] and only["calls"]["total"] == 0
    done = subprocess.run(
        [sys.executable, "-m", "tui.cli", "check", str(agent), "--session", "019f0000", "--max-resend-share", "0.4",
         "--no-cache"], capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "FAIL resend-share 0.5000 > max 0.4000 (over log lines of session 019f0000: 2 re-sends in 4 log decisions "
        "(no transcript))"
    ]
