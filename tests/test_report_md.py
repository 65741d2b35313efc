"""The Markdown report: the tables a bug report needs, paste-ready, no HTML, inert against hostile data."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from report_helpers import SESSION_ID, T0, enrich, ts, write_agent

from core.engine import Engine
from core.report import ReportOptions, build_report, render
from core.report.common import agreement
from tui.cli import main

HOSTILE = (
    '<script>alert(1)</script>"onerror=alert(1) </style> | `tick` **bold** [x](http://e.vil) \x1b]0;pwn\x07\x1b[31m'
)


def built(agent: Path, **enrich_args: str) -> dict:
    engine = Engine([agent])
    engine.drain()
    enrich(engine, **enrich_args)
    try:
        return build_report(engine, ReportOptions(now_ms=T0 + 3_600_000))
    finally:
        engine.close()


def without_code(markdown: str) -> str:
    """The Markdown with fenced blocks and code spans removed: what a renderer would interpret."""
    out = re.sub(r"^(`{3,})[^\n]*\n.*?^\1\s*$", "", markdown, flags=re.S | re.M)
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", out)


def test_markdown_has_the_bug_report_sections(tmp_path: Path) -> None:
    md = render(built(write_agent(tmp_path)), "md")
    for heading in (
        "# Continuity report",
        "## Summary",
        "## Calls by kind",
        "## Log decisions by kind",  # 13 log lines beside 6 calls: some are no call's (no transcript of them)
        "## Call reasons by kind",
        "## Log reasons by kind",
        "## Longest streaks",
        "## Peak",
        "## Sessions",
        "## Turns",
        "## Directives",
        "## Avoidable re-sends",
        "## Rewritten turns",
        "## Problems",
        "## Sources",
    ):
        assert f"\n{heading}\n" in f"\n{md}", heading
    assert "| `fork` | 4 | 30.8 % |" in md
    assert "| reason | bootstrap | delta | fork | flatten | disabled | total |" in md
    assert "| `assistant_rewritten` | 0 | 0 | 4 | 2 | 0 | 6 |" in md
    assert f"| `fork` | `assistant_rewritten` | 4 | {ts(40)} → {ts(61)} | 2 → 5 |" in md
    assert f"**132** (`flatten`) at {ts(80)}" in md
    assert "| `logs/session.log` | 3 |" in md and "invalid JSON" in md


def test_per_turn_table_avoidable_and_rewritten_diff(tmp_path: Path) -> None:
    report = built(write_agent(tmp_path))
    md = render(report, "md")
    assert "| time | kind | bytes sent | copies per tag | share of bytes sent |" in md
    assert f"### Session `{SESSION_ID}`" in md
    # the flatten turn: 50,303 bytes sent, two ultrawork copies left of three serialized, 98.9 % of the bytes sent
    # (every figure of the row on the sent side: three copies over 50,303 bytes read 148.3 %)
    assert "| `flatten` | 50,303 | `ultrawork-mode` ×2 (3 serialized) | 98.9 % |" in md
    assert "| `delta` (rewritten) | 420 | none | 0.0 % |" in md
    assert "- Avoidable (caused by a volatile-only rewrite): **1**" in md
    assert "Payload bytes as sent: 52,303; with a stable fingerprint: 2,700" in md
    assert f"| `{SESSION_ID}` | 4 |" in md  # the avoidable turn's row
    assert f"### `{SESSION_ID}` turn 2" in md
    assert "- Outcome: rewritten (volatile-only); evidence: transcript" in md
    assert ".content[0].startedAt  missing_in_capture  volatile  capture=null  commit=1785819137555" in md
    assert (
        "Largest payload (the most bytes serialized; dedupe is simulated on it): 75,174 bytes serialized (99.3 % "
        "directives), 50,303 bytes sent, 98.9 % of them directives;" in md
    )
    assert "| 24,871 | 4 → 3 | 99,484 → 74,613 | 96.6 % → 95.5 % | 3 → 2 |" in md  # over every payload
    agree, judged = agreement(report) or (0, 0)
    assert agree < judged and f"| replay agrees with the logged decision | {agree} of {judged} turns |" in md
    assert "| `delta/prefix_matched/1` | `fork/assistant_rewritten/1` | kind: logged delta, replay fork |" in md


def test_markdown_contains_no_html_and_keeps_tables_intact(tmp_path: Path) -> None:
    agent = write_agent(tmp_path, extra=HOSTILE)
    md = render(built(agent, diff_value=HOSTILE), "md")
    assert "\x1b" not in md and "\x07" not in md
    bare = without_code(md)
    assert "<" not in bare.replace("\\<", "")  # a lone `>` is inert once no `<` can open a tag
    assert "](http" not in bare.replace("\\]", "")
    # every row of every table has as many cell separators as its header
    lines = md.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("|---"):
            width = _cells(lines[i - 1])
            j = i + 1
            while j < len(lines) and lines[j].startswith("| "):
                assert _cells(lines[j]) == width, lines[j]
                j += 1
    # hostile reasons and kinds are listed, inside code spans
    assert "`why<script>alert(1)</script>" in md


def _cells(row: str) -> int:
    """Unescaped pipes of a table row (GFM splits cells on them, also inside code spans)."""
    return len(re.findall(r"(?<!\\)\|", row))


def test_long_message_text_is_summarized_unless_included(tmp_path: Path) -> None:
    long_text = "secret plan " * 40
    md = render(built(write_agent(tmp_path), long_text=long_text), "md")
    assert "secret plan secret plan" not in md
    assert "[text: 480 chars, 1 lines, xxh3 " in md


def test_cli_writes_markdown_to_a_file_and_several_formats_to_a_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = write_agent(tmp_path)
    assert main(["report", str(agent), "--format", "md"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Continuity report\n")
    target = tmp_path / "r.md"
    assert main(["report", str(agent), "--format", "md", "-o", str(target)]) == 0
    assert target.read_text(encoding="utf-8").startswith("# Continuity report\n")
    folder = tmp_path / "out"
    assert main(["report", str(agent), "--format", "json,md,html", "-o", str(folder)]) == 0
    assert sorted(p.name for p in folder.iterdir()) == [
        "continuity-report.html",
        "continuity-report.json",
        "continuity-report.md",
    ]
    assert main(["report", str(agent), "--format", "json,md"]) == 2  # several formats need -o DIR
    assert main(["report", str(agent), "--format", "pdf"]) == 2


def test_message_text_only_with_include_text(tmp_path: Path) -> None:
    engine = Engine([write_agent(tmp_path)])
    engine.drain()
    enrich(engine)
    try:
        with_text = render(build_report(engine, ReportOptions(include_text=True, now_ms=T0)), "md")
        summarized = render(build_report(engine, ReportOptions(now_ms=T0)), "md")
    finally:
        engine.close()
    assert "Message text:\n\n```text\nrewritten answer" in with_text
    assert "Message text:" not in summarized and "rewritten answer" not in summarized
