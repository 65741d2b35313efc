"""The copy menu (`c`): what can be copied from where the cursor is; a digit or Enter picks, Esc closes."""

from __future__ import annotations

from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from core.report.redact import shown
from tui.clipboard import Choice
from tui.fmt import MUTED


class CopyScreen(ModalScreen[str | None]):
    """Returns the id of the chosen item, or None."""

    DEFAULT_CSS = """
    CopyScreen { align: center middle; }
    CopyScreen > Vertical {
        width: 90; max-width: 100%; height: auto; max-height: 100%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    CopyScreen OptionList { height: auto; max-height: 16; border: none; }
    CopyScreen #copy-note { color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,c,q", "dismiss_none", "Close", show=True, id="copy_close")]

    def __init__(self, choices: list[Choice]) -> None:
        super().__init__()
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Copy to the clipboard"
            yield OptionList(
                *(
                    Option(Content.assemble((f"{c.key}  ", "bold $accent"), shown(c.label, 200)), id=c.id)
                    for c in self.choices
                ),
                id="copy-options",
            )
            yield Static(
                Content.styled("a digit or Enter copies · through the terminal (OSC 52); inert and redacted", MUTED),
                id="copy-note",
            )

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_key(self, event: events.Key) -> None:
        for choice in self.choices:
            if event.character == choice.key:
                event.stop()
                self.dismiss(choice.id)
                return

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
