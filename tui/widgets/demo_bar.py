"""The demo bar: where the data of `--demo` (or of a pipe, `… | continuity-tui -`) is, so `report` can be run on it
while the dashboard runs, and whether it is removed on exit."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from core.report.redact import shown
from tui.fmt import MUTED


class DemoBar(Static):
    """One line above the status line, shown only with `--demo`."""

    DEFAULT_CSS = """
    DemoBar { height: 1; background: $boost; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(
        self, path: str, *, kept: bool, label: str = "demo data in ", homes: list[str] | None = None,
        id: str | None = None,
    ) -> None:  # fmt: skip
        super().__init__(id=id)
        self.path = path
        self.kept = kept
        self.label = label
        self.homes = homes or []
        """The agents' homes under `path` (`senpi/`, `claude/`, …): which folder holds which agent's files."""

    def on_mount(self) -> None:
        self._show(self.app.size.width)

    def on_resize(self) -> None:
        self._show(self.size.width)

    def _show(self, width: int) -> None:
        fate = "kept on exit" if self.kept else "removed on exit"
        if not self.kept and self.label.startswith("demo"):
            fate += " (--demo-dir DIR keeps it)"
        where = shown(self.path, 300)
        parts: list[tuple[str, str] | str] = [(self.label, "$accent bold"), (where, "bold")]
        if self.homes:
            parts.append(" (" + " ".join(shown(home, 40) + "/" for home in self.homes) + ")")
        parts += [" · ", (fate, MUTED)]
        hint: list[tuple[str, str] | str] = [(" · try ", MUTED), ("continuity-tui report " + where, "$accent")]
        line = Content.assemble(*parts, *hint)
        self.update(line if line.cell_length <= width - 2 else Content.assemble(*parts))
