"""The rates pane: how often each continuity kind happened, its share, its rate, and the current streak.

Counts come from the continuity lines of the logs (the agent's own record of each decision), so this pane
works even without transcripts. All five kinds are always listed so a zero is visible as a zero. Per-minute
rates cover the 10 minutes ending now while data is live, or ending at the newest line for old logs.

The pane lays itself out for the room it has: a share bar on wide terminals, the streak and peak as extra
lines when the pane is tall, else folded into the bottom border.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from core.analysis.stats import Streak
from core.sanitize import display
from tui.fmt import MUTED, cell, clock_time, count, kind_style, pct, share_style
from tui.view import Rates

BAR_MIN_WIDTH = 44


class RatesPane(Static):
    """Counts, shares and per-minute rates of delta / fork / flatten / bootstrap / disabled."""

    ALLOW_MAXIMIZE = True  # zoom from the command palette (and the screenshot of the directive pane)

    DEFAULT_CSS = """
    RatesPane { width: 1fr; height: 100%; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rates: Rates | None = None
        self.border_title = "Rates"

    def show(self, rates: Rates) -> None:
        """New numbers from a snapshot (they change with wall time too, so always repaint)."""
        self.rates = rates
        share = rates.resend_share
        self.border_subtitle = Content.assemble(
            "resend ", (pct(share), share_style(share)), f" of {count(rates.events)}"
        )
        self.refresh()

    def render(self) -> Content:
        rates = self.rates
        width = max(10, self.content_region.width)
        height = max(1, self.content_region.height)
        kinds = (
            rates.kinds
            if rates is not None and rates.kinds
            else dict.fromkeys(("bootstrap", "delta", "fork", "flatten", "disabled"), 0)
        )
        events = rates.events if rates is not None else 0
        bar = width >= BAR_MIN_WIDTH
        bar_width = max(0, width - 32) if bar else 0
        lines: list[Content] = [
            Content.assemble(
                (
                    cell("kind", 10)
                    + cell("count", 7, right=True)
                    + cell("share", 7, right=True)
                    + cell("/min", 6, right=True),
                    "bold",
                )
            )
        ]
        for kind, n in kinds.items():
            share = n / events if events else None
            per_min = rates.per_minute.get(kind, 0.0) if rates is not None else 0.0
            style = kind_style(kind)
            parts: list[Content | tuple[str, str] | str] = [
                (cell(display(kind, 40), 10), style),
                cell(count(n), 7, right=True),
                cell(pct(share), 7, right=True),
                (cell(f"{per_min:.1f}", 6, right=True), MUTED if not per_min else ""),
            ]
            if bar and bar_width > 1:
                filled = round((share or 0.0) * bar_width)
                parts.append(" ")
                parts.append(("█" * filled, style))
                parts.append(("·" * (bar_width - filled), MUTED))
            lines.append(Content.assemble(*parts))
        extra = self._extra(rates)
        if events == 0:
            extra.insert(0, Content.styled("no continuity lines read yet", f"{MUTED} italic"))
        room = height - len(lines)
        lines.extend(extra[: max(0, room)])
        return Content("\n").join(lines)

    def _extra(self, rates: Rates | None) -> list[Content]:
        """Streak and peak lines, in the order they are dropped when the pane is short."""
        if rates is None:
            return []
        out = [streak_line(rates.run)]
        if rates.peak is not None:
            peak = rates.peak
            out.append(
                Content.assemble(
                    ("peak   ", "bold"),
                    (display(peak.kind, 20), kind_style(peak.kind)),
                    f" count {count(peak.value)} at {clock_time(peak.at_ms)}",
                )
            )
        return out


def streak_line(run: Streak | None) -> Content:
    """'streak fork ×12 assistant_rewritten' — the current run of identical decisions."""
    if run is None:
        return Content.assemble(("streak ", "bold"), ("none yet", MUTED))
    return Content.assemble(
        ("streak ", "bold"),
        (display(run.kind, 20), kind_style(run.kind)),
        (f" ×{run.length} ", "bold" if run.length >= 2 else ""),
        display(run.reason, 60),
    )
