"""Report safety, end to end: every format is inert whatever the files hold, and redaction holds in all of them.

``tests/test_report_html.py``, ``test_report_md.py`` and ``test_redact.py`` check each renderer and the
redactor with their own fixture. This suite adds independent checks on the shared hostile fixture
(``tests/data/hostile``) and on generically poisoned reports:

* no character that a terminal or a bidi renderer acts on survives into Markdown or HTML, and the JSON is
  valid UTF-8 JSON with every control escaped;
* the HTML, parsed by the standard library, has only the page's own tags and attributes, no URL scheme that
  runs or fetches anything, and the hostile markers only ever in text;
* the Markdown, rendered by a real CommonMark engine with raw HTML *enabled* (as a tracker would), produces
  no tag, link or image from data;
* a secret appended to every string of a report, keys included, is gone from all three formats after
  redaction; secrets split by colour codes (``grep --color``) are caught too.
"""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from core.engine import Engine
from core.report import ReportOptions, build_report, render
from core.report.redact import redact_report

HOSTILE_DIR = Path(__file__).parent / "data" / "hostile"
NOW = 1_787_400_000_000
FORMATS = ("json", "md", "html")

#: tokens of well-known shapes (fake, never valid); each must be gone from every rendering
SECRETS = {
    "github": "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "anthropic": "sk-ant-api03-Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp",
    "aws": "AKIAIOSFODNN7EXAMPL3",
    "slack": "xoxb-1234567890-abcdefghijklmnop",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlc2lnbmF0dXJl",
}
SECRET_TEXT = " ".join(
    [
        SECRETS["github"],
        f"Authorization: Bearer {SECRETS['anthropic']}",
        f"aws_access_key_id={SECRETS['aws']}",
        SECRETS["slack"],
        SECRETS["jwt"],
        "password=hunter2hunter2",
    ]
)


def forbidden(ch: str) -> bool:
    """What a terminal or a bidi-aware renderer acts on (tab and newline are layout in md/html)."""
    o = ord(ch)
    return (
        (o < 0x20 and ch not in "\t\n")
        or 0x7F <= o <= 0x9F
        or ch in "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
        or 0xD800 <= o <= 0xDFFF
    )


def hostile_report(tmp_path: Path, *, redact: bool = True, extra_files: bool = True) -> dict[str, Any]:
    """The shared hostile agent dir, drained and built (with its raw-byte Problem lines)."""
    root = tmp_path / "hostile"
    shutil.copytree(HOSTILE_DIR, root, ignore=shutil.ignore_patterns("*.py", "*.md"))
    engine = Engine([root])
    try:
        engine.drain()
        return build_report(engine, ReportOptions(redact=redact, include_text=True, now_ms=NOW))
    finally:
        engine.close()


# ---------------------------------------------------------------------------- HTML


