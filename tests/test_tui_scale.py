"""The dashboard stays fast at 100 000 turns: only visible rows are rendered, snapshots are incremental.

Budgets are generous (a loaded 2-core CI box); the built-in DataTable needs ~22 s for the same rows.
"""

from __future__ import annotations

import time
from typing import Any

from tui_fixtures import FROZEN, wait_for

from core.model import LoggedDecision, Turn, Where
from core.state import State
from tui.app import ContinuityApp
from tui.view import SnapshotBuilder
from tui.widgets.turn_table import TurnTable

N = 100_000
KINDS = ("delta", "delta", "delta", "fork", "flatten")


def big_state(n: int = N) -> State:
    state = State()
    session = state.session_for("/x/s.jsonl", "0198f0a1-big")
    for i in range(n):
        kind = KINDS[i % len(KINDS)]
        session.turns.append(
            Turn(
                session="0198f0a1-big",
                index=i,
                entry_id=None,
                ts=None,
                ts_ms=1_785_800_000_000 + i * 1000,
                where=Where("/x/s.jsonl", i + 2, i * 100),
                logged=LoggedDecision(kind, "prefix_matched", 1),
                payload_bytes=1000 + i % 977,
            )
        )
    session.entries = n
    state.version = n
    return state


class FakeEngine:
    """Just what the app and the snapshot builder read (no files: this measures the UI side)."""

    def __init__(self, state: State) -> None:
        import threading

        self.state = state
        self.lock = threading.RLock()
        self.stats: dict[str, Any] = {}
        self.roots: list[str] = ["/x"]
        self.paths: list[str] = ["/x"]
        self.total_lines = N
        self.total_bytes = N * 100

    def pending_count(self) -> int:
        return 0

    def pending_problems(self) -> list[Any]:
        return []

    def poll(self, max_bytes: int | None = None) -> Any:
        from core.engine import PollResult

        return PollResult()

    def wait(self, timeout: float) -> bool:
        time.sleep(min(timeout, 0.05))
        return False


def test_snapshot_builder_is_incremental_at_100k_turns() -> None:
    state = big_state()
    builder = SnapshotBuilder(FakeEngine(state), clock=lambda: FROZEN)  # type: ignore[arg-type]
    started = time.perf_counter()
    first = builder.build()
    cold = time.perf_counter() - started
    session = next(iter(state.sessions.values()))
    session.turns.append(Turn(session="0198f0a1-big", index=N, entry_id=None, ts=None, ts_ms=1_785_900_000_000,
                              where=Where("/x/s.jsonl", N + 2, N * 100)))  # fmt: skip
    session.entries += 1
    state.version += 1
    started = time.perf_counter()
    second = builder.build()
    warm = time.perf_counter() - started
    assert len(first.rows) == N and len(second.rows) == N + 1
    assert second.rows_generation == first.rows_generation  # an append, not a rebuild
    assert cold < 3.0, cold
    assert warm < 0.5, warm


async def test_table_paints_100k_rows_fast() -> None:
    app = ContinuityApp(FakeEngine(big_state()), live=False, clock=lambda: FROZEN)  # type: ignore[arg-type]
    async with app.run_test(size=(120, 36)) as pilot:
        started = time.perf_counter()
        assert await wait_for(pilot, lambda: app.query_one(TurnTable).row_count == N, timeout=20)
        await pilot.pause()
        first_paint = time.perf_counter() - started
        table = app.query_one(TurnTable)
        assert table.cursor == N - 1  # following the tail
        started = time.perf_counter()
        await pilot.press("home", "pagedown", "pagedown", "end", "k", "k")
        keys = time.perf_counter() - started
        await pilot.press("slash", *"kind:flatten", "enter")
        await wait_for(pilot, lambda: table.row_count == N // 5, timeout=10)
        assert table.row_count == N // 5
        assert first_paint < 5.0, first_paint
        assert keys < 3.0, keys
