"""Reading back what was read before, by pointer: the one implementation of `core.kernel.ports.Reread`.

State keeps `Where` pointers, not bodies (memory grows with calls, not bytes). A branch switch, a compaction,
a payload rebuild, the drill-down, a parked session's rebuild and a resumed index's check all read a few
lines again; they all come here, through the port the engine hands out, so no analysis opens a file and a
changed file is one `None`, never an exception. Pure stdlib + orjson; nothing here is cached (the bodies are
what memory must not hold).
"""

from __future__ import annotations

import orjson

from core.model import TranscriptEntry, Where

__all__ = ["FileReread", "reread_entry", "reread_line"]


def reread_line(where: Where) -> bytes | None:
    """One line by offset: `length` bytes when known, else up to the newline. None if the file is unreadable."""
    try:
        with open(where.path, "rb") as fh:
            fh.seek(where.offset)
            raw = fh.read(where.length) if where.length else fh.readline().rstrip(b"\n")
    except OSError:
        return None
    return raw


def reread_entry(where: Where) -> TranscriptEntry | None:
    """Re-read one transcript line by offset (drill-down, branch replay). None if the file changed."""
    raw = reread_line(where)
    if raw is None:
        return None
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        return None
    return TranscriptEntry(
        where, obj["type"], _str(obj.get("id")), _str(obj.get("parentId")), _str(obj.get("timestamp")), obj
    )


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


class FileReread:
    """`Reread` over the files themselves. Stateless, so it pickles (inside a saved index) as a name."""

    __slots__ = ()

    def line(self, where: Where) -> bytes | None:
        return reread_line(where)

    def entry(self, where: Where) -> TranscriptEntry | None:
        return reread_entry(where)

    def span(self, start: Where, end: Where) -> bytes | None:
        try:
            with open(start.path, "rb") as fh:
                fh.seek(start.offset)
                return fh.read(end.offset + max(end.length, 1) - start.offset + 1)
        except OSError:
            return None

    def head(self, path: str, end: int) -> bytes:
        try:
            with open(path, "rb") as fh:
                return fh.read(end)
        except OSError:
            return b""

    def after(self, path: str, offset: int) -> bytes | None:
        try:
            with open(path, "rb") as fh:
                fh.seek(offset)
                return fh.read()
        except OSError:
            return None
