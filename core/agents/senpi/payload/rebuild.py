"""On demand: the exact blocks one call sent, and every dedupe on them.

The running analysis keeps sizes and digests, never text. A drill-down, the report's and the dashboard's
largest-payload simulation (`PayloadAnalyzer.dedupe`) and anything else that needs the real blocks rebuilds
them here: it walks state's entry tree
from the call's assistant entry back to the root, re-reads the entries the context needs (from the last
compaction's kept point on) and serializes them with the same functions and the same build profile the
per-turn numbers used, so a rebuilt payload's size equals the turn's `payload_bytes`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.agents.senpi.facts import payload_info
from core.agents.senpi.payload.context import completed_on_path, path_to, replay_path
from core.agents.senpi.payload.dedupe import senpi_dedupe, simulate_all
from core.agents.senpi.payload.rules import DELTA, ERA_BY_NAME, FLATTEN, SerializerEra, call_basis, default_era
from core.agents.senpi.payload.serialize import (
    ToolNamer,
    delta_blocks,
    delta_message,
    flatten_blocks,
    fold_context,
    open_tool_calls,
    present_messages,
    tool_watch_note,
)
from core.agents.shared.pi_family.context import is_transmitted
from core.kernel.dedupe import Block, DedupeResult, payload_bytes
from core.kernel.directives import DirectiveLedger

if TYPE_CHECKING:
    from core.kernel.pipeline import Session
    from core.kernel.ports import Reread
    from core.model import Turn


@dataclass(slots=True)
class RebuiltPayload:
    """The exact blocks one call sent, rebuilt from disk."""

    session: str
    turn: int
    serializer: str  # "flatten" | "delta"
    profile: SerializerEra
    blocks_raw: list[Block]  # as serialized, before senpi's dedupe
    #: per block: envelope | label | user | toolResult | assistant | note | anchor | final | separator
    origins: list[str]
    #: what senpi's dedupe did (flatten only; a delta is sent as serialized)
    dedupe: DedupeResult | None = None
    context_messages: int = 0
    transmitted_sent: int = 0

    @property
    def blocks(self) -> list[Block]:
        """The blocks as sent (after senpi's dedupe for a flatten)."""
        return self.dedupe.blocks if self.dedupe is not None else self.blocks_raw

    @property
    def bytes_raw(self) -> int:
        return payload_bytes(self.blocks_raw)

    @property
    def bytes(self) -> int:
        return payload_bytes(self.blocks)

    def scope(self) -> list[str | None]:
        """How each block is scanned for directives: user-role text for any tag, tool results for the known
        tags, serializer scaffolding and assistant text not at all."""
        return ["any" if o in ("user", "final") else "known" if o == "toolResult" else None for o in self.origins]


def context_before(session: Session, turn: Turn, reread: Reread) -> list[dict[str, Any]] | None:
    """The provider context of one call as `ProviderContext` converts it, rebuilt from disk."""
    path = path_to(session, turn)
    if path is None:
        return None
    return [item.msg for item in replay_path(path, reread)]


def rebuild_turn(
    session: Session,
    index: int,
    reread: Reread,
    *,
    serializer: str | None = None,
    profile: SerializerEra | None = None,
) -> RebuiltPayload | None:
    """Rebuild the exact blocks call `index` of `session` sent, re-reading the entries it needs.

    By default the serializer and build profile are the ones the analysis chose for the call; pass
    `serializer="flatten"` to see what a flatten of that context would have been (e.g. for a delta call).
    """
    if not 0 <= index < len(session.turns):
        return None
    turn = session.turns[index]
    info = payload_info(turn)
    serializer = serializer or (info.serializer if info is not None else None) or call_basis(turn)[0]
    if serializer is None:
        return None
    if profile is None:
        date = turn.ts[:10] if turn.ts else None
        profile = ERA_BY_NAME.get(info.profile if info is not None else "") or default_era(turn.provider, date)
    path = path_to(session, turn)
    if path is None:
        return None
    items = replay_path(path, reread)
    rules = profile.rules
    messages = fold_context([i.msg for i in items], [i.kind for i in items], rules)
    present = present_messages(messages, rules)
    namer = ToolNamer(rules)
    for msg in present:
        namer.observe_message(msg)
    origins: list[str] = []
    if serializer == FLATTEN:
        pending = open_tool_calls(present)
        note = tool_watch_note(pending, completed_on_path(path, reread), namer) if pending else None
        blocks = flatten_blocks(present, rules, namer, note, origins)
        sent = sum(1 for m in present if is_transmitted(m))
        result = senpi_dedupe(blocks, profile.dedupe)
        return RebuiltPayload(session.session_id, index, FLATTEN, profile, blocks, origins, result, len(items), sent)
    transmitted = [m for m in messages if is_transmitted(m)]
    count = info.count if info is not None else None
    if count is None:
        count = call_basis(turn)[1] or 0
    chosen = transmitted[len(transmitted) - min(count, len(transmitted)) :] if count > 0 else []
    blocks = delta_blocks(chosen, rules, namer)
    for i, msg in enumerate(chosen):
        if i:
            origins.append("separator")
        role = str(msg.get("role"))
        pieces = len(delta_message(msg, rules, namer))
        origins.extend(["label"] + [role] * (pieces - 1) if role == "toolResult" else [role] * pieces)
    return RebuiltPayload(session.session_id, index, DELTA, profile, blocks, origins, None, len(items), len(chosen))


def simulate_turn(session: Session, index: int, reread: Reread) -> dict[str, DedupeResult] | None:
    """Every dedupe policy on the raw payload of one call (rebuilt from disk): senpi's keep-last and
    keep-identical-previous for ultrawork, and keep-first over the session's directive tags."""
    rebuilt = rebuild_turn(session, index, reread)
    if rebuilt is None:
        return None
    ledger = session.analyzer(DirectiveLedger)
    tags = ledger.recognized() if ledger is not None else None
    return simulate_all(rebuilt.blocks_raw, tags, rebuilt.scope())