class Inventory(HTMLParser):
    """Everything the page's markup consists of, as a browser's tokenizer sees it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attributes: set[str] = set()
        self.values: list[tuple[str, str, str]] = []
        self.text: list[str] = []
        self.comments: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        for name, value in attrs:
            self.attributes.add(name)
            self.values.append((tag, name, value or ""))

    handle_startendtag = handle_starttag

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)


#: the page's own vocabulary (core/report/html.py builds nothing else)
PAGE_TAGS = {
    "html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "p", "section", "div", "b",
    "span", "small", "code", "table", "thead", "tbody", "tr", "th", "td", "details", "summary", "svg", "rect",
    "circle", "line", "text", "ul", "li", "pre", "polyline", "path", "g", "i", "em", "strong",
}  # fmt: skip
PAGE_ATTRIBUTES = {
    "lang", "charset", "http-equiv", "content", "name", "class", "style", "viewbox", "xmlns", "x", "y", "x1",
    "x2", "y1", "y2", "width", "height", "fill", "stroke", "stroke-width", "r", "cx", "cy", "rx", "points", "d",
    "role", "aria-label", "text-anchor", "open", "colspan", "title", "preserveaspectratio", "opacity",
    "font-size", "dominant-baseline", "transform", "stroke-dasharray", "stroke-opacity", "fill-opacity",
}  # fmt: skip


def assert_html_inert(page: str, markers: tuple[str, ...] = ("PWNED", "evil.example")) -> Inventory:
    inv = Inventory()
    inv.feed(page)
    inv.close()
    assert inv.tags <= PAGE_TAGS, f"tags from data: {inv.tags - PAGE_TAGS}"
    assert inv.attributes <= PAGE_ATTRIBUTES, f"attributes from data: {inv.attributes - PAGE_ATTRIBUTES}"
    assert not inv.comments, "a comment opened by data"
    for tag, name, value in inv.values:
        if (tag, name) == ("meta", "content"):
            continue  # the CSP's own text (it names data: for the inline SVG)
        low = value.lower().replace(" ", "")
        assert "javascript:" not in low and "data:" not in low and "url(" not in low, (tag, name, value)
        for marker in markers:
            assert marker not in value, f"data in <{tag} {name}=…>"
    assert (
        sum(1 for _tag, name, value in inv.values if name == "http-equiv" and "Content-Security-Policy" in value) == 1
    )
    assert page.lower().count("<script") == 0
    assert not any(forbidden(ch) for ch in page), "a control or bidi character in the page"
    return inv


def test_the_hostile_fixture_renders_an_inert_page(tmp_path: Path) -> None:
    report = hostile_report(tmp_path)
    page = render(report, "html")
    inv = assert_html_inert(page)
    shown = "".join(inv.text)
    # the hostile strings are shown as text, not dropped: markup literally, escape sequences gone (the payload
    # of an ESC-introduced OSC goes with it; after a C1 OSC, replaced by U+FFFD, it stays as plain text)
    assert "[bold red]x[/]" in shown and "[link=http://evil.example]" in shown
    assert "gnp.exe" in shown and "0;PWNED" not in shown.replace("\ufffd0;PWNED", "")
    page.encode("utf-8")


# ---------------------------------------------------------------------------- Markdown


def assert_markdown_inert(md: str) -> None:
    assert not any(forbidden(ch) for ch in md), "a control or bidi character in the Markdown"
    # how an issue tracker sees it: CommonMark + tables, raw HTML passed through
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(md)
    inv = Inventory()
    inv.feed(rendered)
    inv.close()
    allowed = {"h1", "h2", "h3", "h4", "p", "table", "thead", "tbody", "tr", "th", "td", "code", "pre", "em",
               "strong", "ul", "ol", "li", "br", "hr", "blockquote", "details", "summary"}  # fmt: skip
    assert inv.tags <= allowed, f"Markdown produced {inv.tags - allowed} from data"
    hrefs = [value for _tag, name, value in inv.values if name in ("href", "src")]
    assert hrefs == [], f"links or images from data: {hrefs[:3]}"


def test_the_hostile_fixture_renders_inert_markdown(tmp_path: Path) -> None:
    md = render(hostile_report(tmp_path), "md")
    assert_markdown_inert(md)
    assert "0;PWNED" not in md.replace("\ufffd0;PWNED", "")  # OSC payloads go with their ESC
    md.encode("utf-8")


MARKDOWN_ATTACKS = (
    "![t](http://evil.example/p.png) [c](javascript:alert(1)) <img src=x onerror=alert(1)> <details open>"
    "</details> <!-- x --> `code` ``` ~~~ | a | b | \\| *e* _e_ # h @everyone <http://evil.example> "
    "[ref]: http://evil.example\n---\n> quote"
)


def _poison(value: Any, extra: str) -> Any:
    """Every string (and every string key) of a built report, with ``extra`` appended."""
    if isinstance(value, str):
        return value + extra
    if isinstance(value, dict):
        return {(k + extra if isinstance(k, str) else k): _poison(v, extra) for k, v in value.items()}
    if isinstance(value, list):
        return [_poison(v, extra) for v in value]
    return value


def test_markdown_and_html_attacks_in_every_field_of_a_report_stay_text(tmp_path: Path) -> None:
    """The renderers alone, with every string of the report (keys too) carrying Markdown and HTML attacks."""
    report = _poison(hostile_report(tmp_path), MARKDOWN_ATTACKS)
    assert_markdown_inert(render(report, "md"))
    assert_html_inert(render(report, "html"), markers=("evil.example", "onerror"))


# ---------------------------------------------------------------------------- JSON


def test_the_json_is_valid_and_every_control_is_escaped(tmp_path: Path) -> None:
    text = render(hostile_report(tmp_path), "json")
    assert not any(ord(ch) < 0x20 and ch not in "\n" for ch in text)  # orjson escapes C0 inside strings
    parsed = json.loads(text)
    text.encode("utf-8")
    # the data went through the same sanitizer as the other formats: no escape sequence in any value
    assert "\x1b" not in json.dumps(parsed, ensure_ascii=False)


# ---------------------------------------------------------------------------- redaction


def _assert_no_secret(rendered: dict[str, str]) -> None:
    for fmt, text in rendered.items():
        for name, secret in SECRETS.items():
            assert secret not in text, f"{name} token in {fmt}"
            assert secret[8:24] not in text, f"part of the {name} token in {fmt}"
        assert "hunter2hunter2" not in text, f"password in {fmt}"


def test_a_secret_in_every_field_of_a_report_is_redacted_in_every_format(tmp_path: Path) -> None:
    """Redaction walks the whole report: a field added later is covered without anyone listing it."""
    report = _poison(hostile_report(tmp_path, redact=False), " " + SECRET_TEXT + " ")
    redacted = redact_report(report)
    _assert_no_secret({fmt: render(redacted, fmt) for fmt in FORMATS})
    assert redacted["redactions"]["total"] >= 6


def _append_to_values(value: Any, extra: str) -> Any:
    """Every hostile string value of the fixture (the free-text fields ``generate.evil`` filled) with ``extra``
    appended; keys and structural values (types, roles, events) stay, so the files keep their shape."""
    if isinstance(value, str):
        return value + extra if "PWNED" in value else value
    if isinstance(value, dict):
        return {k: _append_to_values(v, extra) for k, v in value.items()}
    if isinstance(value, list):
        return [_append_to_values(v, extra) for v in value]
    return value


def _with_secrets(root: Path, text: str) -> None:
    """Append ``text`` to every string value of every JSON line of the agent dir under ``root``."""
    for path in root.rglob("*"):
        if not path.is_file():
            continue
        out = []
        for raw in path.read_bytes().splitlines():
            try:
                obj = json.loads(raw)
            except ValueError:
                out.append(raw)
                continue
            out.append(json.dumps(_append_to_values(obj, text), ensure_ascii=True).encode())
        path.write_bytes(b"\n".join(out) + b"\n")


@pytest.mark.parametrize("split", [False, True], ids=["whole", "split-by-colour-codes"])
def test_secrets_in_the_files_never_reach_a_report(tmp_path: Path, split: bool) -> None:
    """Secrets in every field of every file, and in a directory name, end to end. ``split``: each token is
    cut by SGR colour codes (``grep --color`` output in a tool result); the surfaces strip the codes, which
    would join the token again, so redaction must see the stripped text."""

    def cut(token: str) -> str:
        return token[:12] + "\x1b[01;31m\x1b[K" + token[12:20] + "\x1b[m\x1b[K" + token[20:] if split else token

    text = " " + " ".join(cut(s) for s in SECRETS.values()) + " password=hunter2hunter2 "
    root = tmp_path / "agent"
    shutil.copytree(HOSTILE_DIR, root, ignore=shutil.ignore_patterns("*.py", "*.md"))
    _with_secrets(root, text)
    (root / "sessions" / "--home-evil-proj--").rename(root / "sessions" / f"--home-{SECRETS['github']}--")
    engine = Engine([root])
    try:
        engine.drain()
        report = build_report(engine, ReportOptions(include_text=True, now_ms=NOW))
    finally:
        engine.close()
    assert report["redactions"]["enabled"] is True
    _assert_no_secret({fmt: render(report, fmt) for fmt in FORMATS})
    assert re.search(r"\[REDACTED:[a-z_]+\]", render(report, "md"))


class _LiveText(HTMLParser):
    """The text of a rendered page outside `code`/`pre`: where a tracker's filters (autolinks, mentions, emoji,
    issue and commit references) act after the Markdown is parsed."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.depth += tag in ("code", "pre")

    def handle_endtag(self, tag: str) -> None:
        self.depth -= tag in ("code", "pre")

    def handle_data(self, data: str) -> None:
        if not self.depth:
            self.text.append(data)


