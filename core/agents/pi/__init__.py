"""pi (badlogic's coding agent): session files v1 to v3, each call judged from the prompt cache.

Home: `$PI_CODING_AGENT_DIR/sessions`, else `~/.pi/agent/sessions` (reference other-agents §A.1).
"""

from core.agents.base import Agent, Home, Rules, turn_cache
from core.agents.pi.format import PiSessionAdapter

AGENT = Agent(
    name="pi",
    homes=(Home("sessions", env=("PI_CODING_AGENT_DIR",), defaults=(".pi/agent",)),),
    adapters=(PiSessionAdapter(),),
    analysis="core.agents.pi.analysis",
    turn_extras=(("cache", turn_cache),),
    rules=Rules(
        "pi",
        "pi: verdicts from the prompt cache",
        "pi session header (no version, v2, or a version-4 UUID session id); pi logs no continuity decision, so "
        "each call is judged from its cache figures against the previous call",
    ),
)
