"""Session summaries in snapshots: a session that grew is recounted at once; a late change to an old turn of a
session that did not grow is picked up within a few snapshots (a bounded number of turns per snapshot), never
lost; and when nothing but the clock moved the builder hands back the same snapshot.
"""

from __future__ import annotations

from typing import Any

from core.model import LoggedDecision, Turn, Where
from core.state import State
from tui import view
from tui.view import SnapshotBuilder


class Clock:
    def __init__(self) -> None:
        self.now = 1_790_000_000.0

    def __call__(self) -> float:
        return self.now


class FakeEngine:
    def __init__(self, state: State) -> None:
        self.state = state
        self.roots = ["/x"]
        self.total_lines = 0
        self.total_bytes = 0
        self.stats: dict[str, Any] = {}

    def pending_count(self) -> int:
        return 0

    def pending_problems(self) -> list[Any]:
        return []


def _state(sessions: int, turns: int) -> State:
    state = State()
    for s in range(sessions):
        key = f"/x/{s}.jsonl"
        session = state.session_for(key, f"sid-{s}")
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
    builder = SnapshotBuilder(FakeEngine(state), clock)  # type: ignore[arg-type]
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
    builder = SnapshotBuilder(FakeEngine(state), clock)  # type: ignore[arg-type]
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

    class WithSources(FakeEngine):
        class sources:  # the attribute the builder reads
            generation = 7

            @staticmethod
            def file_count() -> int:
                return 3

            @staticmethod
            def pending_bytes() -> int:
                return 0

    builder = SnapshotBuilder(WithSources(state), clock)  # type: ignore[arg-type]
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
    builder = SnapshotBuilder(FakeEngine(state), clock)  # type: ignore[arg-type]
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
    state = State()
    ms = iter(rng.sample(range(1_790_000_000_000, 1_790_000_100_000), 5_000))  # distinct: one true order
    index = RowIndex()

    def turn(key: str, i: int) -> Turn:
        return Turn(key, i, None, None, next(ms), Where(key, i + 2, 0))

    for step in range(200):
        action = rng.random()
        keys = list(state.sessions)
        if action < 0.6 or not keys:
            key = rng.choice([*keys, f"/x/{step}.jsonl"]) if keys else f"/x/{step}.jsonl"
            session = state.session_for(key, key)
            session.turns.extend(turn(key, len(session.turns) + j) for j in range(rng.randint(0, 3)))
        elif action < 0.75:
            del state.sessions[rng.choice(keys)]  # gone
        elif action < 0.9:
            key = rng.choice(keys)
            old = state.sessions.pop(key)
            fresh = state.session_for(key, key)  # rebuilt (unparked, truncated): a new object
            fresh.turns = old.turns[: rng.randint(0, len(old.turns))]
        else:
            session = state.sessions[rng.choice(keys)]
            del session.turns[rng.randint(0, len(session.turns)) :]  # shrank
        index.update(state)
        expected = sorted((t for s in state.sessions.values() for t in s.turns), key=lambda t: t.ts_ms)
        assert [id(r) for r in index.rows()] == [id(t) for t in expected]
