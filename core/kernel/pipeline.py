"""How analyses plug in: the session-analyzer and record-handler base classes, and what they may see.

A session analysis (verdict replay, payload reconstruction, directive ledger, commit outcome, …) is a class
with one instance per session. Its agent lists it (`core.agents.base.Analysis.session_analyzers`): a session
gets its own agent's analyzers, in that order, and nothing else (an analyzer reads what the ones before it
published on the same entry). State calls it for every entry on the active branch, in order, and tells it
when the branch is cut back (the user navigated the tree). It writes its findings into the `Turn` summaries.

Every hook is declared here as a no-op, so an analyzer defines only the ones it needs and nothing ever
probes for a method with `getattr`:

- `on_entry` / `on_branch`: the entry stream of the active branch;
- `park`: the session's transcript was read to its end and is done (`State.park`): settle whatever is decided
  lazily and drop the state that only extends the analysis, keeping what the report, `check` and the TUI
  read. A parked session never sees another entry (anything new rebuilds it from its file), so a parked
  analyzer need not be able to continue;
- `adopt`: the session is being rebuilt from its file after parking; take over from the parked analyzer of
  the same class what came from other files (re-reading the transcript cannot give it back);
- `rebuilt`: the rebuild has re-read the whole file and put back what another file gave the session (its
  restart sidecar): judge that again;
- `commit_changed`: a turn's commit outcome or class changed after the fact (an event recording arrived);
- `refresh`: a surface is about to read the session: settle what is decided lazily (the build profile);
- `dedupe`: every dedupe policy on one call's payload, for analyzers that can rebuild it;
- `keep` / `resume`: a parked session stored by the persistent index (`core.index`) and loaded at the next
  start: what of the parked analyzer a surface still reads, as plain data, and its return into a new instance
  (`in_stored_session` False: the loaded session has no instance of it at all).

Analyzers find each other by class (`session.analyzer(ProviderContext)`), never by a name.

A record handler sees the records of its agent's files that do not belong to one transcript (event
recordings, sidecars, log lines, other agents' transcript lines) and may create or update any session
(`Store.session_for`), and settles what only several files together decide when a surface reads (`settle`).
Both kinds are handed the re-read port (`core.kernel.ports.Reread`): analysis does no
IO of its own and imports no state; the state holder satisfies the `Session` and `Store` protocols below.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

if TYPE_CHECKING:
    from core.kernel.dedupe import DedupeResult
    from core.kernel.logcols import CloseRows, ContinuityRows
    from core.kernel.ports import Reread
    from core.model import EntryNode, Problem, Record, SessionHeader, Sidecar, TranscriptEntry, Turn

A = TypeVar("A", bound="SessionAnalyzer")


class AgentRef(Protocol):
    """An agent as analyses name it: `core.agents.base.Agent` satisfies this."""

    @property
    def name(self) -> str: ...


class Session(Protocol):
    """What an analyzer or a handler may read and write of one session (`core.state.SessionState`)."""

    key: str  # the transcript path (or the file a handler keys the session by)
    session_id: str
    agent: AgentRef
    cwd: str | None
    header: SessionHeader | None
    turns: list[Turn]
    nodes: dict[str, EntryNode]
    sidecar: Sidecar | None
    entries: int
    parked: int | None
    #: the rule set its verdicts come from (the report's `profile`): a detected build, or the agent's `rules`
    profile: dict[str, Any] | None
    #: re-sends logged vs. avoidable with a stable fingerprint, for agents whose replay knows
    counterfactual: dict[str, Any] | None
    facts: Any  # the agent's typed per-session record (`Analysis.session_facts`)

    def analyzer(self, cls: type[A]) -> A | None: ...

    def each_analyzer(self) -> Iterator[SessionAnalyzer]: ...


class LogTables(Protocol):
    """The log half of the state a handler may read: the continuity and close tables (`core.kernel.logcols`)."""

    continuity: ContinuityRows
    closes: CloseRows


class Store(Protocol):
    """What a record handler may do to the state holder (`core.state.State`)."""

    version: int
    log: LogTables

    @property
    def sessions(self) -> Mapping[str, Session]: ...

    def session_for(self, key: str, session_id: str | None, agent: AgentRef) -> Session: ...

    def wake(self, key: str) -> None: ...

    def add_problem(self, problem: Problem) -> None: ...


class NotKept(Exception):
    """A parked session that cannot be stored as it is (`SessionAnalyzer.keep`): its file is read again instead."""


class SessionAnalyzer:
    """Base of every session analyzer: one instance per session, fed in its agent's order. All hooks no-ops."""

    #: whether a parked session loaded from the persistent index has an instance of this analyzer (given back
    #: its `keep` data through `resume`); False when what it adds is in the session's own fields and a rebuild
    #: from the file (`State.unpark`) derives the rest again
    in_stored_session: ClassVar[bool] = True

    def __init__(self, session: Session, reread: Reread) -> None:
        """Made with its session; `reread` is the port for the bytes it needs again (most need none)."""

    def on_entry(self, session: Session, entry: TranscriptEntry, turn: Turn | None) -> None:
        """Called for every entry of the active branch, in order. `turn` is set when `entry` is a provider
        call (the Turn summary was just created, with `logged` filled in)."""

    def on_branch(self, session: Session, keep: int) -> None:
        """The active branch was cut back to its first `keep` entries; entries that follow will be
        re-delivered through `on_entry` (with their `Turn` when they are calls)."""

    def park(self, session: Session) -> None:
        """The session is done (`State.park`): keep what the surfaces read, drop what only extends it."""

    def adopt(self, parked: Any) -> None:
        """The session is rebuilt from its file: `parked` is this class's analyzer of the parked session."""

    def rebuilt(self, session: Session) -> None:
        """A rebuild from its file has re-read it whole and put back its restart sidecar (`State.unpark`)."""

    def commit_changed(self, index: int, *, outcome_changed: bool) -> None:
        """Turn `index`'s commit outcome (`outcome_changed`) or only its class changed after it was judged."""

    def refresh(self, session: Session) -> None:
        """A surface is about to read the session: settle what this analyzer decides lazily."""

    def dedupe(self, session: Session, index: int) -> dict[str, DedupeResult] | None:
        """Every dedupe policy on call `index`'s payload, rebuilt from disk; None when this analyzer cannot."""
        return None

    def keep(self, session: Session) -> Any:
        """A parked analyzer's state for the persistent index: plain data (None, bool, int, float, str, and lists
        and dicts of them; never message text), or None when a new instance is the same to every surface.
        Raise `NotKept` when the session cannot be stored (its file is then read again at the next start)."""
        return None

    def resume(self, session: Session, kept: Any) -> None:
        """A new instance in a parked session loaded from the persistent index: take back `keep`'s data
        (decoded as plain data only: check its shape). It is never fed entries: a loaded session that grows,
        or that a recording wakes, is rebuilt from its file first (`State.unpark`)."""


