"""What a demo agent writes, when, and what is true of it: the shape every demo generator returns.

Each generator (`core.demo.senpi`, `claude_code`, `pi`, `codex`) plays one agent and returns an `AgentPlan`:
its writes in the agent's own time (epoch ms, as stamped in the lines), the home it writes them under, and the
truth of every call it made (`SessionTruth`/`CallTruth`: what the simulated provider cache read and wrote, and
why). The truths come from the generator's own model of the agent and of the provider (`core.demo.prompt_cache`),
never from the analysis, so a test that compares them with a report of the same files checks the analysis.

`schedule` lays every agent's writes on one wall clock, each agent on its own accelerated timeline (a gap
between two of its writes is divided by `speed` and capped at `max_pause`), so agents that worked hours or
months apart write side by side within seconds of each other, and a 5-minute idle gap still comes before the
call it expired.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Op = Literal["append", "replace", "rotate"]


@dataclass(frozen=True, slots=True)
class Write:
    """One write an agent does at `ms`: append `data` to `path`, replace `path` with `data`, or rotate `path` to
    `path.1` (senpi's session.log). `path` is relative to the agent's home."""

    ms: int
    path: str
    data: bytes = b""
    op: Op = "append"


@dataclass(slots=True)
class CallTruth:
    """One provider call as the generator made it. `index` is its position among its session's calls in time
    order (a report's `turns[].index`); tokens are in the Anthropic mapping (prompt = input + cache_read +
    cache_write), as every report gives them."""

    index: int
    ts: str
    thread: str
    kind: str
    reason: str
    tokens: dict[str, int]
    model: str | None = None
    entry_id: str | None = None
    expected_read: int | None = None
    excess: int = 0
    #: the lifetime of what the call wrote (Anthropic 5 m or 1 h), None where the provider publishes none
    ttl_ms: int | None = None
    #: what the agent itself wrote as this call's cost (pi's `usage.cost.total`), None when it writes none
    cost_usd: float | None = None
    rewritten: bool = False


@dataclass(slots=True)
class SessionTruth:
    agent: str
    session_id: str
    path: str  # the session's transcript, relative to the demo root (home included)
    cwd: str | None
    calls: list[CallTruth] = field(default_factory=list)
    #: the calls (entry ids) this file re-logs from another session (a resumed copy): calls of that session
    copied: list[str] = field(default_factory=list)

    def tokens(self) -> dict[str, int]:
        total = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
        for call in self.calls:
            for key in total:
                total[key] += call.tokens.get(key, 0)
        return total


@dataclass(slots=True)
class AgentPlan:
    """One agent's part of the demo. `home` is the directory under the demo root that stands for the agent's home
    (its `$SENPI_CODING_AGENT_DIR`, `$CLAUDE_CONFIG_DIR`, `$PI_CODING_AGENT_DIR`, `$CODEX_HOME`)."""

    agent: str
    home: str
    writes: list[Write]
    sessions: list[SessionTruth]
    #: wall seconds before its first write (agents start one after the other, not all in the first frame)
    start_delay: float = 0.0

    def files(self) -> list[str]:
        """Every file it writes, relative to the demo root, in the order they first appear."""
        seen: dict[str, None] = {}
        for write in self.writes:
            if write.op != "rotate":
                seen.setdefault(f"{self.home}/{write.path}", None)
        return list(seen)


@dataclass(frozen=True, slots=True)
class Scheduled:
    """A write placed on the wall clock: `wall` seconds after the demo started."""

    wall: float
    agent: str
    path: str  # relative to the demo root
    write: Write


SPEED = 60.0
"""Agent seconds per wall second: a minute of agent time passes in one second."""
MAX_PAUSE = 0.8
"""The longest wall pause between two writes of one agent: a 6-minute idle gap (an expiry) or a two-month gap
between senpi sessions passes in under a second, so the demo never stalls."""


def schedule(plans: list[AgentPlan], speed: float = SPEED, max_pause: float = MAX_PAUSE) -> list[Scheduled]:
    """Every plan's writes on one wall clock, in wall order (an agent's own writes keep their order)."""
    if speed <= 0:
        raise ValueError("speed must be positive")
    placed: list[tuple[float, int, int, Scheduled]] = []
    for number, plan in enumerate(plans):
        wall, previous = plan.start_delay, None
        for seq, write in enumerate(plan.writes):
            if previous is not None:
                wall += min(max(write.ms - previous, 0) / 1000 / speed, max_pause)
            previous = write.ms
            placed.append((wall, number, seq, Scheduled(wall, plan.agent, f"{plan.home}/{write.path}", write)))
    placed.sort(key=lambda item: item[:3])
    return [item[3] for item in placed]
