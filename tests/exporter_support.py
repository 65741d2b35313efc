"""Helpers for the tests that run `continuity-tui metrics` as a process and read what it serves."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from prometheus_client.parser import text_string_to_metric_families

from core.kernel.waste import waste_cause

ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")

Sample = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: bytes | str) -> Sample:
    """(sample name, labels) -> value of an exposition in the text format."""
    out: Sample = {}
    data = text.decode() if isinstance(text, bytes) else text
    for family in text_string_to_metric_families(data):
        for sample in family.samples:
            out[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return out


def total(samples: Sample, name: str, by: tuple[str, ...] = (), **where: str) -> dict[tuple[str, ...], float]:
    """`sum by (by) (name{where})` over parsed samples."""
    out: Counter[tuple[str, ...]] = Counter()
    for (sample, labels), value in samples.items():
        if sample != name:
            continue
        found = dict(labels)
        if any(found.get(k) != v for k, v in where.items()):
            continue
        out[tuple(found.get(k, "") for k in by)] += value
    return dict(out)


def call_of(turn: dict[str, Any]) -> tuple[str, str] | None:
    """A report turn's (kind, reason) as the report's `calls` section counts it (schema Additions: `turns[].call`,
    null for a copy of another session's call; a call without a reason counts as unknown/not_judged)."""
    call = turn["call"]
    if call is None:
        return None
    return (call["kind"], call["reason"]) if call["reason"] is not None else ("unknown", "not_judged")


def expected(report: dict[str, Any]) -> dict[str, Counter[tuple[str, ...]]]:
    """The figures the exposition must show, summed from the JSON report's own fields."""
    agent_of = {s["id"]: s.get("agent") for s in report["sessions"]}
    # payload bytes count where the agent's prompts are rebuilt byte for byte (`calls.by_agent[].payload`)
    exact = {name: figures["payload"] == "bytes" for name, figures in (report["calls"] or {})["by_agent"].items()}
    out: dict[str, Counter[tuple[str, ...]]] = {
        k: Counter() for k in ("calls", "payload", "tokens", "directives", "excess", "log", "sessions")
    }
    for turn in report["turns"]:
        call = call_of(turn)
        if call is None:
            continue
        agent = turn.get("agent") or agent_of.get(turn["session"]) or ""
        out["calls"][(agent, call[0], call[1], turn["model"] or "unknown")] += 1
        if turn["payload_bytes"] is not None and exact.get(agent):
            out["payload"][(agent, call[0])] += turn["payload_bytes"]
        for kind, n in (turn["tokens"] or {}).items():
            if kind in ("input", "output", "cache_read", "cache_write"):
                out["tokens"][(agent, kind)] += n or 0
        for tag, figures in (turn["directives"] or {}).items():
            out["directives"][(tag,)] += figures["copies"]
        excess = (turn.get("cache") or {}).get("excess")
        if excess:
            out["excess"][(agent, waste_cause(call[1], turn.get("cache")))] += excess
    for reason, kinds in report["continuity"]["by_reason"].items():
        for kind, n in kinds.items():
            out["log"][(kind, reason)] += n
    for session in report["sessions"]:
        out["sessions"][(session.get("agent") or "unknown",)] += 1
    return out


def nonzero(counter: Counter[tuple[str, ...]] | dict[tuple[str, ...], float]) -> dict[tuple[str, ...], float]:
    return {k: v for k, v in counter.items() if v}


class Running:
    def __init__(self, proc: subprocess.Popen[bytes], port: int, stderr: Path) -> None:
        self.proc, self.port, self.stderr = proc, port, stderr

    def get(self, path: str = "/metrics", accept: str | None = None, gzip_ok: bool = False) -> tuple[int, dict, bytes]:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}")
        if accept:
            request.add_header("Accept", accept)
        if gzip_ok:
            request.add_header("Accept-Encoding", "gzip")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as err:
            return err.code, dict(err.headers), err.read()


def start(paths: list[Path], tmp_path: Path, *extra: str, python: tuple[str, ...] = ()) -> Running:
    stderr = tmp_path / f"exporter-{time.monotonic_ns()}.err"
    cmd = [sys.executable, *python, "-m", "tui.cli", "metrics", *map(str, paths), "--listen", "127.0.0.1:0", *extra]
    with stderr.open("wb") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = re.search(rb"serving http://127\.0\.0\.1:(\d+)/metrics", stderr.read_bytes())
        if found:
            return Running(proc, int(found.group(1)), stderr)
        if proc.poll() is not None:
            raise AssertionError(stderr.read_bytes().decode())
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("the exporter did not say where it serves")


def stop(running: Running, timeout: float = 15) -> int:
    running.proc.send_signal(signal.SIGTERM)
    return running.proc.wait(timeout)


def wait_for(fn: Callable[[], T], timeout: float = 30, every: float = 0.1) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(every)
