"""What a senpi session gets, in order: each analyzer reads what the ones before it published on the entry.

- `ProviderContext` first: the messages each entry added to the provider context, or the whole new context
  after a compaction (the replay's hashes and the payload serializers consume it on the same entry);
- the continuity recomputation: `ProfileTracker` (the build profile from evidence) -> `CommitAnalyzer`
  (capture vs commit, under the profile's hash rule) -> `VerdictReplay` (the decision, from both);
- what each call sent: `DirectiveLedger` (fed by the payload analysis, which scans each message once) and
  `PayloadAnalyzer` (the serialized prompt, from the replay's decisions);
- `PiTurns` last: calls on a lane senpi does not decide for itself are judged from the prompt cache (after
  the replay, whose `why` would otherwise replace theirs).

Record handlers, in order: event recordings matched to turns (`RecordingMatcher`), restart sidecars and log
lines naming a session (`SidecarAndLogHandler`), close lines paired with the calls that wrote them
(`ClosePairing`), and the payload filler that runs after every analyzer has
seen a transcript entry (`PayloadSettler`).
"""

from core.agents.base import Analysis
from core.agents.senpi.commit import CommitAnalyzer, RecordingMatcher
from core.agents.senpi.continuity.closes import ClosePairing
from core.agents.senpi.continuity.records import SidecarAndLogHandler
from core.agents.senpi.continuity.replay import VerdictReplay
from core.agents.senpi.drilldown import load_capture_commit
from core.agents.senpi.facts import SenpiCall, SenpiSession
from core.agents.senpi.payload.analyzer import PayloadAnalyzer, PayloadSettler
from core.agents.senpi.profiles import ProfileTracker
from core.agents.shared.pi_family.calls import PI_FAMILY_CALLS
from core.agents.shared.pi_family.context import ProviderContext
from core.agents.shared.pi_family.turns import PiTurns
from core.kernel.directives import DirectiveLedger

ANALYSIS = Analysis(
    session_analyzers=(
        ProviderContext,
        ProfileTracker,
        CommitAnalyzer,
        VerdictReplay,
        DirectiveLedger,
        PayloadAnalyzer,
        PiTurns,
    ),
    record_handlers=(RecordingMatcher, SidecarAndLogHandler, ClosePairing, PayloadSettler),
    calls=PI_FAMILY_CALLS,
    session_facts=SenpiSession,
    drilldown=load_capture_commit,
    turn_facts=(SenpiCall,),
)
