"""Reading in parallel gives the same report as one process: a big log split across workers (`core.pool`),
its ranges taken back in order, its aggregates merged (counts add, streaks join at the seams)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import core.engine
import core.state
from core.agents.senpi.formats.logs import SessionLogAdapter
from core.engine import Engine
from core.formats.base import exact_block
from core.kernel.stats import LogStats
from core.report import build_report
from core.report.options import ReportOptions
from tests.test_typed_log import HOSTILE, data_of, line, normal_lines


def _report(paths: list[Path], *, jobs: int, chunk: int = 1 << 20, read_chunk: int | None = None) -> dict[str, Any]:
    engine = Engine(paths, jobs=jobs)
    if read_chunk is not None:
        engine.sources.read_chunk = read_chunk
    engine.drain(chunk)
    report = build_report(engine, ReportOptions(now_ms=0))
    engine.close()
    report.pop("generated_at")
    return report


def _log(tmp_path: Path, n: int, seed: int, *, first: bytes | None = None) -> Path:
    logs = tmp_path / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    lines = normal_lines(n, seed)
    rng = random.Random(seed)
    for bad in HOSTILE:
        lines.insert(rng.randrange(len(lines)), bad)
    # long runs, so that ranges are cut inside streaks
    at = rng.randrange(len(lines))
    lines[at:at] = [line(kind="fork", reason="idle_ttl", count=i) for i in range(3000)]
    if first is not None:
        lines.insert(0, first)
    (logs / "session.log").write_bytes(data_of(lines))
    return logs


def split_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Logs of 100 KB and more are read apart, and each split's number of ranges is recorded (in the list this
    returns): a test sees that the pool really read the log in several ranges."""
    monkeypatch.setattr(core.engine, "SPLIT_MIN_BYTES", 100_000)
    calls: list[int] = []
    real = core.engine.split_points

    def spy(path: str, start: int, end: int, parts: int) -> list[tuple[int, int]]:
        out = real(path, start, end, parts)
        calls.append(len(out))
        return out

    monkeypatch.setattr(core.engine, "split_points", spy)
    return calls


@pytest.mark.parametrize(
    ("jobs", "chunk", "read_chunk", "first"),
    [
        (2, 1 << 20, None, None),  # read apart from its first byte
        (3, 200_000, 65_536, b"not json"),  # its format told by the first poll: read apart from there on
        (4, 50_000, 4096, b""),
    ],
)
def test_a_big_log_read_apart_gives_the_report_of_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int, chunk: int, read_chunk: int | None, first: bytes | None
) -> None:
    logs = _log(tmp_path, 30_000, jobs, first=first)
    calls = split_calls(monkeypatch)
    apart = _report([logs], jobs=jobs, chunk=chunk, read_chunk=read_chunk)
    assert calls and calls[0] > 1  # the log was read apart, in several ranges
    alone = _report([logs], jobs=1, chunk=chunk, read_chunk=read_chunk)
    assert apart == alone
    assert apart["continuity"]["events"] > 30_000 and apart["problems_total"] > 10


def test_the_log_grown_after_a_parallel_read_is_read_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    logs = _log(tmp_path, 20_000, 7)
    monkeypatch.setattr(core.engine, "SPLIT_MIN_BYTES", 100_000)
    engine = Engine([logs], jobs=2)
    engine.read_all(200_000)
    first = engine.state.log.stats.events
    with (logs / "session.log").open("ab") as fh:
        fh.write(data_of(normal_lines(50, 99)))
    engine.drain(200_000)
    assert engine.state.log.stats.events > first
    whole = Engine([logs], jobs=1)
    whole.drain()
    assert engine.state.log.stats.events == whole.state.log.stats.events
    assert [s.length for s in engine.state.log.stats.all_streaks()] == [
        s.length for s in whole.state.log.stats.all_streaks()
    ]
    engine.close()
    whole.close()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.lists(st.integers(1, 400), min_size=1, max_size=6))
