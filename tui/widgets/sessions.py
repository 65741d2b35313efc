"""The sessions pane: all sessions, or one, each with its calls, resend share, rewritten count and waste.

The share is that of the calls that re-sent history (fork, flatten, re-send) among those that reported usage,
for every agent: it counted fork and flatten only, and showed 0 % for pi ffae836b (10 re-sends) and mux.

The first row is "all sessions". Enter on a row limits the turn table, the graph, the directive pane and the
rates pane to that session (the rates then count the session's calls: the log lines carry no session id).
Most recently active sessions come first, because that is the one a user beside a live agent wants.

Where any session has calls with cache figures and the pane is wide enough (`WASTE_MIN` columns), each
row also gives the dollars its calls spent re-writing cache that was already written (`SessionSummary.waste`,
beyond cache hits at list prices; tokens where the model has no price), the Waste pane's per-session figure.
"""

from __future__ import annotations

import bisect
import os

from textual.content import Content

from core.kernel.calls import resends as resends_in
from core.model import ABORTED
from core.report.redact import shown
from tui.fmt import MUTED, cell, count, pct, share_style, short_id
from tui.view import SessionSummary
from tui.widgets.rowlist import RowList
from tui.widgets.waste import tokens as waste_tokens
from tui.widgets.waste import usd

#: the row width from which the waste column is shown (at 80x24 the pane is ~38 wide: ids and shares first)
WASTE_MIN = 38
WASTE_W = 8


def waste_cell(excess: int, excess_usd: float | None, calls: int) -> str:
    """'$0.44', '76,753t' (no price), '' (no call with cache figures), '–' (nothing written again)."""
    if not calls:
        return ""
    if not excess:
        return "–"
    return usd(excess_usd) if excess_usd is not None else waste_tokens(excess) + "t"


