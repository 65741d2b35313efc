"""The one object a surface drives: sources -> format adapters -> state, under a lock.

The TUI calls `poll()` from a worker thread whenever the watcher wakes it; the report calls it until the
backlog is drained. Readers take `lock` while they copy what they show.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

import core.analysis  # noqa: F401  (registers the session analyzers)
from core.formats import sniff
from core.formats.base import Adapter, load_object
from core.formats.document import DOCUMENT_MAX_BYTES, document_on_disk, join_document, opens_document
from core.model import Problem
from core.sources import Line, Notice, Sources
from core.sources.discover import resolve_roots
from core.state import State
from core.timeutil import now_ms

#: Lines of a file not yet recognised are held (bounded) until one line tells its format.
SNIFF_HOLD_LINES = 50
SNIFF_HOLD_BYTES = 4 * 1024 * 1024
RESET_NOTICES = frozenset({"truncated", "replaced", "recreated", "deleted"})


@dataclass(slots=True)
class SourceStat:
    """Per-file reading statistics, for the report's `sources` and the status line."""

    path: str
    format: str | None = None
    bytes: int = 0
    lines: int = 0
    bad_lines: int = 0


@dataclass(slots=True)
class PollResult:
    lines: int = 0
    bytes: int = 0
    changed: bool = False


@dataclass
class _Pending:
    lines: list[Line] = field(default_factory=list)
    size: int = 0


