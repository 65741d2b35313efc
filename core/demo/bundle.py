"""The bundled senpi demo history: where it ships and the order its files were written in.

The simulator (`core.demo.sim`) records every write it made in `manifest.json` (`replay`): appends to the
shared session.log and the transcripts, session.log rotating into session.log.1, the sidecar replaced
atomically. `core.demo.senpi` turns that record into the live demo's writes (`core.demo.live.LiveDemo` plays
them with the other agents'); nothing else replays the bundle.
"""

from __future__ import annotations

import calendar
import json
import time
from pathlib import Path
from typing import Any

Op = list[Any]  # [ms, "a", target, source, offset, nbytes] | [ms, "r", path] | [ms, "w", path]


class BundleError(ValueError):
    """A demo bundle without the simulator's record of its writes."""


def load_ops(source: Path) -> list[Op]:
    """The simulator's recorded writes, in the order it made them; a bundle without them is refused (its order
    would have to be guessed from the timestamps, and the live demo promises the order senpi wrote)."""
    manifest = source / "manifest.json"
    try:
        replay = json.loads(manifest.read_text(encoding="utf-8")).get("replay")
    except (OSError, ValueError) as err:
        raise BundleError(f"{manifest}: cannot read the demo's record of writes ({err})") from None
    if not replay:
        raise BundleError(f"{manifest}: no `replay` (regenerate the bundle with the simulator)")
    return replay


def parse_iso_ms(text: str) -> int:
    """Epoch milliseconds of a ``toISOString`` time (``2026-08-07T09:12:04.311Z``).

    Kept here rather than imported: the simulator (``core.demo.sim``) is a leaf only the demo data, tests and
    bench use, and the dashboard's demo must not load it for two small names.
    """
    base = calendar.timegm(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S"))
    return base * 1000 + int(text[20:23])


def demo_source() -> Path:
    """The bundled demo agent dir (shipped inside the package, so `--demo` works from any install)."""
    return Path(__file__).resolve().parent / "data"
