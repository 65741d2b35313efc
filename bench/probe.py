"""The dashboard side of the benchmark, run in a fresh interpreter so start-up costs are real.

``python -m bench.probe app …`` starts the real `ContinuityApp` headless (Textual's ``run_test``: the same
app, compositor and widgets, only the terminal write is skipped) on a corpus, exactly as the dashboard command
builds it (`tui.commands.open_engine` with watching on), and measures:

* **first paint**: process start (the parent's clock just before it spawned us) to the first refresh after
  mount, i.e. the empty dashboard on screen;
* **first data**: process start to the first refresh that shows the newest session complete (its summary holds
  all its turns). That is the number a user waits for: the UI must not wait for the whole backfill;
* **loaded**: the worker read everything that was on disk at start;
* **idle CPU**: process CPU time over a window of wall time while nothing changes on disk, starting
  ``SETTLE_S`` after the backfill (all threads: the ingest worker's heartbeat polls, the watcher threads, the
  UI loop);
* **live latency**: a writer process appends a transcript at a steady rate; for each assistant message, the time
  from its write to the refresh after the first snapshot whose session summary counts it.

``python -m bench.probe writer …`` is that writer. It copies a corpus transcript into a new file line by line,
shifting its timestamps to the present (so its turns land at the bottom of the table, as a live session's do),
and prints the write time of every assistant message.

Results are one JSON object on stdout; ``bench.run`` turns them into table rows.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

_ISO = re.compile(rb'"(timestamp|ts)":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)"')
_MS = re.compile(rb'"timestamp":(1\d{12})\b')


SETTLE_S = 10.0
"""Seconds between the end of the backfill and the idle measurement."""


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def is_assistant_line(line: bytes) -> bool:
    """An assistant message entry: the lines that become turns (a cheap test first, the parse to confirm)."""
    if b'"assistant"' not in line:
        return False
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    message = obj.get("message") if isinstance(obj, dict) else None
    return obj.get("type") == "message" and isinstance(message, dict) and message.get("role") == "assistant"


# ---------------------------------------------------------------------------------------------- the app probe
def run_app(args: argparse.Namespace) -> dict[str, Any]:
    from tui.app import ContinuityApp
    from tui.cli import tune_gc
    from tui.commands import open_engine

    tune_gc()  # what `continuity-tui` does before it opens the dashboard

    t0: float = args.t0
    marks: dict[str, float] = {}
    newest = os.path.abspath(args.newest) if args.newest else None
    live_path = os.path.abspath(args.live_dst) if args.live_dst else None
    live_seen: list[tuple[int, float]] = []  # (turns shown, wall time of the refresh that showed them)

    class ProbeApp(ContinuityApp):
        """The real app plus two observers; Textual calls these handlers before the app's own."""

        def on_mount(self) -> None:
            self.call_after_refresh(lambda: marks.setdefault("paint", time.time()))

        def on_snapshot_ready(self, message: Any) -> None:
            snapshot = message.snapshot
            self.call_after_refresh(lambda: self._probe_seen(snapshot))

        def _probe_seen(self, snapshot: Any) -> None:
            now = time.time()
            for summary in snapshot.sessions:
                if "data" not in marks and summary.key == newest and summary.turns >= args.newest_turns:
                    marks["data"] = now
                grew = not live_seen or summary.turns > live_seen[-1][0]
                if live_path is not None and summary.key == live_path and grew:
                    live_seen.append((summary.turns, now))

    from core.engine import Engine

    engine: Engine = open_engine([Path(p) for p in args.paths], [], watch=True)
    index = None
    if args.index:  # as `run_dashboard` does: the saved state is restored in the worker, before its first poll
        from core.index import Index

        index = Index.for_engine(engine, volatile=[], mode="live", directory=Path(args.index))
        restore = index.restore
        engine.before_first_poll(lambda: restore(engine))
    app = ProbeApp(engine)
    result: dict[str, Any] = {}

    async def drive() -> None:
        async with app.run_test(headless=True, size=(160, 45)):
            deadline = time.time() + args.timeout
            while not app.loaded.is_set() and time.time() < deadline:
                await asyncio.sleep(0.02)
            marks["loaded"] = time.time()
            result["loaded_in_time"] = app.loaded.is_set()
            # Settle: the last snapshot of the backfill reaches the screen and the one-time work that follows a
            # backfill runs (the dedupe simulation of the largest flatten re-reads it from disk). Then nothing
            # changes on disk, and what is left is what the dashboard costs while it sits there.
            await asyncio.sleep(SETTLE_S)
            if index is not None:
                result["index_status"] = index.status
                if args.save_index:  # every poll wrote what it finished: this is one more (empty) transaction
                    result["rss_before_save_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                    started = time.perf_counter()
                    index.commit(engine)
                    result["index_save_s"] = time.perf_counter() - started
                    await asyncio.sleep(SETTLE_S)
            if args.idle > 0:
                wall, cpu = time.perf_counter(), cpu_seconds()
                await asyncio.sleep(args.idle)
                result["idle_cpu_pct"] = 100.0 * (cpu_seconds() - cpu) / (time.perf_counter() - wall)
                result["idle_s"] = args.idle
            if args.live_src and live_path is not None:
                result["live"] = await _live(args, live_path, live_seen)

    try:
        asyncio.run(drive())
    finally:
        engine.close()
        if index is not None:
            index.close()
    result.update(
        first_paint_s=marks["paint"] - t0 if "paint" in marks else None,
        first_data_s=marks["data"] - t0 if "data" in marks else None,
        loaded_s=marks["loaded"] - t0 if "loaded" in marks else None,
        rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        turns=sum(len(s.turns) for s in engine.state.sessions.values()),
    )
    return result


async def _live(args: argparse.Namespace, live_path: str, live_seen: list[tuple[int, float]]) -> dict[str, Any]:
    """Run the writer, then match the k-th assistant write to the first refresh showing k live turns."""
    writer = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bench.probe",
            "writer",
            args.live_src,
            live_path,
            "--rate",
            str(args.live_rate),
            "--seconds",
            str(args.live_seconds),
        ],
        stdout=subprocess.PIPE,
    )
    while writer.poll() is None:
        await asyncio.sleep(0.05)
    out = writer.stdout.read() if writer.stdout is not None else b""
    writes: list[float] = json.loads(out or b"[]")
    deadline = time.time() + 3.0
    while time.time() < deadline and (not live_seen or live_seen[-1][0] < len(writes)):
        await asyncio.sleep(0.05)
    latencies: list[float] = []
    for k, written in enumerate(writes, start=1):
        shown = next((t for n, t in live_seen if n >= k), None)
        if shown is not None:
            latencies.append(max(0.0, shown - written))
    latencies.sort()
    return {
        "writes": len(writes),
        "seen": len(latencies),
        "rate_lines_s": args.live_rate,
        "p50_ms": 1000 * _quantile(latencies, 0.50) if latencies else None,
        "p95_ms": 1000 * _quantile(latencies, 0.95) if latencies else None,
        "max_ms": 1000 * latencies[-1] if latencies else None,
    }


