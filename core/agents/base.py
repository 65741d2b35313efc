"""What an agent is to this tool: one `Agent` object, declared once, in its own package.

An agent (senpi, pi, Claude Code, mux, …) says here everything the rest of the tool needs of it, and nothing
outside its package names it:

- `homes`: where it keeps its files, as the agent itself resolves that (environment variables first, then
  defaults under the user's home). `continuity-tui` with no PATH opens every home of every agent that exists.
- `adapters`: one per on-disk format, in the order they are tried on a new file, each declaring its
  capabilities (`core.formats.base.Adapter`: `parkable`, `resets_on_replace`, `routine_notices`).
- `analysis`: the module holding its `ANALYSIS` (an `Analysis`: the session analyzers its sessions get, in
  order, its record handlers, and how a transcript entry becomes a call). It is imported the first time one
  of the agent's files is read, so a history of one agent never imports another agent's analysis, and
  importing the list of agents stays cheap.
- `turn_extras` / `session_extras`: the report fields (`turns[]`, `sessions[]`) only it fills, each a name and
  a function of the turn or session giving plain JSON data. The report lists every agent's names on every row
  (null where another agent's row has none), in `AGENTS` order.
- `rules`: for an agent whose verdicts follow one fixed rule set, its description (the session's `profile`
  in the report); senpi detects a build profile per session instead.
- `payload_exact`: its transcripts let this tool rebuild each call's prompt byte for byte (senpi). Other
  agents' transcripts hold no system prompt and no tool schemas, so their payload bytes count only the
  messages (37 bytes for a Claude Code first call of 25,353 prompt tokens): the graph and the summaries
  measure their calls in prompt tokens, and say so.

Agents never import each other or `core.state`: what two agents share (pi-family context and transcripts,
the counters of stateless-API agents) lives in `core.agents.shared`, what every agent may use in
`core.kernel`. To add an agent, see README "Adding an agent".
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from core.formats.base import Adapter
from core.kernel.drilldown import Drilldown
from core.kernel.pipeline import RecordHandler, SessionAnalyzer

if TYPE_CHECKING:
    from core.kernel.pipeline import Session
    from core.model import TranscriptEntry, Turn


class _Declared:
    """A declaration's record: slots, an `__init__` written out, equality, hash and repr over its fields, never
    assigned after it is made. Not a frozen dataclass: defining one takes ~0.7 ms (its methods are compiled at
    import), and the four here were ~3 ms of a one-line report's start-up."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({shown})"


class Home(_Declared):
    """One place an agent keeps its files, resolved the way the agent resolves it.

    The agent dir is the value of the first of `env` that is set (several dirs when `separator` splits it),
    else every one of `defaults` (relative to the user's home); this tool reads `sub` inside it.
    """

    __slots__ = _fields = ("sub", "env", "defaults", "separator")

    def __init__(
        self, sub: str, env: tuple[str, ...] = (), defaults: tuple[str, ...] = (), separator: str | None = None
    ) -> None:
        self.sub = sub
        self.env = env
        self.defaults = defaults
        self.separator = separator

    def candidates(self, env: Mapping[str, str], home: Path) -> list[Path]:
        """The directories this home names (existing or not), in the agent's own precedence."""
        for name in self.env:
            value = env.get(name)
            if not value:
                continue
            parts = value.split(self.separator) if self.separator else [value]
            dirs = [part.strip() for part in parts if part.strip()]
            if dirs:
                return [Path(d).expanduser() / self.sub for d in dirs]
        return [home / d / self.sub for d in self.defaults]


class TranscriptCalls(Protocol):
    """How a pi-family transcript entry (`TranscriptEntry`, kept in state's entry tree) becomes a call."""

    def is_call(self, entry: TranscriptEntry) -> bool:
        """True for an entry that records one provider call (pi-family: an assistant message)."""
        ...

    def new_turn(self, session_id: str, index: int, entry: TranscriptEntry) -> Turn:
        """The `Turn` summary of a call entry, with what the entry itself says (its logged decision, usage)."""
        ...