class SessionList(RowList):
    """Row 0 is all sessions; the others are `SessionSummary`s, newest activity first."""

    DEFAULT_CSS = """
    SessionList { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(empty_text="no sessions yet", id=id)
        self.sessions: list[SessionSummary] = []
        self.active_key: str | None = None  # the session the table is limited to (None = all)
        self.with_waste = False  # a session has calls with cache figures: the waste column is shown
        self._totals: tuple[int, int, int, str] | None = None  # the "all sessions" row, counted once per change
        self._counted: dict[str, tuple[SessionSummary, int, int, int]] = {}  # key -> (summary, its three counts)
        self._input: tuple[SessionSummary, ...] = ()  # the last `set_sessions` argument (the builder's order)
        self._keys: list[tuple[int, int]] = []  # its sort keys in screen order: (-last_ms, index in `_input`)

    @property
    def row_count(self) -> int:
        return 1 + len(self.sessions)

    def session_at(self, index: int) -> SessionSummary | None:
        """None for the "all sessions" row."""
        return self.sessions[index - 1] if 1 <= index <= len(self.sessions) else None

    def set_sessions(self, sessions: tuple[SessionSummary, ...]) -> None:
        current = self.session_at(self.cursor)
        current_key = current.key if current is not None else None
        ordered = self._order(sessions)
        if ordered is None:
            return  # the builder reuses a summary object until its session changes
        self.sessions = ordered
        self.with_waste = any(s.waste.calls for s in ordered)  # a column for all rows, or none (senpi only)
        self._totals = None
        self.rows_changed()
        if current_key is not None:
            for i, summary in enumerate(self.sessions, start=1):
                if summary.key == current_key:
                    self.move_to(i)
                    break

    def _order(self, sessions: tuple[SessionSummary, ...]) -> list[SessionSummary] | None:
        """`sessions` newest activity first (ties in the builder's order, as a stable sort leaves them), or None
        when nothing changed.

        A live snapshot usually replaces one or two summaries of the same sessions in the same order: those are
        moved (bisect on the sort key) instead of sorting thousands again (~1 ms per snapshot on the UI thread
        at 2,000 sessions)."""
        previous = self._input
        same = len(sessions) == len(previous) and all(a.key is b.key or a.key == b.key
                                                      for a, b in zip(sessions, previous, strict=True))  # fmt: skip
        if not same:
            self._input = sessions
            self._keys = sorted(_key(s, i) for i, s in enumerate(sessions))
            return [sessions[k[1]] for k in self._keys]
        changed = [i for i, (a, b) in enumerate(zip(sessions, previous, strict=True)) if a is not b]
        if not changed:
            return None
        keys = list(self._keys)
        for i in changed:
            old = _key(previous[i], i)
            at = bisect.bisect_left(keys, old)
            del keys[at]
            new = _key(sessions[i], i)
            bisect.insort(keys, new)
        self._input, self._keys = sessions, keys
        return [sessions[k[1]] for k in keys]

    def set_active(self, key: str | None) -> None:
        self.active_key = key
        self.invalidate()

    def _count_all(self) -> tuple[int, int, int, str]:
        """Turns, re-sends and calls with usage over all sessions. A summary object is counted once: the builder
        hands out a new one only when its session changed, so a live snapshot recounts one or two sessions, not
        thousands (summing every `by_kind` cost ~1 ms per snapshot on the UI thread at 2,000 sessions)."""
        counted = self._counted
        fresh: dict[str, tuple[SessionSummary, int, int, int]] = {}
        turns = resends = decided = calls = excess = 0
        excess_usd: float | None = None
        for s in self.sessions:
            if s.log_only:
                continue  # its log lines are not calls: the "all sessions" row counts calls
            entry = counted.get(s.key)
            if entry is None or entry[0] is not s:
                entry = (s, s.turns, resends_in(s.by_kind), sum(s.by_kind.values()) - s.by_kind.get(ABORTED, 0))
            fresh[s.key] = entry
            turns += entry[1]
            resends += entry[2]
            decided += entry[3]
            calls, excess = calls + s.waste.calls, excess + s.waste.excess
            if (cost := s.waste.excess_cost) is not None:
                excess_usd = (excess_usd or 0.0) + cost
        self._counted = fresh
        return turns, resends, decided, waste_cell(excess, excess_usd, calls)

    def render_row(self, index: int, width: int) -> Content:
        summary = self.session_at(index)
        if summary is None:
            if self._totals is None:  # thousands of sessions: not on every repaint of this row
                self._totals = self._count_all()
            turns, resends, decided, waste = self._totals
            share = resends / decided if decided else None
            mark = "●" if self.active_key is None else " "
            wide = self.with_waste and width >= WASTE_MIN
            name = cell("all sessions", max(4, width - 22 - (WASTE_W if wide else 0)))
            return Content.assemble(
                (mark, "$accent bold"), " ", (name, "bold"), cell(count(turns), 7, right=True),
                (cell(pct(share, 0), 6, right=True), share_style(share)), "    ",
                (cell(waste, WASTE_W, right=True), "$warning bold") if wide else "",
            )  # fmt: skip
        mark = "●" if summary.key == self.active_key else " "
        where = os.path.basename((summary.cwd or "").rstrip("/")) if summary.cwd else ""
        if summary.log_only:  # only the log names it: its count is of log lines, not calls
            where = "log only"
        label = short_id(summary.session_id) + (" " + shown(where, 40) if where else "")
        wide = self.with_waste and width >= WASTE_MIN
        name = cell(label, max(4, width - 22 - (WASTE_W if wide else 0)))
        stats = summary.waste
        waste = waste_cell(stats.excess, stats.excess_cost, stats.calls)
        rewritten = f"R{summary.rewritten}" if summary.rewritten else ""
        return Content.assemble(
            (mark, "$accent bold"),
            " ",
            (name, MUTED) if summary.log_only else name,
            cell(count(summary.log_lines if summary.log_only else summary.turns), 7, right=True),
            (cell(pct(summary.resend_share, 0), 6, right=True), share_style(summary.resend_share)),
            (cell(rewritten, 4, right=True), "$error" if rewritten else MUTED),
            (cell(waste, WASTE_W, right=True), "$warning" if stats.excess else MUTED) if wide else "",
        )


def _key(summary: SessionSummary, index: int) -> tuple[int, int]:
    """Newest activity first; ties keep the builder's order (what a stable sort by `-last_ms` gives)."""
    return (-(summary.last_ms or 0), index)
