"""Quitting the dashboard: `q` ends the ingest worker at once (the process exits only once its thread has
returned), driven by a real key press (Pilot)."""

from __future__ import annotations

import shutil
from pathlib import Path

from core.engine import Engine
from tests.index_support import DEMO


def _logs(tmp_path: Path) -> Path:
    root = tmp_path / "agent"
    shutil.copytree(DEMO / "logs", root / "logs")
    return root


async def test_q_wakes_the_ingest_worker_from_its_heartbeat_wait(tmp_path: Path) -> None:
    """The process exits only once the ingest thread has returned: `q` wakes it from its heartbeat wait (here a
    minute long) instead of letting it sleep the wait out (up to 0.5 s of every quit)."""
    import asyncio
    import threading

    from tui_fixtures import wait_loaded

    from tui.app import ContinuityApp

    engine = Engine([_logs(tmp_path)], newest_first=True, watch=True)
    waiting, pressed, woken = threading.Event(), threading.Event(), threading.Event()
    wait = engine.wait

    def spied(timeout: float) -> bool:
        waiting.set()
        try:
            return wait(timeout)
        finally:
            if pressed.is_set():
                woken.set()

    engine.wait = spied  # type: ignore[method-assign]
    app = ContinuityApp(engine, live=True, heartbeat=60.0)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_loaded(pilot, app)
            for _ in range(100):
                if waiting.is_set():
                    break
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.2)  # into its minute-long wait
            pressed.set()
            await pilot.press("q")
            for _ in range(200):  # 10 s
                if woken.is_set():
                    break
                await asyncio.sleep(0.05)
            assert woken.is_set()
    finally:
        engine.close()
