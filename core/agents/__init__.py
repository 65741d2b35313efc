"""THE list of agents this tool reads, and what is derived from it: sniff order, homes, report extras.

Each agent is one package (`core/agents/<name>/`) whose `__init__` declares one `Agent`
(`core.agents.base`); adding an agent is that package plus one line in `_AGENTS` below.

The order of the list is the sniff order: a new file is offered to every adapter of the first agent, then
of the second, and so on, and the first adapter that accepts it reads it. pi comes before senpi because
both write a `session` header first and pi's adapter accepts only what can only be pi's (a senpi file falls
through to senpi's); the other agents' formats cannot be confused with either. The same order lists the homes
`continuity-tui` opens with no PATH and the agents' report fields.

Importing this module imports the agents' adapters (small, needed to sniff), not their analyses: an agent's
analysis is imported the first time one of its files is read (`Agent.load`).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.agents.base import Agent, Extra, existing_dirs
from core.formats.base import Adapter
from core.kernel.drilldown import Drilldown, recorded_line

_AGENTS = (
    "pi",
    "senpi",
    "claude_code",
    "mux",
    "codex",
)
"""Package names under `core/agents/`, in sniff order (see the module docstring)."""

AGENTS: tuple[Agent, ...] = tuple(importlib.import_module(f"core.agents.{name}").AGENT for name in _AGENTS)

ADAPTERS: tuple[Adapter, ...] = tuple(adapter for agent in AGENTS for adapter in agent.adapters)
"""Every format adapter, in sniff order."""

_BY_NAME: dict[str, Agent] = {agent.name: agent for agent in AGENTS}
_BY_FORMAT: dict[str, Agent] = {adapter.name: agent for agent in AGENTS for adapter in agent.adapters}
if len(_BY_FORMAT) != len(ADAPTERS) or len(_BY_NAME) != len(AGENTS):
    raise RuntimeError("two agents share an agent name or a format name")


def sniff(path: str, obj: dict[str, Any]) -> Adapter | None:
    """The adapter for a file whose first decodable JSON object is `obj`, or None."""
    for adapter in ADAPTERS:
        if adapter.sniff(path, obj):
            return adapter
    return None


def agent_of(adapter: Adapter) -> Agent:
    """The agent whose format `adapter` reads."""
    return _BY_FORMAT[adapter.name]


def agent_named(name: str) -> Agent:
    return _BY_NAME[name]


def drilldown_for(agent: str | None) -> Drilldown:
    """What the drill-down re-reads of a call of `agent` (by name): its own loader, else the call's line."""
    found = _BY_NAME.get(agent) if agent is not None else None
    loader = found.load().drilldown if found is not None else None
    return loader or recorded_line


def adapter_named(name: str) -> Adapter | None:
    """A registered adapter by its format name (a saved index names them)."""
    agent = _BY_FORMAT.get(name)
    return next((a for a in agent.adapters if a.name == name), None) if agent is not None else None


def home_candidates(env: Mapping[str, str] | None = None, home: Path | None = None) -> list[Path]:
    """Every directory an agent would keep its files in here (existing or not), in `AGENTS` order."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    return [path for agent in AGENTS for spec in agent.homes for path in spec.candidates(env, home)]


def default_roots(env: Mapping[str, str] | None = None, home: Path | None = None) -> list[Path]:
    """What `continuity-tui` reads with no PATH: every agent's home that exists here, in `AGENTS` order."""
    return existing_dirs(home_candidates(env, home))


def _merged(lists: list[tuple[Extra, ...]]) -> tuple[Extra, ...]:
    """The union of the agents' report fields by name: each agent's own order kept, a name first met in a later
    agent placed just before the next of that agent's names already placed (else at the end)."""
    out: list[str] = []
    for extras in lists:
        names = [name for name, _ in extras]
        for i, name in enumerate(names):
            if name in out:
                continue
            later = next((n for n in names[i + 1 :] if n in out), None)
            out.insert(out.index(later) if later is not None else len(out), name)
    return tuple((name, _no_value) for name in out)


def _no_value(_: Any) -> None:
    return None


TURN_EXTRAS: tuple[str, ...] = tuple(name for name, _ in _merged([a.turn_extras for a in AGENTS]))
"""The names of every agent's `turn_extras`: each report turn has all of them (null when not its agent's)."""
SESSION_EXTRAS: tuple[str, ...] = tuple(name for name, _ in _merged([a.session_extras for a in AGENTS]))
"""Likewise for `session_extras` on each report session."""

__all__ = [
    "ADAPTERS",
    "AGENTS",
    "SESSION_EXTRAS",
    "TURN_EXTRAS",
    "Agent",
    "adapter_named",
    "agent_named",
    "agent_of",
    "default_roots",
    "drilldown_for",
    "home_candidates",
    "sniff",
]
