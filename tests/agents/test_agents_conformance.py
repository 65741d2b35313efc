"""Every agent in `core.agents.AGENTS` keeps the `Agent` contract (`core/agents/base.py`): a new agent's line in
the list is checked here the day it lands, before any of its own tests."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from core.agents import ADAPTERS, AGENTS, SESSION_EXTRAS, TURN_EXTRAS, agent_named, agent_of
from core.agents.base import Agent, Analysis, Home
from core.formats.base import Adapter
from core.kernel.pipeline import RecordHandler, SessionAnalyzer
from core.model import Turn, Where
from core.sources.reread import FileReread
from core.state import State

IDS = [agent.name for agent in AGENTS]


def test_names_are_unique_and_every_format_has_one_agent() -> None:
    assert len(set(IDS)) == len(IDS) and all(IDS)
    names = [adapter.name for adapter in ADAPTERS]
    assert len(set(names)) == len(names) and all(names)
    assert {"senpi", "pi", "claude-code", "mux"} <= set(IDS)
    assert TURN_EXTRAS[:3] == ("cache", "closes", "audit") and SESSION_EXTRAS[:3] == (
        "sidecar_verdict",
        "agent",
        "audit",
    )


@pytest.mark.parametrize("agent", AGENTS, ids=IDS)
def test_the_declaration(agent: Agent) -> None:
    assert agent.homes and all(isinstance(home, Home) and home.sub for home in agent.homes)
    assert agent.adapters
    for adapter in agent.adapters:
        assert isinstance(adapter, Adapter) and agent_of(adapter) is agent
        assert isinstance(adapter.parkable, bool) and isinstance(adapter.resets_on_replace, bool)
        assert isinstance(adapter.routine_notices, frozenset) and isinstance(adapter.decision_log, bool)
    assert agent_named(agent.name) is agent
    assert pickle.loads(pickle.dumps(agent)) is agent  # a saved index names it; the one object comes back
    for name, value in (*agent.turn_extras, *agent.session_extras):
        assert isinstance(name, str) and callable(value)


@pytest.mark.parametrize("agent", AGENTS, ids=IDS)
def test_its_analysis(agent: Agent) -> None:
    spec = agent.load()
    assert isinstance(spec, Analysis)
    assert all(issubclass(cls, SessionAnalyzer) for cls in spec.session_analyzers)
    for cls in spec.record_handlers:
        assert issubclass(cls, RecordHandler) and cls.handles and all(isinstance(t, type) for t in cls.handles)
    assert spec.calls is None or (callable(spec.calls.is_call) and callable(spec.calls.new_turn))


@pytest.mark.parametrize("agent", AGENTS, ids=IDS)
def test_a_session_gets_its_own_agents_analyzers_only(agent: Agent, tmp_path: Path) -> None:
    state = State(FileReread())
    session = state.session_for(str(tmp_path / "s.jsonl"), "s1", agent)
    spec = agent.load()
    assert list(session.analyzers) == list(spec.session_analyzers)
    assert session.agent is agent
    if spec.session_facts is not None:
        assert isinstance(session.facts, spec.session_facts)  # type: ignore[arg-type]
    assert (session.profile is not None) == (agent.rules is not None)
    turn = Turn("s1", 0, None, None, None, Where("x", 1, 0))  # a call the agent recorded nothing else of
    for _, value in agent.turn_extras:
        value(turn)  # plain data or None, never an error
    for _, value in agent.session_extras:
        value(session)
