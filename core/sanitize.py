"""Make file data inert before anything displays it.

Terminal widgets write segment text to the terminal unchanged, so an OSC title sequence or `ESC c` inside a
log line would reach the user's terminal. Stripping happens here, in core, so every surface (TUI panes,
notifications, Markdown, HTML) receives the same clean text. Bidi overrides and zero-width characters are
replaced too: they can make a path or reason read differently from what it is.
"""

from __future__ import annotations

import functools
import re


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """Escapes, controls and line breaks, compiled on first use: compiling them is ~7.5 M instructions
    (callgrind), which every command paid at import (a one-line report is ~310 M), while text that is printable,
    as nearly all is, never reaches them."""
    escapes = re.compile(
        r"\x1b(?:\[[0-?]*[ -/]*[@-~]"  # CSI ... final byte
        r"|\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC ... BEL | ST (titles, OSC 8 links, OSC 52 clipboard)
        r"|[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS / SOS / PM / APC ... ST
        r"|[ -/]*[0-~])?"  # nF / Fp / Fe / Fs escapes (ESC c = reset); a lone ESC too
    )
    # C0 (but \t, \n), DEL, C1; bidi marks, embeddings, overrides and isolates (ALM included); zero-width and
    # invisible formatting characters (ZWSP, ZWNJ, ZWJ, word joiner, invisible operators, the Mongolian vowel
    # separator, a BOM that is not at a file's start, interlinear annotations): two paths or reasons that differ only
    # by one look the same, so each is shown as U+FFFD, never dropped (a ZWJ inside an emoji sequence shows too);
    # lone surrogates, which file names that are not UTF-8 carry (surrogateescape) and which no terminal write can
    # encode
    controls = re.compile(
        r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f"
        r"\ufeff\ufff9-\ufffb\ud800-\udfff]"
    )
    line_breaks = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
    return escapes, controls, line_breaks


REPLACEMENT = "\ufffd"


def sanitize(text: str, *, replacement: str = REPLACEMENT) -> str:
    """Remove escape sequences; replace other control and bidi-override characters (\\t and \\n kept)."""
    if text.isprintable() and "\x1b" not in text:
        return text
    escapes, controls, _ = _patterns()
    return controls.sub(replacement, escapes.sub("", text))


def clip(text: str, limit: int = 2000) -> str:
    """Bound what one cell or line shows; giant lines are common (tool output, directives)."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def one_line(text: str, mark: str = "\u23ce") -> str:
    """Collapse line breaks for one-record-per-row panes."""
    return _patterns()[2].sub(mark, text) or " "


def display(value: object, limit: int = 2000) -> str:
    """The one call a surface needs: any value -> a clipped, single-line, inert string."""
    if isinstance(value, str) and value and len(value) <= limit and value.isprintable():
        return value  # every line break, escape and control character is non-printable: nothing to do
    text = value if isinstance(value, str) else str(value)
    return clip(sanitize(one_line(text)), limit)


def decode(data: bytes) -> str:
    """Bytes from a file -> str, never raising (invalid UTF-8 becomes U+FFFD)."""
    return data.decode("utf-8", errors="replace")
