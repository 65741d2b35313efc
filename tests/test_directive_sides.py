"""Directive figures on one side of the agent's dedupe each, shares ≤ 100 %, the same in every output (issue 22).

The Directives pane read `ultrawork-mode 2,505 62M 2324.4%` on a senpi history whose build collapses
`<ultrawork-mode>` keep-last: copies and bytes counted as serialized, divided by the bytes sent. Here, on such a
history (written by the demo simulator, whose logged `payloadBytes` the analysis must reproduce) and on one
without any dedupe (pi), every share divides figures of one side, and the pane (Pilot, 160x45 and 80x24), the
JSON, Markdown and HTML reports and `check` print the same figures.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
from directive_histories import ULW_BYTES, keep_last_chain, pi_chain
from pydantic import ValidationError
from rich.cells import cell_len
from tui_fixtures import FROZEN, screen_output, wait_for, wait_loaded

from core.engine import Engine
from core.kernel.directives import ULTRAWORK
from core.report import ReportOptions, build_report, render
from core.report.check import Thresholds, evaluate
from core.report.schema import validate
from tui.app import ContinuityApp
from tui.fmt import pct
from tui.widgets.directives import DirectivePane

PROMPTS = 24
HISTORIES = ("keep-last", "no-dedupe")


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {
        "keep-last": keep_last_chain(tmp_path_factory.mktemp("keep-last"), PROMPTS),
        "no-dedupe": pi_chain(tmp_path_factory.mktemp("pi"), PROMPTS),
    }


@pytest.fixture(scope="module")
def reports(roots: dict[str, Path]) -> dict[str, dict]:
    out = {}
    for name, root in roots.items():
        engine = Engine([root])
        engine.drain()
        try:
            out[name] = build_report(engine, ReportOptions(now_ms=0))
        finally:
            engine.close()
    return out


def test_keep_last_chain_counts_each_call_on_both_sides(roots: dict[str, Path]) -> None:
    engine = Engine([roots["keep-last"]])
    engine.drain()
    try:
        (session,) = engine.state.sessions.values()
        assert session.facts.payload_mismatches == []  # every sent size is senpi's own logged payloadBytes
        assert session.facts.payload_checked == PROMPTS
        for n, turn in enumerate(session.turns, start=1):
            assert turn.kind == "flatten" and turn.logged is not None
            assert turn.payload_bytes == turn.logged.payload_bytes
            assert turn.logged.collapsed_directives == n - 1
            ulw = turn.directives[ULTRAWORK]
            assert (ulw["copies"], ulw["bytes"]) == (n, n * ULW_BYTES)  # every copy serialized again
            assert (ulw["copies_sent"], ulw["bytes_sent"]) == (1, ULW_BYTES)  # keep-last sends the last one
            assert sum(v["bytes_sent"] for v in turn.directives.values()) <= turn.payload_bytes
            assert sum(v["bytes"] for v in turn.directives.values()) <= turn.payload_bytes_raw
    finally:
        engine.close()


@pytest.mark.parametrize("name", HISTORIES)
def test_report_shares_divide_one_side_and_stay_at_most_one(reports: dict[str, dict], name: str) -> None:
    report = reports[name]
    validate(report)
    directives = report["directives"]
    measured = [t for t in report["turns"] if t["payload_bytes_raw"] is not None]
    payloads = directives["payloads"]
    assert payloads == {
        "calls": PROMPTS,
        "payload_bytes_raw": sum(t["payload_bytes_raw"] for t in measured),
        "payload_bytes": sum(t["payload_bytes"] for t in measured),
    }
    every = directives["tags"][ULTRAWORK]["all_payloads"]
    chain = PROMPTS * (PROMPTS + 1) // 2
    assert (every["copies"], every["bytes"]) == (chain, chain * ULW_BYTES)
    sent_copies = PROMPTS if name == "keep-last" else chain
    assert (every["copies_sent"], every["bytes_sent"]) == (sent_copies, sent_copies * ULW_BYTES)
    assert every["share"] == round(every["bytes"] / payloads["payload_bytes_raw"], 4) <= 1
    assert every["share_sent"] == round(every["bytes_sent"] / payloads["payload_bytes"], 4) <= 1
    largest = directives["largest_payload"]
    assert largest["index"] == PROMPTS - 1 and 0 < largest["share_sent"] <= largest["share"] <= 1
    if name == "keep-last":
        assert largest["payload_bytes"] < largest["payload_bytes_raw"]
        assert directives["dedupe"]["keep_last_ultrawork"]["bytes_after"] == largest["payload_bytes"]
    else:
        assert largest["payload_bytes"] == largest["payload_bytes_raw"] and every["share"] == every["share_sent"]
    for turn in measured:
        assert sum(v["bytes_sent"] for v in (turn["directives"] or {}).values()) <= turn["payload_bytes"]
    # the contract refuses a sent side larger than the serialized one, and any share above 1
    broken = copy.deepcopy(report)
    broken["turns"][-1]["directives"][ULTRAWORK]["bytes_sent"] = every["bytes"] + 1
    with pytest.raises(ValidationError):
        validate(broken)
    broken = copy.deepcopy(report)
    broken["directives"]["tags"][ULTRAWORK]["all_payloads"]["share_sent"] = 23.244
    with pytest.raises(ValidationError):
        validate(broken)


@pytest.mark.parametrize("name", HISTORIES)
def test_check_gates_the_reports_share_sent(reports: dict[str, dict], name: str) -> None:
    report = reports[name]
    largest = report["directives"]["largest_payload"]
    (result,) = evaluate(report, Thresholds(max_directive_share=largest["share_sent"]))
    assert result.ok and result.measured == largest["share_sent"]
    (over,) = evaluate(report, Thresholds(max_directive_share=largest["share_sent"] - 0.01))
    assert not over.ok
    sent = f"{largest['directive_bytes_sent']} of {largest['payload_bytes']} bytes sent"
    assert sent in result.line()
    if name == "keep-last":
        assert f"{largest['directive_bytes']} of {largest['payload_bytes_raw']} bytes serialized" in result.line()
    else:  # pi's bytes are its messages' (no system prompt or tools): not called a payload
        assert "as serialized (no dedupe)" in result.line() and "(largest call's messages, session" in result.line()


@pytest.mark.parametrize("name", HISTORIES)
def _ratios(report: dict) -> tuple[float, float, float]:
    """The exact shares behind the report's rounded ones: the tag's over every payload, serialized and sent, and
    the largest payload's as sent (percentages are printed from these; the JSON rounds them to 4 decimals)."""
    directives = report["directives"]
    every, payloads, largest = directives["tags"][ULTRAWORK]["all_payloads"], directives["payloads"], directives[
        "largest_payload"]  # fmt: skip
    assert round(every["bytes"] / payloads["payload_bytes_raw"], 4) == every["share"]
    assert round(every["bytes_sent"] / payloads["payload_bytes"], 4) == every["share_sent"]
    assert round(largest["directive_bytes_sent"] / largest["payload_bytes"], 4) == largest["share_sent"]
    return (every["bytes"] / payloads["payload_bytes_raw"], every["bytes_sent"] / payloads["payload_bytes"],
            largest["directive_bytes_sent"] / largest["payload_bytes"])  # fmt: skip


