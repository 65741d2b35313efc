"""Benchmark corpora: a senpi agent dir of a chosen size, written by the deterministic simulator.

Why a wrapper and not a generator of its own: ``core.demo.sim`` already writes what senpi writes
(session.log with real size-based rotation, transcripts with long tool results, thinking blocks, directive
blocks, flatten and fork chains, sidecars, ``--mode json`` event recordings) and its tests check that the
bytes are right. A second generator would drift from it. This module only chooses the simulator's
parameters for a size target and caches the result.

How a size is reached: history grows by *sessions*, not by fatter tool outputs, so a bigger corpus has
proportionally more sessions and turns at the simulator's realistic tool-output scale (1.0). That is the
shape "months of history" has, and it is the honest load for the memory target: RSS is allowed to grow
with turns, so the 1 GB corpus has about ten times the turns of the 100 MB one. Rotation uses senpi's own
5 MiB threshold, so only the big corpora rotate ``session.log`` (senpi keeps one old generation).

Corpora live under ``/tmp/continuity-bench`` (``$CONTINUITY_BENCH_DIR`` overrides), never in the repository,
and are reused while the simulator version and parameters are unchanged.

Command line: ``python -m bench.corpus --size 1GB`` prints the corpus path and its shape.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from core.demo.sim.generator import generate
from core.demo.sim.manifest import GENERATOR_VERSION
from core.demo.sim.sink import DEFAULT_ROTATE_BYTES

DEFAULT_ROOT = Path(os.environ.get("CONTINUITY_BENCH_DIR", "/tmp/continuity-bench"))
BYTES_PER_SESSION = 470_000
"""Measured mean bytes one simulated corpus session writes at scale 1.0 (transcript, its share of the logs,
sidecar, and an event recording for every 8th session): 112.8 MB for 240 sessions with seed 7."""
MIN_SESSIONS = 16
MARKER = "bench-corpus.json"
"""Written last, after the simulator finished: a corpus without it is incomplete and is regenerated."""
_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30}


@dataclass(frozen=True, slots=True)
class Corpus:
    """One generated agent dir and the facts a benchmark table needs about it."""

    path: Path
    """The agent dir: ``logs/``, ``sessions/``, ``events/`` (and the simulator's ``manifest.json``)."""
    target_bytes: int
    bytes: int
    """Bytes of every file a report reads (logs, transcripts, sidecars, event recordings)."""
    sessions: int
    turns: int
    files: int
    seed: int
    generated_s: float
    """Seconds the simulator took when this corpus was written (0.0 when it was reused from disk)."""

    @property
    def logs(self) -> Path:
        return self.path / "logs"

    @property
    def session_log(self) -> Path:
        return self.path / "logs" / "session.log"

    @property
    def transcripts(self) -> Path:
        return self.path / "sessions"

    @property
    def events(self) -> Path:
        return self.path / "events"

    def report_paths(self) -> list[Path]:
        """What the whole-corpus benchmark reads: the agent dir (logs + sessions) and the event recordings."""
        return [self.path, self.events] if self.events.is_dir() else [self.path]

    def log_files(self) -> list[Path]:
        """session.log's generations, oldest first (what ``report logs/session.log`` reads)."""
        rotated = self.session_log.with_name("session.log.1")
        return [p for p in (rotated, self.session_log) if p.exists()]

    def label(self) -> str:
        return human_size(self.target_bytes)


def parse_size(text: str) -> int:
    """``"100MB"`` -> 100_000_000; decimal units (MB/s reads naturally), binary ones (MiB) accepted too."""
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", text)
    if match is None or match.group(2).upper() not in _UNITS:
        raise ValueError(f"not a size: {text!r} (e.g. 100MB, 1GB)")
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def human_size(n: int) -> str:
    """``1_000_000_000`` -> ``"1 GB"``, ``100_000_000`` -> ``"100 MB"`` (decimal, like the targets)."""
    for unit, factor in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if n >= factor:
            value = n / factor
            return f"{value:.0f} {unit}" if value >= 10 or value.is_integer() else f"{value:.1f} {unit}"
    return f"{n} B"


def sessions_for(size: int) -> int:
    """Sessions that make a corpus of about ``size`` bytes (history grows by sessions; see the module doc)."""
    return max(MIN_SESSIONS, round(size / BYTES_PER_SESSION))


def corpus_dir(size: int, seed: int, root: Path = DEFAULT_ROOT) -> Path:
    return root / f"corpus-{human_size(size).replace(' ', '')}-seed{seed}"


def _params(size: int, seed: int) -> dict[str, object]:
    return {
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "sessions": sessions_for(size),
        "scale": 1.0,
        "rotate_bytes": DEFAULT_ROTATE_BYTES,
    }


def ensure(size: int, *, seed: int = 7, root: Path = DEFAULT_ROOT, force: bool = False, quiet: bool = False) -> Corpus:
    """The corpus for ``size``: reused when a complete one with the same parameters exists, else written.

    Generation streams (the simulator keeps no session history once a session ends), so its memory does not
    grow with the size; 1 GB takes about two minutes on the benchmark machine.
    """
    out = corpus_dir(size, seed, root)
    params = _params(size, seed)
    marker = out / MARKER
    if not force and marker.exists():
        try:
            saved = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            saved = {}
        if saved.get("params") == params:
            return Corpus(out, size, saved["bytes"], saved["sessions"], saved["turns"], saved["files"], seed, 0.0)
    if out.exists():
        shutil.rmtree(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not quiet:
        print(f"generating a {human_size(size)} corpus ({params['sessions']} sessions) in {out} …", file=sys.stderr)
    started = time.perf_counter()
    manifest = generate(
        out,
        "corpus",
        seed=seed,
        scale=float(params["scale"]),  # type: ignore[arg-type]
        rotate_bytes=int(params["rotate_bytes"]),  # type: ignore[call-overload]
        sessions=int(params["sessions"]),  # type: ignore[call-overload]
    )
    took = time.perf_counter() - started
    corpus = Corpus(
        out,
        size,
        sum(f.bytes for f in manifest.files),
        len(manifest.sessions),
        sum(len(s.turns) for s in manifest.sessions),
        len(manifest.files),
        seed,
        took,
    )
    record = {"params": params, **{k: v for k, v in asdict(corpus).items() if k not in ("path", "generated_s")}}
    record["generated_s"] = round(took, 1)
    marker.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return corpus


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write (or reuse) a benchmark corpus of a given size.")
    parser.add_argument("--size", default="1GB", help="target size, e.g. 100MB or 1GB (default 1GB)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help=f"where corpora live (default {DEFAULT_ROOT})")
    parser.add_argument("--force", action="store_true", help="regenerate even if a matching corpus exists")
    args = parser.parse_args(argv)
    try:
        size = parse_size(args.size)
    except ValueError as err:
        parser.error(str(err))
    corpus = ensure(size, seed=args.seed, root=args.root, force=args.force)
    took = f", generated in {corpus.generated_s:.0f}s" if corpus.generated_s else " (reused)"
    print(
        f"{corpus.path}: {human_size(corpus.bytes)}, {corpus.sessions} sessions, {corpus.turns} turns, "
        f"{corpus.files} files{took}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
