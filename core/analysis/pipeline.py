"""How analyses plug into the per-session stream of transcript entries, and into other record kinds.

A session analysis (verdict replay, payload reconstruction, directive ledger, commit outcome, …) is a class
with one instance per session. `SessionState` calls it for every entry on the active branch, in order, and
tells it when the branch is cut back (the user navigated the tree). It writes its findings into the `Turn`
summaries. To add one: write a module with the class and call `register_session_analyzer` at import, then
list the module in `core/analysis/__init__.py`.

A session analyzer may also define `park(session)`: the session's transcript was read to its end and is done
(`State.park`), so it settles whatever it decides lazily and drops the state that only extends the analysis,
keeping what the report, `check` and the TUI read. A parked session never sees another entry (anything new
rebuilds it from its file), so a parked analyzer need not be able to continue.

A record handler sees records that do not belong to one transcript (agent event recordings, sidecars) and
may update any session.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from core.model import Record, TranscriptEntry, Turn
    from core.state import SessionState, State


class SessionAnalyzer(Protocol):
    def on_entry(self, session: SessionState, entry: TranscriptEntry, turn: Turn | None) -> None:
        """Called for every entry of the active branch, in order. `turn` is set when `entry` is an
        assistant message (the Turn summary was just created, with `logged` filled in)."""
        ...

    def on_branch(self, session: SessionState, keep: int) -> None:
        """The active branch was cut back to its first `keep` entries; entries that follow will be
        re-delivered through `on_entry` (with their `Turn` when they are assistant messages)."""
        ...


class RecordHandler(Protocol):
    handles: tuple[type, ...]

    def on_record(self, state: State, record: Record) -> None: ...


SessionAnalyzerFactory = Callable[["SessionState"], SessionAnalyzer]

SESSION_ANALYZERS: list[tuple[str, SessionAnalyzerFactory]] = []
RECORD_HANDLERS: list[Callable[[], RecordHandler]] = []


def register_session_analyzer(name: str, factory: SessionAnalyzerFactory) -> None:
    if all(existing != name for existing, _ in SESSION_ANALYZERS):
        SESSION_ANALYZERS.append((name, factory))


def register_record_handler(factory: Callable[[], RecordHandler]) -> None:
    if factory not in RECORD_HANDLERS:
        RECORD_HANDLERS.append(factory)
