"""The sink: one shared clock, writes applied in time order, size-based rotation, replay ops for the writer.

Concurrent sessions write the same ``logs/session.log``; merging their writes by time and rotating by real
size is what makes the files interleave and rotate like senpi's (``senpi-formats.md`` §2.1).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SESSION_LOG = "logs/session.log"
DEFAULT_ROTATE_BYTES = 5 * 1024 * 1024


@dataclass
class Located:
    """Where a written line ended up: filled in by the sink, resolved after rotation."""

    log_file: str | None = None
    log_line: int | None = None
    offset: int | None = None


@dataclass
class Write:
    """One write senpi (or the event recorder) does at ``ms``: append bytes, or replace a whole file."""

    ms: int
    kind: str  # "append" | "replace"
    path: str
    data: bytes
    locate: Located | None = None


class Sink:
    """Applies writes to disk in global time order. Rotates ``session.log`` the way senpi does (§2.1)."""

    def __init__(self, root: Path, rotate_bytes: int, record_replay: bool) -> None:
        self.root = root
        self.rotate_bytes = rotate_bytes
        self.sizes: dict[str, int] = {}
        self.lines: dict[str, int] = {}
        self.generation = 0
        self.rotations: list[int] = []
        self._handles: dict[str, Any] = {}
        self._pending_locations: list[tuple[Located, int]] = []  # (location, generation) of session.log lines
        self.replay: list[list[Any]] | None = [] if record_replay else None
        self._replay_gen: list[int | None] = []

    def apply(self, write: Write) -> None:
        if write.kind == "replace":
            self._replace(write)
            return
        if write.path == SESSION_LOG:
            size = self.sizes.get(SESSION_LOG, 0)
            if size and size + len(write.data) > self.rotate_bytes:
                self._rotate(write.ms)
        offset = self.sizes.get(write.path, 0)
        line = self.lines.get(write.path, 0) + 1
        handle = self._handle(write.path)
        handle.write(write.data)
        self.sizes[write.path] = offset + len(write.data)
        self.lines[write.path] = self.lines.get(write.path, 0) + write.data.count(b"\n")
        if write.locate is not None:
            write.locate.log_file, write.locate.log_line, write.locate.offset = write.path, line, offset
            if write.path == SESSION_LOG:
                self._pending_locations.append((write.locate, self.generation))
        if self.replay is not None:
            self.replay.append([write.ms, "a", write.path, write.path, offset, len(write.data)])
            self._replay_gen.append(self.generation if write.path == SESSION_LOG else None)

    def _handle(self, rel: str) -> Any:
        handle = self._handles.get(rel)
        if handle is None:
            if len(self._handles) >= 64:
                self.close_all()
            path = self.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = self._handles[rel] = open(path, "ab")  # noqa: SIM115 - kept open across writes
        return handle

    def _rotate(self, ms: int) -> None:
        """Delete ``session.log.1`` and rename ``session.log`` to it: only one old generation survives."""
        self._close(SESSION_LOG)
        old = self.root / (SESSION_LOG + ".1")
        if old.exists():
            old.unlink()
        os.replace(self.root / SESSION_LOG, old)
        self.sizes[SESSION_LOG + ".1"] = self.sizes.pop(SESSION_LOG)
        self.lines[SESSION_LOG + ".1"] = self.lines.pop(SESSION_LOG, 0)
        self.generation += 1
        self.rotations.append(ms)
        if self.replay is not None:
            self.replay.append([ms, "r", SESSION_LOG])
            self._replay_gen.append(None)

    def _replace(self, write: Write) -> None:
        """Atomic whole-file write (temp file + rename), as senpi writes the sidecar."""
        path = self.root / write.path
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(write.data)
        os.replace(tmp, path)
        if self.replay is not None:
            self.replay.append([write.ms, "w", write.path])
            self._replay_gen.append(None)

    def _close(self, rel: str) -> None:
        handle = self._handles.pop(rel, None)
        if handle is not None:
            handle.close()

    def close_all(self) -> None:
        for rel in list(self._handles):
            self._close(rel)

    def finish(self) -> None:
        """Close files and resolve which generation of session.log each located line ended up in."""
        self.close_all()
        names = {self.generation: SESSION_LOG, self.generation - 1: SESSION_LOG + ".1"}
        for located, gen in self._pending_locations:
            located.log_file = names.get(gen)
            if located.log_file is None:
                located.log_line = located.offset = None
        if self.replay is not None:
            kept = []
            for op, gen in zip(self.replay, self._replay_gen, strict=True):
                if gen is not None:
                    if gen not in names:
                        continue
                    op[3] = names[gen]
                kept.append(op)
            self.replay = kept
