"""``core.sanitize``: every string from a file becomes inert text before any surface shows it.

Terminal widgets pass segment text to the terminal unchanged (reference textual-practice §5.4), so the job is
done here, in core, once for the TUI, notifications, Markdown and HTML alike. What must never come out of
``sanitize``/``display``:

* an ESC, so no CSI (colours, cursor moves, screen clears, device status reports that make the terminal type
  an answer), OSC (window title, OSC 8 links, OSC 52 clipboard writes), DCS/SOS/PM/APC string, ``ESC c``
  (full reset) or charset switch reaches the terminal;
* a C0 control other than tab and newline (NUL, BEL, BS, CR...), DEL, or a C1 control (8-bit CSI ``\\x9b``
  and OSC ``\\x9d`` work without an ESC on many terminals);
* a bidi embedding, override, isolate or mark (they make a path or a reason read differently than it is);
* a lone surrogate (a non-UTF-8 file name decoded with surrogateescape: no terminal write can encode it).

Markup is *not* core's business: ``[bold red]x[/]`` is data and comes out verbatim; the TUI renders it through
``Content`` (never a markup parser), which ``tests/test_tui_markup.py`` checks on the rendered output.
"""

from __future__ import annotations

import json
import time
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.sanitize import REPLACEMENT, clip, decode, display, one_line, sanitize

R = REPLACEMENT
HOSTILE = Path(__file__).parent / "data" / "hostile"

#: what may never survive sanitize (tab and newline are kept; display also folds newline)
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
#: zero-width and invisible formatting characters (shown as U+FFFD: a name holding one looks like another)
ZERO_WIDTH = "\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\u206a\u206f\ufeff\ufff9\ufffb"


def forbidden(ch: str) -> bool:
    o = ord(ch)
    return (o < 0x20 and ch not in "\t\n") or 0x7F <= o <= 0x9F or ch in BIDI + ZERO_WIDTH or 0xD800 <= o <= 0xDFFF


