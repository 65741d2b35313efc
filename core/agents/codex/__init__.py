"""OpenAI Codex CLI: rollouts under `$CODEX_HOME/sessions`, one verdict per model call from `token_count`.

Home: `$CODEX_HOME/sessions`, else `~/.codex/sessions` (Codex's own rule, codex-rs `find_codex_home`; ccusage's
too), where Codex writes `YYYY/MM/DD/rollout-<local time>-<id>.jsonl`. `archived_sessions/` (rollouts the user
archived) is left out, as ccusage leaves it out, so the figures stay comparable.

- `rollout`: the format adapter (envelope lines -> `CodexLine`, bad lines -> `Problem`);
- `calls`: which `token_count` lines are calls, and each call's verdict (pure), by the kernel's OpenAI-style
  prompt-cache rule (`core.kernel.cache_verdict`: the previous prompt in 128-token blocks);
- `handler`: the calls filed as sessions and turns; `facts`: what a Codex turn records beyond the common fields.
"""

from core.agents.base import Agent, Home, Rules, turn_cache
from core.agents.codex.rollout import CodexRolloutAdapter

AGENT = Agent(
    name="codex",
    homes=(Home("sessions", env=("CODEX_HOME",), defaults=(".codex",)),),
    adapters=(CodexRolloutAdapter(),),
    analysis="core.agents.codex.analysis",
    turn_extras=(("cache", turn_cache),),
    rules=Rules(
        "codex",
        "Codex CLI: verdicts from the prompt cache (128-token blocks)",
        "Codex rollout token_count lines (a call is a change of total_token_usage; repeats are not calls); no "
        "continuity decision is logged, so each call's cached_input_tokens is judged against the previous call's "
        "whole prompt in 128-token blocks",
    ),
)
