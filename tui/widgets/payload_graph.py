"""The payload graph: one bar per turn, bytes (or prompt tokens) sent by each provider call.

Flatten and fork re-send the history, so their bars tower over the deltas; each bar is coloured by its
kind, so a run of red flatten spikes reads at a glance. The scale is logarithmic: payloads run from a
20-byte tool result to a 2 MB flatten, and on a linear scale every delta would be one flat line. The bars
follow the turn table: they show the turns around the table's cursor, and the selected turn is marked with
`▲` on the axis and a highlighted column. Bars use eighth blocks, so a 6-row pane has 48 levels.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from textual.content import Content
from textual.widgets import Static

from core.report.redact import shown
from tui.fmt import MUTED, kind_style, short_bytes

BLOCKS = " ▁▂▃▄▅▆▇█"
AXIS_WIDTH = 6


@dataclass(frozen=True, slots=True)
class GraphData:
    """The window of turns to draw; `selected` indexes into `values`."""

    values: tuple[int | None, ...] = ()
    kinds: tuple[str | None, ...] = ()
    selected: int | None = None
    metric: str = "bytes"  # bytes | tokens
    #: the agents of the shown calls whose transcripts give no byte-exact payload (`Agent.payload_exact`)
    inexact: tuple[str, ...] = ()


class PayloadGraph(Static):
    """Per-turn payload bars, coloured by kind, with the selected turn marked."""

    ALLOW_MAXIMIZE = True  # zoom from the command palette (and the screenshot of the directive pane)

    DEFAULT_CSS = """
    PayloadGraph { width: 2fr; height: 100%; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.data = GraphData()
        self.border_title = "Payload bytes sent per call (log scale)"
        self.border_subtitle = legend(())

    @property
    def capacity(self) -> int:
        """How many turns fit side by side (one column each)."""
        return max(1, self.content_region.width - AXIS_WIDTH)

    def show(self, data: GraphData) -> None:
        if data != self.data:
            self.data = data
            self.border_title = title(data)
            self.border_subtitle = legend(data.kinds)
            self.refresh()

    def render(self) -> Content:
        data = self.data
        width = max(AXIS_WIDTH + 1, self.content_region.width)
        height = max(2, self.content_region.height)
        rows = height - 1
        known = [v for v in data.values if v is not None]
        if not known:
            hint = (
                "no payload sizes yet — they come from transcripts (flatten/bootstrap diagnostics, "
                "reconstructed prompts) or token usage; press b to switch bytes/tokens"
            )
            return Content.styled(hint, f"{MUTED} italic")
        top = max(known) or 1
        room = width - AXIS_WIDTH
        columns = min(len(data.values), room)
        values = data.values[-columns:]
        kinds = data.kinds[-columns:]
        offset = len(data.values) - columns
        selected = None if data.selected is None else data.selected - offset
        # few turns: widen each bar (with a one-cell gap) so the graph still fills the pane
        bar = max(1, min(4, room // max(1, columns)))
        fill_w, gap = (bar - 1, 1) if bar >= 3 else (bar, 0)
        levels = [None if v is None else log_level(v, top, rows * 8) for v in values]
        middle = rows // 2
        lines: list[Content] = []
        for r in range(rows):
            floor = (rows - 1 - r) * 8
            if r == 0:
                label = short_bytes(top)
            elif r == rows - 1:
                label = "1"
            elif r == middle and rows >= 4:
                label = short_bytes(round(10 ** (math.log10(max(top, 10)) * (rows - middle) / rows)))
            else:
                label = ""
            parts: list[tuple[str, str] | str] = [(f"{label:>{AXIS_WIDTH - 1}}│", MUTED)]
            for i, level in enumerate(levels):
                style = kind_style(kinds[i])
                if i == selected:
                    style += " on $accent 30%"
                if level is None:
                    glyph = "·" if r == rows - 1 else " "
                    parts.append((glyph * fill_w, MUTED if i != selected else style))
                else:
                    parts.append((BLOCKS[max(0, min(8, level - floor))] * fill_w, style))
                if gap:
                    parts.append(" " * gap)
            lines.append(Content.assemble(*parts))
        marker = [" " * bar] * len(levels)
        if selected is not None and 0 <= selected < len(levels):
            marker[selected] = ("▲" * fill_w).ljust(bar)
        lines.append(Content.assemble((" " * (AXIS_WIDTH - 1) + "└", MUTED), ("".join(marker), "$accent bold")))
        return Content("\n").join(lines)


def log_level(value: int, top: int, levels: int) -> int:
    """Bar height in eighth-cells on a log scale from 1 to `top`: 0 stays empty, anything sent shows."""
    if value <= 0:
        return 0
    span = math.log10(max(top, 10))
    return max(1, min(levels, round(math.log10(max(value, 1)) / span * levels)))


def title(data: GraphData) -> str:
    """What the bars measure, and why tokens when the agent's transcripts give no byte-exact payload.

    "sent": the size after the agent's own dedupe, the one the table shows (the report names both)."""
    if data.metric == "bytes":
        what = "Payload bytes sent per call (log scale)"
        if data.inexact:  # forced with b: say what the bytes leave out
            what += f" · {', '.join(data.inexact)}: messages only, no system prompt or tools"
        return what
    what = "Prompt tokens per call (log scale)"
    if data.inexact:
        what += f" · {', '.join(data.inexact)} transcripts hold no system prompt or tools: tokens, not bytes"
    return what


def legend(kinds: Iterable[str | None]) -> Content:
    """'█ delta █ re-send █ compaction ▲ selected': every kind the bars show, in the kinds' display order (a
    fixed list: the same data always gives the same legend), in the theme's kind colours. Before any bar, the
    four senpi kinds."""
    present = {kind for kind in kinds if kind is not None}
    listed = sorted(present, key=lambda k: (ORDER.get(k, len(ORDER)), k)) if present else list(DEFAULT_LEGEND)
    parts: list[tuple[str, str] | str] = []
    for kind in listed:
        parts += [("█", kind_style(kind)), f" {shown(kind, 20)} "]
    parts.append(("▲", "$accent bold"))
    parts.append(" selected")
    return Content.assemble(*parts)


#: display order of the legend: delta first (the healthy case), then the kinds that cost, then the rest
ORDER = {kind: i for i, kind in enumerate(("delta", "re-send", "fork", "flatten", "compaction", "bootstrap",
                                           "disabled", "failed", "aborted"))}  # fmt: skip
DEFAULT_LEGEND = ("delta", "fork", "flatten", "bootstrap")
