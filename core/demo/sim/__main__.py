"""Command line: ``python -m core.demo.sim --out DIR --scenario demo`` writes an agent dir (deterministic)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from core.demo.sim.generator import generate
from core.demo.sim.scenarios import CORPUS_SESSIONS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write a simulated senpi agent dir (deterministic).")
    parser.add_argument("--out", type=Path, required=True, help="output agent dir")
    parser.add_argument("--scenario", choices=("demo", "corpus"), default="demo")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--rotate-bytes", type=int, default=None)
    parser.add_argument("--sessions", type=int, default=None, help=f"corpus sessions (default {CORPUS_SESSIONS})")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    manifest = generate(
        args.out,
        args.scenario,
        seed=args.seed,
        scale=args.scale,
        rotate_bytes=args.rotate_bytes,
        sessions=args.sessions,
    )
    total = sum(f.bytes for f in manifest.files)
    turns = sum(len(s.turns) for s in manifest.sessions)
    print(
        f"{args.out}: {len(manifest.sessions)} sessions, {turns} turns, {len(manifest.files)} files, "
        f"{total / 1e6:.1f} MB in {time.perf_counter() - started:.1f}s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
