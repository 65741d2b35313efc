"""Parked sessions in the store: one `sessions` row, one `calls` row per provider call, and back.

A parked session (`core.state.parking`) keeps what the surfaces read and nothing that extends its analysis;
stored, it is that and less: the session's own fields (header, entry tree as ids and pointers, profile,
counterfactual, its agent's typed facts, its restart sidecar), its calls whole (`Turn`, typed), and of its
analyzers only what each one `keep`s (the directive ledger). Loaded, it is a parked session whose analyzers
are new instances given back their kept data (`SessionAnalyzer.resume`); an analyzer that declares
`in_stored_session = False` (the build-profile tracker: the chosen profile is in `session.profile`) is left
out. Anything that would extend it (its file grows, a recording of one of its calls, a new restart sidecar)
rebuilds it from its file first, as for any parked session (`State.unpark`).

What cannot be stored as such (`NotKept`: a recording's diff of message text, facts of an undeclared type, a
string the report's redaction would change, an entry from another file) leaves the session out of the store:
its file is read again at the next start, and the result is the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from core.agents import agent_named
from core.agents.base import Agent
from core.index.codec import (
    Corrupt,
    NotKept,
    calls_from_plain,
    calls_to_plain,
    check_strings,
    deflate,
    inflate,
    pack,
    plain,
    strings_of,
)
from core.kernel.ports import Reread
from core.model import EntryNode, SessionHeader, Sidecar, Turn, Where
from core.state import SessionState

__all__ = ["StoredSession", "freeze", "thaw"]


class _Node(msgspec.Struct, array_like=True):
    id: str
    parent_id: str | None
    type: str
    line: int
    offset: int
    length: int
    turn_index: int | None


class _State(msgspec.Struct):
    """What a `sessions.state` BLOB holds (besides the calls, in `calls.data`)."""

    header: SessionHeader | None
    nodes: list[_Node]
    branch: list[str]
    sidecar: Sidecar | None
    profile: dict[str, Any] | None
    counterfactual: dict[str, Any] | None
    facts: dict[str, Any] | None
    entries: int
    analyzers: dict[str, Any]


class StoredSession(msgspec.Struct):
    """A session as its rows: what `freeze` gives and `thaw` takes."""

    key: str
    session_id: str
    agent: str
    cwd: str | None
    started: str | None
    parked_at: int
    sidecar_path: str | None
    state: bytes
    calls: bytes
    """Every call, whole (`codec.calls_to_plain`), packed and compressed: the typed source the loader reads."""
    turns: list[Turn]
    """The calls as they were frozen (for the inspectable `calls` rows; empty when read back)."""
    log_credits: tuple[int, int] | None = None
    """How many log lines naming it a cold read credits it as build evidence while it is read and once it is
    parked (None: not known)."""


def facts_types(agent: Agent) -> tuple[dict[str, type], type | None]:
    """An agent's turn-facts types by name and its session-facts type (stored sessions of every kind)."""
    spec = agent.load()
    session_type = spec.session_facts if isinstance(spec.session_facts, type) else None
    return {t.__qualname__: t for t in spec.turn_facts}, session_type


def decode_facts(facts: Any, session_type: type | None) -> Any:
    """A stored session's facts as its agent's type; `Corrupt` when they do not decode or the agent keeps none."""
    if facts is None:
        return None
    if session_type is None:
        raise Corrupt("stored session facts for an agent that keeps none")
    try:
        return msgspec.convert(facts, session_type)
    except (msgspec.ValidationError, TypeError, ValueError) as exc:
        raise Corrupt(f"stored session facts do not decode: {exc}") from None


