"""What a mux workspace gets: the directive ledger (fed by the audit handler's context counts); its turns are
built by the `MuxAudit` record handler from `chat-archive.jsonl`, `chat.jsonl` and `partial.json`."""

from core.agents.base import Analysis
from core.agents.mux.audit import MuxAudit
from core.agents.mux.drilldown import load_capture_commit
from core.agents.mux.facts import MuxSession, MuxTurn
from core.kernel.directives import DirectiveLedger

ANALYSIS = Analysis(
    session_analyzers=(DirectiveLedger,),
    record_handlers=(MuxAudit,),
    session_facts=MuxSession,
    turn_facts=(MuxTurn,),
    drilldown=load_capture_commit,
)
