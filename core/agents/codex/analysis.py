"""What a Codex session gets: its calls, built by the `CodexCalls` record handler from the rollout's lines. No
session analyzer: a rollout records usage per call, not the prompt sent, so there is nothing to replay."""

from core.agents.base import Analysis
from core.agents.codex.handler import CodexCalls

ANALYSIS = Analysis(record_handlers=(CodexCalls,))
