"""The stored report view of the log (`core.state.logview`): the `log_view` row, one per scope.

A view is written once a report has built it from the columns (`Index.close`), in one transaction, and only
when the stored log holds exactly the rows it was built from; it is read back with the log and used only when
it still fits them (`LogView.fits`). Its BLOB is compressed MessagePack decoded into the declared shape of the
`continuity` section (`_Section`: every field's type checked, the field order the contract's), so a damaged or
crafted view is refused (`Corrupt`: the scope is read again) and never reaches a report as anything but that
section. A view whose section does not come back exactly as it went in (a field this shape does not know) or that a
load would refuse is not stored: the next report builds from the columns. A load checks what a crafted view
could put into a report that building it would not: every name inert text free of secrets, every time the
contract's form.
"""

from __future__ import annotations

import sqlite3
from operator import attrgetter
from typing import Any

import msgspec

from core.index.codec import Corrupt, check_strings, deflate, inflate
from core.report.values import text
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
    try:
        _check_texts(typed.section, view.named)  # what a load checks (a year before 1000, a secret: not stored)
    except Corrupt:
        return None
    try:
        return deflate(_ENCODER.encode(typed))
    except (OverflowError, TypeError):
        return None


def decode_view(rows: int, closes: int, events: int, blob: bytes) -> LogView:
    """The stored view, its every field's type checked now and its strings what a report makes of data (inert
    text free of secrets, times in the contract's form): `Corrupt` otherwise. The section becomes plain data
    when a report asks for it."""
    try:
        view = _DECODER.decode(inflate(blob))
    except (msgspec.DecodeError, msgspec.ValidationError, TypeError, ValueError) as exc:
        raise Corrupt(f"the stored report view does not decode: {exc}") from None
    named = {sid: (first, by_kind) for sid, (first, by_kind) in view.named.items()}
    if any(first < 0 or first >= rows for first, _ in named.values()):
        raise Corrupt("the stored report view names a row the log has not")
    section = view.section
    _check_texts(section, named)
    del view

    def plain_section() -> dict[str, Any]:
        return msgspec.to_builtins(section)  # type: ignore[no-any-return]

    return LogView(rows, closes, events, named, plain_section)


_TIME_CHARS = b"0123456789-:.TZ"
_TIME_LENGTH = len("2026-08-04T02:00:40.000Z")


def _check_texts(section: _Section, named: dict[str, tuple[int, dict[str, int]]]) -> None:
    """Every name (kinds, reasons, session ids) is inert text free of secrets, and every time is 24 characters of
    a time's digits and signs (checked in C over all of them joined): a crafted view cannot put into a report
    what building it from the columns would not (a control sequence, markup, a secret)."""
    streaks = section.streaks
    names = {*section.by_kind, *section.by_reason, *section.closes, *named}
    for kinds in (*section.by_reason.values(), *(by_kind for _, by_kind in named.values())):
        names.update(kinds)
    names.update(map(_KIND, streaks))
    names.update(map(_REASON, streaks))
    times = [*filter(None, map(_START, streaks)), *filter(None, map(_END, streaks))]
    if section.peak_count is not None:
        names.add(section.peak_count.kind)
        times.append(section.peak_count.at or "")
    if section.timeline is not None:
        names.update(section.timeline.kinds)
        times += filter(None, (*section.timeline.starts, *section.timeline.ends))
    if any(text(name) != name for name in names) or check_strings(names) is not None:
        raise Corrupt("the stored report view holds a string a report would not")
    times = list(filter(None, times))
    try:
        joined = "".join(times).encode("ascii")
    except UnicodeEncodeError:
        joined = b"?"
    if not set(map(len, times)) <= {_TIME_LENGTH} or joined.translate(None, _TIME_CHARS):
        raise Corrupt("the stored report view holds a time a report would not")


_KIND, _REASON, _START, _END = attrgetter("kind"), attrgetter("reason"), attrgetter("start"), attrgetter("end")


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
