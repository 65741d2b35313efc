"""File identities in the store: a stream's generations (`core.sources.tail.StreamSnap`) as `streams`/`files`
rows, with each file's counts and located problems, and back, checked against the disk.

A row never holds a byte of the file: the first bytes (`HEAD_BYTES`, the identity a tailer checks) are kept as
their length and blake2b digest and read again from the file when the stream is revived; the bytes just
before the offset and, for formats rewritten in place, the whole read prefix, as the tailer's digests. A held
partial line is not kept either: the stream is stored as of the start of that line, which is read again
(`Sources.export_streams(whole_lines=True)`). Reviving a stream re-reads its heads and then checks it exactly
as the tailer checks a saved stream (`verify_stream`): same inode, not shorter, same head, same bytes before
the offset, nothing new at `.1`.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3

import msgspec

from core.engine import SourceStat
from core.index.codec import Corrupt
from core.model import Problem
from core.sources.tail import GenSnap, StreamSnap, verify_stream

__all__ = ["StoredGen", "StoredStream", "drop_stream", "read_problems", "read_streams", "revive", "write_stream"]

UNITS = frozenset({"session", "sidecar", "ignored", "log", "assembled"})


def head_digest(head: bytes) -> bytes:
    return hashlib.blake2b(head, digest_size=16).digest()


class StoredGen(msgspec.Struct):
    """One `files` row: a generation as the tailer left it (without its bytes), and its counts."""

    snap: GenSnap
    head_len: int
    head_digest: bytes
    stat: SourceStat | None
    """Its counts, None when the run had not counted it (no whole line read yet: not among the sources)."""


class StoredStream(msgspec.Struct):
    logical: str
    unit: str
    format: str | None
    next_number: int
    gens: list[StoredGen]


_FILE_COLUMNS = (
    "scope, logical, number, path, current, dev, ino, size, sig_size, sig_mtime_ns, sig_ctime_ns, pos, "
    "line_start, lineno, skipping, flushed_at, head_len, head_digest, tail_digest, prefix_digest, bytes, lines, "
    "bad_lines, counted, source_format"
)


def write_stream(
    conn: sqlite3.Connection,
    scope: int | None,
    snap: StreamSnap,
    unit: str,
    fmt: str | None,
    stats: dict[str, SourceStat | None],
    problems: list[Problem],
) -> None:
    """Replace the stored stream `snap.logical` (its generations, counts and problems) with `snap`."""
    drop_stream(conn, scope, snap.logical)
    conn.execute(
        "INSERT INTO streams (scope, logical, unit, format, next_number) VALUES (?, ?, ?, ?, ?)",
        (scope, snap.logical, unit, fmt, snap.next_number),
    )
    for gen in snap.gens:
        counted = stats.get(gen.path)
        stat = counted or SourceStat(gen.path, fmt)
        sig = gen.sig if gen.sig is not None else (None, None, None)
        conn.execute(
            f"INSERT INTO files ({_FILE_COLUMNS}) VALUES ({', '.join('?' * 25)})",
            (scope, snap.logical, gen.number, gen.path, int(gen.current), gen.dev, gen.ino, gen.size, *sig, gen.pos,
             gen.line_start, gen.lineno, int(gen.skipping), gen.flushed_at, len(gen.head), head_digest(gen.head),
             gen.tail, gen.prefix, stat.bytes, stat.lines, stat.bad_lines, int(counted is not None), stat.format),
        )  # fmt: skip
    by_path = {gen.path: gen.number for gen in snap.gens}
    for seq, problem in enumerate(p for p in problems if p.path in by_path):
        conn.execute(
            "INSERT INTO problems (scope, logical, number, seq, line, offset, error, noticed_ms) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (scope, snap.logical, by_path[problem.path], seq, problem.line, problem.offset, problem.error,
             problem.ts_ms),
        )  # fmt: skip


def drop_stream(conn: sqlite3.Connection, scope: int | None, logical: str) -> None:
    for table in ("streams", "files", "problems"):
        conn.execute(f"DELETE FROM {table} WHERE scope = ? AND logical = ?", (scope, logical))


def read_streams(conn: sqlite3.Connection, scope: int) -> dict[str, StoredStream]:
    """Every stored stream of the scope, as rows (not yet checked against the disk: `revive`)."""
    out: dict[str, StoredStream] = {}
    for logical, unit, fmt, next_number in conn.execute(
        "SELECT logical, unit, format, next_number FROM streams WHERE scope = ? ORDER BY logical", (scope,)
    ):
        if not isinstance(logical, str) or unit not in UNITS or not (fmt is None or isinstance(fmt, str)):
            raise Corrupt("a stored stream row is not one")
        out[logical] = StoredStream(logical, unit, fmt, _int(next_number), [])
    for row in conn.execute(
        f"SELECT {_FILE_COLUMNS} FROM files WHERE scope = ? ORDER BY logical, number", (scope,)
    ):  # fmt: skip
        (_, logical, number, path, current, dev, ino, size, sig_size, sig_mtime, sig_ctime, pos, line_start, lineno,
         skipping, flushed_at, head_len, digest, tail, prefix, nbytes, lines, bad_lines, counted,
         source_format) = row  # fmt: skip
        stream = out.get(logical)
        if stream is None or not isinstance(path, str) or not isinstance(digest, bytes) or not isinstance(tail, bytes):
            raise Corrupt("a stored file row is not one")
        if prefix is not None and not isinstance(prefix, bytes):
            raise Corrupt("a stored file row is not one")
        sig = None if sig_size is None else (_int(sig_size), _int(sig_mtime), _int(sig_ctime))
        snap = GenSnap(
            number=_int(number), path=path, dev=_int(dev), ino=_int(ino), current=bool(_int(current)), sig=sig,
            size=_int(size), pos=_int(pos), line_start=_int(line_start), lineno=_int(lineno), partial=b"",
            skipping=bool(_int(skipping)), head=b"", flushed_at=_int(flushed_at), tail=tail, prefix=prefix,
        )  # fmt: skip
        if not (source_format is None or isinstance(source_format, str)):
            raise Corrupt("a stored file row is not one")
        stat = SourceStat(path, source_format, _int(nbytes), _int(lines), _int(bad_lines)) if _int(counted) else None
        stream.gens.append(StoredGen(snap, _int(head_len), digest, stat))
    return out


def read_problems(conn: sqlite3.Connection, scope: int, streams: dict[str, StoredStream]) -> dict[str, list[Problem]]:
    """The stored problems of each stream, in the order they were noticed, at their generation's path."""
    paths = {(lg, gen.snap.number): gen.snap.path for lg, stream in streams.items() for gen in stream.gens}
    out: dict[str, list[Problem]] = {}
    for logical, number, line, offset, error, noticed in conn.execute(
        "SELECT logical, number, line, offset, error, noticed_ms FROM problems WHERE scope = ? ORDER BY logical, seq",
        (scope,),
    ):
        path = paths.get((logical, number))
        if path is None or not isinstance(error, str):
            raise Corrupt("a stored problem names no stored file")
        out.setdefault(logical, []).append(Problem(path, _opt_int(line), _opt_int(offset), error, _opt_int(noticed)))
    return out


def revive(stream: StoredStream) -> StreamSnap | str:
    """The stored stream as the tailer saved it, its heads read again from the files and checked against their
    digests, then the whole stream checked (`verify_stream`); why not, when a file is not as it was read."""
    gens: list[GenSnap] = []
    for gen in stream.gens:
        snap = gen.snap
        try:
            fd = os.open(snap.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            return f"{os.path.basename(snap.path)}: {exc.strerror or exc}"
        try:
            head = os.pread(fd, gen.head_len, 0) if os.fstat(fd).st_size >= gen.head_len else b""
        except OSError as exc:
            return f"{os.path.basename(snap.path)}: {exc.strerror or exc}"
        finally:
            os.close(fd)
        if len(head) != gen.head_len or head_digest(head) != gen.head_digest:
            return f"{os.path.basename(snap.path)} was rewritten (head changed)"
        snap.head = head
        gens.append(snap)
    revived = StreamSnap(stream.logical, stream.next_number, gens)
    checked = verify_stream(revived)
    return checked if isinstance(checked, str) else revived


def _int(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise Corrupt("a stored number is not one")
    return value


def _opt_int(value: object) -> int | None:
    return None if value is None else _int(value)
