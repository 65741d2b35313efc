"""A large senpi ``session.log`` for the log benchmarks: one seed-shaped day repeated, one day apart.

``python -m bench.biglog --days 8000 OUT`` writes the 166 MB, 1,096,000-line log the performance review
measured (`../shared/reviews/performance.md` §1): 137 lines a day, 130 of them continuity decisions in runs
of equal (kind, reason) as senpi writes them (a delta streak while the prefix matches, a burst of flattens
after a rewrite, forks after an idle gap), 5 session closes, 2 provider errors. Newer builds' lines carry a
``sessionId`` (one day in eight here), older ones none. Key order and number format are what senpi's
``JSON.stringify`` writes, times are its ``toISOString`` (UTC, milliseconds, ``Z``).

The day is drawn once from a seeded generator and then copied with its times shifted, so the file is
deterministic and every day has the same shape (the review's runs: ~29 a day, 4 streaks). Written in 8 MiB
slabs: the generator's own memory stays flat whatever the size.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from core.model import CLOSE_EVENT, CONTINUITY_EVENT

START = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
DAY_MS = 86_400_000
CONTINUITY_PER_DAY = 130
CLOSES_PER_DAY = 5
ERRORS_PER_DAY = 2
#: (kind, reason, relative weight, mean run length): the mix of a working day
RUNS = (
    ("delta", "prefix_matched", 60, 4),
    ("flatten", "assistant_rewritten", 10, 3),
    ("flatten", "registry_miss", 6, 1),
    ("fork", "idle_ttl", 6, 2),
    ("fork", "history_rolled_back", 3, 1),
    ("bootstrap", "model_selected", 5, 1),
    ("flatten", "sent_stream_diverged", 4, 2),
    ("fork", "capacity", 2, 1),
    ("disabled", "resume_mode_off", 1, 2),
    ("failed", "query_failed", 1, 1),
)
CLOSE_REASONS = ("assistant_rewritten", "other", "idle_ttl", "session_shutdown")


def _iso(ms: int) -> str:
    dt = START + timedelta(milliseconds=ms)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def seed_day(seed: int = 4) -> list[tuple[int, dict[str, object]]]:
    """(ms after the day's start, the line's fields without ``ts``) for one day, in writing order."""
    rng = random.Random(seed)
    weights = [w for _, _, w, _ in RUNS]
    events: list[dict[str, object]] = []
    while len(events) < CONTINUITY_PER_DAY:
        kind, reason, _, mean = rng.choices(RUNS, weights)[0]
        count = rng.randint(1, 40)
        length = min(CONTINUITY_PER_DAY - len(events), 1 + min(20, round(rng.expovariate(1 / mean))))
        for _ in range(length):
            count += 1 if kind == "delta" else rng.randint(0, 3)
            events.append({"level": "info", "event": CONTINUITY_EVENT, "kind": kind, "reason": reason, "count": count})
    for _ in range(CLOSES_PER_DAY):
        at = rng.randrange(1, len(events))
        events.insert(at, {"level": "info", "event": CLOSE_EVENT, "reason": rng.choice(CLOSE_REASONS)})
    for _ in range(ERRORS_PER_DAY):
        at = rng.randrange(1, len(events))
        events.insert(at, {"level": "warn", "event": "provider_error", "status": 529, "message": "overloaded"})
    out: list[tuple[int, dict[str, object]]] = []
    ms = 0
    for fields in events:
        ms += rng.randint(800, 40_000)
        out.append((ms, fields))
    return out


def day_bytes(day: int, seed: int = 4, *, session: str | None = None, start_ms: int | None = None) -> bytes:
    """The lines of day `day` (times `day` days after `START`, or from `start_ms`), as written."""
    base = day * DAY_MS if start_ms is None else start_ms - int(START.timestamp() * 1000)
    out = []
    for ms, fields in seed_day(seed):
        record: dict[str, object] = {"ts": _iso(base + ms), **fields}
        if session is not None and fields["event"] in (CONTINUITY_EVENT, CLOSE_EVENT):
            record["sessionId"] = session
        out.append(json.dumps(record, separators=(",", ":")) + "\n")
    return "".join(out).encode()


def write(path: Path, days: int, seed: int = 4) -> tuple[int, int]:
    """Write ``days`` copies of the seed day to ``path``; returns (bytes, lines)."""
    day = seed_day(seed)
    session = "0b6c5f4e-2a41-4c8e-9d1e-7f3a2b9c{:04x}"
    total = lines = 0
    slab: list[str] = []
    size = 0
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for d in range(days):
            sid = session.format(d % 65536) if d % 8 == 7 else None
            for ms, fields in day:
                record: dict[str, object] = {"ts": _iso(d * DAY_MS + ms), **fields}
                if sid is not None and fields["event"] in (CONTINUITY_EVENT, CLOSE_EVENT):
                    record["sessionId"] = sid
                text = json.dumps(record, separators=(",", ":")) + "\n"
                slab.append(text)
                size += len(text)
                lines += 1
            if size >= 8 << 20:
                fh.write("".join(slab))
                total += size
                slab, size = [], 0
        fh.write("".join(slab))
        total += size
    return total, lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write a large senpi session.log (one seed day repeated).")
    parser.add_argument("out", type=Path)
    parser.add_argument("--days", type=int, default=8000, help="days of history (8000: 166 MB, 1,096,000 lines)")
    parser.add_argument("--seed", type=int, default=4)
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    nbytes, lines = write(args.out, args.days, args.seed)
    print(f"{args.out}: {nbytes / 1e6:.0f} MB, {lines:,} lines", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
