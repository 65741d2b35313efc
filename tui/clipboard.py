"""What `c` copies: the selected call's summary and why, its field diff, its JSON, or a path the user needs.

Through Textual's clipboard support (`App.copy_to_clipboard`: the terminal's OSC 52, the text base64-encoded
inside it, so data never reaches the terminal as control sequences). The text itself is made inert first:
escape sequences and controls stripped (`core.sanitize`, newlines kept) and secrets redacted as in every report,
since what is copied is usually pasted into an issue.

Plain data and text building; the JSON is re-read from disk by the caller's worker (`json_text`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from core.model import ContinuityLine, DiffChange, Turn
from core.report.redact import redact_text
from core.sanitize import clip, sanitize
from tui.fmt import date_time
from tui.view import Row, payload_bytes, row_count, row_kind, row_reason, row_session

LIMIT = 1_000_000
"""Characters copied at most (a giant tool output is clipped, with a note)."""


@dataclass(frozen=True, slots=True)
class Choice:
    key: str  # the digit that picks it
    id: str
    label: str


def inert(text: str) -> str:
    """What goes to the clipboard: no escape sequence, no control but \\t and \\n, no secret."""
    clean = "\n".join(sanitize(line) for line in text.splitlines())
    return clip(redact_text(clean)[0], LIMIT)


def choices(row: Row | None, *, export: str | None, data_dir: str | None) -> list[Choice]:
    """What can be copied now, in menu order."""
    out: list[Choice] = []
    if row is not None:
        out.append(Choice("", "summary", "this call: ids, decision, payload and why"))
        if isinstance(row, Turn):
            if row.commit is not None:
                out.append(Choice("", "diff", "this call: field diff, capture vs commit"))
            out.append(Choice("", "commit", "this call: the committed message (JSON, re-read from disk)"))
            if row.commit is not None and row.commit.capture_where is not None:
                out.append(Choice("", "capture", "this call: the captured message (JSON, re-read from disk)"))
            if row.fingerprints:
                out.append(Choice("", "fingerprints", "this call: its fingerprints"))
    if export is not None:
        out.append(Choice("", "export", f"the last export's directory: {export}"))
    if data_dir is not None:
        out.append(Choice("", "data_dir", f"the data dir: {data_dir}"))
    return [Choice(str(i), c.id, c.label) for i, c in enumerate(out, start=1)]


def summary_text(row: Row) -> str:
    """The call as a reader of an issue needs it: where it is, what was decided, why."""
    lines = []
    if isinstance(row, Turn):
        lines.append(f"session {row.session} turn {row.index} at {date_time(row.ts_ms)}")
        if row.where is not None:
            lines.append(f"file {row.where.path} line {row.where.line} offset {row.where.offset}")
        for label, decision in (("logged    ", row.logged), ("recomputed", row.recomputed)):
            if decision is not None:
                n = f" n={decision.count}" if decision.count is not None else ""
                lines.append(f"{label}  {decision.kind} {decision.reason}{n}")
        size = payload_bytes(row)
        if size is not None:
            raw = f" ({row.payload_bytes_raw:,} before dedupe)" if row.payload_bytes_raw not in (None, size) else ""
            lines.append(f"payload     {size:,} bytes sent{raw}")
        flags = [name for name, on in (("rewritten", row.rewritten), ("avoidable", bool(row.avoidable)),
                                       ("disagrees", row.agreement is False)) if on]  # fmt: skip
        if flags:
            lines.append("flags       " + ", ".join(flags))
        if row.why:
            lines.append(f"why         {row.why}")
        if row.disagreement:
            lines.append(f"differs     {row.disagreement}")
    else:
        assert isinstance(row, ContinuityLine)
        lines.append(f"log line {row.where.path}:{row.where.line} @{row.where.offset} {row.ts}")
        n = row_count(row)
        lines.append(f"decision    {row_kind(row)} {row_reason(row)}" + (f" n={n}" if n is not None else ""))
        session = row_session(row)
        if session:
            lines.append(f"session     {session}")
    return "\n".join(lines)


def diff_text(turn: Turn, changes: list[DiffChange] | None = None) -> str:
    """The field diff the analysis recorded, or `changes` computed from the two sides re-read from disk."""
    commit = turn.commit
    changes = list(commit.diff) if commit is not None and commit.diff else (changes or [])
    head = f"session {turn.session} turn {turn.index}: commit {commit.outcome if commit else 'unknown'}"
    if commit is not None and commit.klass:
        head += f" ({commit.klass})"
    if not changes:
        return head + "\ncapture and commit are identical"
    rows = [head]
    for change in changes:
        volatile = "volatile" if change.volatile else "semantic"
        rows.append(f"{change.path}  {change.change}  {volatile}  capture={_json(change.capture)}  "
                    f"commit={_json(change.commit)}")  # fmt: skip
    return "\n".join(rows)


def fingerprints_text(turn: Turn) -> str:
    return "\n".join(f"{name}  {value}" for name, value in (turn.fingerprints or {}).items())


def json_text(value: Any) -> str:
    """A message re-read from disk, indented (control characters stay escaped inside JSON strings)."""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode("utf-8")


def _json(value: Any) -> str:
    try:
        return orjson.dumps(value).decode("utf-8")
    except TypeError:
        return str(value)
