"""The stored report view of the log (`core.state.logview`): the `log_view` row, one per scope.

A view is written once a report has built it from the columns (`Index.close`), in one transaction, and only
when the stored log holds exactly the rows it was built from; it is read back with the log and used only when
it still fits them (`LogView.fits`). Its BLOB is compressed MessagePack decoded into the declared shape of the
`continuity` section (`_Section`: every field's type checked, the field order the contract's), so a damaged or
crafted view is refused (`Corrupt`: the scope is read again) and never reaches a report as anything but that
section. A view whose section does not come back exactly as it went in (a field this shape does not know) or that a
load would refuse is not stored: the next report builds from the columns. A load checks what a crafted view
could put into a report that building it would not: every name inert text free of secrets, every time a time
(the contract's form; a streak's, RFC 3339: below).

The streaks (56,000 on the 1.1M-line log: 13 MB of its 14 MB report) are stored as the JSON a report writes for
them (`encode_view` dumps them as the report's writer does, at their depth), and a JSON report writes those bytes
as they are (`StoredJSON`): checked when loaded, never rebuilt. The check is one typed decode in C
(`_streaks_decoder`: every kind and reason one of the view's `names`, which are checked as text with the others,
every time an RFC 3339 time, no field besides the contract's). The second report of that log spent ~0.19 s on
its streaks (typed MessagePack decoded, each streak's strings checked in Python, dicts made and dumped again);
now ~0.05 s. A Markdown or HTML report decodes them as data when it reads them.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from functools import lru_cache
from operator import attrgetter
from typing import Any, Literal

import msgspec
import orjson

from core.index.codec import Corrupt, check_strings, deflate, inflate
from core.report.stream import StoredJSON, stored_json
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
    """The section, its `streaks` stored empty: they are `streaks`."""
    named: dict[str, tuple[int, dict[str, int]]]
    names: list[str]
    """Every kind and reason the streaks name (what `_streaks_decoder` accepts there)."""
    streaks: bytes
    """The section's streaks as the JSON a report writes for them where they stand (`stored_json`)."""


_PLAIN_STREAKS = msgspec.json.Decoder(list[_Streak])


@lru_cache(maxsize=8)
def _streaks_decoder(names: tuple[str, ...]) -> msgspec.json.Decoder[Any]:
    """A decoder that checks the stored streaks JSON in C: a kind or reason only among `names`, every time an RFC
    3339 time (decoded as a `datetime`: digits and separators, nothing a report could not hold), nothing beyond
    the declared fields. Its result is dropped: a report writes the checked bytes. Decoding the times as text
    and checking their characters in Python instead cost ~0.03 s more on the 1.1M-line log's 112,000 times."""
    name = Literal[names]  # type: ignore[valid-type]
    fields = [("kind", name), ("reason", name), ("length", int), ("start", datetime | None), ("end", datetime | None),
              ("count_first", int | None), ("count_last", int | None)]  # fmt: skip
    checked = msgspec.defstruct("_CheckedStreak", fields, forbid_unknown_fields=True)
    return msgspec.json.Decoder(list[checked])  # type: ignore[valid-type]


_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(_View)


def encode_view(view: LogView) -> bytes | None:
    """The view's BLOB, or None when it is not stored: a string the report's redaction would change (a
    secret), a value MessagePack cannot hold, or a section this shape does not give back exactly."""
    section = view.section()
    try:
        typed = msgspec.convert([section, view.named, [], b""], _View)
    except (msgspec.ValidationError, TypeError, ValueError):
        return None
    try:
        if _ENCODER.encode(msgspec.to_builtins(typed.section)) != _ENCODER.encode(section):
            return None  # (compared as MessagePack: the order of every mapping's keys too)
        streaks = stored_json(section["streaks"])
    except (OverflowError, TypeError, orjson.JSONEncodeError):
        return None
    typed.names = sorted({*map(_KIND, typed.section.streaks), *map(_REASON, typed.section.streaks)})
    try:
        # what a load checks, and the streaks' times too in the contract's form (a year before 1000, a secret:
        # not stored); then the streaks as the JSON a load reads
        _check_texts(typed.section, view.named, typed.names)
        _check_streaks(typed.names, streaks)
    except Corrupt:
        return None
    typed.section.streaks = []
    typed.streaks = streaks
    try:
        return deflate(_ENCODER.encode(typed), level=6)  # (written once, read by every next report)
    except (OverflowError, TypeError):
        return None


def decode_view(rows: int, closes: int, events: int, blob: bytes) -> LogView:
    """The stored view, its every field's type checked now and its strings what a report makes of data (inert
    text free of secrets; times in the contract's form, the streaks' RFC 3339 times): `Corrupt` otherwise. The
    section becomes plain data when a report asks for it; a JSON report takes its streaks as the checked JSON
    (`LogView.json_section`)."""
    try:
        view = _DECODER.decode(inflate(blob))
    except (msgspec.DecodeError, msgspec.ValidationError, TypeError, ValueError) as exc:
        raise Corrupt(f"the stored report view does not decode: {exc}") from None
    named = {sid: (first, by_kind) for sid, (first, by_kind) in view.named.items()}
    if any(first < 0 or first >= rows for first, _ in named.values()):
        raise Corrupt("the stored report view names a row the log has not")
    section, streaks_json = view.section, view.streaks
    if section.streaks:
        raise Corrupt("the stored report view holds its streaks twice")
    _check_texts(section, named, view.names)
    _check_streaks(view.names, streaks_json)
    del view

    def streaks() -> list[Any]:
        return msgspec.to_builtins(_PLAIN_STREAKS.decode(streaks_json))  # type: ignore[no-any-return]

    def plain_section() -> dict[str, Any]:
        out: dict[str, Any] = msgspec.to_builtins(section)
        out["streaks"] = streaks()
        return out

    def json_section() -> dict[str, Any]:
        out: dict[str, Any] = msgspec.to_builtins(section)
        out["streaks"] = StoredJSON(streaks_json, streaks)
        return out

    return LogView(rows, closes, events, named, plain_section, json_section)


def _check_streaks(names: list[str], data: bytes) -> None:
    """The stored streaks JSON decodes with every kind and reason among `names` (themselves checked by
    `_check_texts`) and every time an RFC 3339 time: `Corrupt` otherwise."""
    if not names:
        try:
            if msgspec.json.decode(data) == []:
                return
        except msgspec.DecodeError:
            pass
        raise Corrupt("the stored report view's streaks do not decode")
    try:
        _streaks_decoder(tuple(names)).decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError, TypeError, ValueError) as exc:
        raise Corrupt(f"the stored report view's streaks do not decode: {exc}") from None


def _check_texts(section: _Section, named: dict[str, tuple[int, dict[str, int]]], more: list[str]) -> None:
    """Every name (kinds, reasons, session ids) is inert text free of secrets, and every time is 24 characters of
    a time's digits and signs (checked in C over all of them joined): a crafted view cannot put into a report
    what building it from the columns would not (a control sequence, markup, a secret)."""
    streaks = section.streaks
    names = {*section.by_kind, *section.by_reason, *section.closes, *named, *more}
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


_TIME_CHARS = b"0123456789-:.TZ"
_TIME_LENGTH = len("2026-08-04T02:00:40.000Z")
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
