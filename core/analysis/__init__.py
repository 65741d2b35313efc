"""Pure, incremental analyses. Importing this package registers every session analyzer and record handler.

Each analysis module registers itself through `core.analysis.pipeline` when imported; list new modules here.
"""

from core.analysis import context  # noqa: F401  (first: the others read what it publishes)

# isort: split
# continuity recomputation: build profile -> commit outcome -> verdict replay (each imports the one before)
from core.analysis import commit, profile, verdicts  # noqa: F401

# isort: split
# what each call sent: payload reconstruction (reads the replay's decisions) and the directive ledger
from core.analysis import payload  # noqa: F401
from core.kernel import directives  # noqa: F401

# isort: split
# other agents (after the replay, whose `why` would otherwise replace theirs on pi-family turns): pi-family
# turns judged from the cache, record handlers for Claude Code and mux/Xum
from core.analysis import claude_calls, mux_audit, pi_turns  # noqa: F401
