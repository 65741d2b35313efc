"""The dashboard stores its log lines and restores them at the next start (`core.index.livelog`): what it shows
after a warm start is what a cold start shows over the same files, over random append/rotate/truncate
histories; a log whose lines could credit or pair with a transcript's sessions is not stored (or, when such a
transcript appeared since, the warm start reads everything cold). The dashboard's reading is driven as its
ingest worker drives it: newest-first polls of a small budget until the backfill is read."""

from __future__ import annotations

import json
import os
import random
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import core.index.logs
from core.engine import Engine
from core.index import ENV_DIR, Index, cache_dir
from core.report import ReportOptions, build_report
from tests.index_support import DEMO, demo_without_recordings, stored
from tests.report_helpers import T0
from tui.view import SnapshotBuilder

FROZEN = 1_785_900_000.0


def _figures(engine: Engine) -> dict[str, Any]:
    """What the dashboard shows (its snapshot, but for the reading speed) and its report, as plain data."""
    engine.park_idle(engine.park_after or 0.0)  # what the app does once the backfill is read (`_park_backfill`)
    with engine.lock:
        snap = SnapshotBuilder(engine, clock=lambda: FROZEN).build()
    report = json.loads(json.dumps(build_report(engine, ReportOptions(now_ms=T0)), sort_keys=True, default=str))
    report["sources"].sort(key=lambda source: source["path"])
    status = snap.status
    return {
        "report": report,
        "rates": repr(snap.rates),
        "sessions": repr(snap.sessions),
        "rows": [repr(row) for row in snap.rows],
        "status": (status.files, status.bytes, status.lines, status.problems_total, status.pending_bytes),
        "problems": sorted((p.path, p.line or 0, p.offset or 0, p.error) for p in snap.problems),  # (not when noticed)
        "pending": engine.pending_count(),
    }


def dashboard(root: Path, *, index: bool = True, budget: int | tuple[int, ...] = 4096) -> tuple[dict[str, Any], str]:
    """One dashboard run over `root` (the index in the test's cache dir unless `index` is False), polling with
    `budget` (a tuple: the budget of each poll, the last one's from then on): its figures once its backfill is
    read, and the index's status."""
    budgets = budget if isinstance(budget, tuple) else (budget,)
    engine = Engine([root], newest_first=True)
    store = Index.for_engine(engine, volatile=[], mode="live") if index else None
    if store is not None:
        engine.before_first_poll(lambda: store.restore(engine))
    try:
        left: int | None = None
        while True:  # the ingest worker until its backlog is read
            result = engine.poll(budgets[min(engine.polls, len(budgets) - 1)])
            now = engine.pending_bytes()
            # (a poll whose budget went into a line still being written reads nothing whole: a live dashboard
            # polls again a moment later, and reads the rest of the backlog then)
            if not result.lines and not result.changed and (now == 0 or (left is not None and now >= left)):
                break
            left = now
        return _figures(engine), store.status if store is not None else "no index"
    finally:
        engine.close()
        if store is not None:
            store.close()


def _logs_only(tmp_path: Path) -> Path:
    """The demo's logs in an agent dir whose `sessions/` is empty (the same roots once transcripts appear)."""
    root = tmp_path / "agent"
    shutil.copytree(DEMO / "logs", root / "logs")
    (root / "sessions").mkdir()
    return root


def _add_transcripts(root: Path) -> None:
    """The demo's transcripts as new files (modified now: active, never parked), their sessions named by the demo's
    log lines."""
    shutil.copytree(DEMO / "sessions", root / "sessions", copy_function=shutil.copyfile, dirs_exist_ok=True)


@pytest.fixture
def every_poll_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The dashboard writes its log at most every `LIVE_EVERY_S`: here at every poll (a test's backfill takes
    milliseconds; with the real pace only its first poll would be stored, which the histories test covers)."""
    monkeypatch.setattr(core.index.logs, "LIVE_EVERY_S", 0.0)


def test_a_second_start_restores_the_log_and_reads_only_what_was_appended(
    tmp_path: Path, every_poll_writes: None
) -> None:
    root = _logs_only(tmp_path)
    first, status = dashboard(root)
    assert status == "cold: no index yet"
    assert stored("SELECT rows, closes FROM log_state")[0][0] == first["report"]["continuity"]["events"]
    with (root / "logs" / "session.log").open("a") as fh:
        fh.write(
            '{"ts":"2026-10-12T15:59:00.000Z","level":"info","event":"claude_sdk_oauth_session_continuity",'
            '"kind":"fork","reason":"capacity","count":3}\n'
        )
    warm, status = dashboard(root)
    assert status.startswith("warm") and "log lines from the index" in status, status
    cold, _ = dashboard(root, index=False)
    assert warm == cold
    assert warm["report"]["continuity"]["events"] == first["report"]["continuity"]["events"] + 1


def _aged(root: Path, seed: int) -> Path:
    """Every file of `root` last modified about an hour ago (idle: its session is parked, and would be stored),
    in an order of `seed`'s own, some in the same nanosecond: the newest-first reading order of a dashboard is
    the files' modification order, which a checkout sets to the order it wrote them in."""
    rng = random.Random(seed)
    files = sorted(p for p in root.rglob("*") if p.is_file())
    rng.shuffle(files)
    start = time.time() - 3600
    for i, path in enumerate(files):
        at = start + i * rng.choice([0.0, 0.001, 1.0])
        os.utime(path, (at, at))
    return root