def freeze(session: SessionState) -> StoredSession:
    """A parked session as rows; `NotKept` when it cannot be stored as it is (see the module docstring)."""
    if session.parked is None:
        raise NotKept("not parked")
    key = session.key
    agent = session.agent
    turn_types, session_type = facts_types(agent)
    nodes = []
    for node in session.nodes.values():
        where = node.where
        if where.path != key:
            raise NotKept("an entry of another file")
        nodes.append(_Node(node.id, node.parent_id, node.type, where.line, where.offset, where.length, node.turn_index))
    analyzers: dict[str, Any] = {}
    for cls, analyzer in session.analyzers.items():
        kept = analyzer.keep(session)  # may raise NotKept
        if kept is not None and cls.in_stored_session:
            analyzers[cls.__qualname__] = kept
    facts = session.facts
    if facts is not None and (session_type is None or type(facts) is not session_type):
        raise NotKept("session facts of an undeclared type")
    state = _State(
        header=session.header,
        nodes=nodes,
        branch=list(session.branch),
        sidecar=session.sidecar,
        profile=session.profile,
        counterfactual=session.counterfactual,
        facts=None if facts is None else msgspec.to_builtins(facts),
        entries=session.entries,
        analyzers=analyzers,
    )
    plain_state = msgspec.to_builtins(state)
    for turn in session.turns:
        if turn.where.path != key:
            raise NotKept("a call of another file")
    calls = calls_to_plain(session.turns, key, session.session_id, turn_types)
    secret = check_strings(_strings(plain_state, session, calls))
    if secret is not None:
        raise NotKept(f"it holds a secret ({secret})")
    started = session.header.timestamp if session.header is not None else None
    sidecar_path = session.sidecar.where.path if session.sidecar is not None else None
    return StoredSession(key, session.session_id, agent.name, session.cwd, started, session.parked, sidecar_path,
                         deflate(pack(plain_state)), deflate(pack(calls)), list(session.turns))  # fmt: skip


def _strings(state: Any, session: SessionState, calls: list[Any]) -> Iterable[str]:
    yield session.key
    yield session.session_id
    if session.cwd is not None:
        yield session.cwd
    yield from strings_of(state)
    yield from strings_of(calls)


def thaw(stored: StoredSession, reread: Reread) -> SessionState:
    """A parked session from its rows (`Corrupt` when they do not decode into what `freeze` wrote)."""
    try:
        agent = agent_named(stored.agent)
    except KeyError:
        raise Corrupt(f"a stored session of an unknown agent ({stored.agent})") from None
    turn_types, session_type = facts_types(agent)
    try:
        state = msgspec.convert(plain(inflate(stored.state)), _State)
    except (msgspec.ValidationError, TypeError, ValueError) as exc:
        raise Corrupt(f"a stored session does not decode: {exc}") from None
    key = stored.key
    session = SessionState(key=key, session_id=stored.session_id, agent=agent, cwd=stored.cwd)
    for cls in agent.load().session_analyzers:  # new instances first: what they set on the session is replaced
        if not cls.in_stored_session:
            continue
        try:
            analyzer = cls(session, reread)
            analyzer.park(session)
            kept = state.analyzers.get(cls.__qualname__)
            if kept is not None:
                analyzer.resume(session, kept)
        except Exception as exc:  # a kept value of the wrong shape: whatever `resume` raised
            raise Corrupt(f"a stored {cls.__name__} does not resume: {type(exc).__name__}") from None
        session.analyzers[cls] = analyzer
    session.header = state.header
    session.turns = calls_from_plain(plain(inflate(stored.calls)), key, stored.session_id, turn_types)
    for index, turn in enumerate(session.turns):
        if turn.index != index:
            raise Corrupt("a stored session's calls are out of order")
    session.nodes = {
        n.id: EntryNode(n.id, n.parent_id, n.type, Where(key, n.line, n.offset, n.length), n.turn_index)
        for n in state.nodes
    }
    for node in session.nodes.values():  # a call and its entry share one pointer, as when read
        if node.turn_index is not None and 0 <= node.turn_index < len(session.turns):
            turn = session.turns[node.turn_index]
            if turn.where == node.where:
                turn.where = node.where
    session.branch = state.branch
    session.sidecar = state.sidecar
    session.profile = state.profile
    session.counterfactual = state.counterfactual
    session.facts = decode_facts(state.facts, session_type)
    session.entries = state.entries
    session.parked = stored.parked_at
    return session
