"""The help screen (`?`): every key, pane, column, flag, kind, reason and term, built from the tables that define
them (`tui.keys`, `tui.panes`, `turn_table.COLUMNS`, `tui.glossary`), so it cannot go stale.

Wide terminals lay it out in two columns (at 160x45 everything up to the reasons is on the first screen; the
Kinds used to sit below the fold); it scrolls with the usual keys, and its border says when there is more.
"""

from __future__ import annotations

import functools
import textwrap
from collections.abc import Mapping
from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.fmt import KIND_STYLES, MUTED, cell, kind_style
from tui.glossary import KINDS_HELP, REASONS_HELP, TERMS_HELP
from tui.keys import FLAGS_HELP, KEYS
from tui.panes import PANES, STATUS_HELP
from tui.widgets.turn_table import COLUMNS

NAME_W = 12
TWO_COLUMNS = 140
MAX_WIDTH = 180

Block = tuple[str, list[Content]]


def _row_at(name: str, what: str, style: str = "bold", width: int = 120) -> list[Content]:
    """`  name        what`, the text wrapped under itself (a hanging indent); a name longer than its column gets
    a line of its own, the text indented below."""
    indent = " " * (NAME_W + 3)
    text = textwrap.wrap(what, max(20, width - len(indent)), break_long_words=False, break_on_hyphens=False) or [""]
    rest = [Content(indent + line) for line in text[1:]]
    if len(name) <= NAME_W:
        return [Content.assemble(("  " + cell(name, NAME_W), style), " ", text[0]), *rest]
    names = textwrap.wrap(name, max(20, width - 4), subsequent_indent="  ")  # long " · " lists of reasons
    return [*(Content.assemble("  ", (part, style)) for part in names), Content(indent + text[0]), *rest]


KEY_NAMES = {"slash": "/", "question_mark": "?", "escape": "Esc", "enter": "Enter", "up": "↑", "down": "↓",
             "pageup": "PgUp", "pagedown": "PgDn", "home": "Home", "end": "End", "tab": "Tab"}  # fmt: skip


def shown_keys(keys: str) -> str:
    """Textual key names as the footer shows them: `slash,ctrl+l` -> `/ ctrl+l`."""
    return " ".join(KEY_NAMES.get(k.strip(), k.strip()) for k in keys.split(",") if k.strip())


def help_blocks(
    width: int = 120,
    keys: Mapping[str, str] | None = None,
    settings: str | None = None,
    remapped: frozenset[str] = frozenset(),
) -> list[Block]:
    """Every block for text columns `width` cells wide; `keys` are the active keys by binding id, and the
    bindings in `remapped` (the settings file's `[keys]`) are shown with their keys as they are now;
    `settings` names that file."""
    _row = functools.partial(_row_at, width=width)
    blocks: list[Block] = []
    groups: dict[str, list[Content]] = {}
    for key in KEYS:
        label = key.keys
        if keys and key.ids and any(i in remapped for i in key.ids):
            label = "  ".join(shown_keys(keys[i]) for i in key.ids if i in keys)
        groups.setdefault(key.group, []).extend(_row(label, key.what))
    blocks += [(f"Keys · {group}", rows) for group, rows in groups.items()]
    panes = [line for pane in PANES for line in _row(pane.title, pane.help)] + _row("Status", STATUS_HELP)
    blocks.append(("Panes", panes))
    blocks.append(("Turn table columns", [line for c in COLUMNS for line in _row(c.title, c.help)]))
    blocks.append(("Flags in the turn table", [line for flag, what in FLAGS_HELP for line in _row(flag, what)]))
    kinds = [line for kind, what in KINDS_HELP for line in _row(kind, what, KIND_STYLES.get(kind, kind_style(kind)))]
    blocks.append(("Kinds", kinds))
    blocks.append(("Reasons", [line for reason, what in REASONS_HELP for line in _row(reason, what, "$accent")]))
    blocks.append(("Terms", [line for term, what in TERMS_HELP for line in _row(term, what)]))
    where = settings or "$XDG_CONFIG_HOME/continuity-tui/config.toml (~/.config/…)"
    ids = ", ".join(sorted(keys)) if keys else "see tui/keys.py"
    blocks.append(("Settings", [
        *_row("file", where),
        *_row("theme", 'theme = "name": a theme picked with ctrl+p → Theme is written there and used next time'),
        *_row("[keys]", f'action id = "key" or "key1,key2" remaps a key; the ids: {ids}'),
    ]))  # fmt: skip
    return blocks


