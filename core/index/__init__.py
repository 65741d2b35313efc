"""The persistent index: a SQLite store of what the surfaces read, written as the files are read, so the next
start reads only what is new.

Months of history take seconds to analyse (the recomputation is the product); a second start should cost what
is new since the last one. The store (`index.sqlite3` in the cache directory, `core.index.schema` has its
tables) holds, per *scope* (the roots, the `--volatile` patterns and a digest of the code):

- the **identity and read offset of every file whose contribution it keeps** (`core.index.files`): device,
  inode, sizes, and digests (never bytes) of its first bytes and of the bytes just before the offset;
- **finished sessions** (`core.index.sessions`): each parked session's fields and calls, loaded as stored at the
  next start (parked, exactly as a session that finished while the dashboard ran);
- the **log lines** (`core.index.logs`): the decision log's rows as per-chunk column BLOBs in
  `core.kernel.logcols`'s layout, with the aggregates a report reads and the queryable daily counts; loaded
  with one `frombytes` per column per chunk, never parsed again; and, for a report (`mode` `report`), the
  **report view** of those rows (`core.index.views`, `core.state.logview`): the `continuity` section and
  per-session line counts a report built from them, read back by the next report of the same rows instead of
  walking the columns (the 1.1M-line log: ~0.9 s of CPU), its streaks then never decoded (`StoredStreaks`).
  A dashboard (`mode` `live`) stores and restores its log lines only while the order it meets them in decides
  nothing (`core.index.livelog`: no line names a session a transcript holds, no call logged a decision the
  lines have), checks that again once its backfill is read, and reads everything cold when it fails; a log
  whose lines credit its transcripts' sessions is read at every start;
- the **problems** of those files, and **ignored files** (not a format this tool reads) with their counts;
- for a report, **Claude Code and mux sessions** (`core.index.assembled`), which their handlers assemble across
  files (a transcript, its sub-agent files, a resumed copy's; a mux workspace's folder): stored in groups of
  sessions that met across files, keyed by every file of the group, loaded only while all of them are as they
  were read and nothing read now would have met them; any change to one of its files reads the group again.

Everything else is read from its file at every start: active sessions (their analysis machinery is rebuilt by
reading them), event recordings, Codex rollouts, and a dashboard's Claude Code and mux files. A file kept in the
store that changed other than by appending (truncated, replaced, rewritten, rotated, deleted) is dropped from it
and read again like a new file; the rest of the store stays. A kept file that grew is read on from its offset (a
session that grows is rebuilt from its file, `State.unpark`).

**Written incrementally.** Every poll ends with one transaction (`Index.commit`: `Engine.after_each_poll`)
holding what that poll finished: the sessions parked since the last one, with their files, and the log rows
read since the last one (a chunk's BLOBs are written again while it fills). Quitting costs
nothing; a kill at any moment leaves the store as of the last transaction, and whatever was not in it is read
again. Nothing is ever rewritten whole.

**Exact.** A resumed run reads in another order than a cold one (what is stored is not read), so whatever
depends on that order is settled after the drain (`Index.settle`): sessions are put in the order a cold read
creates them, logged decisions are paired with calls as a cold drain pairs them (`cold_pairs`), and when log
lines that name a session would credit it differently than in a cold read (`core.sources.order`), the run reads
everything cold. `tests/index/` compares resumed and cold reports over random histories.

**Safe.** See `core.index.store` (ownership, modes, FIFOs, locking, busy stores) and `core.index.codec` (typed
decoding only; no secret and no message text is ever stored). Any problem with the store is one line on
stderr and the run goes on without it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.index.run import KEEP, Index, code_digest

__all__ = ["ENV_DIR", "FILE_NAME", "KEEP", "Index", "cache_dir", "code_digest", "index_path"]

ENV_DIR = "CONTINUITY_TUI_CACHE_DIR"
FILE_NAME = "index.sqlite3"


def cache_dir() -> Path:
    """`$CONTINUITY_TUI_CACHE_DIR`, else `$XDG_CACHE_HOME/continuity-tui`, else `~/.cache/continuity-tui`."""
    override = os.environ.get(ENV_DIR)
    if override:
        return Path(override).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "continuity-tui"


def index_path() -> Path:
    """Where the index is (`continuity-tui index --path`)."""
    return cache_dir() / FILE_NAME


def __getattr__(name: str) -> Any:
    """`Index` and the rest come from `core.index.run`, imported when first asked for: printing the path
    (`index --path`) imports nothing of the analysis."""
    if name in ("Index", "KEEP", "code_digest"):
        from core.index import run

        return getattr(run, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