LIVE_NAME = "www.evil.example @octocat :skull: #12 GH-7 deadbeefcafe"


def test_file_names_and_problem_text_give_no_autolink_mention_emoji_or_reference(tmp_path: Path) -> None:
    """A file named like a tracker's live text, with a bad line: its Problem (path and message) and its source
    row stay in code spans, so GitHub makes no link, mention, emoji or reference of them."""
    sessions = tmp_path / "agent" / "sessions" / f"--{LIVE_NAME}--"
    sessions.mkdir(parents=True)
    (sessions / f"{LIVE_NAME}.jsonl").write_text('{"type":"session","version":3,"id":"x"}\n{broken\n')
    engine = Engine([tmp_path / "agent"])
    try:
        engine.drain()
        report = build_report(engine, ReportOptions(now_ms=NOW))
    finally:
        engine.close()
    assert report["problems"], "the fixture must produce a Problem naming the file"
    md = render(report, "md")
    assert "@octocat" in md  # the name is shown...
    live = _LiveText()
    live.feed(MarkdownIt("commonmark", {"html": True}).enable("table").render(md))
    outside = "".join(live.text)
    for token in ("www.", "@octocat", ":skull:", "#12", "GH-7", "deadbeefcafe"):
        assert token not in outside, token  # ...but only inside code spans
