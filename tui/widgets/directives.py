"""The directive pane: injected tagged blocks (`<ultrawork-mode>`, `<system-reminder>`, ...) and what they cost.

Per tag: copies carried in the payloads sent, their bytes, their share of all payload bytes, how many times
the block was injected into the transcript, and the bytes a dedupe would save. A directive injected once
but re-sent in every flatten compounds: copies grow with every re-send while injections stay flat, which is
exactly the gap this pane makes visible.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from textual.content import Content
from textual.widgets import Static

from core.sanitize import display
from tui.fmt import MUTED, cell, count, human_bytes, pct, short_bytes, short_id
from tui.view import DedupeInfo, SessionSummary, TagTotals

TAG_WIDE = 22
TAG_NARROW = 14


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
    """Per-tag copies, bytes, share, injections and dedupe savings."""

    ALLOW_MAXIMIZE = True  # zoom from the command palette (and the screenshot of the directive pane)

    DEFAULT_CSS = """
    DirectivePane { width: 1fr; height: 100%; padding: 0 1; }
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
        total = sum(t.bytes for t in tags.values())
        if dedupe is not None and dedupe.bytes_before and dedupe.keep_first >= dedupe.bytes_before:
            self.border_subtitle = Content.assemble("dedupe largest flatten: ", ("nothing repeated", MUTED))
        elif dedupe is not None and dedupe.bytes_before:
            cut = 1 - dedupe.keep_first / dedupe.bytes_before
            self.border_subtitle = Content.assemble(
                "dedupe ",
                (f"{short_bytes(dedupe.bytes_before)} → {short_bytes(dedupe.keep_first)}", "$success bold"),
                f" (−{pct(cut, 0)})",
            )
        elif saved is not None:
            self.border_subtitle = Content.assemble("dedupe saves ", (human_bytes(saved), "$success bold"))
        elif tags:
            self.border_subtitle = Content.assemble(
                "directives ", (pct(total / payload if payload else None), "$warning"), " of payload"
            )
        else:
            self.border_subtitle = None
        self.refresh()

    def render(self) -> Content:
        width = max(20, self.content_region.width)
        height = max(1, self.content_region.height)
        if not self.tags:
            return Content.styled(
                "no directive blocks yet — tagged blocks such as <ultrawork-mode> are counted per payload "
                "once transcripts are read",
                f"{MUTED} italic",
            )
        wide = width >= 52
        tag_w = TAG_WIDE if wide else TAG_NARROW
        bar_w = max(0, min(30, width - tag_w - 56)) if wide else 0
        head = cell("tag", tag_w) + cell("copies", 7, right=True) + cell("bytes", 7, right=True)
        head += cell("share", 7, right=True)
        if wide:
            head += cell("/copy", 7, right=True) + cell("inj", 5, right=True) + cell("saved", 7, right=True)
        lines = [Content.styled(head, "bold")]
        ordered = sorted(self.tags.items(), key=lambda item: (-item[1].bytes, item[0]))
        room = height - 1
        for i, (tag, totals) in enumerate(ordered):
            if i >= room - 1 and len(ordered) > room:
                lines.append(Content.styled(f"… {len(ordered) - i} more tags", MUTED))
                break
            lines.append(self._tag_line(tag, totals, tag_w, wide, bar_w))
        # zoomed (command palette) or a very tall terminal: the per-session block and the legend. Counted before
        # building: with thousands of sessions the block never fits, and building it cost ~0.4 s per repaint
        tagged = sum(1 for summary in self.sessions if summary.tags)
        legend = self._legend()
        if height - len(lines) >= (tagged + 2 if tagged else 0) + len(legend):
            lines += self._sessions_block(tag_w) + legend
        return Content("\n").join(lines)

    def _tag_line(self, tag: str, totals: TagTotals, tag_w: int, wide: bool, bar_w: int) -> Content:
        share = totals.bytes / self.payload if self.payload else None
        parts: list[tuple[str, str] | str] = [
            (cell(display(tag, 80), tag_w), "bold"),
            cell(count(totals.copies), 7, right=True),
            cell(short_bytes(totals.bytes), 7, right=True),
            (cell(pct(share), 7, right=True), "$warning" if share and share >= 0.25 else ""),
        ]
        if wide:
            per_copy = totals.bytes // totals.copies if totals.copies else None
            inj = "—" if totals.injections is None else count(totals.injections)
            saved = "—" if totals.saved_bytes is None else short_bytes(totals.saved_bytes)
            parts += [
                cell(short_bytes(per_copy), 7, right=True),
                (cell(inj, 5, right=True), MUTED),
                (cell(saved, 7, right=True), "$success"),
            ]
            if bar_w > 2:
                filled = round((share or 0.0) * bar_w)
                parts += ["  ", ("█" * filled, "$warning"), ("·" * (bar_w - filled), MUTED)]
        return Content.assemble(*parts)

    def _sessions_block(self, tag_w: int) -> list[Content]:
        """Per session, the tag that weighs most: where the compounding happens."""
        rows: list[Content] = []
        for summary in sorted(self.sessions, key=lambda s: -sum(t.bytes for t in s.tags.values())):
            if not summary.tags:
                continue
            tag, totals = max(summary.tags.items(), key=lambda item: item[1].bytes)
            share = totals.bytes / summary.payload_total if summary.payload_total else None
            label = short_id(summary.session_id) + " " + display(os.path.basename((summary.cwd or "").rstrip("/")), 30)
            rows.append(
                Content.assemble(
                    cell(label, tag_w),
                    cell(count(totals.copies), 7, right=True),
                    cell(short_bytes(totals.bytes), 7, right=True),
                    (cell(pct(share), 7, right=True), "$warning" if share and share >= 0.25 else ""),
                    ("  " + display(tag, 40), MUTED),
                )
            )
        if not rows:
            return []
        return [
            Content(""),
            Content.styled(cell("by session", tag_w) + "  copies  bytes  share  top tag", "bold"),
            *rows,
        ]

    @staticmethod
    def _legend() -> list[Content]:
        return [
            Content(""),
            Content.styled("copies: blocks carried by the payloads sent (a re-send carries them again)", MUTED),
            Content.styled("share: of all payload bytes · /copy: average bytes of one copy", MUTED),
            Content.styled("inj: times the block was injected into the transcript", MUTED),
            Content.styled("saved: 2nd and later copies inside one payload — what keep-first dedupe drops", MUTED),
        ]
