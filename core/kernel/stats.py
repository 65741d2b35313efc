"""Aggregates over the continuity and close lines of the logs: counts, reasons, streaks, peak, rates.

Everything here is O(1) per line: streaks are closed as runs end, rates keep a bounded window.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field

from core.model import KINDS, RESEND_KINDS, CloseLine, ContinuityLine

RATE_WINDOW_MS = 10 * 60_000
PEAK_KINDS = frozenset({"flatten", "fork", "bootstrap"})


@dataclass(slots=True)
class Streak:
    """A maximal run of consecutive continuity lines with one (kind, reason)."""

    kind: str
    reason: str
    length: int
    start_ms: int | None
    end_ms: int | None
    start: str
    end: str
    count_first: int | None
    count_last: int | None


@dataclass(slots=True)
class Peak:
    value: int
    at: str
    at_ms: int | None
    kind: str


@dataclass
class LogStats:
    events: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)
    by_reason: dict[str, Counter[str]] = field(default_factory=dict)
    closes: Counter[str] = field(default_factory=Counter)
    streaks: list[Streak] = field(default_factory=list)  # finished runs that qualify
    run: Streak | None = None  # the current run (any kind), for "current streak"
    peak: Peak | None = None
    recent: deque[tuple[int, str]] = field(default_factory=lambda: deque(maxlen=100_000))
    last_ms: int | None = None

    def add_continuity(self, line: ContinuityLine) -> None:
        self.events += 1
        self.by_kind[line.kind] += 1
        reasons = self.by_reason.get(line.reason)
        if reasons is None:  # not setdefault: that builds a Counter per line, a third of this method's cost
            reasons = self.by_reason[line.reason] = Counter()
        reasons[line.kind] += 1
        if line.ts_ms is not None:
            self.recent.append((line.ts_ms, line.kind))
            self.last_ms = line.ts_ms if self.last_ms is None else max(self.last_ms, line.ts_ms)
        if line.count is not None and line.kind in PEAK_KINDS and (self.peak is None or line.count > self.peak.value):
            self.peak = Peak(line.count, line.ts, line.ts_ms, line.kind)
        run = self.run
        if run is not None and run.kind == line.kind and run.reason == line.reason:
            run.length += 1
            run.end, run.end_ms, run.count_last = line.ts, line.ts_ms, line.count
            return
        self._close_run()
        self.run = Streak(line.kind, line.reason, 1, line.ts_ms, line.ts_ms, line.ts, line.ts, line.count, line.count)

    def add_close(self, line: CloseLine) -> None:
        self.closes[line.reason] += 1

    def _close_run(self) -> None:
        if self.run is not None and _qualifies(self.run):
            self.streaks.append(self.run)

    def all_streaks(self) -> list[Streak]:
        """Finished runs plus the open one, longest first, then earliest."""
        return longest_first(self.streaks, self.run)

    def kinds(self) -> dict[str, int]:
        """All five kinds always, then any other kind seen."""
        out = {kind: self.by_kind.get(kind, 0) for kind in KINDS}
        for kind, n in self.by_kind.items():
            out.setdefault(kind, n)
        return out

    def resend_share(self) -> float | None:
        if not self.events:
            return None
        return round(sum(self.by_kind[k] for k in RESEND_KINDS) / self.events, 4)

    def rates_per_minute(self, now_ms: int) -> dict[str, float]:
        """Per-minute rate of each kind over the 10 minutes ending at `now_ms`."""
        start = now_ms - RATE_WINDOW_MS
        counts: Counter[str] = Counter()
        for ts, kind in reversed(self.recent):
            if ts < start:
                break
            if ts <= now_ms:
                counts[kind] += 1
        minutes = RATE_WINDOW_MS / 60_000
        return {kind: round(counts.get(kind, 0) / minutes, 2) for kind in self.kinds()}

    def window_end(self, wall_ms: int) -> int:
        """Rates end at wall-clock now while data is live, else at the newest line (historical logs)."""
        if self.last_ms is None or wall_ms - self.last_ms <= RATE_WINDOW_MS:
            return wall_ms
        return self.last_ms


def _qualifies(run: Streak) -> bool:
    return run.kind != "delta" and run.length >= 2


def longest_first(finished: list[Streak], run: Streak | None) -> list[Streak]:
    """The finished runs plus the open one if it qualifies, longest first, then earliest (the contract's order for
    `continuity.streaks` and `calls.streaks`)."""
    runs = list(finished)
    if run is not None and _qualifies(run):
        runs.append(run)
    runs.sort(key=lambda s: (-s.length, s.start_ms if s.start_ms is not None else 0, s.start))
    return runs


qualifies = _qualifies
