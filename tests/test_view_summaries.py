"""Session summaries in snapshots: a session that grew is recounted at once; a late change to an old turn of a
session that did not grow is picked up within a few snapshots (a bounded number of turns per snapshot), never
lost; and when nothing but the clock moved the builder hands back the same snapshot.
"""

from __future__ import annotations

from typing import Any

from tui_fixtures import FakeEngine

from core.agents.senpi import AGENT as SENPI
from core.model import LoggedDecision, Turn, Where
from core.sources.reread import FileReread
from core.state import State
from tui import view
from tui.view import SnapshotBuilder


class Clock:
    def __init__(self) -> None:
        self.now = 1_790_000_000.0

    def __call__(self) -> float:
        return self.now


def _state(sessions: int, turns: int) -> State:
    state = State(FileReread())
    for s in range(sessions):
        key = f"/x/{s}.jsonl"
        session = state.session_for(key, f"sid-{s}", SENPI)
        for i in range(turns):
            session.turns.append(
                Turn(f"sid-{s}", i, None, None, 1_790_000_000_000 + i, Where(key, i + 2, 0),
                     logged=LoggedDecision("delta", "prefix_matched", 1), payload_bytes=100)
            )  # fmt: skip
        session.entries = turns
    state.version = 1
    return state


def test_late_updates_are_picked_up_within_a_bounded_number_of_snapshots(monkeypatch: Any) -> None:
    monkeypatch.setattr(view, "RECOUNT_TURNS_PER_SNAPSHOT", 50)
    state = _state(sessions=20, turns=10)
    clock = Clock()
    builder = SnapshotBuilder(FakeEngine(state), clock)
    first = builder.build()
    assert [s.payload_total for s in first.sessions] == [1000] * 20
    for session in state.sessions.values():  # an analysis updates old turns, no new entries
        session.turns[0].payload_bytes = 600
    state.version += 1
    seen: list[list[int]] = []
    for _ in range(6):
        clock.now += 1.5
        snapshot = builder.build()
        seen.append([s.payload_total for s in snapshot.sessions])
    # 50 turns per snapshot = 5 sessions of 10 turns: all 20 within four snapshots, oldest first
    assert seen[0].count(1500) == 5
    assert seen[3] == [1500] * 20
    assert seen[-1] == [1500] * 20


def test_a_session_that_grew_is_recounted_at_once(monkeypatch: Any) -> None:
    monkeypatch.setattr(view, "RECOUNT_TURNS_PER_SNAPSHOT", 1)
    state = _state(sessions=30, turns=5)
    clock = Clock()
    builder = SnapshotBuilder(FakeEngine(state), clock)
    builder.build()
    grown = state.sessions["/x/17.jsonl"]
    grown.turns.append(
        Turn("sid-17", 5, None, None, 1_790_000_000_010, Where("/x/17.jsonl", 8, 0),
             logged=LoggedDecision("fork", "assistant_rewritten", 3), payload_bytes=7)
    )  # fmt: skip
    grown.entries += 1
    state.version += 1
    clock.now += 0.1
    snapshot = builder.build()
    summary = next(s for s in snapshot.sessions if s.key == "/x/17.jsonl")
    assert summary.turns == 6
    assert summary.payload_total == 507
    assert [s.key for s in snapshot.sessions] == list(state.sessions)  # order kept


def test_nothing_moved_gives_the_same_snapshot() -> None:
    state = _state(sessions=3, turns=4)
    clock = Clock()

    builder = SnapshotBuilder(FakeEngine(state, files=3, generation=7), clock)
    first = builder.build()
    clock.now += 10
    builder.build()  # the lines/s window moves once
    clock.now += 10
    again = builder.build()
    clock.now += 10
    assert builder.build() is again  # only the clock moved, and nothing shown depends on it any more
    assert again.sessions == first.sessions
    state.version += 1
    assert builder.build() is not again