class Analysis(_Declared):
    """What an agent's sessions get (its `analysis` module's `ANALYSIS`).

    - `session_analyzers`: one instance of each per session, fed every entry in this order (a later one reads what
      an earlier one published on the same entry);
    - `record_handlers`: one instance of each per state, given the records of this agent's files, in this order;
    - `calls`: for agents whose files are pi-family transcripts: which entries are calls, and their `Turn`;
    - `session_facts`: makes a new session's `facts` (the agent's typed per-session record), when it keeps one;
    - `drilldown`: what the drill-down re-reads of a call, for an agent that records a capture beside the commit
      (senpi); None: the line the call was read from (`core.kernel.drilldown.recorded_line`);
    - `turn_facts`: the types its analyzers put in `Turn.facts` (the persistent index decodes a stored call's
      facts back into one of these, and stores no session whose calls hold anything else).
    """

    __slots__ = _fields = ("session_analyzers", "record_handlers", "calls", "session_facts", "drilldown", "turn_facts")

    def __init__(
        self,
        session_analyzers: tuple[type[SessionAnalyzer], ...] = (),
        record_handlers: tuple[type[RecordHandler], ...] = (),
        calls: TranscriptCalls | None = None,
        session_facts: Callable[[], Any] | None = None,
        drilldown: Drilldown | None = None,
        turn_facts: tuple[type, ...] = (),
    ) -> None:
        self.session_analyzers = session_analyzers
        self.record_handlers = record_handlers
        self.calls = calls
        self.session_facts = session_facts
        self.drilldown = drilldown
        self.turn_facts = turn_facts


Extra = tuple[str, Callable[[Any], Any]]
"""A report field an agent adds: its name, and its plain JSON value for one of the agent's turns (or sessions)."""


def turn_cache(turn: Turn) -> Any:
    """The report's `turns[].cache`: the figures a prompt-cache verdict rests on (agents judged by the cache)."""
    return turn.cache


def agent_name(session: Session) -> str:
    """The report's `sessions[].agent`: whose session it is."""
    return session.agent.name


AGENT_NAME: Extra = ("agent", agent_name)
"""Every agent's first session field unless it declares its own list (keep it there: `AGENTS` order merges)."""


class Rules(_Declared):
    """The one rule set an agent's verdicts come from (the session's `profile` in a report)."""

    __slots__ = _fields = ("id", "label", "why")

    def __init__(self, id: str, label: str, why: str) -> None:
        self.id = id
        self.label = label
        self.why = why

    def describe(self) -> dict[str, Any]:
        return {"id": self.id, "label": self.label, "why": self.why}


class Agent(_Declared):
    """One coding agent, as this tool reads it (see the module docstring): `name` is the report's `agent`
    ("senpi", "pi", "claude-code", "mux", …), `analysis` the module path of its `ANALYSIS`, imported when its
    first record arrives."""

    _fields = ("name", "homes", "adapters", "analysis", "turn_extras", "session_extras", "rules", "payload_exact")
    __slots__ = (*_fields, "_loaded")

    def __init__(
        self,
        name: str,
        homes: tuple[Home, ...],
        adapters: tuple[Adapter, ...],
        analysis: str,
        turn_extras: tuple[Extra, ...] = (),
        session_extras: tuple[Extra, ...] = (AGENT_NAME,),
        rules: Rules | None = None,
        payload_exact: bool = False,
    ) -> None:
        self.name = name
        self.homes = homes
        self.adapters = adapters
        self.analysis = analysis
        self.turn_extras = turn_extras
        self.session_extras = session_extras
        self.rules = rules
        self.payload_exact = payload_exact
        self._loaded: list[Analysis] = []

    def load(self) -> Analysis:
        """The agent's `Analysis`, importing its module on first use."""
        if not self._loaded:
            spec = importlib.import_module(self.analysis).ANALYSIS
            if not isinstance(spec, Analysis):
                raise TypeError(f"{self.analysis}.ANALYSIS is not an Analysis")
            self._loaded.append(spec)
        return self._loaded[0]

    def __reduce__(self) -> tuple[Callable[[str], Agent], tuple[str]]:
        """Pickled (in a saved index) by name: the one object of `AGENTS` comes back."""
        return (_agent_named, (self.name,))

    def __hash__(self) -> int:
        return hash(self.name)


def _agent_named(name: str) -> Agent:
    from core.agents import agent_named  # the registry imports this module: resolved when unpickling

    return agent_named(name)


def existing_dirs(paths: list[Path]) -> list[Path]:
    """`paths` that are directories, first spelling of each real directory only."""
    seen: set[str] = set()
    found: list[Path] = []
    for path in paths:
        key = os.path.realpath(path)
        if key not in seen and path.is_dir():
            seen.add(key)
            found.append(path)
    return found
