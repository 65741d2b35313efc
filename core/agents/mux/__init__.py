"""mux / Xum (coder/mux): workspace histories rewritten whole at every stream end, per-turn verdicts from the
prompt cache, capture vs commit from `partial.json`, and the thinking-replay audit.

Home: `$XUM_ROOT/sessions` (or its legacy alias `$MUX_ROOT`), else `~/.xum/sessions`, then the legacy
`~/.mux/sessions` and `~/.cmux/sessions` (reference other-agents §B.1).
"""

from typing import Any

from core.agents.base import AGENT_NAME, Agent, Home, Rules, turn_cache
from core.agents.mux.facts import MuxSession, MuxTurn
from core.agents.mux.formats.chat import MuxChatAdapter
from core.agents.mux.formats.partial import MuxPartialAdapter
from core.agents.mux.formats.side import MuxSideAdapter
from core.kernel.pipeline import Session
from core.model import Turn


def turn_audit(turn: Turn) -> Any:
    """The report's `turns[].audit`: the row's thinking-replay audit."""
    return turn.facts.audit if isinstance(turn.facts, MuxTurn) else None


def session_audit(session: Session) -> Any:
    """The report's `sessions[].audit`: rows per audit flag."""
    return session.facts.audit if isinstance(session.facts, MuxSession) else None


AGENT = Agent(
    name="mux",
    homes=(Home("sessions", env=("XUM_ROOT", "MUX_ROOT"), defaults=(".xum", ".mux", ".cmux")),),
    adapters=(MuxChatAdapter(), MuxPartialAdapter(), MuxSideAdapter()),
    analysis="core.agents.mux.analysis",
    turn_extras=(("cache", turn_cache), ("audit", turn_audit)),
    session_extras=(AGENT_NAME, ("audit", session_audit)),
    rules=Rules(
        "mux",
        "mux/Xum: verdicts from the prompt cache, thinking-replay audit",
        "chat.jsonl rows (one per turn, kept by historySequence); no continuity decision is logged, so each turn "
        "is judged from its cache figures against the previous turn",
    ),
)