def test_merged_parts_equal_the_whole(seed: int, cuts: list[int]) -> None:
    """LogStats.merge of consecutive parts gives the aggregates of all their lines read in one go."""
    adapter = SessionLogAdapter()
    lines = normal_lines(600, seed)
    rng = random.Random(seed)
    lines[100:100] = [line(kind="flatten", reason="x", count=rng.randint(0, 9)) for _ in range(rng.randint(0, 40))]
    # streaks whose first and last lines keep their text (a time not written canonically) or a count past int64
    odd = [line(ts="2026-10-11T08:00:00Z", kind="fork", reason="odd", count=2**70), line(kind="fork", reason="odd"),
           line(ts="2026-10-11 08:00:01", kind="fork", reason="odd", count=-(2**65))]  # fmt: skip
    for _ in range(rng.randint(0, 6)):
        at = rng.randrange(len(lines))
        lines[at:at] = odd
    whole = LogStats()
    whole.add_block(exact_block(adapter.parse, "/l", 1, 0, data_of(lines)))
    merged = LogStats()
    at = 0
    for size in [*cuts, len(lines)]:
        part = LogStats()
        part.add_block(exact_block(adapter.parse, "/l", 1, 0, data_of(lines[at : at + size])))
        merged.merge(part)
        at += size
        if at >= len(lines):
            break

    def facts(s: LogStats) -> Any:
        return (
            s.events, dict(s.by_kind), {r: dict(c) for r, c in s.by_reason.items()}, s.last_ms,
            None if s.peak is None else (s.peak.value, s.peak.at_ms, s.peak.kind),
            [(t.kind, t.reason, t.length, t.start_ms, t.end_ms, t.start, t.end, t.count_first, t.count_last)
             for t in s.all_streaks()],
            None if s.run is None else (s.run.kind, s.run.reason, s.run.length, s.run.end_ms),
        )  # fmt: skip

    assert facts(merged) == facts(whole)


async def test_the_dashboard_reads_a_big_log_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real app (Pilot): its ingest thread hands the log to the pool and the screen counts every line. Under
    Textual `sys.stderr` is a capture whose fileno is -1, which multiprocessing passes to the helper it spawns
    (the dashboard stopped reading a log of 166 MB after its first 512 KB)."""
    from tui_fixtures import wait_loaded

    from tui.app import ContinuityApp

    logs = _log(tmp_path, 30_000, 5)
    calls = split_calls(monkeypatch)
    whole = Engine([logs], jobs=1)
    whole.drain()
    engine = Engine([logs], jobs=2)
    app = ContinuityApp(engine, live=False, max_bytes=65_536)  # the first poll reads a little; the rest: the pool
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_loaded(pilot, app, timeout=60.0)
            assert calls and calls[0] > 1
            assert engine.jobs == 2  # the pool worked (a failed one falls back to one process)
            assert app.snapshot.rates.events == whole.state.log.stats.events
    finally:
        engine.close()
        whole.close()


def test_a_pool_that_cannot_start_leaves_the_log_to_the_polls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    logs = _log(tmp_path, 20_000, 3)
    monkeypatch.setattr(core.engine, "SPLIT_MIN_BYTES", 100_000)

    def broken(self: object, *args: object) -> list[object]:
        raise OSError("no processes here")

    monkeypatch.setattr(core.engine.LogPool, "map_ranges", broken)
    alone = _report([logs], jobs=1, chunk=200_000)
    assert _report([logs], jobs=2, chunk=200_000) == alone


def test_a_range_the_workers_cannot_read_is_left_to_the_polls_after_the_ranges_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ranges are taken back as they arrive: when one cannot be read apart (here a line over the size limit in
    the middle of the log), the ranges before it are already in the state and the polls read on from its first
    byte. The report is still the one process's, and the oversized line is still one problem."""
    logs = _log(tmp_path, 20_000, 11)
    path = logs / "session.log"
    data = path.read_bytes()
    middle = data.index(b"\n", len(data) // 2) + 1
    path.write_bytes(data[:middle] + b'{"ts":"' + b"x" * 300_000 + b'"}\n' + data[middle:])
    monkeypatch.setattr(core.engine, "SPLIT_MIN_BYTES", 100_000)
    applied: list[int] = []
    real = core.state.State.apply_range

    def spy(self: Any, part: Any, agent: Any, line_base: int) -> None:
        applied.append(part.lines)
        real(self, part, agent, line_base)

    monkeypatch.setattr(core.state.State, "apply_range", spy)

    def report(jobs: int) -> dict[str, Any]:
        engine = Engine([logs], jobs=jobs)
        engine.sources.max_line_bytes = 200_000
        engine.drain(1 << 20)
        out = build_report(engine, ReportOptions(now_ms=0))
        engine.close()
        out.pop("generated_at")
        return out

    apart = report(2)
    assert len(applied) >= 2  # ranges merged before the one that failed (and after it, once polled past it)
    alone = report(1)
    assert apart == alone
    assert apart["problems_total"] == alone["problems_total"] > 0
