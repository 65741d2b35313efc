"""The directive pane: injected tagged blocks (`<ultrawork-mode>`, `<system-reminder>`, ...) and what they cost.

Per tag: copies carried in the payloads sent, their bytes, their share of all payload bytes, how many times
the block was injected into the transcript, and the bytes a dedupe would save. A directive injected once
but re-sent in every flatten compounds: copies grow with every re-send while injections stay flat, which is
exactly the gap this pane makes visible.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.content import Content
from textual.widgets import Static

from core.sanitize import display
from tui.fmt import MUTED, cell, count, human_bytes, pct, short_bytes
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


class DirectivePane(Static):
    """Per-tag copies, bytes, share, injections and dedupe savings."""

    DEFAULT_CSS = """
    DirectivePane { width: 1fr; height: 100%; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.tags: dict[str, TagTotals] = {}
        self.payload = 0
        self.saved: int | None = None
        self.dedupe: DedupeInfo | None = None
        self.border_title = "Directives"

    def show(self, sessions: Iterable[SessionSummary], dedupe: DedupeInfo | None = None) -> None:
        tags, payload, saved = combine(sessions)
        if (tags, payload, saved, dedupe) == (self.tags, self.payload, self.saved, self.dedupe):
            return
        self.tags, self.payload, self.saved, self.dedupe = tags, payload, saved, dedupe
        total = sum(t.bytes for t in tags.values())
        if dedupe is not None and dedupe.bytes_before and dedupe.keep_first >= dedupe.bytes_before:
            self.border_subtitle = Content.assemble("dedupe largest flatten: ", ("nothing repeated", MUTED))
        elif dedupe is not None and dedupe.bytes_before:
            cut = 1 - dedupe.keep_first / dedupe.bytes_before
            self.border_subtitle = Content.assemble(
                "dedupe largest flatten ",
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
        head = cell("tag", tag_w) + cell("copies", 7, right=True) + cell("bytes", 7, right=True)
        head += cell("share", 7, right=True)
        if wide:
            head += cell("inj", 5, right=True) + cell("saved", 7, right=True)
        lines = [Content.styled(head, "bold")]
        ordered = sorted(self.tags.items(), key=lambda item: (-item[1].bytes, item[0]))
        room = height - 1
        for i, (tag, totals) in enumerate(ordered):
            if i >= room - 1 and len(ordered) > room:
                lines.append(Content.styled(f"… {len(ordered) - i} more tags", MUTED))
                break
            share = totals.bytes / self.payload if self.payload else None
            parts: list[tuple[str, str] | str] = [
                (cell(display(tag, 80), tag_w), "$secondary"),
                cell(count(totals.copies), 7, right=True),
                cell(short_bytes(totals.bytes), 7, right=True),
                (cell(pct(share), 7, right=True), "$warning" if share and share >= 0.25 else ""),
            ]
            if wide:
                inj = "—" if totals.injections is None else count(totals.injections)
                saved = "—" if totals.saved_bytes is None else short_bytes(totals.saved_bytes)
                parts += [(cell(inj, 5, right=True), MUTED), (cell(saved, 7, right=True), "$success")]
            lines.append(Content.assemble(*parts))
        return Content("\n").join(lines)
