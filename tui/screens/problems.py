"""The problems view (`p`): every bad line the readers skipped, newest first; it keeps updating live."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from core.model import Problem
from tui.fmt import MUTED, count
from tui.widgets.problems import ProblemList


class ProblemsScreen(Screen[None]):
    """Full-screen list; Esc returns to the dashboard where it was."""

    DEFAULT_CSS = """
    ProblemsScreen #problems-title { height: 1; background: $panel; padding: 0 1; }
    ProblemsScreen ProblemList { border: round $error 60%; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,p", "close", "Back", show=True),
    ]

    def __init__(
        self, problems: tuple[Problem, ...], total: int, roots: tuple[str, ...], pending: tuple[Problem, ...] = (),
        pending_total: int = 0,
    ) -> None:  # fmt: skip
        super().__init__()
        self._initial = (problems, total, roots, pending, pending_total)

    def compose(self) -> ComposeResult:
        yield Static(id="problems-title")
        yield ProblemList(id="problem-list")
        yield Footer()

    def on_mount(self) -> None:
        self.show(*self._initial)
        self.query_one(ProblemList).focus()

    def show(
        self, problems: tuple[Problem, ...], total: int, roots: tuple[str, ...], pending: tuple[Problem, ...] = (),
        pending_total: int = 0,
    ) -> None:  # fmt: skip
        """New problems from a snapshot (the app calls this while the screen is open)."""
        kept = len(problems)
        note = f" (the newest {count(kept)} are kept)" if total > kept else ""
        held: list[tuple[str, str] | str] = []
        if pending_total:
            held = [
                " · ",
                (f"{count(pending_total)} pending", "$warning bold"),
                (" (held back live: a write in progress or a file not recognised yet; a report and the export "
                 "count them)", MUTED),
            ]  # fmt: skip
        self.query_one("#problems-title", Static).update(
            Content.assemble(
                ("Problems ", "bold"),
                f"{count(total)} bad lines or file events",
                (note, MUTED),
                *held,
                ("  ·  newest first · file:line · byte offset · reason", MUTED),
            )
        )
        self.query_one(ProblemList).set_problems(problems, roots, pending)

    def action_close(self) -> None:
        self.dismiss(None)