def render_blocks(blocks: list[Block]) -> Content:
    lines: list[Content] = []
    for title, rows in blocks:
        if lines:
            lines.append(Content(""))
        lines.append(Content.styled(title, "bold $accent"))
        lines.extend(rows)
    return Content("\n").join(lines)


def help_content() -> Content:
    """Everything, in one column (tests and the README read it whole)."""
    return render_blocks(help_blocks())


def split(blocks: list[Block]) -> tuple[list[Block], list[Block]]:
    """Two columns of about equal height, blocks kept whole and in order."""
    heights = [len(rows) + 2 for _title, rows in blocks]
    total, running = sum(heights), 0
    for i, height in enumerate(heights):
        if running + height / 2 >= total / 2:
            return blocks[:i], blocks[i:]
        running += height
    return blocks, []


class HelpScreen(ModalScreen[None]):
    """A modal over the dashboard; the dashboard keeps tailing underneath."""

    def __init__(
        self, keys: Mapping[str, str] | None = None, settings: str | None = None, remapped: frozenset[str] = frozenset()
    ) -> None:
        super().__init__()
        self.keys = dict(keys or {})
        self.settings = settings
        self.remapped = remapped

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 100%; max-width: 180; height: auto; max-height: 100%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    HelpScreen Horizontal { height: auto; }
    HelpScreen #help-left, HelpScreen #help-right { width: 1fr; height: auto; }
    HelpScreen #help-right { padding-left: 2; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close", show=True),
        Binding("j", "scroll('down')", "Down", show=False),
        Binding("k", "scroll('up')", "Up", show=False),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-scroll") as scroll:
            scroll.border_title = "continuity-tui · help"
            with Horizontal():
                yield Static(id="help-left")
                yield Static(id="help-right")

    def on_mount(self) -> None:
        self._lay_out(self.app.size.width)
        scroll = self.query_one(VerticalScroll)
        scroll.focus()
        self.watch(scroll, "scroll_y", lambda _y: self._say_if_more(), init=False)

    def on_resize(self, event: events.Resize) -> None:
        self._lay_out(event.size.width)

    def _lay_out(self, width: int) -> None:
        inner = min(width, MAX_WIDTH) - 7  # border, padding and the scrollbar (2 cells)
        two = width >= TWO_COLUMNS
        blocks = help_blocks(inner // 2 - 3 if two else inner, self.keys, self.settings, self.remapped)  # 2-cell gap
        left, right = split(blocks) if two else (blocks, [])
        self.query_one("#help-left", Static).update(render_blocks(left))
        right_pane = self.query_one("#help-right", Static)
        right_pane.update(render_blocks(right))
        right_pane.display = bool(right)
        self.call_after_refresh(self._say_if_more)

    def _say_if_more(self) -> None:
        scroll = self.query_one(VerticalScroll)
        more = scroll.scroll_y < scroll.max_scroll_y
        scroll.border_subtitle = Content.styled("↓ more: j/k, PgDn, End · Esc closes" if more else "Esc closes", MUTED)

    def action_scroll(self, direction: str) -> None:
        scroll = self.query_one(VerticalScroll)
        if direction == "down":
            scroll.scroll_down(animate=False)
        else:
            scroll.scroll_up(animate=False)

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
