"""core.sources — find agent files and tail them: complete lines out, rotation/truncation/replacement handled.

The facade other layers use::

    from core.sources import Sources, resolve_roots

    src = Sources(resolve_roots([Path("~/.senpi/agent/logs").expanduser()]))
    src.start_watching()
    while running:
        for batch in src.poll(max_bytes=4 << 20):
            ...                      # batch.lines are complete; batch.notices explain resets
        src.wait(1.0)                # returns early on a filesystem event; the timeout is the heartbeat
    src.close()

Pure stdlib + watchfiles + xxhash; never imports textual or rich.
"""

from .discover import SourceError, discover, resolve_roots
from .tail import Block, FileBatch, FileStat, Line, Notice, Sources

__all__ = [
    "Block",
    "FileBatch",
    "FileStat",
    "Line",
    "Notice",
    "SourceError",
    "Sources",
    "discover",
    "resolve_roots",
]
