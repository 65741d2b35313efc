"""Pretty-printed JSON documents among line-oriented files: join their lines back into one.

Every format this tool reads is one JSON object per line, except whole-file JSON documents written with
indentation (mux's `partial.json`, written as `JSON.stringify(message, null, 2)`). The tailer hands out
lines, and no single line of such a document decodes; together they do. The engine holds a file's lines
while its format is unknown; when the first line of a file is exactly `{`, it asks `join_document` whether
the held lines now form the whole object, and sniffs and parses that as one line.

The closing line needs no newline: the tailer flushes the unterminated tail of a generation once the file
is replaced or deleted, which is what happens to each version of an atomically rewritten document.
"""

from __future__ import annotations

import os
from typing import Any

import orjson

from core.formats.base import load_object
from core.model import Problem
from core.sources import Line
from core.sources.tail import BOM

#: A document bigger than this is not held in memory: its lines are reported as unrecognised instead.
DOCUMENT_MAX_BYTES = 16 * 1024 * 1024


def first_object(path: str) -> dict[str, Any] | None:
    """The file's first line as a JSON object, or None (unreadable, no complete first line within 1 MiB, a
    document's opening, or anything `load_object` refuses): what a file's format is told by before any poll
    reads it (the big log read apart, the transcripts read in workers). 64 KiB first: a first line is rarely
    longer."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            head = os.pread(fd, 1 << 16, 0)
            if b"\n" not in head:
                head = os.pread(fd, 1 << 20, 0)
        finally:
            os.close(fd)
    except OSError:
        return None
    nl = head.find(b"\n")
    if nl <= 0:
        return None
    first = Line(1, 0, head[:nl])
    if opens_document(first):
        return None
    obj = load_object(path, 1, 0, first.data)
    return None if isinstance(obj, Problem) else obj


def opens_document(line: Line) -> bool:
    """The first line of a file that is only `{`: the start of a pretty-printed object, never a JSONL line."""
    return line.offset in (0, len(BOM)) and line.data.strip() == b"{"


def join_document(lines: list[Line]) -> Line | None:
    """The document as a single line (number and offset of its first line) once the held lines decode
    together into one object; None while its closing line has not arrived."""
    if not lines or not opens_document(lines[0]) or lines[-1].data.strip() != b"}":
        return None
    data = b"\n".join(line.data for line in lines)
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return Line(lines[0].lineno, lines[0].offset, data) if isinstance(obj, dict) else None


def document_on_disk(path: str, held: list[Line]) -> Line | None:
    """The whole current document when the held lines are its start and its closing line is still unterminated
    (the file is live: its writer has not replaced it yet). Read once, when the engine drains; None otherwise."""
    if not held or not opens_document(held[0]):
        return None
    try:
        with open(path, "rb") as fh:
            data = fh.read(DOCUMENT_MAX_BYTES + 1)
    except OSError:
        return None
    data = data.removeprefix(BOM)  # the tailer took it off line 1 (`core.sources.tail.BOM`)
    start = b"\n".join(line.data for line in held)
    if len(data) > DOCUMENT_MAX_BYTES or not data.startswith(start):
        return None
    lines = data.rstrip(b"\n").split(b"\n")
    first = held[0].offset  # 0, or 3 after a BOM
    joined = join_document([Line(held[0].lineno + i, first if i == 0 else 1, raw) for i, raw in enumerate(lines)])
    return joined
