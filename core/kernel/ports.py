"""The re-read port: the only IO an analysis may ask for, and it is handed one, never imports one.

State keeps pointers (`Where`: path, line, offset, length), never message bodies, so a compaction, a branch
switch, a rebuilt payload or a drill-down reads the few entries it needs again. The reading itself lives in
`core.sources.reread` (the same layer that tails the files); the engine gives `State` one `Reread`, and `State`
gives it to every analyzer and record handler it builds. Analyses therefore import no state and open no file,
and a test can hand them an in-memory port.
"""

from __future__ import annotations

from typing import Protocol

from core.model import TranscriptEntry, Where


class Reread(Protocol):
    """Read back what a `Where` points at. Every method answers None (or b"") instead of raising: a file that
    changed or went since it was read is an ordinary event."""

    def line(self, where: Where) -> bytes | None:
        """The bytes of one line (without its newline)."""
        ...

    def entry(self, where: Where) -> TranscriptEntry | None:
        """One pi-family transcript line as a `TranscriptEntry` (None when it is no longer one)."""
        ...

    def span(self, start: Where, end: Where) -> bytes | None:
        """The bytes from `start`'s line to the end of `end`'s line (one read for a run of lines)."""
        ...

    def head(self, path: str, end: int) -> bytes:
        """The first `end` bytes of a file (b"" when it cannot be read): a parked session is rebuilt from them."""
        ...

    def after(self, path: str, offset: int) -> bytes | None:
        """Everything from `offset` to the end of a file (None when it cannot be read)."""
        ...
