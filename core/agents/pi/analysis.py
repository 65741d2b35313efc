"""What a pi session gets: the provider context, the directive ledger it feeds, and the cache-judged calls.

senpi's own analyses (build profile, commit boundary, continuity replay, payload serializers) have nothing to
decide in it: pi has no `claude-sdk-oauth` lane and logs no continuity decision.
"""

from core.agents.base import Analysis
from core.agents.pi.turns import PiSessionTurns
from core.agents.shared.pi_family.calls import PI_FAMILY_CALLS
from core.agents.shared.pi_family.context import ProviderContext
from core.kernel.directives import DirectiveLedger

ANALYSIS = Analysis(
    session_analyzers=(ProviderContext, DirectiveLedger, PiSessionTurns),
    calls=PI_FAMILY_CALLS,
)