class Engine:
    def __init__(self, paths: list[Path], *, watch: bool = False, newest_first: bool = False) -> None:
        """``newest_first``: a budget-limited `poll` reads the most recently modified files first (a dashboard:
        the newest sessions are on screen at once, history fills in behind; see `Sources`)."""
        self.paths = [Path(p) for p in paths]
        self.roots = resolve_roots(self.paths)
        self.sources = Sources(self.roots, newest_first=newest_first)
        self.state = State()
        self.lock = threading.RLock()
        self.adapters: dict[str, Adapter] = {}
        self.stats: dict[str, SourceStat] = {}
        self._pending: dict[str, _Pending] = {}
        self.ignored: set[str] = set()
        self.rotations = 0
        self._partials_reported: set[tuple[str, int, int]] = set()
        self._documents: set[str] = set()  # JSON documents already read whole: their generation has nothing more
        self.total_lines = 0
        self.total_bytes = 0
        if watch:
            self.sources.start_watching()

    # ------------------------------------------------------------------ reading
    def poll(self, max_bytes: int | None = None) -> PollResult:
        """Read what is new everywhere and apply it. Safe to call from a worker thread."""
        batches = self.sources.poll(max_bytes)
        result = PollResult()
        with self.lock:
            for batch in batches:
                # a deletion comes after the lines it travels with: they are the rest of the deleted file
                for notice in batch.notices:
                    if notice.kind != "deleted":
                        self._notice(batch.logical, notice)
                    result.changed = True
                if batch.lines:
                    self._lines(batch.path, batch.logical, batch.lines)
                    result.lines += len(batch.lines)
                    result.bytes += sum(len(line.data) + 1 for line in batch.lines)
                    result.changed = True
                for notice in batch.notices:
                    if notice.kind == "deleted":
                        self._notice(batch.logical, notice)
            self.total_lines += result.lines
            self.total_bytes += result.bytes
        return result

    def drain(self, chunk: int = 64 * 1024 * 1024) -> None:
        """Read until nothing is left (the report; tests).

        A poll can consume a whole chunk and complete no line (inside a line longer than ``chunk``, e.g. an
        oversized one being skipped), so "no lines" alone does not mean done: stop when the bytes left on disk
        stop shrinking (all read, or only unreadable files left).
        """
        left: int | None = None
        while True:
            result = self.poll(chunk)
            now = self.sources.pending_bytes()
            if not result.lines and not result.changed and (now == 0 or (left is not None and now >= left)):
                break
            left = now
        self.finish_pending()
        self.report_partials()

    def report_partials(self) -> None:
        """A snapshot names every unterminated last line: a torn write must be shown, never silently absent.

        Live, such bytes are a write in progress and simply wait; only a snapshot (report, check) calls this.
        """
        with self.lock:
            for held in self.sources.held_partials():
                key = (held.path, held.offset, held.size)
                # a JSON document (mux partial.json) needs no final newline: it was read whole, not torn
                if held.path in self._documents or key in self._partials_reported:
                    continue
                self._partials_reported.add(key)
                self.state.add_problem(
                    Problem(held.path, held.lineno, held.offset,
                            f"incomplete last line: {held.size} bytes without a newline (a write in progress "
                            "or a torn write); not read", now_ms())
                )  # fmt: skip

    def finish_pending(self) -> None:
        """Files never recognised: their held lines become problems (nothing is silently dropped)."""
        with self.lock:
            for path, pending in list(self._pending.items()):
                whole = document_on_disk(path, pending.lines)  # a document still being written: read it whole
                if whole is not None:
                    del self._pending[path]
                    self._lines(path, path, [whole])
                    self._documents.add(path)
                    continue
                for line in pending.lines:
                    self._unrecognised(path, line)
                pending.lines.clear()

    def wait(self, timeout: float) -> bool:
        return self.sources.wait(timeout)

    def close(self) -> None:
        self.sources.close()

    # ------------------------------------------------------------------ internals
    def _stat(self, path: str) -> SourceStat:
        stat = self.stats.get(path)
        if stat is None:
            stat = self.stats[path] = SourceStat(path)
        return stat

    def _notice(self, logical: str, notice: Notice) -> None:
        # formats whose writer rewrites or removes the file as its normal write path (mux) say which notices
        # are routine for them; those are not problems
        if notice.kind == "rotated":
            self.rotations += 1  # the normal life of session.log: counted, not a problem
        elif notice.kind not in getattr(self.adapters.get(logical), "routine_notices", ()):
            self.state.add_problem(Problem(notice.path, notice.lineno, notice.offset, notice.message, now_ms()))
        if notice.kind == "oversized_line":
            self._stat(notice.path).bad_lines += 1
        if notice.kind in RESET_NOTICES:
            self._documents.discard(logical)
            held = self._pending.get(logical)
            if held is not None and held.lines and opens_document(held.lines[0]) and notice.kind != "deleted":
                del self._pending[logical]  # an unfinished version of a document its writer has superseded
            adapter = self.adapters.get(logical)
            if adapter is not None and adapter.name.endswith("transcript"):
                self.state.reset_session(logical)
            if notice.kind != "deleted":
                self.adapters.pop(logical, None)

    def _lines(self, path: str, logical: str, lines: list[Line]) -> None:
        stat = self._stat(path)
        if logical in self._documents:
            return  # the tail of a document already read whole (its closing line, flushed when it was replaced)
        adapter = self.adapters.get(logical)
        if adapter is None:
            adapter, lines = self._sniff(path, logical, lines)
            if adapter is None:
                return
            stat.format = adapter.name
        elif stat.format is None:
            stat.format = adapter.name
        apply = self.state.apply
        parse = adapter.parse
        stat.lines += len(lines)
        nbytes = len(lines)  # the newlines
        for line in lines:  # the hot loop of a backfill: per-line work only
            data = line.data
            nbytes += len(data)
            if not data or data.isspace():  # == not data.strip(), without copying the line
                continue
            for record in parse(path, line.lineno, line.offset, data):
                if isinstance(record, Problem):
                    stat.bad_lines += 1
                    if record.ts_ms is None:
                        record.ts_ms = now_ms()
                apply(record)
        stat.bytes += nbytes

    def _sniff(self, path: str, logical: str, lines: list[Line]) -> tuple[Adapter | None, list[Line]]:
        if logical in self.ignored:
            stat = self._stat(path)
            stat.lines += len(lines)
            stat.bytes += sum(len(line.data) + 1 for line in lines)
            return None, []
        pending = self._pending.setdefault(logical, _Pending())
        held = pending.lines + lines
        if held and opens_document(held[0]):
            return self._sniff_document(path, logical, held)
        for line in held:
            obj = load_object(path, line.lineno, line.offset, line.data)
            if isinstance(obj, Problem):
                continue
            del self._pending[logical]
            adapter = sniff(path, obj)
            if adapter is not None:
                self.adapters[logical] = adapter
                return adapter, held
            # a valid JSON object of no known format: the file is not ours; say so once
            self.ignored.add(logical)
            self.state.add_problem(
                Problem(path, line.lineno, line.offset, "not a format this tool reads; file ignored", now_ms())
            )
            return self._sniff(path, logical, held)
        pending.lines = held
        pending.size = sum(len(line.data) for line in held)
        if len(held) > SNIFF_HOLD_LINES or pending.size > SNIFF_HOLD_BYTES:
            stat = self._stat(path)
            for line in held:
                stat.lines += 1
                stat.bytes += len(line.data) + 1
                if line.data.strip():
                    self._unrecognised(path, line)
            pending.lines = []
            pending.size = 0
        return None, []

    def _sniff_document(self, path: str, logical: str, held: list[Line]) -> tuple[Adapter | None, list[Line]]:
        """A pretty-printed JSON document (`core.formats.document`): held until its lines decode together,
        then sniffed and parsed as one line."""
        whole = join_document(held)
        if whole is not None:
            del self._pending[logical]
            self._documents.add(logical)
            return self._sniff(path, logical, [whole])
        pending = self._pending[logical]
        pending.lines = held
        pending.size = sum(len(line.data) for line in held)
        if pending.size > DOCUMENT_MAX_BYTES:
            stat = self._stat(path)
            for line in held:
                stat.lines += 1
                stat.bytes += len(line.data) + 1
                if line.data.strip():
                    self._unrecognised(path, line)
            pending.lines = []
            pending.size = 0
        return None, []

    def _unrecognised(self, path: str, line: Line) -> None:
        """A line held while the file's format was unknown, and never recognised: say why it is bad."""
        obj = load_object(path, line.lineno, line.offset, line.data)
        reason = obj.error if isinstance(obj, Problem) else "no format this tool reads matched it"
        self._problem(path, line, f"{reason} (file format not recognised)")

    def _problem(self, path: str, line: Line, reason: str) -> None:
        self._stat(path).bad_lines += 1
        self.state.add_problem(Problem(path, line.lineno, line.offset, reason, now_ms()))
