"""The dashboard: rates, directive counters, payload graph, turn table, sessions, status, drill-down.

Threading model (textual-practice §0):

* One thread worker (`_ingest`) owns all file IO and parsing. It loops `engine.poll(max_bytes)` while there
  is backlog, else `engine.wait(heartbeat)` (a filesystem event or the heartbeat wakes it), and builds a
  `Snapshot` under `engine.lock` at most `repaint_hz` times a second, and only when `state.version` moved
  (or once a second, since per-minute rates move with the clock). The UI thread never takes the lock.
* Backpressure: the worker builds the next snapshot only after the UI consumed the previous one, and a
  queued snapshot is replaced by a newer one (`SnapshotReady.can_replace`). Ingestion itself never waits for
  the UI; the screen simply shows the latest state at a bounded rate.
* The first frame is composed before the worker reads a byte, so a big backfill never blocks it.
* Garbage-collector pauses: parsing allocates millions of long-lived objects, and a full collection of
  them held the GIL for 0.7-0.9 s at a time (measured on a 54 MB corpus: the UI loop stalled that long
  every few seconds). The worker `gc.freeze()`s what a backfill has read after each batch, so collections only
  walk new objects: worst loop stall 69 ms instead of 892 ms. Reads are bounded (`max_bytes`, 512 KiB)
  so a snapshot can follow every batch even while core parses slowly.
* GIL contention: while the worker parses, the UI thread gets the GIL only every switch interval. The app
  lowers it to 1 ms while it runs (restored on exit) and the worker sleeps 15 ms after posting a snapshot
  during a backfill, so the repaint it triggers runs nearly uncontended. Measured event-loop lag while
  ingesting: median 4 ms, p95 48 ms (was 9 ms / 149 ms).

The App is constructible without argv (tests, snapshots and the screenshot script build it directly):
`ContinuityApp(engine, demo_writer=None, live=True, ...)`; `live=False` reads everything once and stops
tailing, with a fixed clock for byte-identical screenshots.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.geometry import Size
from textual.reactive import reactive
from textual.screen import Screen
from textual.theme import Theme
from textual.widget import Widget
from textual.widgets import Footer, Input
from textual.worker import Worker, WorkerState, get_current_worker

from core.model import Problem, Turn
from core.report.redact import shown
from tui.clipboard import choices, diff_text, fingerprints_text, inert, json_text, summary_text
from tui.config import Config, save_theme
from tui.filters import RowFilter, parse
from tui.fmt import short_bytes
from tui.messages import ExportDone, SnapshotReady
from tui.panes import PANES, Pane, in_slot, zoomable
from tui.scope import CallRates
from tui.screens.copy import CopyScreen
from tui.screens.detail import DetailScreen
from tui.screens.help import HelpScreen
from tui.screens.problems import ProblemsScreen
from tui.view import (
    EngineView,
    Snapshot,
    SnapshotBuilder,
    is_rewritten,
    payload_bytes,
    prompt_tokens,
    row_key,
    row_kind,
)
from tui.widgets.demo_bar import DemoBar
from tui.widgets.directives import DirectivePane
from tui.widgets.filter_bar import SEARCH_PLACEHOLDER, FilterBar
from tui.widgets.payload_graph import GraphData, PayloadGraph
from tui.widgets.problems import relative
from tui.widgets.rates import RatesPane
from tui.widgets.rowlist import RowList
from tui.widgets.sessions import SessionList
from tui.widgets.status import StatusLine, StatusState
from tui.widgets.turn_table import TurnTable
from tui.widgets.waste import WastePane, usd

if TYPE_CHECKING:
    from core.kernel.pricing import PriceTable
    from tui.demo_dir import DemoDir
    from tui.stdin import Spool

DASHBOARD_ACTIONS = frozenset({"next_rewritten", "previous_rewritten", "filter", "sessions", "toggle_follow",
                               "problems", "toggle_metric", "back", "open", "zoom", "jump", "search",
                               "next_match", "copy"})  # fmt: skip
RESENDS = frozenset({"fork", "flatten", "re-send"})
"""Kinds that re-send history (`re-send` is the calls model's kind for other agents, issue 13)."""
POST_YIELD_S = 0.015
BACKFILL_REPAINT_S = 0.25
LIVE_FREEZE_OBJECTS = 200_000
"""A live collection after which more tracked objects than this survive is followed by a freeze of them
(`_settle_garbage`): the screen's own are 10,000-20,000."""
SWITCH_INTERVAL_S = 0.001
WIDE = 140  # at or above this width the sessions pane is shown beside the table
TIGHT = 100  # below this width the top band holds Rates and Directives only (the Waste pane needs 26 more)
SHORT = 32  # below this height panes use their compact heights


BINDING_OWNERS: tuple[Any, ...] = ()
"""Every class whose bindings can be remapped (set below, once the classes exist)."""


def export_summary(report: dict[str, Any], row_filter: RowFilter, rows: int) -> str:
    """What an export included, in one line: it honours the session and the `/` filter, not the log counts."""
    turns = len(report.get("turns") or [])
    sessions = len(report.get("sessions") or [])
    scope = []
    if row_filter.session_id is not None:
        scope.append(f"session {row_filter.session_id[:8]}")
    if row_filter.text:
        scope.append(f"filter {row_filter.text}")
    lines = (report.get("continuity") or {}).get("events") or 0
    what = f"{turns:,} of {rows:,} turns, {sessions:,} session{'s' if sessions != 1 else ''}"
    if scope:
        what += " (" + ", ".join(scope) + ")"
    problems = report.get("problems_total") or 0
    return f"included {what}; {problems:,} problems; the log's decision counts cover all {lines:,} lines"


def _build(entry: Pane) -> Widget:
    """One registry pane as a widget; the registry decides whether it can be zoomed."""
    widget = entry.widget(id=entry.id)
    widget.ALLOW_MAXIMIZE = entry.zoomable  # (read by Widget.allow_maximize, which Screen.maximize asks)
    return widget


class ContinuityApp(App[None]):
    """The terminal dashboard people keep open beside a running coding agent."""

    CSS_PATH = Path(__file__).parent / "app.tcss"
    TITLE = "continuity-tui"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "next_rewritten", "Rewritten", key_display="r", id="next_rewritten"),
        Binding("R", "previous_rewritten", "Prev rewritten", show=False, key_display="R", id="previous_rewritten"),
        Binding("slash", "filter", "Filter", key_display="/", id="filter"),
        Binding("s", "sessions", "Sessions", id="sessions"),
        Binding("f", "toggle_follow", "Follow", id="follow"),
        Binding("e", "export", "Export", id="export"),
        Binding("p", "problems", "Problems", show=False, id="problems"),
        Binding("b", "toggle_metric", "Bytes/tokens", show=False, id="metric"),
        Binding("m", "zoom", "Zoom pane", show=False, id="zoom"),
        Binding("c", "copy", "Copy", show=False, id="copy"),
        Binding("ctrl+f", "search", "Search", show=False, id="search"),
        Binding("n", "next_match(True)", "Next match", show=False, id="next_match"),
        Binding("N", "next_match(False)", "Prev match", show=False, id="previous_match"),
        Binding("l", "jump('flatten', True)", "Next flatten", show=False, id="next_flatten"),
        Binding("L", "jump('flatten', False)", "Prev flatten", show=False, id="previous_flatten"),
        Binding("w", "jump('resend', True)", "Next re-send", show=False, id="next_resend"),
        Binding("W", "jump('resend', False)", "Prev re-send", show=False, id="previous_resend"),
        Binding("x", "jump('problem', True)", "Next problem", show=False, id="next_problem"),
        Binding("X", "jump('problem', False)", "Prev problem", show=False, id="previous_problem"),
        Binding("escape", "back", "Back", show=False, id="back"),
        Binding("question_mark", "help", "Help", key_display="?", id="help"),
        Binding("q", "quit", "Quit", priority=False, id="quit"),
    ]

    following: reactive[bool] = reactive(True, init=False)
    """Follow the live tail: the cursor sticks to the newest turn. Scrolling up turns it off."""

    def __init__(
        self,
        engine: EngineView,
        demo_writer: Any = None,
        *,
        live: bool = True,
        clock: Callable[[], float] = time.time,
        export_dir: Path | None = None,
        heartbeat: float = 0.5,
        max_bytes: int = 512 << 10,
        repaint_hz: float = 10.0,
        demo_dir: DemoDir | None = None,
        stdin_spool: Spool | None = None,
        config: Config | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        super().__init__()
        self.engine = engine
        self.prices = prices
        """`--prices FILE` on top of the bundled list prices (None: the bundled table): the waste figures' dollars."""
        self.demo_writer = demo_writer
        self.demo_dir = demo_dir
        """Where `--demo` replays (named on screen by the demo bar)."""
        self.stdin_spool = stdin_spool
        """Where `… | continuity-tui -` copies stdin (named on screen the same way)."""
        self.config = config if config is not None else Config()
        """The settings file's theme and keys (`Config()`: none read, none written, as tests and screenshots)."""
        self.keymap: dict[str, str] = {}
        self._opening: FilterBar | None = None
        """A bar just opened that has not got the focus yet (keys typed meanwhile are its text)."""
        self.last_export: list[Path] | None = None
        """The files the last `e` wrote (the copy menu offers their directory)."""
        self.search: RowFilter | None = None
        """The ctrl+f search: its matches are highlighted and n/N walk them; None when there is none."""
        self.live = live
        """False: read what is there once, then stop (screenshots, snapshot tests)."""
        self.clock = clock
        self.export_dir = export_dir
        self.heartbeat = heartbeat
        self.max_bytes = max_bytes
        self.repaint_interval = 1.0 / max(0.5, repaint_hz)
        self.snapshot = Snapshot.empty()
        self.row_filter = RowFilter()
        self.metric = "auto"  # auto | bytes | tokens
        self.loaded = threading.Event()
        """Set once the worker has read everything that was on disk at start (tests wait on it)."""
        self._consumed = threading.Event()
        self._consumed.set()
        self._painted_version = -2
        self._new_below = 0
        self._problems_screen: ProblemsScreen | None = None
        self._filter_timer: Any = None
        self._switch_interval: float | None = None
        self._session_rates: CallRates | None = None
        self._call_rates = CallRates()  # every session's calls: what the pane counts whenever there are transcripts
        self._inexact_for: object = None
        self._inexact: dict[str, str] = {}
        self._painted_problems = -2

    # ------------------------------------------------------------------ layout
    @property
    def main(self) -> Screen[Any]:
        """The dashboard screen: queries go here even while a detail or help screen is on top."""
        return self.screen_stack[0]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Dashboard keys work on the dashboard; over a detail only r/R do (they move to the next turn)."""
        if self._opening is not None and action not in ("quit", "command_palette"):
            return False  # keys typed right after / or ctrl+f are the bar's text (see `on_key`)
        if action not in DASHBOARD_ACTIONS:
            return True
        if isinstance(self.screen, DetailScreen) and action in ("next_rewritten", "previous_rewritten", "jump", "copy"):
            return True
        return self.screen is self.main

    def compose(self) -> ComposeResult:
        """The bands of `tui.panes.PANES`, in registry order."""
        with Horizontal(id="top"):
            yield from map(_build, in_slot("top"))
        yield from map(_build, in_slot("graph"))
        with Horizontal(id="middle"):
            yield from map(_build, in_slot("middle"))
        yield FilterBar(id="filter")
        yield FilterBar(id="search", placeholder=SEARCH_PLACEHOLDER)
        if self.demo_dir is not None:
            homes = getattr(self.demo_writer, "homes", None)
            yield DemoBar(str(self.demo_dir.path), kept=self.demo_dir.kept, homes=homes() if homes else None,
                          id="demo-bar")  # fmt: skip
        elif self.stdin_spool is not None:
            yield DemoBar(str(self.stdin_spool.path), kept=False, label="stdin copied to ", id="demo-bar")
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        for entry in PANES:
            widget = self.main.query_one(f"#{entry.id}")
            if not widget.border_title:  # (the graph and the rates name what they measure themselves)
                widget.border_title = entry.title
        self.main.query_one("#sessions", SessionList).border_subtitle = "turns · resend · R"
        self._apply_size_classes()
        self._apply_config()
        self.main.query_one(TurnTable).focus()
        self._update_status()
        if self.live:
            self._switch_interval = sys.getswitchinterval()
            sys.setswitchinterval(SWITCH_INTERVAL_S)
        if self.demo_writer is not None:
            self.demo_writer.start()
        if self.live:
            self._exit_on_signals()
        self._ingest()

    def _exit_on_signals(self) -> None:
        """SIGTERM (kill, a supervisor), SIGHUP and a terminal that is gone quit like `q` does: the terminal is
        restored and the workers stop; if that cannot finish, the process ends anyway (`tui.exit_watch`)."""
        from tui.exit_watch import ExitWatch

        loop = asyncio.get_running_loop()
        self._exit_watch = ExitWatch(self.exit, loop.call_soon_threadsafe)
        self._exit_watch.start()

    async def action_quit(self) -> None:
        """Quit: the ingest worker is told to stop first, so it ends while Textual tears the screen down."""
        self._stop_ingest()
        self.exit()

    def _stop_ingest(self) -> None:
        """Cancel the ingest worker and wake it from its heartbeat wait: the process exits only once that thread
        has returned (asyncio's executor shutdown), which waited out up to a heartbeat (0.5 s) on every quit."""
        for worker in self.workers:
            if worker.group == "ingest":
                worker.cancel()
        self.engine.wake()

    def on_unmount(self) -> None:
        self._stop_ingest()  # (a quit by a signal or a lost terminal: Textual has cancelled the workers)
        watch = getattr(self, "_exit_watch", None)
        if watch is not None:
            watch.stop()
        if self._switch_interval is not None:
            sys.setswitchinterval(self._switch_interval)
        if self.demo_writer is not None:
            stop = getattr(self.demo_writer, "stop", None)
            if callable(stop):
                stop()

    def on_resize(self, event: events.Resize) -> None:
        # This handler runs before App._on_resize stores the new size: `self.size` is still the old one here
        # (at 160x45 -> 80x24 the table got the wide layout and 0 rows). The event carries the new size.
        self._apply_size_classes(event.size)
        self.call_after_refresh(self._update_graph)  # the graph's capacity is its width after the new layout

    def _apply_size_classes(self, size: Size | None = None) -> None:
        width, height = size if size is not None else self.size
        self.main.set_class(height < SHORT, "-short")
        self.main.set_class(width < WIDE, "-narrow")
        self.main.set_class(width < TIGHT, "-tight")
        for footer in self.main.query(Footer):
            footer.compact = width < 100  # every main key still fits on one line at 80 columns

    # ------------------------------------------------------------------ ingestion (worker thread)
    @work(thread=True, exclusive=True, group="ingest", exit_on_error=False, name="ingest")
    def _ingest(self) -> None:
        """All file IO and parsing: poll while there is backlog, else wait; post coalesced snapshots."""
        worker = get_current_worker()
        engine = self.engine
        builder = SnapshotBuilder(engine, self.clock, self.prices)
        last_post = 0.0
        last_freeze = 0.0
        posted_version: int | None = None
        posted: Snapshot | None = None
        while not worker.is_cancelled:
            result = engine.poll(self.max_bytes)
            backlog = result.lines > 0 or result.changed
            if result.lines and time.monotonic() - last_freeze >= 0.5 and gc.isenabled():
                last_freeze = self._settle_garbage()
            if not backlog and not self.loaded.is_set() and not self.live:
                engine.finish_pending()
            now = time.monotonic()
            version = engine.state.version
            changed = version != posted_version
            # during a backfill the screen changes every batch: repaint less often (4/s), so rendering does not
            # compete with parsing for the GIL; live tails keep the full rate
            interval = max(self.repaint_interval, BACKFILL_REPAINT_S) if backlog else self.repaint_interval
            due = now - last_post >= interval
            if due and (changed or now - last_post >= 1.0) and (self._consumed.is_set() or now - last_post > 2.0):
                with engine.lock:
                    snapshot = builder.build()
                if snapshot is not posted:  # the same object: nothing moved, not even the clock
                    posted = snapshot
                    self._consumed.clear()
                    self.post_message(SnapshotReady(snapshot))
                last_post, posted_version = now, snapshot.version
                changed = False
                if backlog:
                    time.sleep(POST_YIELD_S)  # let the UI repaint without fighting this thread for the GIL
            if not backlog:
                if not self.loaded.is_set() and not changed:
                    self.loaded.set()
                    if self.live:
                        self._park_backfill(engine)
                if not self.live and not changed:
                    return
            if backlog:
                time.sleep(0)  # let the UI thread take the GIL between chunks of a backfill
                continue
            timeout = self.heartbeat
            if changed:
                timeout = max(0.01, min(timeout, self.repaint_interval - (time.monotonic() - last_post)))
            engine.wait(timeout)

    def _settle_garbage(self) -> float:
        """After a poll that read lines (at most every 0.5 s): during the backfill, freeze what was read (it is
        long-lived: full collections need not walk it again); once loaded, collect instead. A freeze keeps
        for good whatever is tracked at that moment, garbage included, and a live dashboard's objects are
        mostly the screen's: Textual's strips hold themselves in their own caches (cyclic), so every strip a
        freeze caught was never freed once its cache let it go. Freezing every 0.5 s of a live tail grew the
        RSS ~290 B a line (5,000 lines/s), collecting ~120 B, most of it the columns and caches that fill
        once. A collection walks only what is not frozen, 5-30 ms of CPU here; when what survives it is many
        objects (a big file read live), they are frozen, as in the backfill. Many is a count, not a time: with a
        20 ms wall-time rule the collections of a loaded machine froze ~35,000 of the screen's objects in 30 s
        of a 5,000 lines/s tail (never freed: +4 MB, ~30 B a line), and even their CPU time passes 20 ms at
        times under load. Returns when it was done (monotonic)."""
        if not self.loaded.is_set():
            gc.freeze()  # what was read is long-lived: keep full collections from walking it again
            return time.monotonic()
        gc.collect()
        if len(gc.get_objects(generation=2)) > LIVE_FREEZE_OBJECTS:
            gc.freeze()
        return time.monotonic()

    @staticmethod
    def _park_backfill(engine: EngineView) -> None:
        """Park what the backfill read to its end now, not at the engine's next periodic check (every 30 s).

        The sessions read since the last check are many after a big backfill (parking them took ~0.2 s of CPU
        on a 1 GB history): done now it joins the backfill's own burst instead of landing, up to 30 s later,
        in what should be a quiet dashboard. Same rule and threshold as the engine's check (`Engine.park_idle`).
        """
        if engine.park_after is not None:
            engine.park_idle(engine.park_after)

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            error = event.worker.error
            self.notify(f"{event.worker.name} failed: {type(error).__name__}: {error}", title="Error",
                        severity="error", markup=False, timeout=10)  # fmt: skip

    # ------------------------------------------------------------------ snapshots (UI thread)
    def on_snapshot_ready(self, message: SnapshotReady) -> None:
        snapshot = message.snapshot
        self._consumed.set()
        previous = self.snapshot
        self.snapshot = snapshot
        self._show_rates()
        if snapshot.version != self._painted_version:
            self._painted_version = snapshot.version
            table = self.main.query_one(TurnTable)
            before = table.row_count
            table.inexact = self._inexact_agents()
            table.set_rows(snapshot.rows, snapshot.rows_generation, follow=self.following)
            if not self.following and len(snapshot.rows) >= len(previous.rows):
                self._new_below += max(0, table.row_count - before)
            sessions = self.main.query_one(SessionList)
            sessions.set_sessions(snapshot.sessions)
            self._update_directives()
            self._update_graph()
        if snapshot.version != self._painted_problems or snapshot.pending is not previous.pending:
            self._painted_problems = snapshot.version
            if self._problems_screen is not None and self._problems_screen.is_attached:
                status = snapshot.status
                self._problems_screen.show(snapshot.problems, status.problems_total, status.roots, snapshot.pending,
                                           status.pending)  # fmt: skip
        self._update_status()

    def _show_rates(self) -> None:
        """The calls of every session, or of the chosen one (the log lines mostly carry no session id); the log's
        own figures where only logs were read. Counting calls, the log's share is named beside them."""
        snapshot = self.snapshot
        log = snapshot.rates
        if self._session_rates is not None:
            rates = self._session_rates.update(snapshot.rows, snapshot.rows_generation, snapshot.wall_ms,
                                               logs_only=snapshot.logs_only)  # fmt: skip
        elif snapshot.logs_only or not snapshot.sessions:
            rates = log
        else:
            rates = self._call_rates.update(snapshot.rows, snapshot.rows_generation, snapshot.wall_ms)
            if log.events:
                rates = replace(rates, log_events=log.events, log_share=log.resend_share)
        self.main.query_one(RatesPane).show(rates)

    def _selected_sessions(self) -> Iterable[Any]:
        key = self.row_filter.session_key
        return [s for s in self.snapshot.sessions if key is None or s.key == key]

    def _update_directives(self) -> None:
        largest = self.snapshot.largest
        if largest is not None and self.row_filter.session_id not in (None, largest.session_id):
            largest = None  # the largest payload (and the simulation) is another session's
        self.main.query_one(DirectivePane).show(self._selected_sessions(), largest)
        waste = self.snapshot.waste
        cache = waste is not None and waste.stats.calls > 0
        self.main.set_class(cache, "-cache")
        self.main.set_class(not cache, "-nocache")
        self.main.query_one(WastePane).show(waste, self.snapshot.sessions, self.row_filter.session_key)

    def _update_status(self) -> None:
        table = self.main.query_one(TurnTable)
        state = StatusState(
            following=self.following,
            new_below=self._new_below,
            rows=len(table.rows),
            shown=table.row_count,
            filter_text=self.row_filter.describe(),
            search_text=self.search.text if self.search is not None else "",
            matches=table.matches if self.search is not None else 0,
            waste=self._waste_line(),
        )
        self.main.query_one(StatusLine).show(self.snapshot.status, state)

    def _waste_line(self) -> str:
        """The waste figure for the status line, only where the Waste pane is hidden (too narrow) and calls have
        cache figures: '$0.49 · 109K tok wasted'."""
        waste = self.snapshot.waste
        if waste is None or waste.stats.calls <= 0 or not self.main.has_class("-tight"):
            return ""
        stats = waste.stats
        return f"waste {usd(stats.excess_cost)} of {usd(stats.actual)} · {short_bytes(stats.excess)} tok"

    def _update_graph(self) -> None:
        """The graph shows the turns around the table's cursor (the newest ones while following)."""
        table = self.main.query_one(TurnTable)
        graph = self.main.query_one(PayloadGraph)
        capacity = graph.capacity
        total = table.row_count
        if self.following or total <= capacity:
            start = max(0, total - capacity)
        else:
            start = max(0, min(table.cursor - capacity * 3 // 4, total - capacity))
        window = [table.row_at(i) for i in range(start, min(total, start + capacity))]
        turns = [row for row in window if isinstance(row, Turn)]
        inexact_of = self._inexact_agents()
        inexact = tuple(sorted({agent for t in turns if (agent := inexact_of.get(t.session)) is not None}))
        metric = self.metric
        if metric == "auto":
            # bytes when most turns have them (reconstructed prompts) and they are exact; senpi's diagnostics alone
            # only size flatten/bootstrap calls, and a graph of spikes over gaps hides the deltas, so tokens then;
            # and tokens for an agent whose transcripts hold no system prompt or tools (37 bytes shown for a Claude
            # Code call of 25,353 prompt tokens)
            sized = sum(1 for t in turns if payload_bytes(t) is not None)
            exact = not inexact and (not turns or sized * 2 >= len(turns))  # (no flip from an empty start)
            metric = "bytes" if exact else "tokens"
        values: list[int | None] = []
        for row in window:
            if not isinstance(row, Turn):
                values.append(None)
            else:
                values.append(payload_bytes(row) if metric == "bytes" else prompt_tokens(row))
        selected = table.cursor - start if total else None
        kinds = tuple(row_kind(r) if r else None for r in window)
        graph.show(GraphData(tuple(values), kinds, selected, metric, inexact))

    def _inexact_agents(self) -> dict[str, str]:
        """session id -> agent name, for the sessions of agents whose transcripts give no byte-exact payload (per
        snapshot's session list: the graph asks on every cursor move)."""
        sessions = self.snapshot.sessions
        if self._inexact_for is not sessions:
            self._inexact_for = sessions
            self._inexact = {s.session_id: s.agent for s in sessions if not s.payload_exact}
        return self._inexact

    # ------------------------------------------------------------------ table events
    @on(RowList.Highlighted, "#turns")
    def _cursor_moved(self) -> None:
        self._update_graph()

    @on(RowList.Moved, "#turns")
    def _user_moved(self, event: RowList.Moved) -> None:
        self.following = event.to_end

    @on(RowList.Selected, "#turns")
    def _open_turn(self, event: RowList.Selected) -> None:
        self.action_open()

    @on(RowList.Selected, "#sessions")
    def _pick_session(self, event: RowList.Selected) -> None:
        sessions = self.main.query_one(SessionList)
        summary = sessions.session_at(event.index)
        self._set_session(summary.key if summary else None, summary.session_id if summary else None)
        if self.size.width < WIDE:
            sessions.remove_class("-open")
        self.main.query_one(TurnTable).focus()

    def _set_session(self, key: str | None, session_id: str | None) -> None:
        self.row_filter = self.row_filter.with_session(key, session_id)
        self._session_rates = CallRates(session_id) if session_id is not None else None
        self.main.query_one(SessionList).set_active(key)
        self._apply_filter()
        self._update_directives()
        self._show_rates()

    def watch_following(self, following: bool) -> None:
        if following:
            self._new_below = 0
            table = self.main.query_one(TurnTable)
            if table.row_count:
                table.move_to(table.row_count - 1)
        self._update_status()
        self._update_graph()

    # ------------------------------------------------------------------ filter
    @on(Input.Changed, "#filter")
    def _filter_typed(self, event: Input.Changed) -> None:
        # A Changed message can arrive after Esc or Enter closed the bar (messages bubble through the DOM
        # after the key that closed it): only an open bar's current text may become the filter.
        if self._filter_timer is not None:
            self._filter_timer.stop()
            self._filter_timer = None
        bar = self.main.query_one("#filter", FilterBar)
        if not bar.has_class("-open"):
            return
        text = event.value

        def apply() -> None:
            if bar.has_class("-open") and bar.value == text:
                self._set_filter_text(text)

        self._filter_timer = self.set_timer(0.15, apply)

    @on(Input.Submitted, "#filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        self._set_filter_text(event.value)
        self.main.query_one("#filter", FilterBar).close()
        self.main.query_one(TurnTable).focus()

    @on(FilterBar.Cancelled)
    def _bar_cancelled(self, event: FilterBar.Cancelled) -> None:
        bar = event.bar
        if bar.id == "search":
            self._set_search(bar.before)
        else:
            if self._filter_timer is not None:
                self._filter_timer.stop()
            self._set_filter_text(bar.before)
        bar.close()
        self.main.query_one(TurnTable).focus()

    # ------------------------------------------------------------------ search (ctrl+f, n/N)
    @on(Input.Changed, "#search")
    def _search_typed(self, event: Input.Changed) -> None:
        """Matches light up as you type (the search hides nothing: that is what the filter is for)."""
        if self.main.query_one("#search", FilterBar).has_class("-open"):
            self._set_search(event.value)

    @on(Input.Submitted, "#search")
    def _search_done(self, event: Input.Submitted) -> None:
        self._set_search(event.value)
        self.main.query_one("#search", FilterBar).close()
        self.main.query_one(TurnTable).focus()
        if self.search is not None:
            self._jump(self.search.matches, "match", forward=True)

    def _set_search(self, text: str) -> None:
        self.search = parse(text) if text.strip() else None
        self.main.query_one(TurnTable).set_search(self.search)
        self._update_status()

    def action_search(self) -> None:
        self._open_bar(self.main.query_one("#search", FilterBar), self.search.text if self.search is not None else "")

    def _open_bar(self, bar: FilterBar, text: str) -> None:
        """Open the filter or search bar. Textual moves the focus on its next turn, after the keys already
        queued: typed or pasted fast ("/session:0198" from tmux), they went to the table and ran `s`, `e` (an
        export)... Until the bar has the focus, those keys are its text (`on_key`), not dashboard keys."""
        bar.open(text)
        self._opening = bar

        def settled() -> None:  # (the focus lands within a frame; never leave the dashboard's keys off)
            if self._opening is bar:
                self._opening = None

        self.set_timer(0.5, settled)

    def on_key(self, event: events.Key) -> None:
        bar = self._opening
        if bar is None:
            return
        if bar.has_focus:
            self._opening = None
            return
        event.stop()
        event.prevent_default()
        if event.key == "enter":
            self._opening = None
            bar.focus()
            self.call_later(bar.action_submit)
        elif event.key == "escape":
            self._opening = None
            bar.action_cancel()
        elif event.key == "backspace":
            bar.value = bar.value[:-1]
            bar.cursor_position = len(bar.value)
        elif event.is_printable and event.character:
            bar.value += event.character
            bar.cursor_position = len(bar.value)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if self._opening is not None and event.widget is self._opening:
            self._opening = None

    def action_next_match(self, forward: bool) -> None:
        if self.search is None:
            self.notify("no search: ctrl+f searches the turns (n/N then walk the matches)", markup=False, timeout=3)
            return
        self._jump(self.search.matches, "match", forward=forward)

    def _set_filter_text(self, text: str) -> None:
        parsed = parse(text)
        self.row_filter = parsed.with_session(self.row_filter.session_key, self.row_filter.session_id)
        self._apply_filter()

    def _apply_filter(self) -> None:
        table = self.main.query_one(TurnTable)
        table.set_filter(self.row_filter, follow=self.following)
        self._update_graph()
        self._update_status()

    # ------------------------------------------------------------------ actions
    def action_next_rewritten(self) -> None:
        self._jump(is_rewritten, "rewritten turn", forward=True)

    def action_previous_rewritten(self) -> None:
        self._jump(is_rewritten, "rewritten turn", forward=False)

    def action_jump(self, what: str, forward: bool) -> None:
        """`l`/`L` flatten, `w`/`W` re-send (fork, flatten, re-send), `x`/`X` the call next to a bad line."""
        if what == "problem":
            self._jump_problem(forward=forward)
        elif what == "flatten":
            self._jump(lambda row: row_kind(row) == "flatten", "flatten", forward=forward)
        else:
            self._jump(lambda row: row_kind(row) in RESENDS, "re-send", forward=forward)

    def _jump(self, predicate: Callable[[Any], bool], noun: str, *, forward: bool) -> bool:
        """Like a search in an editor: the next match after the cursor, wrapping around once."""
        table = self.main.query_one(TurnTable)
        index = table.find(predicate, forward=forward)
        if index is None:
            index = table.find(predicate, forward=forward, start=-1 if forward else table.row_count)
            if index is None or index == table.cursor:
                message = f"no {noun}" if index is None else f"this is the only {noun}"
                self.notify(f"{message} in view", markup=False, timeout=3)
                return False
            self.notify(f"wrapped around to the {'first' if forward else 'last'} {noun}", markup=False, timeout=2)
        self.following = False
        table.move_to(index)
        if isinstance(self.screen, DetailScreen):
            row = table.current
            if isinstance(row, Turn):
                self.switch_screen(self._detail(row))
            return True
        table.focus()
        return True

    def _jump_problem(self, *, forward: bool) -> None:
        """To the call a bad line sits after in its file, and say which line and why it is bad."""
        snapshot = self.snapshot
        near: dict[tuple[str, int], Problem] = {}
        for problem, key in zip(snapshot.problems, snapshot.problem_rows, strict=False):
            if key is not None:
                near.setdefault(key, problem)  # (newest first: the newest problem at a row is named)
        if not near:
            where = "no problem" if not snapshot.status.problems_total else "no problem next to a call in view"
            self.notify(f"{where} (p lists them all)", markup=False, timeout=3)
            return
        if self._jump(lambda row: row_key(row) in near, "call next to a bad line", forward=forward):
            row = self.main.query_one(TurnTable).current
            problem = near.get(row_key(row)) if row is not None else None
            if problem is not None:
                line = f":{problem.line}" if problem.line is not None else ""
                offset = f" @{problem.offset:,}" if problem.offset is not None else ""
                where = relative(problem.path, snapshot.status.roots)  # as the problems screen names it
                text = f"after this call: {shown(where, 200)}{line}{offset} {shown(problem.error, 200)}"
                self.notify(text, title="Problem", severity="warning", markup=False, timeout=6)

    def action_open(self) -> None:
        table = self.main.query_one(TurnTable)
        row = table.current
        if not isinstance(row, Turn):
            if row is not None:
                self.notify("log-only row: no transcript for this call, nothing to drill into",
                            markup=False, timeout=4)  # fmt: skip
            return
        self.following = False
        self.push_screen(self._detail(row))

    def _detail(self, turn: Turn) -> DetailScreen:
        summary = next((s for s in self.snapshot.sessions if s.session_id == turn.session), None)
        return DetailScreen(turn, summary.cwd if summary else None, summary.key if summary else None, self.engine)

    # ------------------------------------------------------------------ copy (c)
    def action_copy(self) -> None:
        """The copy menu for the selected call (the one open in a detail view), the last export, the data dir."""
        row = self.screen.turn if isinstance(self.screen, DetailScreen) else self.main.query_one(TurnTable).current
        export = self.last_export
        data = self.demo_dir.path if self.demo_dir is not None else (
            self.stdin_spool.path if self.stdin_spool is not None else None)  # fmt: skip
        options = choices(row, export=str(export[0].parent) if export else None,
                          data_dir=str(data) if data is not None else None)  # fmt: skip
        if not options:
            self.notify("nothing to copy yet: no call selected, no export", markup=False, timeout=3)
            return

        def chosen(what: str | None) -> None:
            if what is not None:
                self._copy(what, row, export, data)

        self.push_screen(CopyScreen(options), chosen)

    def _copy(self, what: str, row: Any, export: Any, data: Path | None) -> None:
        if what in ("commit", "capture") or (what == "diff" and not row.commit.diff):
            self._copy_json(what, row)  # (a diff not recorded is computed from the two sides re-read from disk)
            return
        text = {
            "summary": lambda: summary_text(row),
            "diff": lambda: diff_text(row),
            "fingerprints": lambda: fingerprints_text(row),
            "export": lambda: str(export[0].parent),
            "data_dir": lambda: str(data),
        }[what]()
        self._to_clipboard(what, text)

    def _to_clipboard(self, what: str, text: str) -> None:
        clean = inert(text)
        self.copy_to_clipboard(clean)
        lines = clean.count("\n") + 1
        self.notify(f"copied {what.replace('_', ' ')}: {len(clean):,} characters, {lines:,} line"
                    f"{'s' if lines != 1 else ''} (through the terminal, OSC 52)", markup=False, timeout=4)  # fmt: skip

    @work(thread=True, group="copy", exit_on_error=False, name="copy")
    def _copy_json(self, what: str, turn: Turn) -> None:
        """Re-read the message from disk (worker thread: IO, and the commit analysis under the engine lock)."""
        from core.agents import drilldown_for

        summary = next((s for s in self.snapshot.sessions if s.session_id == turn.session), None)
        with self.engine.lock:
            session = self.engine.state.sessions.get(summary.key) if summary is not None else None
            load = drilldown_for(session.agent.name if session is not None else None)
            loaded = load(turn, session, self.engine.reread)
        if what == "diff":
            from core.kernel.diff import diff

            both = loaded.capture is not None and loaded.commit is not None
            changes = diff(loaded.capture, loaded.commit) if both else []
            self.call_from_thread(self._to_clipboard, "diff", diff_text(turn, changes))
            return
        value = loaded.commit if what == "commit" else loaded.capture
        if value is None:
            self.call_from_thread(self.notify, f"the {what} could not be re-read from disk", markup=False, timeout=4)
            return
        self.call_from_thread(self._to_clipboard, f"{what} JSON", json_text(value))

    def action_filter(self) -> None:
        self._open_bar(self.main.query_one("#filter", FilterBar), self.row_filter.text)

    def action_sessions(self) -> None:
        sessions = self.main.query_one(SessionList)
        if self.size.width < WIDE:
            if sessions.has_class("-open") and sessions.has_focus:
                sessions.remove_class("-open")
                self.main.query_one(TurnTable).focus()
                return
            sessions.add_class("-open")
        if sessions.has_focus:
            self.main.query_one(TurnTable).focus()
        else:
            sessions.focus()

    def action_toggle_follow(self) -> None:
        self.following = not self.following

    def action_toggle_metric(self) -> None:
        current = self.main.query_one(PayloadGraph).data.metric
        self.metric = "tokens" if current == "bytes" else "bytes"
        self._update_graph()

    def action_zoom(self) -> None:
        """`m`: the focused pane (the turn table with its header, or the sessions) full screen, or back."""
        if self.main.maximized is not None:
            self.main.minimize()
            return
        focused = self.main.focused
        if focused is not None:
            self.main.maximize(focused)

    def action_back(self) -> None:
        if self.main.maximized is not None:
            self.main.minimize()
            return
        sessions = self.main.query_one(SessionList)
        if sessions.has_focus or (sessions.has_class("-open") and self.size.width < WIDE):
            sessions.remove_class("-open")
            self.main.query_one(TurnTable).focus()
        elif self.search is not None:  # Esc clears the highlight first, then the filter
            self._set_search("")
        elif self.row_filter.active:
            self._set_filter_text("")
            if self.row_filter.session_id is not None:
                self._set_session(None, None)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            path = self.config.path
            settings = str(path) if path is not None else None
            self.push_screen(HelpScreen(self.active_keys(), settings, frozenset(self.keymap)))

    # ------------------------------------------------------------------ settings (tui/config.py)
    def active_keys(self) -> dict[str, str]:
        """Every binding id with its keys as they are now (the settings file's `[keys]` over the defaults)."""
        out: dict[str, str] = {}
        for owner in BINDING_OWNERS:
            for binding in owner.BINDINGS:
                if isinstance(binding, Binding) and binding.id is not None:
                    out[binding.id] = self.keymap.get(binding.id, binding.key)
        return out

    def _apply_config(self) -> None:
        """The remembered theme and remapped keys; what is wrong with the file is said once, on screen."""
        config = self.config
        problems = list(config.problems)
        if config.keys:
            known = set(self.active_keys())
            unknown = sorted(set(config.keys) - known)
            if unknown:
                problems.append(f"{config.path}: [keys] {', '.join(unknown)}: no such action "
                                f"(the ids are listed in the help, ?)")  # fmt: skip
            self.keymap = {k: v for k, v in config.keys.items() if k in known}
            self.set_keymap(self.keymap)
        if config.theme:
            if config.theme in self.available_themes:
                self.theme = config.theme
            else:
                problems.append(f"{config.path}: theme {config.theme!r} is not one of "
                                f"{', '.join(sorted(self.available_themes))}")  # fmt: skip
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        for problem in problems:
            self.notify(problem, title="Settings", severity="warning", markup=False, timeout=12)

    def _theme_changed(self, theme: Theme) -> None:
        if self.config.path is None or theme.name == self.config.theme:
            return
        self.config.theme = theme.name
        error = save_theme(self.config.path, theme.name)
        if error is not None:
            self.notify(error, title="Settings", severity="warning", markup=False, timeout=10)

    def action_problems(self) -> None:
        status = self.snapshot.status
        screen = ProblemsScreen(self.snapshot.problems, status.problems_total, status.roots, self.snapshot.pending,
                                status.pending)  # fmt: skip
        self._problems_screen = screen
        self.push_screen(screen)

    def action_export(self) -> None:
        self.notify("exporting snapshot…", markup=False, timeout=2)
        self._export()

    @work(thread=True, group="export", exit_on_error=False, name="export")
    def _export(self) -> None:
        """Write JSON + Markdown + HTML into a new directory (worker thread: it reads state and disk)."""
        from core.report import ReportOptions, build_report, write_report  # the dashboard starts without them

        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(self.clock()))
        base = self.export_dir if self.export_dir is not None else Path.cwd()
        directory = base / f"continuity-snapshot-{stamp}"
        suffix = 1
        while directory.exists():
            suffix += 1
            directory = base / f"continuity-snapshot-{stamp}-{suffix}"
        row_filter = self.row_filter
        try:
            # what the live tail still holds back is counted as `report` counts it (it said 5 where report said 6)
            pending = tuple(self.engine.pending_problems())
            options = ReportOptions(
                session=row_filter.session_id,
                pending=pending,
                turn_filter=row_filter.matches if row_filter.terms else None,  # the table's `/` filter, as on screen
                filter_text=row_filter.text or None,
                prices=self.prices,
            )
            report = build_report(self.engine, options)
            paths = write_report(report, directory)
        except Exception as err:
            self.post_message(ExportDone([], f"{type(err).__name__}: {err}"))
            return
        self.post_message(ExportDone(paths, summary=export_summary(report, row_filter, len(self.snapshot.rows))))

    def on_export_done(self, message: ExportDone) -> None:
        if message.error is not None:
            self.notify(f"export failed: {message.error}", severity="error", markup=False, timeout=8)
            return
        if not message.paths:
            return
        directory = message.paths[0].parent
        names = ", ".join(p.name for p in message.paths)
        self.notify(f"{directory}/: {names}\n{message.summary}", title="Exported", markup=False, timeout=12)
        self.last_export = message.paths

    # ------------------------------------------------------------------ command palette
    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        # Textual's own "Keys" (its key panel) stood next to ours: one "Keys" entry, the help screen's
        yield from (command for command in super().get_system_commands(screen) if command.title != "Keys")
        yield SystemCommand("Next rewritten turn", "Jump to the next turn whose commit was rewritten (r)",
                            self.action_next_rewritten)  # fmt: skip
        yield SystemCommand("Previous rewritten turn", "Jump to the previous rewritten turn (R)",
                            self.action_previous_rewritten)  # fmt: skip
        yield SystemCommand("Open selected turn", "Diff, fingerprints, why and payload of the turn (Enter)",
                            self.action_open)  # fmt: skip
        yield SystemCommand("Filter turns", "Filter by kind, reason, session, flags or text (/)", self.action_filter)
        yield SystemCommand("Clear filter", "Show every turn of every session (Esc)", self._clear_filter)
        yield SystemCommand("Sessions", "Show all sessions or one (s)", self.action_sessions)
        yield SystemCommand("Follow / pause", "Follow the live tail or hold the view (f, End)",
                            self.action_toggle_follow)  # fmt: skip
        yield SystemCommand("Export snapshot", "Write JSON + Markdown + HTML into a new directory (e)",
                            self.action_export)  # fmt: skip
        yield SystemCommand("Problems", "Bad lines with file:line, offset and reason (p)", self.action_problems)
        yield SystemCommand("Payload graph: bytes / tokens", "Switch what the graph measures (b)",
                            self.action_toggle_metric)  # fmt: skip
        yield SystemCommand("Keys", "Help: every key, pane, column, flag, kind, reason and term (?)", self.action_help)
        for entry in zoomable():
            yield SystemCommand(f"Zoom {entry.title.lower()}", "Show it full screen; Esc restores the dashboard",
                                lambda pane_id=entry.id: self._zoom(pane_id))  # fmt: skip
        for summary in self.snapshot.sessions[:50]:
            label = f"Session {summary.session_id[:8]}"
            yield SystemCommand(label, "Limit the table, graph, directives and rates to this session",
                                lambda s=summary: self._set_session(s.key, s.session_id))  # fmt: skip

    def _zoom(self, pane_id: str) -> None:
        widget = self.main.query_one(f"#{pane_id}")
        if pane_id == "sessions" and self.size.width < WIDE:
            widget.add_class("-open")  # hidden beside a narrow table: shown first, then zoomed
        self.main.maximize(widget)

    def _clear_filter(self) -> None:
        self._set_filter_text("")
        self._set_session(None, None)


BINDING_OWNERS = (ContinuityApp, RowList, DetailScreen)
