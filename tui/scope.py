"""The Rates pane's figures counted over calls: every session's, or one chosen session's (its rows).

The calls are the unit (issue 13): every provider call of every agent has a kind, so the pane counts them
whenever the history has transcripts, and the log's continuity lines only where nothing else was read (a bare
`logs/` dir). It used to count log lines only and said "no continuity lines read yet" beside hundreds of pi and
Claude Code verdicts. Choosing a session counts that session's calls (its log lines in logs-only mode): the
log lines mostly carry no session id, and 55.6 % re-sends showed for a session with none.

Incremental, like `view.summarize`: the rows that count are collected as rows are appended, the counts of all
but the newest `TAIL` are accumulated once, and the tail is recounted per snapshot (its kinds can still change
as later evidence arrives), so a live tail costs O(TAIL + rows in the rate window) per snapshot whatever the
history's length. Plain data: no Textual here.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from core.kernel.calls import kinds_of, resend_share
from core.kernel.stats import PEAK_KINDS, RATE_WINDOW_MS, Peak, Streak
from core.model import ABORTED, KINDS, RESEND, RESEND_KINDS, Turn
from tui.view import Rates, Row, row_count, row_kind, row_ms, row_reason, row_session

TAIL = 256
#: the kinds whose count (the messages the call sent) is a peak: a re-send's is the history processed again
CALL_PEAK_KINDS = PEAK_KINDS | {RESEND}


@dataclass(slots=True)
class _Prefix:
    upto: int = 0  # rows of `indices` counted into the fields below
    kinds: Counter[str] = field(default_factory=Counter)
    peak: Peak | None = None
    run: Streak | None = None  # the trailing run of the counted rows


class CallRates:
    """Rates of the calls of one session (`session_id`), or of every session (None); `update` takes each
    snapshot's rows (the same list grows by appends until its generation changes). In logs-only mode the rows are
    log lines, and those are counted instead."""

    def __init__(self, session_id: str | None = None) -> None:
        self.session_id = session_id
        self._generation = -1
        self._taken = 0  # rows of the list scanned
        self._indices: list[int] = []
        self._prefix = _Prefix()

    def update(self, rows: list[Row], generation: int, wall_ms: int, *, logs_only: bool = False) -> Rates:
        if generation != self._generation or len(rows) < self._taken:
            self._generation, self._taken, self._indices, self._prefix = generation, 0, [], _Prefix()
        sid = self.session_id
        indices = self._indices
        for i in range(self._taken, len(rows)):
            row = rows[i]
            if (sid is None or row_session(row) == sid) and (logs_only or isinstance(row, Turn)):
                indices.append(i)
        self._taken = len(rows)
        prefix = self._prefix
        stable = max(prefix.upto, len(indices) - TAIL)
        for i in indices[prefix.upto : stable]:
            _count(prefix, rows[i])
        prefix.upto = stable
        tail = _Prefix(kinds=Counter(prefix.kinds), peak=prefix.peak, run=_copy(prefix.run))
        for i in indices[stable:]:
            _count(tail, rows[i])
        return _rates(rows, indices, tail, wall_ms, sid, "log lines" if logs_only else "calls")


SessionRates = CallRates
"""One chosen session's rates (the name the pane's tests know)."""


def _copy(run: Streak | None) -> Streak | None:
    return None if run is None else Streak(run.kind, run.reason, run.length, run.start_ms, run.end_ms, run.start,
                                           run.end, run.count_first, run.count_last)  # fmt: skip


def _count(into: _Prefix, row: Row) -> None:
    kind = row_kind(row)
    if kind is None:
        return  # a copy of another session's call (pi's branched-session export): not a call of this history
    into.kinds[kind] += 1
    n = row_count(row)
    ms = row_ms(row)
    if n is not None and kind in CALL_PEAK_KINDS and (into.peak is None or n > into.peak.value):
        into.peak = Peak(n, "", ms, kind)
    reason = row_reason(row) or ""
    run = into.run
    if run is not None and run.kind == kind and run.reason == reason:
        run.length += 1
        run.end_ms, run.count_last = ms, n
    else:
        into.run = Streak(kind, reason, 1, ms, ms, "", "", n, n)


def _rates(rows: list[Row], indices: list[int], counted: _Prefix, wall_ms: int, scope: str | None,
           unit: str) -> Rates:  # fmt: skip
    kinds = counted.kinds
    events = sum(kinds.values())
    last_ms = next((ms for i in reversed(indices) if (ms := row_ms(rows[i])) is not None), None)
    # the pane's rule (LogStats.window_end): rates end now while data is live, else at the newest row
    end = wall_ms if last_ms is None or wall_ms - last_ms <= RATE_WINDOW_MS else last_ms
    start = end - RATE_WINDOW_MS
    recent: Counter[str] = Counter()
    for i in reversed(indices):
        ms = row_ms(rows[i])
        if ms is None:
            continue
        if ms < start:
            break
        kind = row_kind(rows[i])
        if kind is not None and ms <= end:
            recent[kind] += 1
    if unit == "calls":
        # every call kind in display order; a re-send share of the calls that reported usage (aborted left out)
        ordered = kinds_of(kinds)
        share = resend_share(kinds, digits=None)  # formatted once, from the exact ratio
        judged = events - kinds.get(ABORTED, 0)
    else:
        ordered = {kind: kinds.get(kind, 0) for kind in KINDS}
        for kind, n in kinds.items():
            ordered.setdefault(kind, n)
        share = sum(kinds[k] for k in RESEND_KINDS) / events if events else None
        judged = events
    minutes = RATE_WINDOW_MS / 60_000
    return Rates(
        events=events,
        kinds=ordered,
        per_minute={kind: round(recent.get(kind, 0) / minutes, 2) for kind in ordered},
        resend_share=share,
        run=counted.run,
        peak=counted.peak,
        window_end_ms=end,
        closes={},
        unit=unit,
        scope=scope,
        judged=judged,
    )
