"""Replays the bundled demo agent dir into a target dir, line by line, at a chosen speed.

Why: a newcomer who starts the app on the demo data should see panes move within seconds, exactly as they
would while senpi runs: lines appended to the shared session.log, transcripts growing, session.log rotating
into session.log.1, the sidecar replaced atomically. The replay follows the simulator's record of every write
(``manifest.json`` → ``replay``); without one it infers the order from the timestamps in the lines.
"""

from __future__ import annotations

import calendar
import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Any

SESSION_LOG = "logs/session.log"
Op = list[Any]  # [ms, "a", target, source, offset, nbytes] | [ms, "r", path] | [ms, "w", path]
_ISO = re.compile(rb'"(?:ts|timestamp)":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)"')


class DemoWriter:
    """A background thread that copies ``source`` into ``target`` in timestamp order across all files.

    ``speed`` divides the time between two writes (60 = one minute of agent time per second); no single
    pause is longer than ``max_sleep`` seconds. With ``split_some`` some lines are written in two pieces so
    readers see partial lines. ``stop()`` joins the thread and may be called any number of times.
    """

    def __init__(
        self, source: Path, target: Path, speed: float = 60.0, *, split_some: bool = False, max_sleep: float = 0.5
    ) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        self.source = Path(source)
        self.target = Path(target)
        self.speed = speed
        self.split_some = split_some
        self.max_sleep = max_sleep
        self.error: BaseException | None = None
        self._ops = load_ops(self.source)
        self._stop = threading.Event()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._touched: set[str] = set()

    @property
    def done(self) -> bool:
        """True once every write of the bundle has been replayed."""
        return self._done.is_set()

    def start(self) -> None:
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="demo-writer", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the replay is done (or ``timeout`` passes); returns ``done``."""
        self._done.wait(timeout)
        return self.done

    # -- the replay ------------------------------------------------------------------------------------------
    def _run(self) -> None:
        try:
            previous: int | None = None
            for number, op in enumerate(self._ops):
                if previous is not None and self._pause((op[0] - previous) / 1000 / self.speed):
                    return
                previous = op[0]
                self._apply(number, op)
            self._done.set()
        except BaseException as exc:  # reported through .error: the thread must not die silently
            self.error = exc

    def _pause(self, seconds: float) -> bool:
        """Sleep up to ``max_sleep``; True when asked to stop meanwhile."""
        seconds = min(max(seconds, 0.0), self.max_sleep)
        return self._stop.wait(seconds) if seconds > 0 else self._stop.is_set()

    def _apply(self, number: int, op: Op) -> None:
        kind = op[1]
        if kind == "a":
            _, _, target, source, offset, size = op
            with open(self.source / source, "rb") as handle:
                handle.seek(offset)
                data = handle.read(size)
            if self.split_some and number % 7 == 3 and len(data) > 2:
                cut = len(data) // 2
                self._append(target, data[:cut])
                if self._pause(min(0.05, self.max_sleep)):
                    self._append(target, data[cut:])  # never leave a half line behind on stop
                    return
                data = data[cut:]
            self._append(target, data)
        elif kind == "r":
            self._rotate(op[2])
        elif kind == "w":
            self._replace(op[2])

    def _append(self, rel: str, data: bytes) -> None:
        """One open/write/close per write, like senpi's logger; a file is truncated the first time we touch it."""
        path = self.target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = "ab" if rel in self._touched else "wb"
        self._touched.add(rel)
        with open(path, mode) as handle:
            handle.write(data)

    def _rotate(self, rel: str) -> None:
        path = self.target / rel
        if path.exists():
            os.replace(path, path.with_name(path.name + ".1"))
            self._touched.add(rel + ".1")
        self._touched.discard(rel)

    def _replace(self, rel: str) -> None:
        path = self.target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes((self.source / rel).read_bytes())
        os.replace(tmp, path)
        self._touched.add(rel)


def load_ops(source: Path) -> list[Op]:
    """The replay plan: the simulator's recorded writes when the bundle has them, else inferred."""
    manifest = source / "manifest.json"
    if manifest.exists():
        replay = json.loads(manifest.read_text(encoding="utf-8")).get("replay")
        if replay:
            return replay
    return infer_ops(source)


def infer_ops(source: Path) -> list[Op]:
    """Order every line of every file by the time written in it (``ts`` or ``timestamp``; a line without one
    keeps the time of the line before it). ``session.log.1`` is written as ``session.log`` first and rotated
    away right before the first line of the current ``session.log``; sidecars are written with the last line of
    their transcript."""
    keyed: list[tuple[int, int, int, Op]] = []
    files = sorted(p for p in source.rglob("*") if p.is_file() and p.name != "manifest.json")
    rotated = source / (SESSION_LOG + ".1")
    for order, path in enumerate(files):
        rel = path.relative_to(source).as_posix()
        if rel.endswith(".claude-sdk-oauth-binding.json"):
            continue
        target = SESSION_LOG if path == rotated else rel
        last_ms, offset, first = 0, 0, True
        for index, line in enumerate(path.read_bytes().splitlines(keepends=True)):
            match = _ISO.search(line)
            if match:
                last_ms = parse_iso_ms(match.group(1).decode())
            if first and rel == SESSION_LOG and rotated.exists():
                keyed.append((last_ms, order, -1, [last_ms, "r", SESSION_LOG]))
            first = False
            keyed.append((last_ms, order, index, [last_ms, "a", target, rel, offset, len(line)]))
            offset += len(line)
        sidecar = source / (rel + ".claude-sdk-oauth-binding.json")
        if sidecar.exists():
            keyed.append((last_ms, order, 1 << 30, [last_ms, "w", sidecar.relative_to(source).as_posix()]))
    keyed.sort(key=lambda item: item[:3])
    return [op for *_, op in keyed]


def parse_iso_ms(text: str) -> int:
    """Epoch milliseconds of a ``toISOString`` time (``2026-08-07T09:12:04.311Z``).

    Kept here rather than imported: the simulator (``core.demo.sim``) is a leaf only the demo data, tests and
    bench use, and the dashboard's writer must not load it for two small names.
    """
    base = calendar.timegm(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S"))
    return base * 1000 + int(text[20:23])


def demo_source() -> Path:
    """The bundled demo agent dir (shipped inside the package, so `--demo` works from any install)."""
    return Path(__file__).resolve().parent / "data"
