"""senpi (the pi fork with a resident `claude-sdk-oauth` lane): logs, transcripts, restart sidecars, event
recordings; each call's continuity decision recomputed under the build profile its data shows.

Home: `$SENPI_CODING_AGENT_DIR/logs`, else `~/.senpi/agent/logs`; a `logs/` dir pulls in its `sessions/` and
`events/` siblings (`core.sources.discover.resolve_roots`).
"""

from typing import Any

from core.agents.base import AGENT_NAME, Agent, Home, turn_cache
from core.agents.senpi.facts import SenpiCall, SenpiSession
from core.agents.senpi.formats.events import AgentEventsAdapter
from core.agents.senpi.formats.logs import CompactionLogAdapter, SessionLogAdapter
from core.agents.senpi.formats.sidecar import SidecarAdapter
from core.agents.senpi.formats.transcript import SenpiTranscriptAdapter
from core.kernel.pipeline import Session
from core.model import Turn


def turn_closes(turn: Turn) -> Any:
    """The report's `turns[].closes`: the `claude_sdk_oauth_session_close` reasons senpi wrote inside this call."""
    facts = turn.facts
    return list(facts.closes) if isinstance(facts, SenpiCall) and facts.closes is not None else None


def sidecar_verdict(session: Session) -> Any:
    """The report's `sessions[].sidecar_verdict`: would a restart reattach from the sidecar, or flatten."""
    facts = session.facts
    return facts.sidecar_verdict if isinstance(facts, SenpiSession) else None


AGENT = Agent(
    name="senpi",
    homes=(Home("logs", env=("SENPI_CODING_AGENT_DIR",), defaults=(".senpi/agent",)),),
    # recordings and sidecars are told apart by name or by keys a transcript never has: they go first
    adapters=(
        AgentEventsAdapter(),
        SidecarAdapter(),
        SenpiTranscriptAdapter(),
        CompactionLogAdapter(),
        SessionLogAdapter(),
    ),
    analysis="core.agents.senpi.analysis",
    turn_extras=(("cache", turn_cache), ("closes", turn_closes)),
    session_extras=(("sidecar_verdict", sidecar_verdict), AGENT_NAME),
    payload_exact=True,  # the claude-sdk-oauth prompt is rebuilt byte for byte (every logged payloadBytes agrees)
)
