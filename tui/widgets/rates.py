"""The rates pane: how often each kind of call happened, its share, its rate, and the current streak.

The counts are calls (`tui.scope`): every agent's provider calls, each with a kind, whenever transcripts were
read; the continuity lines of senpi's logs only where nothing else was (a bare `logs/` dir). The title says
which it counts, and names both when both were read (a senpi history: the subtitle gives the log lines' share
beside the calls'); with a session chosen, they are that session's calls. Every kind is listed so a zero is
visible as a zero. Per-minute rates cover the 10 minutes ending now while data is live, or ending at the newest
call for old files.

Nothing is dropped silently: the pane lays itself out for the room it has, one column with a share bar when
it is tall enough, two columns of kinds when it is wide but short, and whatever still does not fit is named on
a last "+N more: …" line (the peak line vanished once `failed` appeared; at 80x24 `failed` and the streak did,
while "of 36" still counted them).
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.widgets import Static

from core.kernel.stats import Streak
from core.model import KINDS
from core.report.redact import shown
from tui.fmt import MUTED, cell, clock_time, count, fit_count, kind_style, num_cell, pct, share_style, short_id
from tui.view import Rates

KIND_W, COUNT_W, SHARE_W, MIN_W = 10, 8, 7, 6
COLUMN_W = KIND_W + COUNT_W + SHARE_W + MIN_W  # one kind without its bar
TWO_COLUMNS = 2 * COLUMN_W + 3
BAR_MIN = 8
EMPTY_KINDS = KINDS


@dataclass(frozen=True, slots=True)
class Item:
    """One figure of the pane: its line, how it is named on the "+N more" line, and how much it matters."""

    line: Content
    folded: str
    priority: int  # lower is kept longer when the pane is short


class RatesPane(Static):
    """Counts, shares and per-minute rates of every kind, the current streak and the peak."""

    DEFAULT_CSS = """
    RatesPane { width: 1fr; height: 100%; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rates: Rates | None = None
        self.border_title = "Rates"

    def show(self, rates: Rates) -> None:
        """New numbers from a snapshot (they change with wall time too, so always repaint)."""
        self.rates = rates
        share = rates.resend_share
        judged = rates.judged if rates.judged is not None else rates.events
        both = rates.unit == "calls" and rates.log_events > 0
        if rates.scope is not None:
            self.border_title = Content.assemble("Rates · session ", (short_id(rates.scope), "$accent"),
                                                 f" · {rates.unit}")  # fmt: skip
        else:
            self.border_title = "Rates · calls · log lines" if both else f"Rates · {rates.unit}"
        # the longest subtitle that fits: 'resend 5.2% of 910 calls with usage' (aborted calls reported none and
        # are left out of the share), and beside a senpi log 'log 22.2% of 18', down to 'resend 22.2% · log 22.2%'
        head: list[Content | tuple[str, str] | str] = ["resend ", (pct(share), share_style(share))]
        of = f" of {count(judged)} {rates.unit}"
        usage = " with usage" if judged != rates.events else ""
        candidates = [[*head, of + usage], [*head, of]]
        if both:
            log = [" · log ", (pct(rates.log_share), share_style(rates.log_share))]
            log_of = f" of {count(rates.log_events)}"
            candidates = [[*head, of + usage, *log, log_of], [*head, of, *log, log_of], [*head, of, *log],
                          [*head, *log]]  # fmt: skip
        room = self.size.width - 6 if self.size.width else 10_000
        subtitle = Content.assemble(*candidates[-1])
        for candidate in candidates:
            if len(Content.assemble(*candidate).plain) <= room:
                subtitle = Content.assemble(*candidate)
                break
        self.border_subtitle = subtitle
        self.refresh()

    def on_resize(self) -> None:
        if self.rates is not None:
            self.show(self.rates)

    # ------------------------------------------------------------------ layout
    def render(self) -> Content:
        rates = self.rates
        width = max(10, self.content_region.width)
        height = max(1, self.content_region.height)
        bar = width - COLUMN_W - 2 >= BAR_MIN
        with_bar = self._kinds(rates, width - COLUMN_W - 2 if bar else 0)
        plain = self._kinds(rates, 0) if bar else with_bar
        return Content("\n").join(arrange(with_bar, plain, self._extras(rates), width, height))

    @staticmethod
    def _kinds(rates: Rates | None, bar_width: int) -> list[Item]:
        kinds = rates.kinds if rates is not None and rates.kinds else dict.fromkeys(EMPTY_KINDS, 0)
        events = rates.events if rates is not None else 0
        items: list[Item] = []
        for order, (kind, n) in enumerate(kinds.items()):
            share = n / events if events else None
            per_min = rates.per_minute.get(kind, 0.0) if rates is not None else 0.0
            style = kind_style(kind)
            parts: list[Content | tuple[str, str] | str] = [
                (cell(shown(kind, 40), KIND_W), style),
                num_cell(fit_count(n, COUNT_W), COUNT_W),
                num_cell(pct(share), SHARE_W),
            ]
            if bar_width >= BAR_MIN:
                filled = round((share or 0.0) * bar_width)
                parts += [" ", ("█" * filled, style), ("·" * (bar_width - filled), MUTED), " "]
            parts.append((num_cell(f"{per_min:.1f}", MIN_W), MUTED if not per_min else ""))
            folded = f"{shown(kind, 40)} {count(n)}"
            items.append(Item(Content.assemble(*parts), folded, order if n else 100 + order))
        return items

    @staticmethod
    def _extras(rates: Rates | None) -> list[Item]:
        """Streak and peak lines (kept after the kinds that happened, before those that did not)."""
        if rates is None:
            return []
        out: list[Item] = []
        if rates.events == 0:
            what = (
                "no calls of this session yet"
                if rates.scope is not None
                else "no calls read yet"
                if rates.unit == "calls"
                else "no continuity lines read yet"
            )
            out.append(Item(Content.styled(what, f"{MUTED} italic"), what, 50))
        run = rates.run
        streak = "none yet" if run is None else f"{shown(run.kind, 20)} ×{run.length} {shown(run.reason, 60)}"
        out.append(Item(streak_line(run), f"streak {streak}", 60))
        if rates.peak is not None:
            peak = rates.peak
            text = f"{shown(peak.kind, 20)} {count(peak.value)} at {clock_time(peak.at_ms)}"
            line = Content.assemble(
                ("peak   ", "bold"),
                (shown(peak.kind, 20), kind_style(peak.kind)),
                f" count {count(peak.value)} at {clock_time(peak.at_ms)}",
            )
            out.append(Item(line, f"peak {text}", 61))
        return out


def header(width: int, *, bar: bool) -> Content:
    text = cell("kind", KIND_W) + num_cell("count", COUNT_W) + num_cell("share", SHARE_W)
    if bar:
        text += " " * (width - COLUMN_W)
    return Content.styled(text + num_cell("/min", MIN_W), "bold")


def arrange(with_bar: list[Item], kinds: list[Item], extras: list[Item], width: int, height: int) -> list[Content]:
    """The lines for a `width` x `height` pane: everything when it fits, else the most telling figures and one
    "+N more: …" line naming the rest (the zoomed pane, ctrl+p → Zoom rates, always has room for all).
    `with_bar` are the kind lines with their share bars (when the pane is wide enough), `kinds` without."""
    if 1 + len(kinds) + len(extras) <= height:
        bar = with_bar is not kinds
        return [header(width, bar=bar), *(k.line for k in with_bar), *(e.line for e in extras)]
    if width >= TWO_COLUMNS:
        half = (len(kinds) + 1) // 2
        pairs = [
            Content.assemble(kinds[i].line, "   ", kinds[i + half].line if i + half < len(kinds) else "")
            for i in range(half)
        ]
        head = header(COLUMN_W, bar=False)
        two = Content.assemble(head, "   ", head)
        if 1 + half + len(extras) <= height:
            return [two, *pairs, *(e.line for e in extras)]
        room = height - 2 - half
        if room >= 0:
            shown, folded = _keep(extras, room)
            return [two, *pairs, *(e.line for e in shown), more(folded)]
    items = kinds + extras
    room = height - 2
    if room < 0:
        return [more(items)]
    shown, folded = _keep(items, room)
    shown_kinds = [i for i in shown if i in kinds]
    shown_extras = [i for i in shown if i not in kinds]
    return [header(width, bar=False), *(i.line for i in shown_kinds), *(i.line for i in shown_extras), more(folded)]


def _keep(items: list[Item], room: int) -> tuple[list[Item], list[Item]]:
    """The `room` most telling items in their display order, and the rest most telling first: the "+N more" line
    is clipped at the pane's edge, so a kind that happened is named before those at zero (Codex at 80x24 hid
    "aborted 11" behind six zeros)."""
    ranked = sorted(items, key=lambda i: i.priority)  # (stable: display order among equals)
    keep = set(map(id, ranked[: max(0, room)]))
    return [i for i in items if id(i) in keep], [i for i in ranked if id(i) not in keep]


def more(folded: list[Item]) -> Content:
    """'+3 more: disabled 0 · failed 1 (2.8%) · peak flatten count 24 at 10:03:31' (clipped at the pane's edge,
    the count first so it always shows)."""
    return Content.assemble((f"+{len(folded)} more: ", "bold $warning"), (" · ".join(i.folded for i in folded), MUTED))


def streak_line(run: Streak | None) -> Content:
    """'streak fork ×12 assistant_rewritten' — the current run of identical decisions."""
    if run is None:
        return Content.assemble(("streak ", "bold"), ("none yet", MUTED))
    return Content.assemble(
        ("streak ", "bold"),
        (shown(run.kind, 20), kind_style(run.kind)),
        (f" ×{run.length} ", "bold" if run.length >= 2 else ""),
        shown(run.reason, 60),
    )
