"""The directive pane: injected tagged blocks (`<ultrawork-mode>`, `<system-reminder>`, ...) and what they cost.

Per tag, on both sides of the agent's own dedupe: the copies and bytes *serialized* (the prompts as the agent
built them) and *sent* (what reached the provider after the dedupe), the share of the payload bytes sent, how
many times the block was injected into the transcript, and what keep-first would still drop. A directive
injected once but re-sent in every flatten compounds: copies grow with every re-send while injections stay
flat, which is exactly the gap this pane makes visible.

Every figure belongs to one side and a share divides figures of one side. The pane once divided serialized
copies by bytes sent: on a senpi history whose build collapses `<ultrawork-mode>` keep-last (70 ulw prompts,
each flatten re-serializing every copy) it read 62 MB and 2,324 %, for 1.7 MB actually sent (issue 22). Where
the dedupe changed nothing in the selection both sides are one, and the pane shows one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from textual.content import Content
from textual.widgets import Static

from core.report.redact import shown
from tui.fmt import MUTED, cell, fit_count, num_cell, pct, short_bytes, short_id
from tui.view import LargestPayload, SessionSummary, TagTotals

TAG_MIN = 14
TAG_MAX = 22
#: the first columns by priority may squeeze the tag column to TAG_MIN; the others are added only while it keeps
#: TAG_ROOMY cells (at 160 columns all nine fit only by clipping `omo-ultrawork-reminder` to 14 cells)
ESSENTIAL = 6
TAG_ROOMY = 20
BAR_MIN = 6
BAR_MAX = 30
SERIALIZED, SENT = "serialized", "sent"
#: what a group label over a side's columns shrinks to, widest first
GROUP_LABELS = {SERIALIZED: ("serialized", "serial.", "ser."), SENT: ("sent",)}


def share(part: int, whole: int) -> float | None:
    """Exact, as the reports print their percentages (the JSON and `check` round the same ratio to 4 decimals):
    one percentage in every output, never a percentage of a rounded figure."""
    return part / whole if whole else None


@dataclass(frozen=True, slots=True)
class Figures:
    """What one row of the pane measures: one tag over the selection, or one session over all its tags."""

    copies: int  # as serialized
    bytes: int
    copies_sent: int  # as sent, after the agent's own dedupe
    bytes_sent: int
    payload_raw: int  # the payload bytes each share is taken of, per side
    payload_sent: int
    injections: int | None
    saved: int | None  # sent side: what keep-first would still drop

    @property
    def share_raw(self) -> float | None:
        return share(self.bytes, self.payload_raw)

    @property
    def share_sent(self) -> float | None:
        return share(self.bytes_sent, self.payload_sent)


@dataclass(frozen=True, slots=True)
class Column:
    """A numeric column: fixed width, right-aligned, and a value that always leaves a space before it.

    Columns are data: what they measure, and on which side of the agent's dedupe (`side`), is said in one
    place; the pane shows them by `priority` while they fit, and never lets a value run into its neighbour or
    wrap."""

    key: str
    title: str
    width: int
    priority: int
    side: str | None  # SERIALIZED | SENT | None (the same on both sides)
    value: Callable[[Figures], str]
    style: Callable[[Figures], str]
    help: str


def _warn(value: float | None) -> str:
    return "$warning" if (value or 0) >= 0.25 else ""


COLUMNS: tuple[Column, ...] = (
    Column("copies", "copies", 7, 4, SERIALIZED, lambda f: fit_count(f.copies, 7), lambda f: "",
           "blocks in the payloads as the agent serialized them (a re-send carries them again)"),
    Column("bytes", "bytes", 7, 3, SERIALIZED, lambda f: short_bytes(f.bytes), lambda f: "",
           "bytes of those copies"),
    Column("share", "share", 7, 7, SERIALIZED, lambda f: pct(f.share_raw), lambda f: MUTED,
           "of the payload bytes serialized"),
    Column("copies_sent", "copies", 7, 5, SENT, lambda f: fit_count(f.copies_sent, 7), lambda f: "",
           "blocks left in the payloads sent, after the agent's own dedupe"),
    Column("bytes_sent", "bytes", 7, 1, SENT, lambda f: short_bytes(f.bytes_sent), lambda f: "",
           "bytes of those copies"),
    Column("share_sent", "share", 7, 2, SENT, lambda f: pct(f.share_sent), lambda f: _warn(f.share_sent),
           "of the payload bytes sent (never above 100 %)"),
    Column("saved", "saved", 7, 8, SENT, lambda f: "—" if f.saved is None else short_bytes(f.saved),
           lambda f: "$success", "2nd and later copies inside one payload sent: what keep-first would still drop"),
    Column("per_copy", "/copy", 7, 9, None, lambda f: short_bytes(f.bytes // f.copies) if f.copies else "—",
           lambda f: "", "average bytes of one copy"),
    Column("injections", "inj", 6, 6, None, lambda f: "—" if f.injections is None else fit_count(f.injections, 6),
           lambda f: MUTED, "times the block was injected into the transcript"),
)  # fmt: skip
#: where both sides are one (nothing was deduplicated), the serialized columns would only repeat the sent ones
ONE_SIDE = tuple(c for c in COLUMNS if c.side != SERIALIZED)


@dataclass(frozen=True, slots=True)
class Layout:
    tag_w: int
    columns: tuple[Column, ...]  # in display order
    bar_w: int

    @property
    def grouped(self) -> bool:
        """Whether the header needs its group row (both sides shown)."""
        return any(c.side == SERIALIZED for c in self.columns)


def layout(width: int, *, both: bool = True) -> Layout:
    """The columns that fit in `width` cells, most telling first, then a wider tag column, then the bar.
    `both`: the dedupe changed something, so the serialized side has columns of its own."""
    pool = COLUMNS if both else ONE_SIDE
    chosen: list[Column] = []
    used = TAG_MIN
    for column in sorted(pool, key=lambda c: c.priority):
        tag_room = 0 if len(chosen) < ESSENTIAL else TAG_ROOMY - TAG_MIN
        if used + column.width + tag_room > width:
            break  # strictly by priority: a narrow, less telling column never takes a wider one's place
        chosen.append(column)
        used += column.width
    tag_w = min(TAG_MAX, TAG_MIN + width - used)
    used += tag_w - TAG_MIN
    bar_w = min(BAR_MAX, width - used - 2)
    order = {c.key: i for i, c in enumerate(COLUMNS)}
    return Layout(tag_w, tuple(sorted(chosen, key=lambda c: order[c.key])), bar_w if bar_w >= BAR_MIN else 0)


@dataclass(frozen=True, slots=True)
class Totals:
    """The per-session ledgers summed: per tag, and the measured payload bytes each share divides by."""

    tags: dict[str, TagTotals]
    payload_raw: int
    payload_sent: int

    @property
    def deduped(self) -> bool:
        """Whether the agent's dedupe changed any figure: only then are both sides shown."""
        if self.payload_raw != self.payload_sent:
            return True
        return any((t.copies, t.bytes) != (t.copies_sent, t.bytes_sent) for t in self.tags.values())


