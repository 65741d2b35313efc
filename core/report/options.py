"""What a report selects and how it treats secrets: parsed once from the CLI (or built by the TUI's export).

`--since` / `--until` accept an ISO-8601 time (`2026-08-04T02:00:00Z`, `2026-08-04`, with or without an
offset; a naive time is UTC like everything senpi writes) or an age relative to now (`90s`, `30m`, `2h`,
`1d`, `1w`, or combinations such as `1h30m`). Relative means wall-clock now, not the newest line, because
that is what "the last two hours" means to the person typing it.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from datetime import UTC, datetime

from msgspec import Struct

from core.kernel.pricing import BUNDLED, PriceTable, load_prices
from core.model import Problem, Turn
from core.timeutil import iso_ms, now_ms

_UNIT_MS = {"s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 7 * 86_400_000}
_RELATIVE = re.compile(r"^(?:\d+[smhdw])+$")
_PART = re.compile(r"(\d+)([smhdw])")


class ReportOptions(Struct, frozen=True):
    """Selection and privacy switches for one report. Defaults: everything, redacted, text summarized."""

    session: str | None = None
    since_ms: int | None = None
    until_ms: int | None = None
    redact: bool = True
    include_text: bool = False
    #: the report's `generated_at`; None = the moment it is built (tests pin it for stable output)
    now_ms: int | None = None
    #: problems a live engine still holds back (`Engine.pending_problems`: a write in progress, a file not
    #: recognised yet) that a snapshot counts, as `report` does after `report_partials`/`finish_pending`
    pending: tuple[Problem, ...] = ()
    #: only the turns this accepts (the dashboard's `/` filter, exported as it is on screen), and its text for
    #: the report's `selection.filter`; the log's decision counts (`continuity`) are not filtered
    turn_filter: Callable[[Turn], bool] | None = None
    filter_text: str | None = None
    #: list prices per model (`--prices FILE` on top of the bundled table); None = the bundled table
    prices: PriceTable | None = None

    @property
    def price_table(self) -> PriceTable:
        return self.prices if self.prices is not None else BUNDLED

    @property
    def filtered(self) -> bool:
        return self.turn_filter is not None

    def keeps(self, turn: Turn) -> bool:
        """Whether a turn is in the selection: inside the time window and accepted by the turn filter."""
        return self.in_window(turn.ts_ms) and (self.turn_filter is None or self.turn_filter(turn))

    @property
    def windowed(self) -> bool:
        """True when a time window applies: lines and turns without a time are then left out."""
        return self.since_ms is not None or self.until_ms is not None

    def in_window(self, ts_ms: int | None) -> bool:
        """Whether a line or turn at `ts_ms` falls inside `[since, until]` (both ends inclusive)."""
        if not self.windowed:
            return True
        if ts_ms is None:
            return False
        if self.since_ms is not None and ts_ms < self.since_ms:
            return False
        return not (self.until_ms is not None and ts_ms > self.until_ms)

    @classmethod
    def from_args(cls, args: argparse.Namespace, *, now: int | None = None) -> ReportOptions:
        """Build from parsed CLI arguments; raise ValueError with a one-line message on a bad time."""
        reference = now_ms() if now is None else now
        since = parse_time(getattr(args, "since", None), "--since", reference)
        until = parse_time(getattr(args, "until", None), "--until", reference)
        if since is not None and until is not None and since > until:
            raise ValueError(f"--since ({iso_ms(since)}) is later than --until ({iso_ms(until)})")
        session = getattr(args, "session", None)
        return cls(
            prices=prices_from_args(args),
            session=(session.strip() or None) if isinstance(session, str) else None,
            since_ms=since,
            until_ms=until,
            redact=not getattr(args, "no_redact", False),
            include_text=bool(getattr(args, "include_text", False)),
        )


def prices_from_args(args: argparse.Namespace) -> PriceTable | None:
    """The price table `--prices FILE` gives (on top of the bundled one), or None without the option; raises
    ValueError (`PriceFileError`) with a one-line message for a file that cannot be used."""
    path = getattr(args, "prices", None)
    return load_prices(path) if path is not None else None


def parse_time(value: str | None, option: str, reference_ms: int) -> int | None:
    """An ISO time or a relative age (before `reference_ms`) -> epoch ms; None when not given."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        raise ValueError(f"{option}: empty value; expected an ISO time or an age like 2h, 30m, 1d")
    lowered = text.lower()
    if lowered == "now":
        return reference_ms
    if _RELATIVE.match(lowered):
        return reference_ms - sum(int(n) * _UNIT_MS[unit] for n, unit in _PART.findall(lowered))
    parsed = _parse_iso(text)
    if parsed is None:
        raise ValueError(f"{option}: {text!r} is neither an ISO time (2026-08-04T02:00:00Z) nor an age (2h, 30m, 1d)")
    return parsed


def _parse_iso(text: str) -> int | None:
    iso = text[:-1] + "+00:00" if text[-1:] in ("Z", "z") else text
    try:
        dt = datetime.fromisoformat(iso)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return int(dt.timestamp() * 1000)
