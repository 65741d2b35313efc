"""What a report reads of the whole decision log, made once from the columns and kept beside them.

A report of every log line (no `--since/--until`) reads the log as two aggregates besides its counts: the
`continuity` section (counts, reasons, every streak longest first with its times as text, the peak, the closes,
the timeline) and, per session id the lines name, its first line and lines by kind (`named`: the sessions
only the log names, and each session's `log_lines`). Both are functions of the rows alone, in their order:
the report builds them (`core.report.build`), and the index stores them with the rows they were built from
(`core.index.logs`). The next report of the same rows (nothing appended since) reads them back instead of
walking the columns again: on the 1.1M-line log that is ~0.9 s of CPU (56,000 streaks sorted and their
112,000 times formatted, the timeline's 480 groups, 1.1M session codes counted) against ~0.05 s to decode.

`fits` is the whole rule: a view is used only for the exact rows it was made from. Rows are only ever
appended to a `LogState`, so the same number of continuity and close rows (and of events) in the state the
view was loaded into means the same rows; anything else and the report builds from the columns as a cold
read does (and the index stores the new view).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec import Struct

__all__ = ["LogView", "ViewSink"]


class LogView(Struct, dict=True):
    """The whole log's report aggregates, as of `rows` continuity rows, `closes` close rows, `events` events."""

    rows: int
    closes: int
    events: int
    named: dict[str, tuple[int, dict[str, int]]]
    """`core.report.calls.named_rows` of the rows: per session id named, (its first row, lines by kind)."""
    section: Callable[[], dict[str, Any]]
    """The report's `continuity` section without `attributed` and `closes_paired` (those read the pairing of
    lines with calls, which each run makes anew), every string already made inert and found free of secrets;
    made when asked (a stored one is decoded then: ~56,000 streaks held only while the report is built)."""
    json_section: Callable[[], dict[str, Any]] | None = None
    """The same section for a JSON report's writer (`core.report.write`): its `streaks` a `StoredJSON` of the
    JSON that writer lays out for them there, written as it is (a stored view's, checked when loaded). None when
    the view has no such JSON (built this run)."""

    def fits(self, rows: int, closes: int, events: int) -> bool:
        return (self.rows, self.closes, self.events) == (rows, closes, events)


ViewSink = Callable[[LogView], None]
"""Where a report hands the view it built from the columns (the index, which encodes it at once: the report
goes on to consume its sections)."""
