"""The dashboard's panes, in one registry that compose, the help screen and the zoom commands read.

A pane is added here once (id, widget class, title, help line, whether it can be zoomed, where it sits) and it
appears on screen, in `?` and in the palette's "Zoom …" commands; nothing else lists panes, so they cannot drift
apart (the help used to hand-list five panes, the palette three zooms, compose its own five widgets).

Slots are the dashboard's three bands: `top` (side by side), `graph` (full width), `middle` (side by side, the
rest of the height). Layout sizes stay in `app.tcss`, keyed by the pane ids below.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from textual.widget import Widget

from tui.widgets.directives import DirectivePane
from tui.widgets.payload_graph import PayloadGraph
from tui.widgets.rates import RatesPane
from tui.widgets.sessions import SessionList
from tui.widgets.turn_table import TurnPane
from tui.widgets.waste import WastePane

Slot = Literal["top", "graph", "middle"]


@dataclass(frozen=True, slots=True)
class Pane:
    id: str
    widget: type[Widget]
    title: str
    help: str
    zoomable: bool
    slot: Slot


PANES: tuple[Pane, ...] = (
    Pane(
        "rates",
        RatesPane,
        "Rates",
        "per kind: count, share, per minute (last 10 min), the current streak and the peak count, over the "
        "decision lines of the logs, or over the chosen session's calls (the title says which); what does not "
        "fit is named on a last '+N more' line",
        True,
        "top",
    ),
    Pane(
        "directives",
        DirectivePane,
        "Directives",
        "per tag, serialized (before the agent's own dedupe) and sent (after it): copies, bytes, share of that "
        "side's payload bytes; injections, bytes per copy, what keep-first would still drop; bottom: the largest "
        "payload on both sides and its directive share (what check gates); zoomed: the same per session",
        True,
        "top",
    ),
    Pane(
        "waste",
        WastePane,
        "Waste",
        "prompt-cache waste: tokens a warm cache would have read that calls processed again, and their dollars "
        "beyond cache hits at list prices, by cause (expired, rewritten, missed, resumed), all sessions, then the "
        "chosen (else the most recent) session; d on a call shows its expected vs actual read",
        True,
        "top",
    ),
    Pane(
        "graph",
        PayloadGraph,
        "Payload",
        "one bar per call around the cursor: payload bytes sent, after the agent's own dedupe, where the transcript "
        "rebuilds them exactly (senpi), else prompt tokens (b: switch)",
        True,
        "graph",
    ),
    Pane(
        "sessions",
        SessionList,
        "Sessions",
        "turns, resend share (fork + flatten) and rewritten turns per session; Enter limits every pane to one",
        True,
        "middle",
    ),
    Pane(
        "turn-pane",
        TurnPane,
        "Turns",
        "one row per provider call: time, session, kind, reason, count, bytes, directive copies, flags, why",
        True,
        "middle",
    ),
)

STATUS_HELP = "live/paused, files, bytes and lines read, lines/s, backfill left, problems, filter"


def in_slot(slot: Slot) -> tuple[Pane, ...]:
    return tuple(pane for pane in PANES if pane.slot == slot)


def pane(pane_id: str) -> Pane:
    for found in PANES:
        if found.id == pane_id:
            return found
    raise KeyError(pane_id)


def zoomable() -> tuple[Pane, ...]:
    return tuple(p for p in PANES if p.zoomable)
