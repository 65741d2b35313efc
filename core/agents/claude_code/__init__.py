"""Claude Code: project transcripts and sub-agent files, one verdict per API call from the prompt cache.

Home: `<dir>/projects` for each comma-separated `$CLAUDE_CONFIG_DIR`, else `~/.claude/projects` and
`~/.config/claude/projects` (reference other-agents §C.1).
"""

from core.agents.base import Agent, Home, Rules, turn_cache
from core.agents.claude_code.format import ClaudeCodeAdapter

AGENT = Agent(
    name="claude-code",
    homes=(Home("projects", env=("CLAUDE_CONFIG_DIR",), defaults=(".claude", ".config/claude"), separator=","),),
    adapters=(ClaudeCodeAdapter(),),
    analysis="core.agents.claude_code.analysis",
    turn_extras=(("cache", turn_cache),),
    rules=Rules(
        "claude-code",
        "Claude Code: verdicts from the prompt cache",
        "Claude Code transcript lines (message.id/requestId calls); no continuity decision is logged, so each "
        "call is judged from its cache read and write against the previous call",
    ),
)
