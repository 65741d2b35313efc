"""Timestamps: agents write ISO-8601 UTC strings and epoch milliseconds; reports want one ISO form."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def parse_iso_ms(value: object) -> int | None:
    """ISO-8601 (`2026-08-22T18:12:18.123Z`) -> epoch ms; None when it is not a usable timestamp.

    Every log and transcript line goes through here, so it stays in C: `fromisoformat` reads the `Z` itself
    (Python 3.11+), and timedelta floor division is exact (`timestamp() * 1000` through a float was off by one
    millisecond for some values, e.g. `…20.853Z` -> 852)."""
    if not isinstance(value, str) or len(value) < 10:
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - _EPOCH) // _MS


def iso_ms(ms: int | float | None) -> str | None:
    """Epoch ms -> `YYYY-MM-DDTHH:MM:SS.mmmZ` (the report contract's form)."""
    if ms is None:
        return None
    dt = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(ms) % 1000:03d}Z"


def any_ms(value: object) -> int | None:
    """A timestamp that may be epoch ms (number) or ISO text."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return int(value)
    return parse_iso_ms(value)


def now_ms() -> int:
    return int(datetime.now(tz=UTC).timestamp() * 1000)