@pytest.mark.parametrize("name", HISTORIES)
def test_markdown_and_html_print_the_reports_shares(reports: dict[str, dict], name: str) -> None:
    report = reports[name]
    largest = report["directives"]["largest_payload"]
    tag_raw, tag_sent, largest_sent = _ratios(report)
    md, html = render(report, "md"), render(report, "html")
    share_sent = f"{tag_sent * 100:.1f} %"
    if name == "keep-last":
        chain = PROMPTS * (PROMPTS + 1) // 2
        row = f"| {chain:,} → {PROMPTS:,} | {chain * ULW_BYTES:,} → {PROMPTS * ULW_BYTES:,} | "
        assert row + f"{tag_raw * 100:.1f} % → {share_sent} | {PROMPTS} → 1 |" in md
        assert f"{largest['payload_bytes_raw']:,} bytes serialized" in md
        assert f"{largest['payload_bytes_raw']:,}</b> bytes serialized" in html
    else:
        assert "(serialized → sent)" not in md and "copies serialized" not in html
    sent = f"{largest['payload_bytes']:,} bytes sent, {largest_sent * 100:.1f} % of them directives"
    if name == "keep-last":
        assert sent in md
    else:  # pi's bytes are its messages' (no system prompt or tools): the summaries name no largest payload in bytes
        assert sent not in md and "pi: the messages' bytes" in md and "pi: the messages' bytes" in html
    assert f'<td class="n">{share_sent}</td>' in html
    for text in (md, html):
        assert all(float(p) <= 100 for p in re.findall(r"(\d+(?:\.\d+)?) %", text))


def _pane(app: ContinuityApp) -> tuple[list[str], str]:
    pane = app.main.query_one(DirectivePane)
    region = pane.content_region
    _raw, lines = screen_output(app)
    body = [line[region.x : region.right] for line in lines[region.y : region.bottom]]
    subtitle = pane.border_subtitle
    return body, subtitle.plain if hasattr(subtitle, "plain") else str(subtitle or "")


@pytest.mark.parametrize("size", [(160, 45), (80, 24)])
@pytest.mark.parametrize("name", HISTORIES)
async def test_pane_shows_the_reports_figures(
    roots: dict[str, Path], reports: dict[str, dict], name: str, size: tuple[int, int]
) -> None:
    report = reports[name]
    every = report["directives"]["tags"][ULTRAWORK]["all_payloads"]
    tag_raw, tag_sent, largest_sent = _ratios(report)
    app = ContinuityApp(Engine([roots[name]]), live=False, clock=lambda: FROZEN)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot, app)
        pane = app.main.query_one(DirectivePane)
        await wait_for(pilot, lambda: pane.largest is not None)
        await pilot.pause()
        lines, subtitle = _pane(app)
        width = pane.content_region.width
        assert all(cell_len(line) <= width for line in lines)
        row = next(line for line in lines if line.strip().startswith(ULTRAWORK))
        cells = row.split()
        assert pct(tag_sent) in cells  # the share of the bytes sent, as the report has it
        header = [line for line in lines if line.split()[:1] == ["tag"]]
        assert header and all(f"{share}%" not in row for share in ("2324", "1884"))
        percents = [float(p) for line in lines for p in re.findall(r"(\d+(?:\.\d+)?)%", line)]
        assert percents and max(percents) <= 100
        assert pct(largest_sent) in subtitle  # the figure `check` gates
        deduped = name == "keep-last"
        assert ("sent" in lines[0] and "ser" in lines[0]) == deduped  # the group row names both sides
        if deduped and size[0] >= 160:
            assert pct(tag_raw) in cells and f"{every['copies']:,}" in cells
            assert f"{every['copies_sent']:,}" in cells
            assert "serialized →" in subtitle
        if not deduped:
            assert lines[0].split()[0] == "tag" and "serialized" not in subtitle
            # pi's bytes are its messages' (no system prompt or tools): no payload size, as in the reports
            assert "messages" in subtitle and "sent" not in subtitle
