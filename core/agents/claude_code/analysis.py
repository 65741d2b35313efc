"""What a Claude Code session gets: the directive ledger (fed by the call handler's context counts); its calls
are built by the `ClaudeCalls` record handler from the lines of every file that belongs to the session (the
main transcript, sub-agent files, `agent_progress` copies)."""

from core.agents.base import Analysis
from core.agents.claude_code.calls import ClaudeCalls
from core.agents.claude_code.facts import ClaudeCall, ClaudeSession
from core.kernel.directives import DirectiveLedger

ANALYSIS = Analysis(
    session_analyzers=(DirectiveLedger,),
    record_handlers=(ClaudeCalls,),
    session_facts=ClaudeSession,
    turn_facts=(ClaudeCall,),
)
