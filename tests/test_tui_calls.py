"""The dashboard's first screen on the real files: the calls a user of each agent expects (issue 13).

On pi and Claude Code the Rates pane said "no continuity lines read yet" beside hundreds of verdicts, the
Sessions pane showed 0 % for sessions full of re-sends, the graph's legend had no colour for re-send or
compaction, and Claude Code's graph drew 37 bytes for a prompt of 25,353 tokens. Driven through Pilot at the
review's sizes, against the report built from the same files.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from typing import Any

import pytest
from realdata import SETS, needs_realdata
from textual.content import Content
from tui_fixtures import FROZEN, screen_output, wait_loaded

from core.engine import Engine
from core.report import ReportOptions, build_report
from tui.app import ContinuityApp
from tui.widgets.payload_graph import PayloadGraph
from tui.widgets.rates import RatesPane
from tui.widgets.sessions import SessionList

SIZES = [(160, 45), (80, 24)]


def plain(markup: object) -> str:
    return Content.from_markup(str(markup)).plain


@cache
def calls_of(name: str) -> dict[str, Any]:
    engine = Engine([SETS[name]])
    engine.read_all()
    try:
        return build_report(engine, ReportOptions(now_ms=0))["calls"]
    finally:
        engine.close()


async def first_screen(name: str, size: tuple[int, int]) -> tuple[ContinuityApp, Any]:
    app = ContinuityApp(Engine([SETS[name]], newest_first=True), live=False, clock=lambda: FROZEN)
    return app, app.run_test(size=size)


@needs_realdata
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", ["pi", "cc-marot-spotter", "cc-Crazytieguy-alignment-hive", "mux", "codex"])
async def test_the_rates_pane_counts_the_calls_the_report_counts(name: str, size: tuple[int, int]) -> None:
    app, running = await first_screen(name, size)
    async with running as pilot:
        await wait_loaded(pilot, app)
        rates = app.main.query_one(RatesPane).rates
        calls = calls_of(name)
        assert rates is not None and rates.unit == "calls" and rates.scope is None
        assert {k: n for k, n in rates.kinds.items() if n} == {k: n for k, n in calls["by_kind"].items() if n}
        assert rates.resend_share is not None and round(rates.resend_share, 4) == calls["resend_share"]
        rows = app.snapshot.rows  # each call once: a sub-agent call filed among earlier ones doubled a row
        assert len({id(row) for row in rows}) == len(rows) == calls["total"]
        _raw, lines = screen_output(app)
        top = "\n".join(lines[:12])
        assert "Rates · calls" in top and "no continuity lines" not in top
        by_kind = calls["by_kind"]
        exact = (by_kind["re-send"] + by_kind["fork"] + by_kind["flatten"]) / (calls["total"] - by_kind["aborted"])
        share = f"{exact * 100:.1f}%"  # formatted from the exact ratio, as the reports do
        assert f"resend {share}" in top, top
        # every kind that happened is on screen: a row, or first on the "+N more" line (Codex's 11 aborted calls
        # were clipped behind six zeros at 80x24)
        width = size[0] // 2
        pane_text = "\n".join(line[:width] for line in lines[:10])
        for kind, n in calls["by_kind"].items():
            if n:
                assert re.search(rf"{re.escape(kind)}\s+{n:,}\b", pane_text), (kind, pane_text)


@needs_realdata
async def test_the_rates_pane_names_both_units_on_a_senpi_history() -> None:
    app, running = await first_screen("senpi-live", (160, 45))
    async with running as pilot:
        await wait_loaded(pilot, app)
        pane = app.main.query_one(RatesPane)
        assert pane.rates is not None and (pane.rates.events, pane.rates.log_events) == (15, 15)
        assert str(pane.border_title) == "Rates · calls · log lines"
        assert "resend 20.0% of 15 calls · log 20.0% of 15" in plain(pane.border_subtitle)


@needs_realdata
@pytest.mark.parametrize("size", SIZES)
async def test_the_sessions_pane_share_counts_every_resend(size: tuple[int, int]) -> None:
    """pi ffae836b has 10 re-sends in 471 calls with usage: it showed 0 % (fork and flatten only counted)."""
    app, running = await first_screen("pi", size)
    async with running as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("s")
        await pilot.pause()
        pane = app.main.query_one(SessionList)
        shares = {s.session_id[:8]: round(s.resend_share or 0, 4) for s in pane.sessions}
        assert shares == {"ffae836b": round(10 / 471, 4), "d703a1a9": round(37 / 439, 4)}
        rows = [pane.render_row(i, 40).plain for i in range(pane.row_count)]
        share = [[c for c in r.split() if c.endswith("%")][-1] for r in rows]  # (the waste column follows)
        assert share[0] == "5%" and any("ffae836b" in r and s == "2%" for r, s in zip(rows, share, strict=True)), rows


@needs_realdata
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(
    ("name", "agent"), [("cc-marot-spotter", "claude-code"), ("pi", "pi"), ("cc-oneryalcin-fasthooks", "claude-code")]
)
async def test_the_graph_shows_tokens_where_bytes_are_not_exact_and_says_so(
    name: str, agent: str, size: tuple[int, int]
) -> None:
    app, running = await first_screen(name, size)
    async with running as pilot:
        await wait_loaded(pilot, app)
        graph = app.main.query_one(PayloadGraph)
        assert graph.data.metric == "tokens" and graph.data.inexact == (agent,)
        assert str(graph.border_title).startswith("Prompt tokens per call (log scale)")
        assert f"{agent} transcripts hold no system prompt or tools: tokens, not bytes" in str(graph.border_title)
        await pilot.press("b")  # forced to bytes, it says what they leave out
        await pilot.pause()
        assert graph.data.metric == "bytes" and "messages only, no system prompt or tools" in str(graph.border_title)


@needs_realdata
async def test_the_graph_keeps_bytes_where_they_are_exact() -> None:
    app, running = await first_screen("senpi-live", (160, 45))
    async with running as pilot:
        await wait_loaded(pilot, app)
        graph = app.main.query_one(PayloadGraph)
        assert graph.data.metric == "bytes" and graph.data.inexact == ()
        assert str(graph.border_title) == "Payload bytes sent per call (log scale)"


@needs_realdata
@pytest.mark.parametrize("name", ["cc-marot-spotter", "pi", "senpi-live", "codex"])
async def test_the_graph_legend_names_every_kind_it_draws_in_one_order(name: str) -> None:
    app, running = await first_screen(name, (160, 45))
    async with running as pilot:
        await wait_loaded(pilot, app)
        graph = app.main.query_one(PayloadGraph)
        drawn = Counter(k for k, v in zip(graph.data.kinds, graph.data.values, strict=True) if k and v is not None)
        legend = plain(graph.border_subtitle).replace("▲ selected", "").replace("█", " ").split()
        assert set(legend) >= set(drawn), (legend, drawn)
        order = ["delta", "re-send", "fork", "flatten", "compaction", "bootstrap", "disabled", "failed", "aborted"]
        assert legend == sorted(legend, key=order.index)
    if name == "cc-marot-spotter":
        assert {"delta", "re-send", "compaction"} <= set(legend)


async def test_the_sessions_pane_lists_a_session_only_the_log_names(tmp_path) -> None:
    """senpi 2026.9.29+ writes `sessionId` on log lines: a session without a transcript on disk is listed, its
    count of log lines and its share from them, and left out of the "all sessions" calls."""
    import json

    from report_helpers import ts, write_agent

    agent = write_agent(tmp_path)
    gone = "019f0000-aaaa-7000-8000-00000000dead"
    with (agent / "logs" / "session.log").open("a", encoding="utf-8") as fh:
        for seconds, kind in ((200, "bootstrap"), (201, "flatten"), (202, "flatten"), (203, "delta")):
            fh.write(json.dumps({"ts": ts(seconds), "level": "info", "event": "claude_sdk_oauth_session_continuity",
                                 "kind": kind, "reason": "r", "count": 2, "sessionId": gone}) + "\n")  # fmt: skip
    app = ContinuityApp(Engine([agent]), live=False, clock=lambda: FROZEN)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_loaded(pilot, app)
        pane = app.main.query_one(SessionList)
        (logged,) = [s for s in pane.sessions if s.log_only]
        assert (logged.session_id, logged.log_lines, logged.agent, logged.resend_share) == (gone, 4, "senpi", 0.5)
        row = pane.render_row(pane.sessions.index(logged) + 1, 40).plain
        assert "019f0000 log only" in row and row.split()[-1] == "50%" and " 4 " in row
        calls = sum(s.turns for s in pane.sessions if not s.log_only)
        assert pane.render_row(0, 40).plain.split()[-2] == f"{calls:,}"
