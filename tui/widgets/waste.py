"""The waste pane: how much re-writing already-cached history cost, and why (issue 14), live.

The all-time figure first (every session read: excess tokens, dollars beyond cache hits at list prices, of what
the calls cost), then one line per cause (tokens, dollars, share), then the current session's figure: the one
chosen with Enter, else the most recently active one, the session a user beside a live agent is in. Every
figure is a sum of the calls' own `cache.excess` (`core.kernel.waste`), so the turn table's detail of any call
(`d`) shows the expected vs actual read it comes from. senpi sessions, whose resident lane logs decisions, not
cache figures, show the avoidable re-sends of the stable-fingerprint replay in the same place.

Laid out for the room it has: 40 columns beside Rates and Directives from 140 columns on, else 26 (22 of
content: short tokens and dollars, the share only in the first line), and what does not fit is named on a
last "+N more" line. It is shown only where calls have cache figures, and not below 100 columns (`app.tcss`):
at 80x24 Rates and Directives need the top band's width.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.content import Content
from textual.widgets import Static

from core.kernel.waste import CAUSE_TEXT, WasteStats
from tui.fmt import MUTED, cell, count, human_bytes, pct, short_id
from tui.view import SessionSummary, WasteTotals

#: short names of the causes (the reason stays the code: `cache_expired` …)
SHORT: dict[str, str] = {
    "cache_expired": "expired",
    "prefix_rewritten": "rewritten",
    "cache_miss": "missed",
    "resume": "resumed",
    "rewind": "rewound",
    "branch": "branch",
    "branched_session": "branched",
}


def usd(value: float | None) -> str:
    """'$1.83', under a cent '$0.004', no figure '$–'."""
    if value is None:
        return "$–"
    if value and abs(value) < 0.01:
        return f"${value:.3f}"
    return f"${value:,.2f}" if value < 10_000 else f"${value / 1000:,.0f}k"


def tokens(value: int) -> str:
    """'338,347' up to a million, then '5.28M'."""
    return f"{value:,}" if value < 1_000_000 else f"{value / 1_000_000:.2f}M"


def short_tokens(value: int) -> str:
    """'9,992', '338K', '5.28M': at most 6 columns (the 80x24 layout)."""
    if value < 10_000:
        return f"{value:,}"
    return f"{value / 1000:.0f}K" if value < 999_500 else f"{value / 1_000_000:.2f}M"


#: from this content width the cause lines give tokens in full, the share and the dollars; below it short
#: tokens and dollars (the dollars are the question; the share is in the first line)
WIDE = 34


class WastePane(Static):
    """Excess tokens and dollars by cause: all sessions, and the current one."""

    DEFAULT_CSS = """
    WastePane { width: 1fr; height: 100%; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.totals: WasteTotals | None = None
        self.current: SessionSummary | None = None
        self.chosen = False
        self.border_title = "Waste"

    def show(self, totals: WasteTotals | None, sessions: Iterable[SessionSummary], chosen: str | None) -> None:
        """New figures: the all-time totals and the sessions (the chosen one's key, else the most recent)."""
        self.totals = totals
        listed = [s for s in sessions if not s.log_only]
        if chosen is not None:
            self.current = next((s for s in listed if s.key == chosen), None)
        else:
            self.current = max(listed, key=lambda s: s.last_ms or 0, default=None)
        self.chosen = chosen is not None
        self._titles()
        self.refresh()

    def _titles(self) -> None:
        """'Waste · $1.83 of $27.73' (narrow: 'Waste · $1.83', the total in the subtitle) and the prices' date."""
        totals = self.totals
        stats = totals.stats if totals is not None else None
        room = (self.size.width or 80) - 6
        judged = stats is not None and stats.calls
        subtitle = f"prices {totals.as_of}" if judged and totals is not None and totals.as_of else ""
        if stats is not None and stats.calls:
            excess, actual = usd(stats.excess_cost), usd(stats.actual)
            if len(f"Waste · {excess} of {actual}") <= room:
                self.border_title = Content.assemble("Waste · ", (excess, "bold"), f" of {actual}")
            else:
                self.border_title = Content.assemble("Waste · ", (excess, "bold"))
                subtitle = f"of {actual}"
        else:
            self.border_title = "Waste"
        self.border_subtitle = subtitle

    def on_resize(self) -> None:
        self._titles()

    def render(self) -> Content:
        width = max(10, self.content_region.width)
        height = max(1, self.content_region.height)
        return Content("\n").join(self.lines(width, height))

    def lines(self, width: int, height: int) -> list[Content]:
        totals = self.totals
        stats = totals.stats if totals is not None else WasteStats()
        current = self.current
        out: list[Content] = []
        if not stats.calls:
            if totals is not None and totals.resends:
                out += self._senpi(totals.avoidable, totals.resends, totals.avoidable_bytes)
                out += self._session(current, width)
            else:
                out.append(Content.styled("no call with cache figures yet", f"{MUTED} italic"))
            return out[:height]
        share = stats.share
        wide = width >= WIDE
        amount = tokens(stats.excess) if wide else short_tokens(stats.excess)
        calls = sum(stats.calls_by_cause.values())
        head = Content.assemble(("all ", "bold"), amount, " tok ")
        in_calls = f"in {count(calls)} call{'' if calls == 1 else 's'} · "
        candidates = [Content.assemble(head, in_calls, (pct(share, 0), "bold"), (" of not read", MUTED)),
                      Content.assemble(head, in_calls, (pct(share, 0), "bold")),
                      Content.assemble(head, (pct(share, 0), "bold"), (" of not read", MUTED)),
                      Content.assemble(head, (pct(share, 0), "bold"))]  # fmt: skip
        out.append(next((c for c in candidates if len(c.plain) <= width), candidates[-1]))
        session_lines = self._session(current, width)
        room = max(0, height - 1 - len(session_lines))
        causes = stats.causes()
        total = stats.excess or 1
        shown = causes if len(causes) <= room else causes[: max(0, room - 1)]
        for cause, n in shown:
            money = usd(stats.usd_by_cause.get(cause))
            name = cell(SHORT.get(cause, cause), 10)
            if wide:
                parts = [name, cell(tokens(n), 9, right=True), cell(pct(n / total, 0), 5, right=True),
                         cell(money, 9, right=True)]  # fmt: skip
            else:
                parts = [name, cell(short_tokens(n), 5, right=True), cell(money, 7, right=True)]
            out.append(Content.assemble(*parts))
        rest = causes[len(shown) :]
        if rest:
            named = ", ".join(f"{SHORT.get(c, c)} {short_tokens(n)}" for c, n in rest)
            out.append(Content.styled(f"+{len(rest)} more: {named}", MUTED))
        if not causes:
            out.append(Content.styled("nothing written again", MUTED))
        return (out + session_lines)[:height]

    def _session(self, summary: SessionSummary | None, width: int) -> list[Content]:
        if summary is None:
            return []
        label = ("session " if self.chosen else "now ") if width >= WIDE else ""
        label += short_id(summary.session_id)
        stats = summary.waste
        if not stats.calls:
            if summary.avoidable or summary.by_kind.get("flatten") or summary.by_kind.get("fork"):
                resends = summary.by_kind.get("fork", 0) + summary.by_kind.get("flatten", 0)
                short = Content.assemble((label, "bold"), f" {count(summary.avoidable)}/{count(resends)} avoidable")
                long = Content.assemble(short, f" · {human_bytes(summary.avoidable_bytes)}")
                return [long if len(long.plain) <= width else short]
            return [Content.assemble((label, "bold"), (" no cache figures" if width >= WIDE else " no cache data",
                                                       MUTED))]  # fmt: skip
        top = stats.causes()[:1]
        why = f" {SHORT.get(top[0][0], top[0][0])}" if top else ""
        amount = tokens(stats.excess) if width >= WIDE else short_tokens(stats.excess)
        line = Content.assemble((label, "bold"), " ", amount, " ", usd(stats.excess_cost))
        if len(line.plain) + len(why) <= width:
            line = Content.assemble(line, (why, MUTED))
        return [line]

    @staticmethod
    def _senpi(avoidable: int, resends: int, avoidable_bytes: int) -> list[Content]:
        """senpi's counterfactual (its resident lane logs decisions, not cache figures): the re-sends a stable
        fingerprint avoids, and the payload bytes they sent again for nothing."""
        return [
            Content.assemble(("avoidable ", "bold"), (f"{count(avoidable)}", "$warning bold" if avoidable else ""),
                             f" of {count(resends)} re-sends"),
            Content.assemble(("sent again ", MUTED), human_bytes(avoidable_bytes)),
        ]  # fmt: skip


__all__ = ["CAUSE_TEXT", "WastePane"]
