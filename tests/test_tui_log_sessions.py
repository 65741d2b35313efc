"""The dashboard's log-only sessions (`tui.view.LogSessions`) read from the columns a snapshot at a time: the
same summaries as reading the new rows one by one, whatever the snapshots cut, and a new summary object for each
session that got a line (the sessions pane counts by identity)."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

from core.kernel.logcols import LogColumns
from core.model import ContinuityLine, Where
from tui.view import LogSessions, SessionSummary


def _one_by_one(rows: object, agent_of: object) -> list[SessionSummary]:
    """The per-row reading the columnar one replaced (the reference)."""
    by: dict[str, SessionSummary] = {}
    for row in range(len(rows)):  # type: ignore[arg-type]
        sid = rows.session_id(row)  # type: ignore[attr-defined]
        if sid is None:
            continue
        found = by.get(sid)
        if found is None:
            summary = SessionSummary(f"log:{sid}", sid, None, agent_of(rows.where(row).path), log_only=True)  # type: ignore
        else:
            summary = replace(found, by_kind=Counter(found.by_kind))
        summary.by_kind[rows.kind_of(row)] += 1  # type: ignore[attr-defined]
        summary.log_lines += 1
        ms = rows.ms(row)  # type: ignore[attr-defined]
        if ms is not None:
            summary.first_ms = ms if summary.first_ms is None else min(summary.first_ms, ms)
            summary.last_ms = ms if summary.last_ms is None else max(summary.last_ms, ms)
        by[sid] = summary
    return list(by.values())


def _fields(summary: SessionSummary) -> tuple[object, ...]:
    return (summary.key, summary.session_id, summary.agent, list(summary.by_kind.items()), summary.log_lines,
            summary.first_ms, summary.last_ms, summary.log_only)  # fmt: skip


def test_log_sessions_read_by_snapshot_equal_the_rows_read_one_by_one() -> None:
    rng = random.Random(5)
    for _ in range(30):
        cols = LogColumns()
        rows = cols.continuity
        reader = LogSessions()
        known = {"s1"}
        before: dict[str, SessionSummary] = {}
        for _ in range(rng.randrange(1, 6)):  # snapshots, each after some rows
            for _ in range(rng.randrange(0, 80)):
                i = len(rows)
                ms = rng.choice([None, 1_000 + rng.randrange(100), 5, 2_000])
                sid = rng.choice([None, None, "s1", "s2", "s3", f"s{rng.randrange(9)}"])
                rows.append_line(ContinuityLine(Where(rng.choice(["/a/session.log", "/b/session.log"]), i + 1, i * 9, 8),
                                                "x", ms, rng.choice(["fork", "delta", "odd"]), "r", i, sid))  # fmt: skip
            shown = reader.update(rows, known, lambda path: path.split("/")[1])
            expected = [s for s in _one_by_one(rows, lambda path: path.split("/")[1]) if s.session_id not in known]
            assert [_fields(s) for s in shown] == [_fields(s) for s in expected]
            for summary in shown:  # a session that got no line keeps its object; one that did gets a new one
                old = before.get(summary.session_id)
                if old is not None:
                    assert (old is summary) == (old.log_lines == summary.log_lines)
            before = {s.session_id: s for s in shown}
