"""One session as the surfaces read it: its header, its entry tree (ids and pointers only), its turns, and
its own agent's analyzers (found by class: `session.analyzer(ProviderContext)`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from msgspec import Struct, field

from core.kernel.pipeline import SessionAnalyzer
from core.model import EntryNode, SessionHeader, Sidecar, Turn, Where

if TYPE_CHECKING:
    from core.agents.base import Agent

A = TypeVar("A", bound=SessionAnalyzer)


class SessionState(Struct, dict=True):
    """One session (a transcript, or what a handler assembled from several files): summaries, never bodies."""

    key: str  # the transcript path
    session_id: str
    agent: Agent
    cwd: str | None = None
    header: SessionHeader | None = None
    turns: list[Turn] = field(default_factory=list)
    nodes: dict[str, EntryNode] = field(default_factory=dict)
    branch: list[str] = field(default_factory=list)  # entry ids from the root to the current leaf
    #: its agent's analyzers by class, in the agent's order (`Analysis.session_analyzers`)
    analyzers: dict[type[SessionAnalyzer], SessionAnalyzer] = field(default_factory=dict)
    sidecar: Sidecar | None = None  # the restart binding read for it (another file)
    #: the rule set its verdicts come from (the report's `profile`): a detected build, or the agent's `rules`
    profile: dict[str, Any] | None = None
    #: re-sends logged vs. avoidable with a stable fingerprint (senpi's replay), for the report's counterfactual
    counterfactual: dict[str, Any] | None = None
    facts: Any = None  # the agent's typed per-session record (`Analysis.session_facts`)
    entries: int = 0
    parked: int | None = None  # parked (`State.park`): the byte offset its transcript was read to; else None
    #: where the record that made it is, for a session a handler assembles across files (its first record may
    #: be in any of them); the index puts sessions in a cold read's order by it (`core.index.assembled`)
    origin: Where | None = None

    def analyzer(self, cls: type[A]) -> A | None:
        """This session's analyzer of class `cls` (or of a subclass of it), None when its agent lists none."""
        found = self.analyzers.get(cls)
        if found is None:
            for analyzer in self.analyzers.values():
                if isinstance(analyzer, cls):
                    return analyzer
            return None
        return found  # type: ignore[return-value]

    def each_analyzer(self) -> Iterator[SessionAnalyzer]:
        return iter(list(self.analyzers.values()))

    def refresh(self) -> None:
        """Settle what the analyzers decide lazily, before a surface reads the session."""
        for analyzer in self.analyzers.values():
            analyzer.refresh(self)

    def dedupe(self, index: int) -> dict[str, Any] | None:
        """Every dedupe policy on call `index`'s payload, from the first analyzer that can rebuild it."""
        for analyzer in self.analyzers.values():
            results = analyzer.dedupe(self, index)
            if results is not None:
                return results
        return None
