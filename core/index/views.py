"""The stored report view of the log (`core.state.logview`): the `log_view` row, one per scope.

A view is written once a report has built it from the columns (`Index.close`), in one transaction, and only
when the stored log holds exactly the rows it was built from; it is read back with the log and used only when
it still fits them (`LogView.fits`). Its BLOB is compressed MessagePack decoded into the declared shape of the
`continuity` section (`_Section`: every field's type checked, the field order the contract's), so a damaged or
crafted view is refused (`Corrupt`: the scope is read again) and never reaches a report as anything but that
section. A view whose section does not come back exactly as it went in (a field this shape does not know) is
not stored: the next report builds from the columns.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import msgspec

from core.index.codec import Corrupt, check_strings, deflate, inflate, strings_of
from core.state.logview import LogView

__all__ = ["decode_view", "encode_view", "read_view", "write_view"]


class _Streak(msgspec.Struct):
    kind: str
    reason: str
    length: int
    start: str | None
    end: str | None
    count_first: int | None
    count_last: int | None


class _Peak(msgspec.Struct):
    value: int
    at: str | None
    kind: str


class _Timeline(msgspec.Struct):
    kinds: list[str]
    group_size: int
    starts: list[str | None]
    ends: list[str | None]
    counts: list[list[int]]


class _Section(msgspec.Struct):
    """`continuity` of the report (`reference/report-schema.md`) without `attributed` and `closes_paired`, in
    the contract's field order."""

    events: int
    by_kind: dict[str, int]
    by_reason: dict[str, dict[str, int]]
    resend_share: float | None
    streaks: list[_Streak]
    peak_count: _Peak | None
    closes: dict[str, int]
    timeline: _Timeline | None


class _View(msgspec.Struct, array_like=True):
    section: _Section
    named: dict[str, tuple[int, dict[str, int]]]


_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(_View)
_PLAIN = msgspec.msgpack.Decoder()


def encode_view(view: LogView) -> bytes | None:
    """The view's BLOB, or None when it is not stored: a string the report's redaction would change (a
    secret), a value MessagePack cannot hold, or a section this shape does not give back exactly."""
    section = view.section()
    try:
        typed = msgspec.convert([section, view.named], _View)
    except (msgspec.ValidationError, TypeError, ValueError):
        return None
    try:
        if _ENCODER.encode(msgspec.to_builtins(typed.section)) != _ENCODER.encode(section):
            return None  # (compared as MessagePack: the order of every mapping's keys too)
    except (OverflowError, TypeError):
        return None
    if check_strings([*strings_of(section["by_reason"]), *section["closes"], *view.named]) is not None:
        return None
    try:
        return deflate(_ENCODER.encode(typed))
    except (OverflowError, TypeError):
        return None


def decode_view(rows: int, closes: int, events: int, blob: bytes) -> LogView:
    """The stored view, its every field's type checked now (`Corrupt` if not its shape); its section is decoded
    again, as plain data, when a report asks for it (never two copies at once)."""
    try:
        view = _DECODER.decode(inflate(blob))
    except (msgspec.DecodeError, msgspec.ValidationError, TypeError, ValueError) as exc:
        raise Corrupt(f"the stored report view does not decode: {exc}") from None
    named = {sid: (first, by_kind) for sid, (first, by_kind) in view.named.items()}
    del view
    if any(first < 0 or first >= rows for first, _ in named.values()):
        raise Corrupt("the stored report view names a row the log has not")

    def section() -> dict[str, Any]:
        data = _PLAIN.decode(inflate(blob))  # checked above: a `_View` (an array: section, named)
        return data[0]  # type: ignore[no-any-return]

    return LogView(rows, closes, events, named, section)


def read_view(conn: sqlite3.Connection, scope: int) -> tuple[int, int, int, bytes] | None:
    row = conn.execute("SELECT rows, closes, events, data FROM log_view WHERE scope = ?", (scope,)).fetchone()
    if row is None:
        return None
    if not (all(isinstance(v, int) for v in row[:3]) and isinstance(row[3], bytes)):
        raise Corrupt("the stored report view is not one")
    return row[0], row[1], row[2], row[3]


def write_view(conn: sqlite3.Connection, scope: int, rows: int, closes: int, events: int, blob: bytes) -> bool:
    """Store the view when the stored log holds exactly the rows it was built from (else nothing)."""
    stored = conn.execute("SELECT rows, closes FROM log_state WHERE scope = ?", (scope,)).fetchone()
    if stored is None or tuple(stored) != (rows, closes):
        return False
    conn.execute(
        "INSERT OR REPLACE INTO log_view (scope, rows, closes, events, data) VALUES (?, ?, ?, ?, ?)",
        (scope, rows, closes, events, blob),
    )
    return True