def combine(sessions: Iterable[SessionSummary]) -> Totals:
    """Sum the per-session ledgers."""
    tags: dict[str, TagTotals] = {}
    raw = sent = 0
    for summary in sessions:
        raw += summary.measured_raw
        sent += summary.measured_sent
        for tag, totals in summary.tags.items():
            into = tags.get(tag)
            if into is None:
                into = tags[tag] = TagTotals()
            into.copies += totals.copies
            into.bytes += totals.bytes
            into.copies_sent += totals.copies_sent
            into.bytes_sent += totals.bytes_sent
            into.turns += totals.turns
            if totals.injections is not None:
                into.injections = (into.injections or 0) + totals.injections
            if totals.saved_bytes is not None:
                into.saved_bytes = (into.saved_bytes or 0) + totals.saved_bytes
    return Totals(tags, raw, sent)


class Combiner:
    """`combine`, kept up to date by difference: only the summaries that are new objects since the last call
    are subtracted and added again (the builder hands out a new summary only when its session changed).

    Summing every session's ledger on each snapshot cost ~0.6 ms per 100 sessions on the UI thread; at 2,000
    sessions that is part of what a live write waited for before it reached the screen.
    """

    def __init__(self) -> None:
        self._parts: dict[str, SessionSummary] = {}
        # per tag: copies, bytes, turns, injections, sessions with injections, saved, sessions with saved,
        # sessions, copies sent, bytes sent
        self._tags: dict[str, list[int]] = {}
        self._raw = 0
        self._sent = 0

    def update(self, sessions: list[SessionSummary]) -> Totals:
        """The same as `combine(sessions)`."""
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
        for tag, (copies, nbytes, turns, inj, inj_n, saved, saved_n, _n, c_sent, b_sent) in self._tags.items():
            tags[tag] = TagTotals(copies, nbytes, turns, inj if inj_n else None, saved if saved_n else None,
                                  c_sent, b_sent)  # fmt: skip
        return Totals(tags, self._raw, self._sent)

    def _apply(self, summary: SessionSummary, sign: int) -> None:
        self._raw += sign * summary.measured_raw
        self._sent += sign * summary.measured_sent
        for tag, totals in summary.tags.items():
            into = self._tags.get(tag)
            if into is None:
                into = self._tags[tag] = [0] * 10
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
            into[8] += sign * totals.copies_sent
            into[9] += sign * totals.bytes_sent
            if not into[7]:
                del self._tags[tag]


