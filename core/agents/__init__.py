"""THE list of agents this tool reads, and what is derived from it: sniff order, homes, report extras.

Each agent is one package (`core/agents/<name>/`) whose `__init__` declares one `Agent`
(`core.agents.base`); adding an agent is that package plus one line in `_AGENTS` below.

The order of the list is the sniff order: a new file is offered to every adapter of the first agent, then
of the second, and so on, and the first adapter that accepts it reads it. pi comes before senpi because
both write a `session` header first and pi's adapter accepts only what can only be pi's (a senpi file falls
through to senpi's); the other agents' formats cannot be confused with either. The same order lists the homes
`continuity-tui` opens with no PATH and the agents' report fields.

Importing this module imports no agent: an agent's package (its declaration and adapters) is imported when a file
reaches its adapters in sniff order or something names it (`_AGENTS`), and its analysis the first time one of its
files is read (`Agent.load`).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.agents.base import Agent, existing_dirs
from core.formats.base import Adapter
from core.kernel.drilldown import Drilldown, recorded_line

_AGENTS: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = (
    # package, agent name, its formats (its adapters' names, in order), its turn_extras, its session_extras
    ("pi", "pi", ("pi-transcript",), ("cache",), ("agent",)),
    ("senpi", "senpi",
     ("agent-events", "senpi-sidecar", "senpi-transcript", "senpi-compaction-log", "senpi-session-log"),
     ("cache", "closes"), ("sidecar_verdict", "agent")),
    ("claude_code", "claude-code", ("claude-code",), ("cache",), ("agent",)),
    ("mux", "mux", ("mux-chat", "mux-partial", "mux-sidefile"), ("cache", "audit"), ("agent", "audit")),
    ("codex", "codex", ("codex-rollout",), ("cache",), ("agent",)),
)  # fmt: skip
"""The agents in sniff order (see the module docstring), each as what is known of it before its package is
imported: the package under `core/agents/`, and the names its `AGENT` declares. A package is imported the first
time a file reaches its adapters (a session.log is taken by senpi's before Claude Code's, mux's or Codex's are
tried: a log report imports neither, ~5 ms of a one-line report's start-up) or something asks for the agent by
name; its `AGENT` is checked against its line here then."""

_BY_NAME: dict[str, int] = {name: i for i, (_, name, *_rest) in enumerate(_AGENTS)}
_BY_FORMAT: dict[str, int] = {fmt: i for i, (_, _, formats, *_rest) in enumerate(_AGENTS) for fmt in formats}
if len(_BY_FORMAT) != sum(len(formats) for _, _, formats, *_ in _AGENTS) or len(_BY_NAME) != len(_AGENTS):
    raise RuntimeError("two agents share an agent name or a format name")
_LOADED: dict[int, Agent] = {}


def _agent(i: int) -> Agent:
    """The `AGENT` of the i-th agent of `_AGENTS`, its package imported on first use."""
    agent = _LOADED.get(i)
    if agent is None:
        package, *declared = _AGENTS[i]
        agent = importlib.import_module(f"core.agents.{package}").AGENT
        found = [
            agent.name,
            tuple(adapter.name for adapter in agent.adapters),
            tuple(name for name, _ in agent.turn_extras),
            tuple(name for name, _ in agent.session_extras),
        ]
        if found != declared:
            raise RuntimeError(f"core.agents.{package} declares {found}, core.agents._AGENTS says {declared}")
        _LOADED[i] = agent
    return agent


def __getattr__(name: str) -> Any:
    """`AGENTS` and `ADAPTERS`, every package imported (what needs them all: the homes, the agents' tests)."""
    if name == "AGENTS":
        return tuple(_agent(i) for i in range(len(_AGENTS)))
    if name == "ADAPTERS":
        return tuple(adapter for i in range(len(_AGENTS)) for adapter in _agent(i).adapters)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def sniff(path: str, obj: dict[str, Any]) -> Adapter | None:
    """The adapter for a file whose first decodable JSON object is `obj`, or None: the first in sniff order (every
    adapter of every agent, `ADAPTERS`) that accepts it, a later agent's package imported only when reached."""
    for i in range(len(_AGENTS)):
        for adapter in _agent(i).adapters:
            if adapter.sniff(path, obj):
                return adapter
    return None


def agent_of(adapter: Adapter) -> Agent:
    """The agent whose format `adapter` reads."""
    return _agent(_BY_FORMAT[adapter.name])


def agent_named(name: str) -> Agent:
    return _agent(_BY_NAME[name])


def drilldown_for(agent: str | None) -> Drilldown:
    """What the drill-down re-reads of a call of `agent` (by name): its own loader, else the call's line."""
    found = _BY_NAME.get(agent) if agent is not None else None
    loader = _agent(found).load().drilldown if found is not None else None
    return loader or recorded_line


def adapter_named(name: str) -> Adapter | None:
    """A registered adapter by its format name (a saved index names them)."""
    i = _BY_FORMAT.get(name)
    return next((a for a in _agent(i).adapters if a.name == name), None) if i is not None else None


def home_candidates(env: Mapping[str, str] | None = None, home: Path | None = None) -> list[Path]:
    """Every directory an agent would keep its files in here (existing or not), in `AGENTS` order."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    agents = (_agent(i) for i in range(len(_AGENTS)))
    return [path for agent in agents for spec in agent.homes for path in spec.candidates(env, home)]


def default_roots(env: Mapping[str, str] | None = None, home: Path | None = None) -> list[Path]:
    """What `continuity-tui` reads with no PATH: every agent's home that exists here, in `AGENTS` order."""
    return existing_dirs(home_candidates(env, home))


def _merged(lists: list[tuple[str, ...]]) -> tuple[str, ...]:
    """The union of the agents' report fields by name: each agent's own order kept, a name first met in a later
    agent placed just before the next of that agent's names already placed (else at the end)."""
    out: list[str] = []
    for names in lists:
        for i, name in enumerate(names):
            if name in out:
                continue
            later = next((n for n in names[i + 1 :] if n in out), None)
            out.insert(out.index(later) if later is not None else len(out), name)
    return tuple(out)


TURN_EXTRAS: tuple[str, ...] = _merged([turn for *_, turn, _session in _AGENTS])
"""The names of every agent's `turn_extras`: each report turn has all of them (null when not its agent's)."""
SESSION_EXTRAS: tuple[str, ...] = _merged([session for *_, session in _AGENTS])
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
