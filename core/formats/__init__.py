"""Format adapters, one per on-disk format, and content sniffing.

To add a format: write an adapter module (see `base.Adapter`) and append it to `ADAPTERS`. Order matters:
the first adapter whose `sniff` accepts a file's first JSON object wins, so specific formats come first.
"""

from __future__ import annotations

from core.formats.base import Adapter
from core.formats.senpi_log import CompactionLogAdapter, SessionLogAdapter
from core.formats.senpi_sidecar import SidecarAdapter
from core.formats.senpi_transcript import TranscriptAdapter

ADAPTERS: list[Adapter] = [
    SidecarAdapter(),
    TranscriptAdapter(),
    CompactionLogAdapter(),
    SessionLogAdapter(),
]


def register(adapter: Adapter, *, first: bool = False) -> None:
    """Add an adapter (other agents' formats register themselves from their modules)."""
    if any(a.name == adapter.name for a in ADAPTERS):
        return
    if first:
        ADAPTERS.insert(0, adapter)
    else:
        ADAPTERS.append(adapter)


def sniff(path: str, obj: dict) -> Adapter | None:
    """The adapter for a file whose first decodable JSON object is `obj`, or None."""
    for adapter in ADAPTERS:
        if adapter.sniff(path, obj):
            return adapter
    return None


from core.formats.agent_events import AgentEventsAdapter  # noqa: E402  (needs `register` above)

register(AgentEventsAdapter(), first=True)


# Other agents' formats register themselves (pi before senpi's transcript: both start with a `session` header).
from core.formats import claude_code, mux_chat, mux_partial, mux_side, pi_session  # noqa: E402, F401