class DirectivePane(Static):
    """Per-tag copies, bytes and share, serialized and sent, injections and what keep-first would still drop;
    zoomed, the same per session."""

    DEFAULT_CSS = """
    DirectivePane { width: 1fr; height: 100%; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.totals = Totals({}, 0, 0)
        self.largest: LargestPayload | None = None
        self.sessions: list[SessionSummary] = []
        self.border_title = "Directives"
        self._combiner = Combiner()

    @property
    def tags(self) -> dict[str, TagTotals]:
        return self.totals.tags

    def show(self, sessions: Iterable[SessionSummary], largest: LargestPayload | None = None) -> None:
        sessions = list(sessions)
        self.sessions = sessions
        totals = self._combiner.update(sessions)
        if (totals, largest) == (self.totals, self.largest):
            return
        self.totals, self.largest = totals, largest
        self.border_subtitle = self._subtitle()
        self.refresh()

    def on_resize(self) -> None:
        self.border_subtitle = self._subtitle()

    def _subtitle(self) -> Content | None:
        """The largest payload on both sides and its directive share (the figure `check` gates), else the
        selection's share; the longest wording the border has room for."""
        room = self.outer_size.width - 6 if self.outer_size.width else 200  # corners, a rule and a space each side
        for parts in self._subtitles():
            text = Content.assemble(*parts)
            if text.cell_length <= room:
                return text
        return None

    def _subtitles(self) -> list[list[tuple[str, str] | str]]:
        """Candidate subtitles, longest first."""
        largest, totals = self.largest, self.totals
        bold = "bold"
        if largest is not None:
            raw, sent = short_bytes(largest.bytes_raw), short_bytes(largest.bytes_sent)
            dshare = (pct(share(largest.directives_sent, largest.bytes_sent)), "$warning")
            first: list[tuple[str, str] | str] = []
            if largest.keep_first is not None and largest.keep_first >= largest.bytes_raw:
                first = [" · keep-first: ", ("nothing repeated", MUTED)]
            elif largest.keep_first is not None:
                cut = "" if largest.deduped else f" (−{pct(1 - largest.keep_first / largest.bytes_sent, 0)})"
                first = [" · keep-first ", (short_bytes(largest.keep_first), "$success bold"), cut]
            if not largest.exact:  # the messages' bytes only: not a payload size (the reports name none either)
                return [
                    ["largest call's messages ", (sent, bold), ", directives ", dshare, *first],
                    ["largest call's messages ", (sent, bold), ", directives ", dshare],
                    ["largest messages ", (sent, bold), ", ", dshare],
                    ["messages ", (sent, bold), ", ", dshare],
                ]
            if largest.deduped:
                return [
                    ["largest payload ", (raw, bold), " serialized → ", (sent, bold), " sent, directives ", dshare,
                     *first],
                    ["largest ", (raw, bold), " serialized → ", (sent, bold), " sent, directives ", dshare, *first],
                    ["largest ", (raw, bold), " serialized → ", (sent, bold), " sent, directives ", dshare],
                    ["largest ", (raw, bold), " → ", (sent, bold), " sent, ", dshare],
                    [(sent, bold), " sent, ", dshare],
                ]  # fmt: skip
            return [
                ["largest payload ", (sent, bold), " sent, directives ", dshare, *first],
                ["largest ", (sent, bold), " sent, directives ", dshare, *first],
                ["largest ", (sent, bold), " sent, directives ", dshare],
                ["largest ", (sent, bold), " sent, ", dshare],
                [(sent, bold), " sent, ", dshare],
            ]
        if not totals.tags:
            return []
        d_raw = sum(t.bytes for t in totals.tags.values())
        d_sent = sum(t.bytes_sent for t in totals.tags.values())
        sent_share = (pct(share(d_sent, totals.payload_sent)), "$warning")
        serialized = [" (", pct(share(d_raw, totals.payload_raw)), " serialized)"] if totals.deduped else []
        return [
            ["directives ", sent_share, " of the bytes sent", *serialized],
            ["directives ", sent_share, " of the bytes sent"],
            ["directives ", sent_share],
        ]

    def render(self) -> Content:
        width = max(TAG_MIN, self.content_region.width)
        height = max(1, self.content_region.height)
        if not self.tags:
            return Content.styled(
                "no directive blocks yet — tagged blocks such as <ultrawork-mode> are counted per payload "
                "once transcripts are read",
                f"{MUTED} italic",
            )
        totals = self.totals
        shape = layout(width, both=totals.deduped)
        lines = _header("tag", shape)
        ordered = sorted(self.tags.items(), key=lambda item: (-item[1].bytes_sent, -item[1].bytes, item[0]))
        room = height - len(lines)
        for i, (tag, t) in enumerate(ordered):
            if i >= room - 1 and len(ordered) > room:
                lines.append(Content.styled(f"+{len(ordered) - i} more tags (ctrl+p → Zoom directives)", MUTED))
                break
            figures = Figures(t.copies, t.bytes, t.copies_sent, t.bytes_sent, totals.payload_raw,
                              totals.payload_sent, t.injections, t.saved_bytes)  # fmt: skip
            lines.append(_row(shown(tag, 80), figures, shape, bold=True))
        # zoomed (command palette) or a very tall terminal: the per-session block and the legend. Counted before
        # building: with thousands of sessions the block never fits, and building it cost ~0.4 s per repaint
        tagged = sum(1 for summary in self.sessions if summary.tags)
        legend = self._legend(shape, totals.deduped)
        header = len(_header("session", shape))
        if height - len(lines) >= (tagged + 2 + header if tagged else 0) + len(legend):
            lines += self._sessions_block(shape) + legend
        return Content("\n").join(lines)

    def _sessions_block(self, shape: Layout) -> list[Content]:
        """Per session, all its tags together (what the session-scoped pane shows), and its heaviest tag."""
        rows: list[Content] = []
        for summary in sorted(self.sessions, key=lambda s: -sum(t.bytes_sent for t in s.tags.values())):
            if not summary.tags:
                continue
            tags = summary.tags.values()
            injections = [t.injections for t in tags if t.injections is not None]
            saved = [t.saved_bytes for t in tags if t.saved_bytes is not None]
            figures = Figures(
                sum(t.copies for t in tags),
                sum(t.bytes for t in tags),
                sum(t.copies_sent for t in tags),
                sum(t.bytes_sent for t in tags),
                summary.measured_raw,
                summary.measured_sent,
                sum(injections) if injections else None,
                sum(saved) if saved else None,
            )
            top, totals = max(summary.tags.items(), key=lambda item: (item[1].bytes_sent, item[1].bytes))
            where = shown(os.path.basename((summary.cwd or "").rstrip("/")), 30)
            label = short_id(summary.session_id) + (" " + where if where else "")
            top_text = f"  top {shown(top, 40)} {pct(share(totals.bytes_sent, summary.measured_sent))}"
            rows.append(Content.assemble(_row(label, figures, shape), (top_text, MUTED)))
        if not rows:
            return []
        head = _header("session", shape)
        head[-1] = Content.assemble(head[-1], ("  top tag (its share of bytes sent)", "bold"))
        return [
            Content(""),
            Content.styled("by session: all of its tags together, and the tag that weighs most", MUTED),
            *head,
            *rows,
        ]

    @staticmethod
    def _legend(shape: Layout, deduped: bool) -> list[Content]:
        lines = [Content("")]
        if not deduped:
            lines.append(Content.styled("nothing was deduplicated: every payload was sent as serialized", MUTED))
        for column in shape.columns:
            sided = shape.grouped and column.side and column.key != "saved"  # `sent saved` reads as nonsense
            name = f"{column.side} {column.title}" if sided else column.title
            lines.append(Content.styled(f"{name}: {column.help}", MUTED))
        return lines


