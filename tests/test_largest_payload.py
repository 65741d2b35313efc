"""One "largest payload", labelled, in `check`, the summaries and the graph (issue 18 item 4).

`check` printed 151514 and 101940 for the same turn 20 on adjacent lines, the summary said 151,514 where the
graph's top said 102K: one is before the agent's dedupe (where directive copies pile up), one is what was sent.
"""

from __future__ import annotations

import re

import pytest

from core.demo.bundle import demo_source
from core.engine import Engine
from core.report import ReportOptions, build_report, render
from core.report.check import Thresholds, evaluate
from core.report.common import largest_payloads, same_call


@pytest.fixture(scope="module")
def report() -> dict:
    engine = Engine([demo_source()])
    engine.read_all()
    try:
        return build_report(engine, ReportOptions(now_ms=0))
    finally:
        engine.close()


def test_the_demo_names_both_calls(report: dict) -> None:
    sent, raw = largest_payloads(report)
    assert sent is not None and raw is not None and not same_call(sent, raw)
    assert (sent.index, sent.kind, sent.sent) == (19, "fork", 134_071)  # the largest call sent (a fork)
    assert (raw.index, raw.kind, raw.raw, raw.sent) == (20, "flatten", 151_514, 101_940)  # where dedupe is tried


def test_check_labels_each_number(report: dict) -> None:
    lines = {r.name: r.line() for r in evaluate(report, Thresholds())}
    assert lines["directive-share"].startswith("INFO directive-share 0.2467 (largest payload, session ")
    assert lines["directive-share"].endswith(
        "turn 20, flatten: 25153 of 101940 bytes sent; 74895 of 151514 bytes serialized (0.4943))"
    )
    assert lines["payload-bytes"].startswith("INFO payload-bytes 134071 (largest payload sent, after dedupe: ")
    assert lines["payload-bytes"].endswith("turn 19, fork)")


def test_markdown_summary_names_both(report: dict) -> None:
    md = render(report, "md")
    rows = [line for line in md.splitlines() if line.startswith("| largest payload")]
    assert rows[0].startswith("| largest payload sent (after dedupe) | 134,071 bytes (") and "turn 19" in rows[0]
    assert rows[1].startswith("| largest payload before dedupe | 151,514 bytes (") and "101,940 sent" in rows[1]
    assert re.search(r"Largest payload .*151,514 bytes serialized \(49\.4 % directives\), 101,940 bytes sent", md)


def test_one_call_is_one_row() -> None:
    report = {"turns": [{"session": "s", "index": 3, "payload_bytes": 900, "payload_bytes_raw": 1200,
                         "logged": {"kind": "flatten"}}],
              "directives": {"largest_payload": {"session": "s", "index": 3, "payload_bytes_raw": 1200}}}  # fmt: skip
    md = render(report, "md")
    rows = [line for line in md.splitlines() if line.startswith("| largest payload")]
    assert rows == ["| largest payload sent (after dedupe) | 900 bytes (`s` turn 3, `flatten`; 1,200 before dedupe) |"]
    lines = {r.name: r.line() for r in evaluate(report, Thresholds())}
    assert lines["payload-bytes"].endswith("turn 3, flatten; 1200 before dedupe)")


def test_html_card_names_both(report: dict) -> None:
    page = render(report, "html")
    assert "134,071 <small>largest payload before dedupe: 151,514, turn 20</small>" in page
    assert "largest payload sent (bytes, after dedupe)" in page
    assert "bytes sent" in page


async def test_graph_title_says_sent(tmp_path) -> None:
    from tui_fixtures import FROZEN, wait_loaded

    from tui.app import ContinuityApp
    from tui.widgets.payload_graph import PayloadGraph

    app = ContinuityApp(Engine([demo_source()]), live=False, clock=lambda: FROZEN)
    async with app.run_test(size=(120, 36)) as pilot:
        graph = app.main.query_one(PayloadGraph)
        assert str(graph.border_title).startswith("Payload bytes sent per call")  # before any data too
        await wait_loaded(pilot, app)
        assert str(graph.border_title).startswith("Payload bytes sent per call")
