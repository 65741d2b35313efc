"""The problems list: every bad line or file event, newest first, with file:line, byte offset and reason.

Paths are shown relative to the directory the user pointed at (``logs/session.log``,
``sessions/--home-dev--/….jsonl``), which is how they would quote them in a bug report.
"""

from __future__ import annotations

import os

from rich.cells import cell_len
from textual.content import Content

from core.model import Problem
from core.report.redact import shown
from tui.fmt import MUTED, cell, clock_time
from tui.widgets.rowlist import RowList


def relative(path: str, roots: tuple[str, ...]) -> str:
    """`path` relative to the parent of the root that holds it (so the `logs/` or `sessions/` stays)."""
    for root in roots:
        base = os.path.dirname(root.rstrip(os.sep)) if os.path.isdir(root) else os.path.dirname(root)
        if base and path.startswith(base + os.sep):
            return path[len(base) + 1 :]
    return path


class ProblemList(RowList):
    """Problems newest first (the snapshot already reverses core's deque)."""

    DEFAULT_CSS = """
    ProblemList { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(empty_text="no problems: every line read so far was understood", id=id)
        self.problems: tuple[Problem, ...] = ()
        self.pending: tuple[Problem, ...] = ()
        self.roots: tuple[str, ...] = ()

    @property
    def row_count(self) -> int:
        return len(self.pending) + len(self.problems)

    def set_problems(
        self, problems: tuple[Problem, ...], roots: tuple[str, ...], pending: tuple[Problem, ...] = ()
    ) -> None:
        """`pending` (listed first) are held back by the live tail and not counted yet; a report counts them."""
        if (problems, roots, pending) == (self.problems, self.roots, self.pending):
            return
        self.problems, self.roots, self.pending = problems, roots, pending
        self.rows_changed()

    def render_row(self, index: int, width: int) -> Content:
        held = index < len(self.pending)
        problem = self.pending[index] if held else self.problems[index - len(self.pending)]
        where_w = max(24, min(72, width // 2 - 8))
        suffix = f":{problem.line}" if problem.line is not None else ""
        path = shown(relative(problem.path, self.roots), 400)
        room = where_w - len(suffix)
        if cell_len(path) > room:  # keep the tail: the file name and its line number are what matter
            path = "…" + path[-(room - 1) :]
        offset = "" if problem.offset is None else f"@{problem.offset:,}"
        return Content.assemble(
            ("pending " if held else clock_time(problem.ts_ms), "$warning" if held else MUTED),
            " ",
            (cell(path + suffix, where_w), "$accent"),
            " ",
            (cell(offset, 12, right=True), MUTED),
            "  ",
            (shown(problem.error, 500), "$error"),
        )
