"""senpi session transcripts (`sessions/--<cwd>--/<ts>_<uuid>.jsonl`): the pi-family v3 layout
(`core.agents.shared.pi_family.transcript`), which senpi only ever writes. Offered after pi's adapter, which
takes the headers that can only be pi's (`core.agents.pi.format`)."""

from __future__ import annotations

from core.agents.shared.pi_family.transcript import TranscriptAdapter


class SenpiTranscriptAdapter(TranscriptAdapter):
    name = "senpi-transcript"
