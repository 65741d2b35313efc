"""A part of a log read apart (`core.pool`): its columns as BLOBs with their vocabularies, its aggregates, and
what else its lines gave, for `core.state.State.apply_range` to take back in order."""

from __future__ import annotations

from collections import Counter

from msgspec import Struct, field

from core.kernel.stats import LogStats
from core.model import Problem


class LogPart(Struct, dict=True):
    """What one worker read of its range: the columns as BLOBs with their vocabularies, the aggregates, and
    everything `State.apply_block` would have taken line by line. Line numbers and rows are relative to the
    range (its first line is line 1, its first row row 0)."""

    start: int
    end: int  # just after the last line read (short of the range's end when the file shrank)
    lines: int
    bad_lines: int
    continuity: dict[str, tuple[str, bytes]]
    continuity_extras: dict[str, dict[int, object]]
    closes: dict[str, tuple[str, bytes]]
    closes_extras: dict[str, dict[int, object]]
    vocabularies: dict[str, list[str]]
    stats: LogStats
    other: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    named: Counter[str] = field(default_factory=Counter)
