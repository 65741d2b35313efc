"""A read-only, scrollable pretty-printed JSON view that highlights the lines of changed paths.

The drill-down shows the captured (streamed) and committed (persisted) assistant message side by side.
Lines are produced once with their jq-style path (`.content[0].startedAt`, the notation of the diff), so
a changed path lights up wherever it appears, and only the visible lines are turned into styled text.
Every key and string is sanitized and clipped: a message can hold megabytes of tool output or escape
sequences, and none of it may reach the terminal or a markup parser.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from core.report.redact import shown
from tui.fmt import MUTED

MAX_LINES = 20_000
STRING_LIMIT = 400
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True, slots=True)
class JsonLine:
    path: str  # the jq path of the value that starts on this line ("" for closing brackets)
    indent: int
    key: str | None  # sanitized key, or None inside arrays / at the root
    text: str  # sanitized value text ("{", "[", "}", "]", a scalar)
    kind: str  # open | close | scalar | note


def child_path(path: str, key: str | int) -> str:
    """jq-style path of a child: `.a.b`, `.a[0]`, `.["odd key"]`."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if _IDENT.match(key):
        return f"{path}.{key}"
    return f'{path}["{key}"]'


def scalar(value: Any, key: str | None = None) -> str:
    if isinstance(value, str):
        text = shown(value, STRING_LIMIT, key=key)
        more = f" …({len(value):,} chars)" if len(value) > STRING_LIMIT else ""
        return f'"{text}"{more}'
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    return shown(value, 80)


def json_lines(value: Any, path: str = "", indent: int = 0, key: str | None = None) -> Iterator[JsonLine]:
    """Pretty-print `value` as lines carrying their paths (depth-first, bounded by the caller)."""
    shown_key = None if key is None else shown(key, 120)
    if isinstance(value, dict):
        if not value:
            yield JsonLine(path, indent, shown_key, "{}", "scalar")
            return
        yield JsonLine(path, indent, shown_key, "{", "open")
        for k, v in value.items():
            yield from json_lines(v, child_path(path, str(k)), indent + 1, str(k))
        yield JsonLine("", indent, None, "}", "close")
    elif isinstance(value, list):
        if not value:
            yield JsonLine(path, indent, shown_key, "[]", "scalar")
            return
        yield JsonLine(path, indent, shown_key, "[", "open")
        for i, v in enumerate(value):
            yield from json_lines(v, child_path(path, i), indent + 1, None)
        yield JsonLine("", indent, None, "]", "close")
    else:
        yield JsonLine(path, indent, shown_key, scalar(value, key), "scalar")


def build_lines(value: Any, notes: list[str] | None = None) -> list[JsonLine]:
    """All lines of `value` (capped), preceded by any notes (e.g. paths missing on this side)."""
    out = [JsonLine("", 0, None, shown(note, 500), "note") for note in notes or []]
    for i, line in enumerate(json_lines(value)):
        if i >= MAX_LINES:
            out.append(JsonLine("", 0, None, f"… truncated after {MAX_LINES:,} lines", "note"))
            break
        out.append(line)
    return out


class JsonView(ScrollView, can_focus=True):
    """Line-API JSON view; `changed` paths are highlighted, their ancestors get a margin mark."""

    DEFAULT_CSS = """
    JsonView { background: $surface; overflow-x: auto; overflow-y: auto; scrollbar-size: 1 1; }
    JsonView > .jsonview--changed { background: $error 25%; text-style: bold; }
    JsonView > .jsonview--volatile { background: $warning 20%; }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"jsonview--changed", "jsonview--volatile"}

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j,down", "scroll_down", "Down", show=False),
        Binding("k,up", "scroll_up", "Up", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: list[JsonLine] = [JsonLine("", 0, None, "loading…", "note")]
        self.changed: dict[str, bool] = {}  # path -> volatile
        self._ancestors: set[str] = set()

    def set_lines(self, lines: list[JsonLine], changed: dict[str, bool]) -> None:
        self.lines = lines
        self.changed = changed
        self._ancestors = {anc for path in changed for anc in _ancestors(path)}
        width = max((line.indent * 2 + len(line.key or "") + len(line.text) + 6 for line in lines), default=0)
        self.virtual_size = Size(width, len(lines))
        self.refresh()

    def first_changed(self) -> int | None:
        for i, line in enumerate(self.lines):
            if line.path in self.changed:
                return i
        return None

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.visual_style
        if index >= len(self.lines):
            return Strip.blank(width, base.rich_style)
        line = self.lines[index]
        style = base
        mark: tuple[str, str] = ("  ", "")
        if line.kind in ("close", "note"):
            pass
        elif line.path in self.changed:
            volatile = self.changed[line.path]
            style = self.get_visual_style("jsonview--volatile" if volatile else "jsonview--changed")
            mark = ("▶ ", "$warning bold" if volatile else "$error bold")
        elif line.path in self._ancestors:
            mark = ("· ", MUTED)
        content = self._content(line, mark, changed=style is not base)
        strip = Strip(content.render_segments(style))
        total = max(width + scroll_x, strip.cell_length)
        strip = strip.adjust_cell_length(total, style.rich_style)
        return strip.crop(scroll_x, scroll_x + width)

    @staticmethod
    def _content(line: JsonLine, mark: tuple[str, str], *, changed: bool = False) -> Content:
        if line.kind == "note":
            return Content.assemble(mark, (line.text, f"{MUTED} italic"))
        parts: list[tuple[str, str] | str] = [mark, "  " * line.indent]
        if line.key is not None:
            parts += [(f'"{line.key}"', "$accent"), ": "]
        text_style = ""
        if line.kind == "scalar":
            if line.text.startswith('"'):
                text_style = "$success"
            elif line.text in ("true", "false", "null"):
                text_style = "$warning"
            else:
                text_style = "$secondary"
        parts.append((line.text, "$text bold" if changed else text_style))  # readable on the highlight
        return Content.assemble(*parts)


def _ancestors(path: str) -> Iterator[str]:
    """`.a[0].b` -> `.a[0]`, `.a`, `` (the root)."""
    cut = path
    while cut:
        i = max(cut.rfind("."), cut.rfind("["))
        if i < 0:
            return
        cut = cut[:i]
        if cut:
            yield cut
