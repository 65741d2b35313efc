"""A Line-API list with a cursor: the base of the turn table, the sessions list and the problems view.

Only the visible rows are ever rendered (`render_line` asks for one screen line at a time), so the cost of a
frame does not depend on the number of rows: the built-in DataTable needs ~22 s to paint 100 000 rows on
this machine, this needs the same few milliseconds for 10 or 10 million. Rendered strips are cached per
(row, cursor, width) and the cache is dropped whenever the data or the theme changes.

Subclasses provide `row_count` and `render_row`; every cell is built as `Content` from sanitized text, so
no data ever reaches a markup parser.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.content import Content
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


class RowList(ScrollView, can_focus=True):
    """Virtual list of rows with a cursor; posts `Highlighted` on moves and `Selected` on Enter/click."""

    DEFAULT_CSS = """
    RowList {
        background: $surface;
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-size-vertical: 1;
    }
    RowList > .rowlist--cursor {
        background: $accent 35%;
        text-style: bold;
    }
    RowList:focus > .rowlist--cursor {
        background: $accent 60%;
    }
    RowList > .rowlist--empty {
        color: $text-muted;
        text-style: italic;
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"rowlist--cursor", "rowlist--empty"}

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor_up", "Up", show=False, id="up"),
        Binding("down,j", "cursor_down", "Down", show=False, id="down"),
        Binding("pageup", "page_up", "Page up", show=False, id="page_up"),
        Binding("pagedown", "page_down", "Page down", show=False, id="page_down"),
        Binding("home,g", "first", "First", show=False, id="first"),
        Binding("end,G", "last", "Last", show=False, id="last"),
        Binding("enter", "select", "Open", show=False, id="open"),
    ]

    cursor: reactive[int] = reactive(0, init=False, always_update=True)
    """Index of the highlighted row (clamped to the rows present)."""

    class Highlighted(Message):
        """The cursor moved to `index`."""

        def __init__(self, rowlist: RowList, index: int) -> None:
            super().__init__()
            self.rowlist = rowlist
            self.index = index

        @property
        def control(self) -> RowList:
            return self.rowlist

    class Selected(Message):
        """Enter (or a click on the highlighted row) on `index`."""

        def __init__(self, rowlist: RowList, index: int) -> None:
            super().__init__()
            self.rowlist = rowlist
            self.index = index

        @property
        def control(self) -> RowList:
            return self.rowlist

    class Moved(Message):
        """The user moved the cursor or scrolled; `to_end` says whether they are now at the last row."""

        def __init__(self, rowlist: RowList, to_end: bool) -> None:
            super().__init__()
            self.rowlist = rowlist
            self.to_end = to_end

        @property
        def control(self) -> RowList:
            return self.rowlist

    def __init__(self, *, empty_text: str = "no data yet", name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:  # fmt: skip
        super().__init__(name=name, id=id, classes=classes)
        self.empty_text = empty_text
        """Shown on the first line while there are no rows (a plain developer string, not data)."""
        self._strips: LRUCache[tuple[int, bool, int], Strip] = LRUCache(1024)

    # ------------------------------------------------------------------ subclass API
    @property
    def row_count(self) -> int:
        return 0

    def empty_lines(self) -> list[Content]:
        """What the list says while it has no row (subclasses say why: nothing read yet, or nothing matches)."""
        return [Content(self.empty_text)]

    def render_row(self, index: int, width: int) -> Content:  # pragma: no cover - abstract
        """The content of row `index`, at most `width` cells."""
        raise NotImplementedError

    # ------------------------------------------------------------------ data changes
    def rows_changed(self, *, keep_cursor: bool = True) -> None:
        """Call after the rows changed: resizes the virtual area, clamps the cursor and repaints."""
        count = self.row_count
        self.virtual_size = Size(self.scrollable_content_region.width, count)
        self._strips.clear()
        if not keep_cursor or self.cursor >= count:
            self.set_reactive(RowList.cursor, max(0, min(self.cursor, count - 1)))
        self.refresh()

    def invalidate(self) -> None:
        """Drop cached strips (row contents changed in place, or the theme changed)."""
        self._strips.clear()
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    def on_resize(self, _event: events.Resize) -> None:
        self.virtual_size = Size(self.scrollable_content_region.width, self.row_count)
        self._strips.clear()
        self.scroll_to_cursor()

    # ------------------------------------------------------------------ rendering
    def render_line(self, y: int) -> Strip:
        _scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        count = self.row_count
        if count == 0:
            lines = self.empty_lines()
            if y < len(lines):
                style = self.get_visual_style("rowlist--empty")
                return Strip(Content.assemble(" ", lines[y]).render_segments(style)).adjust_cell_length(
                    width, self.visual_style.rich_style
                )
            return Strip.blank(width, self.visual_style.rich_style)
        if index >= count:
            return Strip.blank(width, self.visual_style.rich_style)
        selected = index == self.cursor
        key = (index, selected, width)
        strip = self._strips.get(key)
        if strip is None:
            style = self.get_visual_style("rowlist--cursor") if selected else self.visual_style
            content = self.render_row(index, width)
            strip = Strip(content.render_segments(style)).adjust_cell_length(width, style.rich_style)
            self._strips[key] = strip
        return strip

    # ------------------------------------------------------------------ cursor
    def watch_cursor(self, old: int, new: int) -> None:
        count = self.row_count
        if count and not 0 <= new < count:
            self.set_reactive(RowList.cursor, max(0, min(new, count - 1)))
            new = self.cursor
        self._refresh_row(old)
        self._refresh_row(new)
        self.scroll_to_cursor()
        self.post_message(self.Highlighted(self, new))

    def _refresh_row(self, index: int) -> None:
        self.refresh(Region(0, index - self.scroll_offset.y, self.size.width, 1))

    def scroll_to_cursor(self) -> None:
        """Keep the cursor row inside the viewport (no animation: it must keep up with live data)."""
        height = self.scrollable_content_region.height
        if height <= 0:
            return
        top = self.scroll_offset.y
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, force=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, force=True)

    def move_to(self, index: int) -> None:
        """Put the cursor on `index` (programmatic; posts no `Moved`)."""
        if self.row_count:
            self.cursor = max(0, min(index, self.row_count - 1))

    def _user_move(self, index: int) -> None:
        if not self.row_count:
            return
        self.cursor = max(0, min(index, self.row_count - 1))
        self.post_message(self.Moved(self, self.cursor >= self.row_count - 1))

    def action_cursor_up(self) -> None:
        self._user_move(self.cursor - 1)

    def action_cursor_down(self) -> None:
        self._user_move(self.cursor + 1)

    def action_page_up(self) -> None:
        self._user_move(self.cursor - max(1, self.scrollable_content_region.height - 1))

    def action_page_down(self) -> None:
        self._user_move(self.cursor + max(1, self.scrollable_content_region.height - 1))

    def action_first(self) -> None:
        self._user_move(0)

    def action_last(self) -> None:
        self._user_move(self.row_count - 1)

    def action_select(self) -> None:
        if self.row_count:
            self.post_message(self.Selected(self, self.cursor))

    def on_click(self, event: events.Click) -> None:
        index = self.scroll_offset.y + event.y
        if 0 <= index < self.row_count:
            if index == self.cursor and event.chain >= 2:
                self.action_select()
            else:
                self._user_move(index)

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        super()._on_mouse_scroll_up(event)
        self.post_message(self.Moved(self, False))