def _group_label(side: str | None, width: int) -> str:
    """The label over `width` cells of one side's columns: `──── sent ────`, shortened to fit, leaving the
    first cell blank as every numeric cell does."""
    room = width - 1
    if side is None or room <= 0:
        return " " * width
    for label in GROUP_LABELS[side]:
        fill = room - len(label) - 2
        if fill >= 4:  # a rule on each side shows how far the side reaches
            left = fill // 2
            return " " + "─" * left + f" {label} " + "─" * (fill - left)
        if len(label) <= room:
            return " " + label.center(room)
    return " " * width


def _header(first: str, shape: Layout) -> list[Content]:
    """The column titles, under a row naming each side's columns when both sides are shown."""
    titles = cell(first, shape.tag_w) + "".join(num_cell(c.title, c.width) for c in shape.columns)
    if not shape.grouped:
        return [Content.styled(titles, "bold")]
    groups: list[tuple[str | None, int]] = []
    for column in shape.columns:
        if groups and groups[-1][0] == column.side:
            groups[-1] = (column.side, groups[-1][1] + column.width)
        else:
            groups.append((column.side, column.width))
    row = " " * shape.tag_w + "".join(_group_label(side, width) for side, width in groups)
    return [Content.styled(row, MUTED), Content.styled(titles, "bold")]


def _row(label: str, figures: Figures, shape: Layout, *, bold: bool = False) -> Content:
    parts: list[tuple[str, str] | str] = [(cell(label, shape.tag_w), "bold" if bold else "")]
    for column in shape.columns:
        parts.append((num_cell(column.value(figures), column.width), column.style(figures)))
    if shape.bar_w:
        filled = round((figures.share_sent or 0.0) * shape.bar_w)
        parts += ["  ", ("█" * filled, "$warning"), ("·" * (shape.bar_w - filled), MUTED)]
    return Content.assemble(*parts)
