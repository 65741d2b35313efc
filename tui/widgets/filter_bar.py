"""The `/` filter bar: an input that filters the turn table as you type.

Enter keeps the filter and returns to the table; Esc puts back the filter that was active before `/`.
The text the user types is data like any other: it is only ever matched, and shown as plain text.
"""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Input

PLACEHOLDER = "filter: kind:flatten  reason:rewritten  session:0198  is:rewritten  -kind:delta  free text"
SEARCH_PLACEHOLDER = "search (highlights, hides nothing; n/N next/previous): same terms as the filter, or free text"


class FilterBar(Input):
    """Docked above the status line; hidden until `/` (or, as the search bar, until ctrl+f)."""

    DEFAULT_CSS = """
    FilterBar { display: none; border: tall $accent; height: 3; }
    FilterBar.-open { display: block; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel filter", show=True)]

    class Cancelled(Message):
        """Esc in the bar: restore the previous filter (or search)."""

        def __init__(self, bar: FilterBar) -> None:
            super().__init__()
            self.bar = bar

    def __init__(self, *, id: str | None = None, placeholder: str = PLACEHOLDER) -> None:
        super().__init__(placeholder=placeholder, id=id)
        self.before = ""

    def open(self, current: str) -> None:
        self.before = current
        self.value = current
        self.add_class("-open")
        self.cursor_position = len(current)
        self.focus()

    def close(self) -> None:
        self.remove_class("-open")

    def action_cancel(self) -> None:
        self.post_message(self.Cancelled(self))
