"""What every format adapter shares: JSON decoding that never raises, and the adapter base class.

An adapter is a pure function from one line (bytes + where it sits) to records. It never raises on bad
input: a bad line becomes exactly one `Problem` naming the file, line, byte offset and reason.

What the engine does with a format's files beyond parsing them is declared on its adapter, never inferred
from its name or probed for: whether its sessions can be parked (`parkable`), whether a replaced file starts
its session over (`resets_on_replace`) and which file events are its writer's normal life (`routine_notices`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, ClassVar

import orjson

from core.logblock import LogBlock
from core.model import Problem, Record

MAX_LINE_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 200
"""Deepest JSON nesting accepted. orjson parses up to 1024 levels, but its serializer stops at 255 and every
recursive walk downstream (digests, diffs, redaction, the JSON tree view) hits Python's recursion limit near
1000: a deeper line is one Problem here instead of a crash later. Real entries nest a few tens of levels."""


class Adapter:
    """One on-disk format: `sniff` recognises a file, `parse` turns each of its lines into records."""

    #: the `format` name the report uses for files of this kind
    name: ClassVar[str] = ""
    #: a session read from one file of this format can be parked (`State.park`) and rebuilt from that file
    #: alone; a session assembled from several files by a record handler cannot
    parkable: ClassVar[bool] = False
    #: a truncated, replaced or recreated file starts its session over (`State.reset_session`): the file is
    #: the session's whole history, re-read from its first byte
    resets_on_replace: ClassVar[bool] = False
    #: file events (`core.sources.Notice` kinds) that are this format's normal write path, not problems (a writer
    #: that rewrites the file atomically, or deletes it when done); files with any are checked whole on resume
    routine_notices: ClassVar[frozenset[str]] = frozenset()
    #: its lines are logged continuity decisions that attribution pairs with other files' calls by time: a run
    #: resumed from the index must meet them in the order a cold read would (`Index.settle`)
    decision_log: ClassVar[bool] = False
    #: its lines feed the state's log aggregates (`core.state.LogState`) and belong to no session: the persistent
    #: index keeps all such files of a history together, with those aggregates, or none of them
    log_aggregates: ClassVar[bool] = False
    #: parses whole blocks of complete lines (`parse_block`): the engine hands it the tailer's blocks (~1 MiB)
    #: instead of one line at a time; what it gives back equals `parse` on each line (a log's typed fast path)
    blocks: ClassVar[bool] = False

    def sniff(self, path: str, obj: dict[str, Any]) -> bool:
        """True when a file whose first JSON object is `obj` is of this format."""
        raise NotImplementedError

    def parse(self, path: str, lineno: int, offset: int, data: bytes) -> list[Record]:
        """One complete line (without its newline) -> records. Never raises."""
        raise NotImplementedError

    def parse_block(self, path: str, lineno: int, offset: int, data: bytes) -> LogBlock:
        """Complete lines (`data` ends with a newline; its first line is number `lineno` at byte `offset`) ->
        their records as one block, exactly what `parse` gives line by line (blank lines skipped). Only for
        adapters that declare `blocks`; never raises."""
        raise NotImplementedError


def describe_json_error(data: bytes, exc: Exception) -> str:
    """A reason a user understands: invalid UTF-8 is named as such, with its byte position."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as err:
        return f"invalid UTF-8 at byte {err.start}"
    message = str(exc).split(": line", 1)[0]
    if not data.strip():
        return "empty line"
    return f"invalid JSON: {message}"


def load_object(path: str, lineno: int, offset: int, data: bytes) -> dict[str, Any] | Problem:
    """Decode one line as a JSON object, or say exactly why not."""
    if len(data) > MAX_LINE_BYTES:
        return Problem(path, lineno, offset, f"line of {len(data)} bytes exceeds the 64 MiB limit")
    if data.endswith(b"\r"):
        data = data[:-1]
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return Problem(path, lineno, offset, describe_json_error(data, exc))
    if not isinstance(obj, dict):
        return Problem(path, lineno, offset, f"expected a JSON object, got {type(obj).__name__}")
    # counting brackets is C-speed; only a line with that many of them is walked
    if data.count(b"[") + data.count(b"{") > MAX_DEPTH and _deeper_than(obj, MAX_DEPTH):
        return Problem(path, lineno, offset, f"JSON nested deeper than {MAX_DEPTH} levels")
    return obj


def _deeper_than(obj: dict[str, Any], limit: int) -> bool:
    """Iterative (a recursive walk is exactly what deep input breaks)."""
    stack: list[tuple[Any, int]] = [(obj, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        children = value.values() if isinstance(value, dict) else value
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def opt_str(obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    return value if isinstance(value, str) else None


def opt_int(obj: dict[str, Any], key: str) -> int | None:
    return as_int(obj.get(key))


def as_int(value: object) -> int | None:
    """A JSON integer (an integral float too), else None (booleans are not numbers here)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def interned(value: object) -> str | None:
    """A short string repeated on every turn or entry (model, provider, api, stop reason, entry type): one
    shared object instead of one per line parsed (~1 MB per 100 MB of history)."""
    if not isinstance(value, str):
        return None
    return sys.intern(value) if len(value) <= 128 else value


def exact_block(
    parse: Callable[[str, int, int, bytes], list[Record]], path: str, lineno: int, offset: int, data: bytes
) -> LogBlock:
    """A block of complete lines through a per-line `parse` (the exact path; blank lines skipped, as the engine
    skips them): what a log adapter's `parse_block` must equal."""
    block = LogBlock(path)
    lines = data.split(b"\n")
    lines.pop()
    for i, line in enumerate(lines):
        if line and not line.isspace():
            for record in parse(path, lineno + i, offset, line):
                block.add(record)
        offset += len(line) + 1
    return block