def test_parked_sessions_are_recounted_rarely_and_a_rebuilt_one_at_once(monkeypatch: Any) -> None:
    state = _state(sessions=4, turns=3)
    for key in list(state.sessions)[:3]:
        state.sessions[key].parked = 100  # parked: no entry or analysis reaches it until it is rebuilt
    clock = Clock()
    builder = SnapshotBuilder(FakeEngine(state), clock)
    first = builder.build()
    for session in state.sessions.values():
        session.turns[0].payload_bytes = 600
    state.version += 1
    clock.now += 1.5
    totals = [s.payload_total for s in builder.build().sessions]
    assert totals == [300, 300, 300, 800]  # only the unparked one is recounted every second
    rebuilt = state.sessions["/x/1.jsonl"]
    rebuilt.turns = list(rebuilt.turns)  # unpark rebuilds the session: a new turn list, the same counts
    state.version += 1
    clock.now += 1.5
    assert [s.payload_total for s in builder.build().sessions] == [300, 800, 300, 800]
    state.version += 1
    clock.now += view.PARKED_RECOUNT_S
    assert [s.payload_total for s in builder.build().sessions] == [800] * 4
    assert first.sessions[0].payload_total == 300


def test_row_index_follows_appends_replacements_and_removals() -> None:
    import random

    from tui.view import RowIndex

    rng = random.Random(5)
    state = State(FileReread())
    ms = iter(rng.sample(range(1_790_000_000_000, 1_790_000_100_000), 5_000))  # distinct: one true order
    index = RowIndex()

    def turn(key: str, i: int) -> Turn:
        return Turn(key, i, None, None, next(ms), Where(key, i + 2, 0))

    for step in range(200):
        action = rng.random()
        keys = list(state.sessions)
        if action < 0.6 or not keys:
            key = rng.choice([*keys, f"/x/{step}.jsonl"]) if keys else f"/x/{step}.jsonl"
            session = state.session_for(key, key, SENPI)
            session.turns.extend(turn(key, len(session.turns) + j) for j in range(rng.randint(0, 3)))
        elif action < 0.75:
            del state.sessions[rng.choice(keys)]  # gone
        elif action < 0.9:
            key = rng.choice(keys)
            old = state.sessions.pop(key)
            fresh = state.session_for(key, key, SENPI)  # rebuilt (unparked, truncated): a new object
            fresh.turns = old.turns[: rng.randint(0, len(old.turns))]
        else:
            session = state.sessions[rng.choice(keys)]
            del session.turns[rng.randint(0, len(session.turns)) :]  # shrank
        index.update(state)
        expected = sorted((t for s in state.sessions.values() for t in s.turns), key=lambda t: t.ts_ms)
        assert [id(r) for r in index.rows()] == [id(t) for t in expected]


def test_log_rows_appended_after_an_out_of_order_read_keep_the_full_sort_order(tmp_path: Any) -> None:
    """Logs only: once the rows needed a sort (a line older than one taken), rows that come later and newer are
    appended to the order instead of sorting every row again; the order is the one a fresh index sorts."""
    from core.engine import Engine
    from tests.test_typed_log import data_of, line
    from tui.view import RowIndex

    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "session.log"
    times = ["2026-10-11T08:00:05.000Z", "2026-10-11T08:00:01.000Z", "2026-10-11T08:00:03.000Z"]
    log.write_bytes(data_of([line(ts=t, count=i) for i, t in enumerate(times)]))
    engine = Engine([logs])
    engine.drain()
    index = RowIndex()
    index.update(engine.state)
    order = index._log_order
    assert order is not None  # the first read needed a sort
    later = [line(ts="2026-10-11T08:00:05.000Z", count=10), line(ts="bad", count=11),
             line(ts="2026-10-11T08:00:09.000Z", count=12), line(ts="2026-10-11T08:00:09.000Z", count=13)]  # fmt: skip
    for item in later:
        with log.open("ab") as fh:
            fh.write(data_of([item]))
        engine.drain()
        index.update(engine.state)
    assert index._log_order is order  # appended to, not sorted again
    fresh = RowIndex()
    fresh.update(engine.state)
    assert [r.count for r in index.rows()] == [r.count for r in fresh.rows()] == [1, 2, 0, 10, 11, 12, 13]
    older = line(ts="2026-10-11T08:00:02.000Z", count=14)  # older again: sorted again
    with log.open("ab") as fh:
        fh.write(data_of([older]))
    engine.drain()
    index.update(engine.state)
    assert [r.count for r in index.rows()] == [1, 14, 2, 0, 10, 11, 12, 13]
    engine.close()
