"""A live dashboard collects its garbage instead of freezing it (`ContinuityApp._settle_garbage`).

The ingest worker froze every object alive each 0.5 s while lines arrived: during a backfill that keeps the
read state out of full collections, but on a live tail it froze the screen's garbage for good (Textual's strips
hold themselves in their caches), and a 5,000 lines/s tail grew the RSS ~290 B a line. What survives a live
collection is frozen only when it is many objects (a count, `LIVE_FREEZE_OBJECTS`, never a time: on a loaded
machine a collection of the screen's objects took > 20 ms, and the freezes that followed kept ~35,000 of them)."""

from __future__ import annotations

import gc
import time
from pathlib import Path

import pytest
from tui_fixtures import continuity_line, wait_for, wait_loaded, write_agent

import tui.app as app_module
from core.engine import Engine
from tui.app import ContinuityApp
from tui.widgets.rates import RatesPane


class Recorder:
    """`gc` as the app module sees it, noting each freeze and collection and whether the app was loaded."""

    def __init__(self, app: ContinuityApp) -> None:
        self.app = app
        self.calls: list[tuple[str, bool]] = []

    def freeze(self) -> None:
        self.calls.append(("freeze", self.app.loaded.is_set()))
        gc.freeze()

    def collect(self, *args: int) -> int:
        self.calls.append(("collect", self.app.loaded.is_set()))
        return gc.collect(*args)

    def isenabled(self) -> bool:
        return gc.isenabled()

    def get_objects(self, generation: int | None = None) -> list[object]:
        return gc.get_objects(generation)


def test_the_backfill_freezes_and_a_loaded_dashboard_collects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = ContinuityApp(Engine([tmp_path]), live=True, clock=time.time)
    recorder = Recorder(app)
    monkeypatch.setattr(app_module, "gc", recorder)
    app._settle_garbage()
    app.loaded.set()
    app._settle_garbage()
    assert recorder.calls == [("freeze", False), ("collect", True)]
    monkeypatch.setattr(app_module, "LIVE_FREEZE_OBJECTS", -1)  # many objects survived: they are kept
    app._settle_garbage()
    assert recorder.calls[-2:] == [("collect", True), ("freeze", True)]


async def test_a_live_tail_is_counted_and_never_frozen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "agent"
    write_agent(root)
    app = ContinuityApp(Engine([root], watch=True), live=True, clock=time.time)
    recorder = Recorder(app)
    monkeypatch.setattr(app_module, "gc", recorder)
    monkeypatch.setattr(app_module, "LIVE_FREEZE_OBJECTS", 10**9)
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await wait_loaded(pilot, app)
            rates = app.query_one(RatesPane)
            assert rates.rates is not None
            events = rates.rates.log_events
            for i in range(3):  # three appends, more than the 0.5 s between two settles apart
                with (root / "logs" / "session.log").open("a") as fh:
                    fh.write(continuity_line(1_785_800_900_000 + i, "flatten", "assistant_rewritten", 20 + i))
                want = events + i + 1
                assert await wait_for(
                    pilot, lambda want=want: rates.rates is not None and rates.rates.log_events == want
                )  # type: ignore[misc]
                await pilot.pause(0.6)
            live = [name for name, loaded in recorder.calls if loaded]
            assert live and set(live) == {"collect"}, recorder.calls
    finally:
        app.engine.close()
