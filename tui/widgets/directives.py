"""The directive pane: injected tagged blocks (`<ultrawork-mode>`, `<system-reminder>`, ...) and what they cost.

Per tag: copies carried in the payloads sent, their bytes, their share of all payload bytes, how many times
the block was injected into the transcript, and the bytes a dedupe would save. A directive injected once
but re-sent in every flatten compounds: copies grow with every re-send while injections stay flat, which is
exactly the gap this pane makes visible.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from textual.content import Content
from textual.widgets import Static

from core.report.redact import shown
from tui.fmt import MUTED, cell, fit_count, human_bytes, num_cell, pct, short_bytes, short_id
from tui.view import DedupeInfo, SessionSummary, TagTotals

TAG_MIN = 14
TAG_MAX = 22
BAR_MIN = 6
BAR_MAX = 30


@dataclass(frozen=True, slots=True)
class Figures:
    """What one row of the pane measures: one tag over the selection, or one session over all its tags."""

    copies: int
    bytes: int
    payload: int  # the payload bytes the share is taken of
    injections: int | None
    saved: int | None


@dataclass(frozen=True, slots=True)
class Column:
    """A numeric column: fixed width, right-aligned, and a value that always leaves a space before it.

    Columns are data so what they measure can change in one place (issue 22 splits raw and sent copies); the
    pane shows them by `priority` while they fit, and never lets a value run into its neighbour or wrap."""

    key: str
    title: str
    width: int
    priority: int
    value: Callable[[Figures], str]
    style: Callable[[Figures], str]
    help: str


def _share(f: Figures) -> float | None:
    return f.bytes / f.payload if f.payload else None


COLUMNS: tuple[Column, ...] = (
    Column("copies", "copies", 8, 1, lambda f: fit_count(f.copies, 8), lambda f: "",
           "blocks carried by the payloads sent (a re-send carries them again)"),
    Column("bytes", "bytes", 7, 2, lambda f: short_bytes(f.bytes), lambda f: "",
           "bytes of those copies"),
    Column("share", "share", 7, 3, lambda f: pct(_share(f)),
           lambda f: "$warning" if (_share(f) or 0) >= 0.25 else "", "of all payload bytes"),
    Column("saved", "saved", 7, 4, lambda f: "—" if f.saved is None else short_bytes(f.saved),
           lambda f: "$success", "2nd and later copies inside one payload: what keep-first dedupe drops"),
    Column("per_copy", "/copy", 7, 5, lambda f: short_bytes(f.bytes // f.copies) if f.copies else "—",
           lambda f: "", "average bytes of one copy"),
    Column("injections", "inj", 6, 6, lambda f: "—" if f.injections is None else fit_count(f.injections, 6),
           lambda f: MUTED, "times the block was injected into the transcript"),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Layout:
    tag_w: int
    columns: tuple[Column, ...]  # in display order
    bar_w: int


def layout(width: int) -> Layout:
    """The columns that fit in `width` cells, most telling first, then a wider tag column, then the bar."""
    chosen: list[Column] = []
    used = TAG_MIN
    for column in sorted(COLUMNS, key=lambda c: c.priority):
        if used + column.width > width:
            break  # strictly by priority: a narrow, less telling column never takes a wider one's place
        chosen.append(column)
        used += column.width
    tag_w = min(TAG_MAX, TAG_MIN + width - used)
    used += tag_w - TAG_MIN
    bar_w = min(BAR_MAX, width - used - 2)
    order = {c.key: i for i, c in enumerate(COLUMNS)}
    return Layout(tag_w, tuple(sorted(chosen, key=lambda c: order[c.key])), bar_w if bar_w >= BAR_MIN else 0)


def combine(sessions: Iterable[SessionSummary]) -> tuple[dict[str, TagTotals], int, int | None]:
    """Sum the per-session ledgers: (tags, payload bytes, dedupe savings or None when unknown)."""
    tags: dict[str, TagTotals] = {}
    payload = 0
    saved: int | None = None
    for summary in sessions:
        payload += summary.payload_total
        if summary.dedupe_saved is not None:
            saved = (saved or 0) + summary.dedupe_saved
        for tag, totals in summary.tags.items():
            into = tags.get(tag)
            if into is None:
                into = tags[tag] = TagTotals()
            into.copies += totals.copies
            into.bytes += totals.bytes
            into.turns += totals.turns
            if totals.injections is not None:
                into.injections = (into.injections or 0) + totals.injections
            if totals.saved_bytes is not None:
                into.saved_bytes = (into.saved_bytes or 0) + totals.saved_bytes
    return tags, payload, saved


class Combiner:
    """`combine`, kept up to date by difference: only the summaries that are new objects since the last call
    are subtracted and added again (the builder hands out a new summary only when its session changed).

    Summing every session's ledger on each snapshot cost ~0.6 ms per 100 sessions on the UI thread; at 2,000
    sessions that is part of what a live write waited for before it reached the screen.
    """

    def __init__(self) -> None:
        self._parts: dict[str, SessionSummary] = {}
        # per tag: copies, bytes, turns, injections, sessions with injections, saved, sessions with saved, sessions
        self._tags: dict[str, list[int]] = {}
        self._payload = 0
        self._saved = 0
        self._saved_n = 0

    def update(self, sessions: list[SessionSummary]) -> tuple[dict[str, TagTotals], int, int | None]:
        """The same triple as `combine(sessions)`."""
        parts = self._parts
        for summary in sessions:
            old = parts.get(summary.key)
            if old is not summary:
                if old is not None:
                    self._apply(old, -1)
                self._apply(summary, 1)
                parts[summary.key] = summary
        if len(parts) != len(sessions):
            keep = {summary.key for summary in sessions}
            for key in [key for key in parts if key not in keep]:
                self._apply(parts.pop(key), -1)
        tags: dict[str, TagTotals] = {}
        for tag, (copies, nbytes, turns, inj, inj_n, saved, saved_n, _n) in self._tags.items():
            tags[tag] = TagTotals(copies, nbytes, turns, inj if inj_n else None, saved if saved_n else None)
        return tags, self._payload, self._saved if self._saved_n else None

    def _apply(self, summary: SessionSummary, sign: int) -> None:
        self._payload += sign * summary.payload_total
        if summary.dedupe_saved is not None:
            self._saved += sign * summary.dedupe_saved
            self._saved_n += sign
        for tag, totals in summary.tags.items():
            into = self._tags.get(tag)
            if into is None:
                into = self._tags[tag] = [0] * 8
            into[0] += sign * totals.copies
            into[1] += sign * totals.bytes
            into[2] += sign * totals.turns
            if totals.injections is not None:
                into[3] += sign * totals.injections
                into[4] += sign
            if totals.saved_bytes is not None:
                into[5] += sign * totals.saved_bytes
                into[6] += sign
            into[7] += sign
            if not into[7]:
                del self._tags[tag]


class DirectivePane(Static):
    """Per-tag copies, bytes, share, injections and dedupe savings; zoomed, the same per session."""

    DEFAULT_CSS = """
    DirectivePane { width: 1fr; height: 100%; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.tags: dict[str, TagTotals] = {}
        self.payload = 0
        self.saved: int | None = None
        self.dedupe: DedupeInfo | None = None
        self.sessions: list[SessionSummary] = []
        self.border_title = "Directives"
        self._combiner = Combiner()

    def show(self, sessions: Iterable[SessionSummary], dedupe: DedupeInfo | None = None) -> None:
        sessions = list(sessions)
        self.sessions = sessions
        tags, payload, saved = self._combiner.update(sessions)
        if (tags, payload, saved, dedupe) == (self.tags, self.payload, self.saved, self.dedupe):
            return
        self.tags, self.payload, self.saved, self.dedupe = tags, payload, saved, dedupe
        self.border_subtitle = self._subtitle()
        self.refresh()

    def on_resize(self) -> None:
        self.border_subtitle = self._subtitle()

    def _subtitle(self) -> Content | None:
        """The dedupe simulated on the largest flatten, labelled as long as the border has room for it."""
        tags, payload, saved, dedupe = self.tags, self.payload, self.saved, self.dedupe
        roomy = self.size.width >= 64 or not self.size.width
        if dedupe is not None and dedupe.bytes_before and dedupe.keep_first >= dedupe.bytes_before:
            return Content.assemble("dedupe largest flatten: ", ("nothing repeated", MUTED))
        if dedupe is not None and dedupe.bytes_before:
            cut = 1 - dedupe.keep_first / dedupe.bytes_before
            label = "keep-first dedupe of the largest flatten " if roomy else "dedupe "
            return Content.assemble(
                label,
                (f"{short_bytes(dedupe.bytes_before)} → {short_bytes(dedupe.keep_first)}", "$success bold"),
                f" (−{pct(cut, 0)})",
            )
        if saved is not None:
            return Content.assemble("dedupe saves ", (human_bytes(saved), "$success bold"))
        if tags:
            total = sum(t.bytes for t in tags.values())
            return Content.assemble(
                "directives ", (pct(total / payload if payload else None), "$warning"), " of payload"
            )
        return None

    def render(self) -> Content:
        width = max(TAG_MIN, self.content_region.width)
        height = max(1, self.content_region.height)
        if not self.tags:
            return Content.styled(
                "no directive blocks yet — tagged blocks such as <ultrawork-mode> are counted per payload "
                "once transcripts are read",
                f"{MUTED} italic",
            )
        shape = layout(width)
        lines = [_header("tag", shape)]
        ordered = sorted(self.tags.items(), key=lambda item: (-item[1].bytes, item[0]))
        room = height - 1
        for i, (tag, totals) in enumerate(ordered):
            if i >= room - 1 and len(ordered) > room:
                lines.append(Content.styled(f"+{len(ordered) - i} more tags (ctrl+p → Zoom directives)", MUTED))
                break
            figures = Figures(totals.copies, totals.bytes, self.payload, totals.injections, totals.saved_bytes)
            lines.append(_row(shown(tag, 80), figures, shape, bold=True))
        # zoomed (command palette) or a very tall terminal: the per-session block and the legend. Counted before
        # building: with thousands of sessions the block never fits, and building it cost ~0.4 s per repaint
        tagged = sum(1 for summary in self.sessions if summary.tags)
        legend = self._legend(shape)
        if height - len(lines) >= (tagged + 3 if tagged else 0) + len(legend):
            lines += self._sessions_block(shape) + legend
        return Content("\n").join(lines)

    def _sessions_block(self, shape: Layout) -> list[Content]:
        """Per session, all its tags together (what the session-scoped pane shows), and its heaviest tag."""
        rows: list[Content] = []
        for summary in sorted(self.sessions, key=lambda s: -sum(t.bytes for t in s.tags.values())):
            if not summary.tags:
                continue
            tags = summary.tags.values()
            injections = [t.injections for t in tags if t.injections is not None]
            saved = [t.saved_bytes for t in tags if t.saved_bytes is not None]
            figures = Figures(
                sum(t.copies for t in tags),
                sum(t.bytes for t in tags),
                summary.payload_total,
                sum(injections) if injections else None,
                sum(saved) if saved else None,
            )
            top, totals = max(summary.tags.items(), key=lambda item: item[1].bytes)
            share = totals.bytes / summary.payload_total if summary.payload_total else None
            where = shown(os.path.basename((summary.cwd or "").rstrip("/")), 30)
            label = short_id(summary.session_id) + (" " + where if where else "")
            top_text = f"  top {shown(top, 40)} {pct(share)}"
            rows.append(Content.assemble(_row(label, figures, shape), (top_text, MUTED)))
        if not rows:
            return []
        return [
            Content(""),
            Content.styled("by session: all of its tags together, and the tag that weighs most", MUTED),
            Content.assemble(_header("session", shape), ("  top tag (its share)", "bold")),
            *rows,
        ]

    @staticmethod
    def _legend(shape: Layout) -> list[Content]:
        return [
            Content(""),
            *(Content.styled(f"{column.title}: {column.help}", MUTED) for column in shape.columns),
        ]


def _header(first: str, shape: Layout) -> Content:
    text = cell(first, shape.tag_w) + "".join(num_cell(c.title, c.width) for c in shape.columns)
    return Content.styled(text, "bold")


def _row(label: str, figures: Figures, shape: Layout, *, bold: bool = False) -> Content:
    parts: list[tuple[str, str] | str] = [(cell(label, shape.tag_w), "bold" if bold else "")]
    for column in shape.columns:
        parts.append((num_cell(column.value(figures), column.width), column.style(figures)))
    if shape.bar_w:
        filled = round((_share(figures) or 0.0) * shape.bar_w)
        parts += ["  ", ("█" * filled, "$warning"), ("·" * (shape.bar_w - filled), MUTED)]
    return Content.assemble(*parts)