class RecordHandler:
    """Base of the record handlers: one instance per `State`, made when its agent's first record that may
    concern them arrives. Log decision and close lines reach handlers only when they name a session and the
    state holds sessions (a line read before any session is evidence for none: a cold read meets the log
    first); other log events and problems are the state's alone."""

    #: the record types this handler is given (only records of its own agent's files)
    handles: ClassVar[tuple[type, ...]] = ()

    def __init__(self, agent: AgentRef, reread: Reread) -> None:
        self.agent = agent
        self.reread = reread

    def on_record(self, store: Store, record: Record) -> None:
        """One record of a type in `handles`, after the state holder applied it."""

    def on_log_sessions(self, store: Store, named: Mapping[str, int]) -> None:
        """A block of this agent's log was applied as columns (no records): session id -> how many of its
        continuity and close lines name that session (the lines of one block, in one go)."""

    def on_log_closes(self, store: Store) -> None:
        """Close lines of this agent's log were appended to `store.log.closes` (by record or by block; read
        before any session or after): a handler that pairs them reads the rows it has not seen."""

    def forget_session(self, session: Session) -> None:
        """A session of this agent is forgotten (truncated, replaced, rebuilt): drop what points into it."""

    def restored(self, store: Store, session: Session) -> None:
        """A parked session was loaded from the persistent index (`core.index`): its transcript's records never
        reached this handler; note what it would have kept of them (e.g. calls waiting for a recording)."""

    def settle(self, store: Store) -> None:
        """A surface is about to read the state (`State.settle`): decide what only the files read together can
        tell (Claude Code: which of two sessions holding the same calls made them)."""

    def polled(self, store: Store) -> None:
        """The records of one poll were applied (`State.polled`, under the engine's lock): whatever this handler
        put off while a record might still change it is made now, so a reader between polls sees it done
        (Claude Code: the verdict of the latest call)."""
