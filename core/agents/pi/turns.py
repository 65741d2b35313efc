"""pi's calls: judged from the prompt cache and the transcript's structure, like senpi's stateless lanes
(`core.agents.shared.pi_family.turns`), and their payload measured from the context counts, since a pi session
has no other payload analysis (pi sends its whole context on every call: the context is the payload)."""

from __future__ import annotations

from core.agents.shared.pi_family.turns import PiTurns


class PiSessionTurns(PiTurns):
    owns_payload = True