CASES = [
    # OSC: window title (BEL- and ST-terminated), hyperlink, clipboard write, unterminated
    ("a\x1b]0;PWNED\x07b", "ab"),
    ("a\x1b]2;PWNED\x1b\\b", "ab"),
    ("\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\", "click"),
    ("\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07x", "x"),
    ("a\x1b]0;PWNED", "a"),
    # CSI: colours, clear and home, alternate screen, device status report, cursor style, unfinished
    ("\x1b[31;1mred\x1b[0m", "red"),
    ("\x1b[2J\x1b[Hx", "x"),
    ("\x1b[?1049hx\x1b[?1049l", "x"),
    ("x\x1b[6n", "x"),
    ("\x1b[1 qx", "x"),
    ("a\x1b[31", "a31"),
    # DCS (XTGETTCAP, DECRQSS), SOS, PM, APC
    ("\x1bP+q544e\x1b\\x", "x"),
    ("\x1bP$q m\x1b\\x", "x"),
    ("\x1bXsos\x1b\\\x1b^pm\x1b\\\x1b_apc\x1b\\x", "x"),
    # two-byte escapes: full reset, save/restore cursor, keypad, charset switch (line-drawing garbage)
    ("a\x1bcb", "ab"),
    ("\x1b7x\x1b8", "x"),
    ("\x1b=x\x1b>", "x"),
    ("\x1b(0x\x1b(B", "x"),
    # a lone ESC, at the end or before a non-ASCII character
    ("a\x1b", "a"),
    ("a\x1b\u00e9", "a\u00e9"),
    # C1 controls (8-bit CSI/OSC/DCS/ST/NEL): replaced, what follows is plain text
    ("\x9b31mx", R + "31mx"),
    ("\x9d0;t\x07x", R + "0;t" + R + "x"),
    ("\x90q\x9c", R + "q" + R),
    ("a\x85b", "a" + R + "b"),
    # C0 and DEL
    ("a\x00b", "a" + R + "b"),
    ("bell\x07", "bell" + R),
    ("abc\x08\x08\x08xyz", "abc" + R * 3 + "xyz"),
    ("safe\roverwritten", "safe" + R + "overwritten"),
    ("a\x0b\x0c\x7fb", "a" + R * 3 + "b"),
    ("tab\tand\nnewline", "tab\tand\nnewline"),
    # bidi: override, embeddings, isolates, marks
    ("invoice\u202efdp.exe", "invoice" + R + "fdp.exe"),
    ("\u202a\u202b\u202c\u202dx", R * 4 + "x"),
    ("\u2066\u2067\u2068\u2069x", R * 4 + "x"),
    ("\u200e\u200f\u061cx", R * 3 + "x"),
    # zero-width: space, non-joiner, joiner, word joiner, a BOM mid-line
    ("pay\u200bpal.com", "pay" + R + "pal.com"),
    ("a\u200c\u200d\u2060b", "a" + R * 3 + "b"),
    ("reason\ufeff", "reason" + R),
    (ZERO_WIDTH, R * len(ZERO_WIDTH)),
    # a lone surrogate, from a file name that is not UTF-8
    ("name\udcff.jsonl", "name" + R + ".jsonl"),
]


@pytest.mark.parametrize(("raw", "clean"), CASES, ids=[repr(raw)[:40] for raw, _ in CASES])
def test_control_sequences_are_removed_and_controls_replaced(raw: str, clean: str) -> None:
    assert sanitize(raw) == clean
    assert not any(forbidden(ch) for ch in sanitize(raw))


MARKUP = [
    "[bold red]x[/]",
    "[link=http://evil.example]click[/link]",
    "[$accent]",
    "[@click=app.quit]quit[/]",
    "[/]",
    "[",
    "\\[escaped]",
    "[b][i]nested[/i][/b]",
    "[red on #ff0000 blink reverse]",
    "<script>alert(1)</script>",
    "&lt;&amp;",
    "**md** `code` | table |",
    "emoji 🙂 and CJK 漢字 and RTL שלום",
]


@pytest.mark.parametrize("text", MARKUP)
def test_markup_and_other_printable_text_is_kept_verbatim(text: str) -> None:
    """Core neither escapes nor strips markup: it is data. (The TUI never hands it to a markup parser.)"""
    assert sanitize(text) == text
    assert display(text) == text


def test_display_is_one_bounded_inert_line() -> None:
    text = "line one\nline two\r\nthree\u2028four\x85five\x1b]0;PWNED\x07 " + "x" * 5000
    shown = display(text, limit=200)
    assert len(shown) == 200 and shown.endswith("\u2026")
    assert shown.startswith("line one\u23celine two\u23cethree\u23cefour\u23cefive ")
    assert "PWNED" not in shown and not any(forbidden(ch) for ch in shown)
    assert display("") == " " and display(None) == "None" and display(42) == "42"


def test_decode_never_raises_and_replaces_invalid_utf8() -> None:
    assert decode(b"ok \xff\xfe \xc3 \xed\xa0\x80") == "ok \ufffd\ufffd \ufffd \ufffd\ufffd\ufffd"
    assert not any(forbidden(ch) for ch in sanitize(decode(bytes(range(256)))))


# ---------------------------------------------------------------------------- properties

hostile_text = st.text(
    alphabet=st.one_of(
        st.characters(codec=None, exclude_categories=()),  # anything, surrogates included
        st.sampled_from(
            ["\x1b", "[", "]", "P", "\\", "\x07", "\x9b", "\x9d", ";", "0", "c", "\u202e", "\u200b", "\ufeff", "\n"]
        ),
    ),
    max_size=200,
)
PROPS = settings(derandomize=True, database=None, deadline=None, max_examples=500)


@PROPS
@given(text=hostile_text)
def test_nothing_forbidden_survives_and_sanitize_is_idempotent(text: str) -> None:
    clean = sanitize(text)
    assert not any(forbidden(ch) for ch in clean), repr(clean)
    assert "\x1b" not in clean
    assert sanitize(clean) == clean
    clean.encode("utf-8")  # writable to any UTF-8 terminal


@PROPS
@given(text=hostile_text, limit=st.integers(2, 300))
def test_display_is_always_one_short_inert_line(text: str, limit: int) -> None:
    shown = display(text, limit)
    assert len(shown) <= limit
    assert not any(forbidden(ch) for ch in shown) and "\n" not in shown
    assert not any(unicodedata.category(ch) in ("Zl", "Zp") for ch in shown)


@PROPS
@given(text=st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cc", "Cf", "Cs", "Zl", "Zp"))))
def test_printable_text_is_untouched(text: str) -> None:
    assert sanitize(text) == text
    assert one_line(text) == (text or " ")
    assert clip(text, 10_000) == text


@pytest.mark.parametrize(
    "evil",
    [
        "\x1b[" * 300_000,
        "\x1b]" * 300_000,
        "\x1bP" * 300_000,
        "\x1b[" + "0;" * 500_000,
        "\x1b]" + "x" * 1_000_000,
        ("\x9b" + "a" * 10) * 100_000,
    ],
    ids=["csi-openers", "osc-openers", "dcs-openers", "endless-csi-params", "endless-osc", "c1-dense"],
)
def test_pathological_input_is_sanitized_in_linear_time(evil: str) -> None:
    """No regex backtracking blow-up: a megabyte of escape openers is cleaned in well under a second."""
    t0 = time.perf_counter()
    clean = sanitize(evil)
    assert time.perf_counter() - t0 < 2.0
    assert "\x1b" not in clean and "\x9b" not in clean


# ---------------------------------------------------------------------------- the hostile fixtures


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_the_hostile_fixtures_carry_every_vector_and_sanitize_makes_them_inert() -> None:
    """``tests/data/hostile`` is for the TUI tests and a demo: guard that it stays hostile, and inert here."""
    strings: list[str] = []
    files = sorted(p for p in HOSTILE.rglob("*") if p.is_file() and p.suffix in (".log", ".jsonl", ".json"))
    assert files, "tests/data/hostile is missing"
    for path in files:
        for raw in path.read_bytes().splitlines():
            try:
                strings += _strings(json.loads(raw))
            except ValueError:
                continue  # the raw-bytes lines are there to be Problems
    blob = "".join(strings)
    for vector in ("[bold red]", "[link=", "[$accent]", "\x1b]0;", "\x1b[", "\x1bP", "\x1bc", "\x9b", "\u202e", "\x00"):
        assert vector in blob, f"the hostile fixtures lost {vector!r}"
    for s in strings:
        assert not any(forbidden(ch) for ch in display(s, 10_000))


@settings(max_examples=500, deadline=None)
@given(value=st.text(max_size=40), limit=st.integers(1, 50))
def test_display_fast_path_changes_nothing(value: str, limit: int) -> None:
    """`display` returns a printable string as it is; the full path must agree on every input."""
    from core.sanitize import clip, one_line, sanitize

    assert display(value, limit) == clip(sanitize(one_line(value)), limit)


async def test_zero_width_and_bidi_reach_no_report_and_no_screen(tmp_path: Path) -> None:
    """Written into every free-text place (cwd, model, kinds and reasons, message text, an error line, the session
    dir's name): the JSON, Markdown and HTML reports (with message text too) and the dashboard's screens carry
    none of them, and show U+FFFD where one was."""
    from report_helpers import report_for, write_agent
    from tui_fixtures import FROZEN, screen_output, wait_loaded

    from core.engine import Engine
    from core.report import ReportOptions, render
    from tui.app import ContinuityApp

    invisible = "\u200b\u200d\ufeff\u202e\u2066"
    agent = write_agent(tmp_path, extra=f" zw{invisible}x ", secret=f"s{invisible}")
    report = report_for(agent, ReportOptions(include_text=True))
    outputs = {fmt: render(report, fmt) for fmt in ("json", "md", "html")}
    app = ContinuityApp(Engine([agent]), live=False, clock=lambda: FROZEN)
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_loaded(pilot, app)
        outputs["main screen"] = "\n".join(screen_output(app)[1])
        await pilot.press("p")
        await pilot.pause()
        outputs["problems"] = "\n".join(screen_output(app)[1])
    for where, body in outputs.items():
        assert not any(ch in body for ch in invisible), where
    assert "zw" + R * len(invisible) + "x" in outputs["md"]
