"""The HTML report: one self-contained page, every section present, inert whatever the data holds."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from report_helpers import SESSION_ID, T0, enrich, write_agent

from core.engine import Engine
from core.report import ReportOptions, build_report, render
from core.report.common import turn_payload
from tui.cli import main

HOSTILE = "<script>alert(1)</script>\"onerror=alert(1) 'onload=x </style><img src=x> \x1b]0;pwn\x07\x1b[31m\x9b2J"

TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "header",
    "h1",
    "h2",
    "h3",
    "p",
    "section",
    "div",
    "b",
    "span",
    "small",
    "code",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "details",
    "summary",
    "svg",
    "rect",
    "circle",
    "line",
    "text",
    "ul",
    "li",
    "pre",
}
ATTRIBUTES = {
    "lang",
    "charset",
    "http-equiv",
    "content",
    "name",
    "class",
    "style",
    "open",
    "viewbox",
    "role",
    "x",
    "y",
    "width",
    "height",
    "fill",
    "cx",
    "cy",
    "r",
    "x1",
    "y1",
    "x2",
    "y2",
    "stroke",
    "stroke-opacity",
    "text-anchor",
}


class Inventory(HTMLParser):
    """Every tag and attribute the page declares, and the text of <style>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attributes: set[str] = set()
        self.styles: list[str] = []
        self.open: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes.update(name for name, _ in attrs)
        if tag not in ("meta", "rect", "circle", "line"):
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes.update(name for name, _ in attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("rect",):
            return
        assert self.open and self.open[-1] == tag, (tag, self.open[-5:])
        self.open.pop()

    def handle_data(self, data: str) -> None:
        if self.open and self.open[-1] == "style":
            self.styles.append(data)
        self.text.append(data)


def built(agent: Path, **enrich_args: Any) -> dict:
    engine = Engine([agent])
    engine.drain()
    enrich(engine, **enrich_args)
    try:
        return build_report(engine, ReportOptions(now_ms=T0 + 3_600_000))
    finally:
        engine.close()


def inventory(page: str) -> Inventory:
    parser = Inventory()
    parser.feed(page)
    parser.close()
    return parser


def test_html_is_one_self_contained_page_with_every_section(tmp_path: Path) -> None:
    page = render(built(write_agent(tmp_path)), "html")
    assert page.startswith("<!DOCTYPE html>")
    for heading in (
        "Decisions over time",
        "Payload per turn",
        "Decisions by kind",
        "Longest streaks",
        "Directives",
        "Rewritten turns",
        "Avoidable re-sends",
        "Sessions",
        "Turns",
        "Problems",
        "Sources",
    ):
        assert f"<h2>{heading}</h2>" in page, heading
    # no network, no script: nothing to fetch, a CSP that forbids both
    lowered = page.lower()
    for needle in ("<script", "src=", "href=", "url(", "@import", "http:", "https:", "//"):
        assert needle not in lowered.replace("default-src", "").replace("style-src", "").replace("img-src", ""), needle
    assert "default-src 'none'" in page
    parsed = inventory(page)
    assert parsed.tags <= TAGS and parsed.attributes <= ATTRIBUTES
    assert not parsed.open  # every element closed


def test_timeline_and_payload_graph_are_inline_svg_coloured_by_kind(tmp_path: Path) -> None:
    report = built(write_agent(tmp_path))
    page = render(report, "html")
    assert page.count("<svg ") == 2
    timeline = page[page.index("<h2>Decisions over time</h2>") : page.index("<h2>Payload per turn</h2>")]
    assert 'fill="#f28e2b"' in timeline and 'fill="#e15759"' in timeline  # fork, flatten
    assert "1 fork</title>" in timeline or "2 fork</title>" in timeline
    graph = page[page.index("<h2>Payload per turn</h2>") : page.index("<h2>Decisions by kind</h2>")]
    sized = [t for t in report["turns"] if turn_payload(t) is not None]
    assert graph.count("<rect ") == len(sized) >= 5  # one bar per turn with a known payload size
    assert f"{SESSION_ID} turn 4" in graph and "flatten · 50,303 bytes" in graph
    assert "<circle " in graph  # the rewritten turn is marked


def test_rewritten_diff_directives_avoidable_and_streaks_are_rendered(tmp_path: Path) -> None:
    page = render(built(write_agent(tmp_path)), "html")
    assert "<code>.content[0].startedAt</code>" in page and "missing_in_capture" in page
    assert "<code>1785819137555</code>" in page
    # 4 copies serialized over the payloads, 3 sent; 3 serialized in the largest payload, 2 sent
    row = page[page.index("<td><code>ultrawork-mode</code></td>") :].split("</tr>")[0]
    assert '<td class="n">4</td><td class="n">3</td><td class="n">99,484</td><td class="n">74,613</td>' in row
    assert row.endswith('<td class="n">3</td><td class="n">2</td>')
    assert "Avoidable (caused by a volatile-only rewrite): <b>1</b>" in page
    assert '<code>assistant_rewritten</code></td><td class="n">4</td>' in page  # the 4-long fork streak
    assert "<h2>Replay disagreements</h2>" in page and "kind: logged delta, replay fork" in page


def test_hostile_strings_in_every_field_stay_inert(tmp_path: Path) -> None:
    """`<script>`, attribute breakers, `</style>` and terminal escapes pushed through files end to end."""
    agent = write_agent(tmp_path, extra=HOSTILE)
    report = built(agent, diff_value=HOSTILE, long_text=HOSTILE)
    page = render(report, "html")
    _assert_inert(page)
    # and the hostile text is shown (escaped), not dropped
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&quot;onerror=alert(1)" in page


def test_every_string_of_a_report_is_escaped(tmp_path: Path) -> None:
    """Mutate every string (keys included) of a built report; the renderer alone must keep the page inert."""
    report = built(write_agent(tmp_path))

    data_maps = {"by_kind", "by_reason", "closes", "tags", "dedupe", "directives", "blocks", "by_kind_reason"}
    structural = {"outcome", "schema"}  # kept so the rewritten-turn sections are still rendered

    def poison(value: Any, key: str | None = None) -> Any:
        if isinstance(value, str):
            return value if key in structural else value + HOSTILE
        if isinstance(value, dict):
            keyed = key in data_maps
            inner = "by_kind_reason" if key == "by_reason" else None
            return {(k + HOSTILE if keyed else k): poison(v, inner or k) for k, v in value.items()}
        if isinstance(value, list):
            return [poison(v, key) for v in value]
        return value

    poisoned = poison(report)
    assert poisoned["turns"][2]["commit"]["diff"][0]["path"].endswith(HOSTILE)
    page = render(poisoned, "html")
    _assert_inert(page)
    md = render(poisoned, "md")
    assert "\x1b" not in md and "\x07" not in md and "\x9b" not in md


def _assert_inert(page: str) -> None:
    assert "<script" not in page.lower()
    assert "<img" not in page.lower()
    assert '"onerror=' not in page and "'onload=" not in page
    assert page.count("</style>") == 1
    for char in ("\x1b", "\x07", "\x9b"):
        assert char not in page
    parsed = inventory(page)
    assert parsed.tags <= TAGS, parsed.tags - TAGS
    assert parsed.attributes <= ATTRIBUTES, parsed.attributes - ATTRIBUTES
    assert not any(name.startswith("on") for name in parsed.attributes)
    assert "".join(parsed.styles).count("{") == "".join(parsed.styles).count("}")
    assert "alert" not in "".join(parsed.styles)


def test_cli_writes_html(tmp_path: Path) -> None:
    agent = write_agent(tmp_path)
    target = tmp_path / "report.html"
    assert main(["report", str(agent), "--format", "html", "-o", str(target)]) == 0
    page = target.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<h2>Longest streaks</h2>" in page


def test_message_text_only_with_include_text(tmp_path: Path) -> None:
    agent = write_agent(tmp_path, extra="<b>bold</b>")
    engine = Engine([agent])
    engine.drain()
    enrich(engine)
    try:
        with_text = render(build_report(engine, ReportOptions(include_text=True, now_ms=T0)), "html")
        summarized = render(build_report(engine, ReportOptions(now_ms=T0)), "html")
    finally:
        engine.close()
    assert "<summary>message text</summary>" in with_text and "rewritten answer" in with_text
    assert "&lt;b&gt;bold&lt;/b&gt;</code></pre>" in with_text
    assert "message text" not in summarized and "rewritten answer" not in summarized
    _assert_inert(with_text)
