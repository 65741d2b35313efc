"""The help screen (`?`): every key, the table's flags and the filter syntax, built from `tui.keys`."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.fmt import KIND_STYLES, MUTED, cell
from tui.keys import FLAGS_HELP, KEYS
from tui.panes import PANES, STATUS_HELP


def help_content() -> Content:
    lines: list[Content] = []
    group = None
    for key in KEYS:
        if key.group != group:
            if group is not None:
                lines.append(Content(""))
            group = key.group
            lines.append(Content.styled(group, "bold $accent"))
        lines.append(Content.assemble(("  " + cell(key.keys, 12), "bold"), key.what))
    lines.append(Content(""))
    lines.append(Content.styled("Panes", "bold $accent"))
    for pane in PANES:
        lines.append(Content.assemble(("  " + cell(pane.title, 12), "bold"), pane.help))
    lines.append(Content.assemble(("  " + cell("Status", 12), "bold"), STATUS_HELP))
    lines.append(Content(""))
    lines.append(Content.styled("Flags in the turn table", "bold $accent"))
    for flag, what in FLAGS_HELP:
        lines.append(Content.assemble(("  " + cell(flag, 12), "bold"), what))
    lines.append(Content(""))
    lines.append(Content.styled("Kinds", "bold $accent"))
    kinds = [("delta", "only the new messages were sent"), ("fork", "history re-sent from an earlier point"),
             ("flatten", "the whole history re-serialized and re-sent"),
             ("bootstrap", "first call of a session"), ("disabled", "continuity off (resume mode off)")]  # fmt: skip
    for kind, what in kinds:
        lines.append(Content.assemble("  ", (cell(kind, 12), KIND_STYLES[kind]), what))
    lines.append(Content(""))
    lines.append(Content.styled("Esc, q or ? closes this help.", MUTED))
    return Content("\n").join(lines)


class HelpScreen(ModalScreen[None]):
    """A modal over the dashboard; the dashboard keeps tailing underneath."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 124; max-width: 100%; height: auto; max-height: 100%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss", "Close", show=True),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = "continuity-tui · keys"
            yield Static(help_content(), id="help-text")

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