def _quantile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank quantile (no interpolation: every reported latency is one that happened)."""
    index = min(len(sorted_values) - 1, max(0, round(q * len(sorted_values) + 0.5) - 1))
    return sorted_values[index]


# ---------------------------------------------------------------------------------------------- a log dashboard
def run_logapp(args: argparse.Namespace) -> dict[str, Any]:
    """The dashboard on a logs dir: when the full count is on screen (the rates pane shows `--expect` decisions)
    and the peak RSS then; with `--live-log`, the RSS a line costs while a writer appends at `--live-rate`."""
    from tui.app import ContinuityApp
    from tui.cli import tune_gc, tune_malloc
    from tui.commands import open_engine

    tune_gc()
    tune_malloc()
    t0: float = args.t0
    marks: dict[str, float] = {}
    shown: list[int] = [0]

    class ProbeApp(ContinuityApp):
        def on_mount(self) -> None:
            self.call_after_refresh(lambda: marks.setdefault("paint", time.time()))

        def on_snapshot_ready(self, message: Any) -> None:
            events = message.snapshot.rates.events
            self.call_after_refresh(lambda: self._seen(events))

        def _seen(self, events: int) -> None:
            shown[0] = max(shown[0], events)
            if args.expect and events >= args.expect and "full" not in marks:
                marks["full"] = time.time()
                marks["full_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    engine = open_engine([Path(p) for p in args.paths], [], watch=True)
    app = ProbeApp(engine)
    result: dict[str, Any] = {}

    async def drive() -> None:
        async with app.run_test(headless=True, size=(160, 45)):
            deadline = time.time() + args.timeout
            while time.time() < deadline and (not app.loaded.is_set() or (args.expect and "full" not in marks)):
                await asyncio.sleep(0.02)
            if args.live_log:
                await asyncio.sleep(2.0)  # the backfill's last snapshot settles
                result.update(await _live_log(args, engine, shown))

    try:
        asyncio.run(drive())
    finally:
        engine.close()
    result.update(
        first_paint_s=marks["paint"] - t0 if "paint" in marks else None,
        full_count_s=marks["full"] - t0 if "full" in marks else None,
        full_rss_mb=marks.get("full_rss"),
        rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        events=engine.state.log.stats.events,
    )
    return result


def _rss_kb() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def _live_log(args: argparse.Namespace, engine: Any, shown: list[int]) -> dict[str, Any]:
    """Append log lines at a steady rate; the RSS a line adds, between the end of a warm-up stretch (the
    dashboard's first live polls and repaints allocate once) and the end of the measured one, each taken once
    every line written so far is counted on screen."""

    async def write(seconds: float) -> dict[str, Any]:
        writer = subprocess.Popen(
            [sys.executable, "-m", "bench.probe", "logwriter", args.live_log, "--rate", str(args.live_rate),
             "--seconds", str(seconds)],
            stdout=subprocess.PIPE,
        )  # fmt: skip
        while writer.poll() is None:
            await asyncio.sleep(0.05)
        out = writer.stdout.read() if writer.stdout is not None else b""
        return dict(json.loads(out or b"{}"))

    async def counted(want: int) -> None:
        deadline = time.time() + 30.0
        while time.time() < deadline and shown[0] < want:
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.0)

    start_events = engine.state.log.stats.events
    warm = await write(min(5.0, args.live_seconds))
    await counted(start_events + int(warm.get("continuity", 0)))
    before_events, before_rss = shown[0], _rss_kb()
    wrote = await write(args.live_seconds)
    want = before_events + int(wrote.get("continuity", 0))
    await counted(want)
    lines = int(wrote.get("lines", 0))
    grown = (_rss_kb() - before_rss) * 1024
    return {
        "live_lines": lines,
        "live_rate_achieved": wrote.get("rate"),
        "live_bytes_per_line": grown / lines if lines else None,
        "live_exact": shown[0] == want and engine.state.log.stats.events == want,
    }


def run_logwriter(args: argparse.Namespace) -> dict[str, Any]:
    """Append senpi log lines (the benchmark log's seed day, times from now on) at `rate` lines/s, one write
    each (O_APPEND, as senpi's appendFile), for `seconds`."""
    from bench.biglog import day_bytes

    now_ms = int(time.time() * 1000)
    fd = os.open(args.dst, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    lines = continuity = 0
    start = time.perf_counter()
    stop_at = start + args.seconds
    day = 0
    try:
        while time.perf_counter() < stop_at:
            for line in day_bytes(0, start_ms=now_ms + day * 86_400_000).splitlines(keepends=True):
                due = start + lines / args.rate
                pause = due - time.perf_counter()
                if pause > 0.002:
                    time.sleep(pause)
                if time.perf_counter() >= stop_at:
                    break
                os.write(fd, line)
                lines += 1
                continuity += b"_continuity" in line
            day += 1
    finally:
        os.close(fd)
    took = time.perf_counter() - start
    return {"lines": lines, "continuity": continuity, "rate": round(lines / took) if took else None}


# ---------------------------------------------------------------------------------------------- the writer
def run_writer(args: argparse.Namespace) -> list[float]:
    """Append ``src``'s lines to ``dst`` at ``rate`` lines/s for at most ``seconds``; one write per line, like
    senpi's appendFile. Timestamps are shifted so the session's first entry is now."""
    lines = Path(args.src).read_bytes().splitlines(keepends=True)
    first = _ISO.search(lines[0]) if lines else None
    shift_ms = 0
    if first is not None:
        shift_ms = int(time.time() * 1000) - _iso_ms(first.group(2).decode())
    dst = Path(args.dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    writes: list[float] = []
    interval = 1.0 / args.rate
    start = time.perf_counter()
    stop_at = start + args.seconds
    for i, line in enumerate(lines):
        due = start + i * interval
        if due > stop_at:
            break
        pause = due - time.perf_counter()
        if pause > 0:
            time.sleep(pause)
        data = _shift(line, shift_ms)
        with open(dst, "ab") as handle:
            handle.write(data)
        if is_assistant_line(line):
            writes.append(time.time())
    return writes


def _iso_ms(text: str) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def _shift(line: bytes, shift_ms: int) -> bytes:
    from datetime import UTC, datetime

    def iso(match: re.Match[bytes]) -> bytes:
        ms = _iso_ms(match.group(2).decode()) + shift_ms
        text = datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"
        return b'"' + match.group(1) + b'":"' + text.encode() + b'"'

    def num(match: re.Match[bytes]) -> bytes:
        return b'"timestamp":' + str(int(match.group(1)) + shift_ms).encode()

    return _MS.sub(num, _ISO.sub(iso, line))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    app = sub.add_parser("app")
    app.add_argument("paths", nargs="+")
    app.add_argument("--t0", type=float, required=True, help="the parent's time.time() just before spawning us")
    app.add_argument("--newest", help="the newest transcript (first data = it is on screen complete)")
    app.add_argument("--newest-turns", type=int, default=1)
    app.add_argument("--idle", type=float, default=30.0)
    app.add_argument("--timeout", type=float, default=600.0, help="give up waiting for the backfill after this")
    app.add_argument("--live-src", help="a transcript to replay live")
    app.add_argument("--live-dst", help="where the live transcript is written (inside a watched root)")
    app.add_argument("--live-rate", type=float, default=20.0)
    app.add_argument("--live-seconds", type=float, default=15.0)
    app.add_argument("--index", help="persistent index directory: restore from it at start")
    app.add_argument("--save-index", action="store_true", help="save the index once the backfill settled")
    logapp = sub.add_parser("logapp")
    logapp.add_argument("paths", nargs="+")
    logapp.add_argument("--t0", type=float, required=True)
    logapp.add_argument("--expect", type=int, default=0, help="decisions the full count shows")
    logapp.add_argument("--timeout", type=float, default=600.0)
    logapp.add_argument("--live-log", help="a session.log to append to once the backfill settled")
    logapp.add_argument("--live-rate", type=float, default=5000.0)
    logapp.add_argument("--live-seconds", type=float, default=30.0)
    logwriter = sub.add_parser("logwriter")
    logwriter.add_argument("dst")
    logwriter.add_argument("--rate", type=float, default=5000.0)
    logwriter.add_argument("--seconds", type=float, default=30.0)
    writer = sub.add_parser("writer")
    writer.add_argument("src")
    writer.add_argument("dst")
    writer.add_argument("--rate", type=float, default=20.0)
    writer.add_argument("--seconds", type=float, default=15.0)
    args = parser.parse_args(argv)
    if args.command == "writer":
        print(json.dumps(run_writer(args)))
    elif args.command == "logwriter":
        print(json.dumps(run_logwriter(args)))
    elif args.command == "logapp":
        print(json.dumps(run_logapp(args)))
    else:
        print(json.dumps(run_app(args)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
