"""Session scripts: what the user asks, what the model answers and which tools it calls, per session.

Specs are data; :mod:`core.demo.sim.session` plays them. Prompts are produced lazily, so a corpus of hundreds
of sessions streams instead of being held in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from core.demo.sim.builds import Build
from core.demo.sim.jsjson import JsonObj
from core.demo.sim.texts import Texts


@dataclass(frozen=True)
class ToolSpec:
    """One tool call the model makes and the result the tool returns."""

    name: str
    args: JsonObj
    output: str
    duration_ms: int = 400


@dataclass(frozen=True)
class CallSpec:
    """One provider call: optional thinking, then text and/or tool calls; or a terminal failure."""

    thinking: bool = False
    text: str | None = None
    tools: tuple[ToolSpec, ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class PromptSpec:
    """One user prompt and the calls of the agent run it starts."""

    text: str
    calls: tuple[CallSpec, ...]
    gap_ms: int = 60_000  # time since the previous activity
    thinking_level: str | None = None  # the user changes the thinking level right before this prompt
    hostile: bool = False


@dataclass(frozen=True)
class SessionSpec:
    """Everything fixed about one session; prompts are produced lazily so a corpus streams."""

    build: Build
    cwd: str
    model: str
    start_ms: int
    prompts: Callable[[Texts], Iterator[PromptSpec]]
    context_tools: frozenset[str]
    account: str = "personal"
    thinking_level: str = "high"
    omo: bool = True
    record_events: bool = False
    bad_transcript_lines: bool = False
    compaction_log: bool = True


AGENT_HOME = "/home/mika/.senpi/agent"