def test_a_log_naming_the_transcripts_sessions_is_not_stored(tmp_path: Path, every_poll_writes: None) -> None:
    """The demo's log lines name its sessions (build evidence) and pair with their calls: what a session is
    credited with depends on the order the dashboard meets them in, and so does every session read around
    them. Nothing is stored (its finished sessions neither: they are idle here), and the next start reads
    everything, as a first start does."""
    root = _aged(demo_without_recordings(tmp_path), 0)
    first, status = dashboard(root)
    assert first["report"]["continuity"]["events"] > 0
    assert "not written: the order a dashboard reads lines in decides something" in status, status
    assert stored("SELECT count(*) FROM log_state") == [(0,)]
    assert stored("SELECT count(*) FROM streams") == [(0,)]
    assert stored("SELECT count(*) FROM sessions") == [(0,)]
    second, status = dashboard(root)
    assert status.startswith("cold: no index yet"), status
    assert second == first


@pytest.mark.parametrize("polls", [(1, 512 << 10), (512 << 10,), (4096,)])
@pytest.mark.parametrize("seed", range(6))
def test_a_resumed_dashboard_with_stored_sessions_shows_what_a_cold_one_does(
    tmp_path: Path, seed: int, polls: tuple[int, ...]
) -> None:
    """The demo without recordings, its files idle and modified in various orders, read in polls of the
    worker's budget (or one of a single byte first): the second start shows what a cold one shows. (Before,
    the second start loaded the finished sessions and read the log again around the rest: session 01a13072's
    profile said "sessionId on 3 log line(s)" where a cold start says "provider id", seed 1.)"""
    root = _aged(demo_without_recordings(tmp_path), seed)
    dashboard(root, budget=polls)
    warm, status = dashboard(root, budget=polls)
    cold, _ = dashboard(root, index=False, budget=polls)
    assert warm == cold, status


def test_transcripts_alone_are_stored_and_resumed(tmp_path: Path) -> None:
    """Without a log, the order decides nothing: the finished sessions are stored, and a second start shows
    them from the index, as a cold start shows them."""
    root = demo_without_recordings(tmp_path)
    shutil.rmtree(root / "logs")
    _aged(root, 0)
    first, status = dashboard(root)
    assert status == "cold: no index yet"
    assert stored("SELECT count(*) FROM sessions") == [(2,)]  # (01a13072's transcript ends mid-line: not parked)
    warm, status = dashboard(root)
    assert status.startswith("warm: 2 sessions"), status
    assert warm == first == dashboard(root, index=False)[0]


def test_a_stored_log_is_read_again_when_a_transcript_it_names_appears(tmp_path: Path, every_poll_writes: None) -> None:
    root = _logs_only(tmp_path)
    dashboard(root)
    assert stored("SELECT count(*) FROM log_state") == [(1,)]
    _add_transcripts(root)
    warm, status = dashboard(root)
    assert status.startswith("cold: log lines name session"), status
    assert warm == dashboard(root, index=False)[0]
    assert stored("SELECT count(*) FROM log_state") == [(0,)]  # and the next start reads it as it is read now
    assert stored("SELECT count(*) FROM sessions") == [(0,)]
    again, status = dashboard(root)
    assert status.startswith("cold: no index yet") and again == warm, status


def test_a_rotated_log_whose_new_file_starts_like_the_old_one_is_read_again(
    tmp_path: Path, every_poll_writes: None
) -> None:
    """The seed-113 history: rotated (an empty `session.log`), stored, then a first line begun in the new file.
    A first look takes `.1` for a copy of the log (it starts with the few bytes the log holds:
    `Sources._copy_at_start`) and leaves it unread; the stored lines of `.1` are not what a cold start reads."""
    root = _logs_only(tmp_path)
    logs = root / "logs"
    os.replace(logs / "session.log", logs / "session.log.1")
    (logs / "session.log").write_bytes(b"")
    first, _ = dashboard(root)
    assert first["report"]["continuity"]["events"] > 0
    assert stored("SELECT count(*) FROM log_state") == [(1,)]
    (logs / "session.log").write_bytes(b'{"ts":"2')
    warm, status = dashboard(root)
    cold, _ = dashboard(root, index=False)
    assert "log lines" not in status, status
    assert warm == cold


OPS = ("append", "append", "log", "log", "rotate", "copytruncate", "truncate", "again", "transcripts", "pace")


