"""The status line: live or paused, files watched, bytes and lines read, lines/s, problems, the filter.

It is the first thing to check when the screen looks wrong: "waiting for files" says the directory exists
but holds nothing yet; a backfill shows how much is left to read; the problems count says bad lines were
skipped (press p to see them).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.widgets import Static

from core.report.redact import shown
from tui.fmt import MUTED, count, human_bytes
from tui.view import Status


@dataclass(frozen=True, slots=True)
class StatusState:
    """What the line shows besides the snapshot's numbers (owned by the app)."""

    following: bool = True
    new_below: int = 0
    rows: int = 0
    shown: int = 0
    filter_text: str = ""
    search_text: str = ""
    matches: int = 0
    #: the prompt-cache waste ("waste $0.49 · 109K tok") where the Waste pane is hidden (below 100 columns: the
    #: first screen at 80x24 still says what re-writing cache cost)
    waste: str = ""


class StatusLine(Static):
    """One line; every piece of data in it is inserted as plain text."""

    DEFAULT_CSS = """
    StatusLine { height: 1; background: $panel; color: $text; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.status: Status | None = None
        self.state = StatusState()

    def show(self, status: Status | None = None, state: StatusState | None = None) -> None:
        if status is not None:
            self.status = status
        if state is not None:
            self.state = state
        self.update(self.compose_line())

    def compose_line(self) -> Content:
        """The line for the current width: the same facts in fewer words when the full line does not fit."""
        width = self.size.width - 2  # (padding)
        line = self._line(compact=0 < width < 108)
        if width > 0 and line.cell_length > width:
            line = self._line(compact=True)
        if width > 0 and line.cell_length > width:  # the filter and the search matter more than the byte counts
            line = self._line(compact=True, reading=False)
        return line

    def _line(self, *, compact: bool, reading: bool = True) -> Content:
        status, state = self.status, self.state
        sep = " · " if not compact else " "
        parts: list[Content | tuple[str, str] | str] = []
        if state.following:
            parts.append(("● LIVE", "$success bold"))
        else:
            parts.append(("⏸ PAUSED", "$warning bold"))
            if state.new_below:
                parts.append((f" +{count(state.new_below)} new", "$warning"))
            parts.append((" (End follows)" if not compact else " End⏎", MUTED))
        if status is None:
            parts.append(("  starting…", MUTED))
            return Content.assemble(*parts)
        if status.waiting:
            where = ", ".join(shown(r, 120) for r in status.roots) or "the given paths"
            parts += ["  ", ("waiting for files in ", "$warning"), where]
            return Content.assemble(*parts)
        lines = "ln" if compact else "lines"
        if reading:
            parts.append(
                f"  {count(status.files)} files{sep}{human_bytes(status.bytes)}{sep}{count(status.lines)} {lines}"
            )
            if status.lines_per_s is not None:
                parts.append(f"{sep}{count(round(status.lines_per_s))} {lines}/s")
        if status.pending_bytes:
            parts.append((f"{sep}backfill {human_bytes(status.pending_bytes)} left", "$accent"))
        if status.left_out:  # the discovery cap: files that exist and are never read
            left = f"{sep}{count(status.left_out)} files left out (cap {count(status.file_cap)})"
            parts.append((left, "$warning bold"))
        problems = status.problems_total
        parts.append(" · ")
        noun = "problem" if problems == 1 else "problems"
        parts.append((f"{count(problems)} {noun}", "$error bold" if problems else MUTED))
        if status.pending:
            parts.append(((" +" if compact else " · ") + f"{count(status.pending)} pending", "$warning"))
        if problems or status.pending:
            parts.append((" (p)", MUTED))
        turns = f"{count(state.shown)}/{count(state.rows)}" if state.filter_text else count(state.rows)
        parts.append(f" · {turns} turns")
        if state.waste:
            parts.append(" · ")
            parts.append((state.waste, "$warning bold"))
        if state.filter_text:
            parts.append(" · filter " if not compact else " /")
            parts.append((shown(state.filter_text, 80), "$accent"))
        if state.search_text:
            parts.append(" · search " if not compact else " ^f")
            parts.append((shown(state.search_text, 60), "$warning"))
            parts.append(
                f" {count(state.matches)} match{'es' if state.matches != 1 else ''}" + (" (n/N)" if not compact else "")
            )
        return Content.assemble(*parts)

    def on_resize(self) -> None:
        self.update(self.compose_line())