def _apply(op: str, root: Path, rests: dict[Path, bytes], rng: random.Random, step: int) -> None:
    logs = root / "logs"
    current = logs / "session.log"
    if op == "append" and rests:
        path = rng.choice(sorted(rests))
        rest = rests[path]
        take = rest[: rng.randrange(1, len(rest) + 1)] if rest else b""
        rests[path] = rest[len(take) :]
        if path.exists():
            with path.open("ab") as fh:
                fh.write(take)
    elif op == "log":
        kind, reason = rng.choice([("delta", "prefix_matched"), ("fork", "capacity"), ("flatten", "registry_miss")])
        line = (
            f'{{"ts":"2026-10-12T16:{step:02d}:00.000Z","level":"info",'
            f'"event":"claude_sdk_oauth_session_continuity","kind":"{kind}","reason":"{reason}","count":{step + 1}}}\n'
        )
        with current.open("a") as fh:
            fh.write(line[: rng.randrange(1, len(line) + 1)] if rng.random() < 0.3 else line)
    elif op == "rotate" and current.exists():
        os.replace(current, logs / "session.log.1")
        current.write_bytes(b"")
        rests.pop(current, None)
    elif op == "copytruncate" and current.exists():
        shutil.copyfile(current, logs / "session.log.1")
        with current.open("r+b") as fh:
            fh.truncate(0)
        rests.pop(current, None)
    elif op == "truncate" and current.exists():
        with current.open("r+b") as fh:
            fh.truncate(rng.randrange(current.stat().st_size + 1))
        rests.pop(current, None)
    elif op == "transcripts" and not any((root / "sessions").iterdir()):
        _add_transcripts(root)


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**32 - 1), ops=st.lists(st.sampled_from(OPS), min_size=1, max_size=5))
def test_a_warm_dashboard_shows_what_a_cold_one_does(
    seed: int, ops: list[str], tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Random histories of a log (cut at random points, then grown piece by piece, often mid-line; new lines,
    rotations by rename and by copy-and-truncate, truncations; the demo's transcripts appearing): after every
    step a dashboard resumed from the index shows exactly what a cold one shows. `pace` switches between
    writing the log at every poll and at the real pace (only the first poll's rows, then every 2 s)."""
    rng = random.Random(seed)
    base = tmp_path_factory.mktemp("dashboard-history")
    root = _logs_only(base)
    rests: dict[Path, bytes] = {}
    for path in sorted((root / "logs").iterdir()):
        body = path.read_bytes()
        cut = rng.randrange(len(body) + 1)
        path.write_bytes(body[:cut])
        rests[path] = body[cut:]
    monkeypatch.setenv(ENV_DIR, str(base / "index"))
    every = rng.random() < 0.5
    monkeypatch.setattr(core.index.logs, "LIVE_EVERY_S", 0.0 if every else 2.0)
    dashboard(root, budget=rng.choice([512, 4096, 1 << 20]))  # the first run writes the index
    for step, op in enumerate(ops):
        if op == "pace":
            every = not every
            monkeypatch.setattr(core.index.logs, "LIVE_EVERY_S", 0.0 if every else 2.0)
        _apply(op, root, rests, rng, step)
        budget = rng.choice([512, 4096, 1 << 20])
        warm, status = dashboard(root, budget=budget)
        cold, _ = dashboard(root, index=False, budget=budget)
        assert warm == cold, (seed, ops[: step + 1], status)


async def test_the_real_app_paints_a_restored_log_as_a_cold_read(tmp_path: Path, every_poll_writes: None) -> None:
    """Pilot, at 160×45 and 80×24: the second start's screen (the log lines from the index) is the first's, and
    `s` (the sessions the log names) and `q` work on it."""
    from tui_fixtures import screen_output, wait_loaded

    from tui.app import ContinuityApp

    root = _logs_only(tmp_path)
    for size in ((160, 45), (80, 24)):
        shutil.rmtree(cache_dir(), ignore_errors=True)  # a first start, then a second
        screens: list[list[str]] = []
        statuses: list[str] = []
        for _ in range(2):
            engine = Engine([root], newest_first=True)
            index = Index.for_engine(engine, volatile=[], mode="live")
            engine.before_first_poll(lambda engine=engine, index=index: index.restore(engine))
            app = ContinuityApp(engine, live=False, clock=lambda: FROZEN)
            async with app.run_test(size=size) as pilot:
                await wait_loaded(pilot, app)
                screens.append(screen_output(app)[1][:-1])  # (the key bar is drawn on its own schedule)
                await pilot.press("s")
                await pilot.press("escape")
                await pilot.press("q")
                await pilot.pause()
                assert not app.is_running
            statuses.append(index.status)
            index.close()
            engine.close()
        assert "log lines from the index" in statuses[1] and "log lines" not in statuses[0], statuses
        assert screens[0] == screens[1] and any("resend" in line for line in screens[1])
