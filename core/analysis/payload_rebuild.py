"""On demand: the exact blocks one call sent, every dedupe on them, and the report's payload summaries.

The running analysis keeps sizes and digests, never text. A drill-down, the report's largest-payload
simulations and anything else that needs the real blocks rebuilds them here: it walks state's entry tree
from the call's assistant entry back to the root, re-reads the entries the context needs (from the last
compaction's kept point on) and serializes them with the same functions and the same build profile the
per-turn numbers used, so a rebuilt payload's size equals the turn's `payload_bytes`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.analysis.context import is_transmitted
from core.analysis.dedupe import DedupeResult, senpi_dedupe, simulate_all
from core.analysis.payload_context import completed_on_path, path_to, replay_path
from core.analysis.payload_rules import (
    DELTA,
    FLATTEN,
    PROFILE_BY_NAME,
    BuildProfile,
    call_basis,
    default_profile,
    stable_bytes,
)
from core.analysis.serialize import (
    Block,
    ToolNamer,
    delta_blocks,
    delta_message,
    flatten_blocks,
    fold_context,
    open_tool_calls,
    payload_bytes,
    present_messages,
    tool_watch_note,
)
from core.kernel.directives import DirectiveLedger

if TYPE_CHECKING:
    from core.model import Turn
    from core.state import SessionState


@dataclass(slots=True)
class RebuiltPayload:
    """The exact blocks one call sent, rebuilt from disk."""

    session: str
    turn: int
    serializer: str  # "flatten" | "delta"
    profile: BuildProfile
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


def context_before(session: SessionState, turn: Turn) -> list[dict[str, Any]] | None:
    """The provider context of one call as `ProviderContext` converts it, rebuilt from disk."""
    path = path_to(session, turn)
    if path is None:
        return None
    return [item.msg for item in replay_path(path)]


def rebuild_turn(session: SessionState, index: int, *, serializer: str | None = None,
                 profile: BuildProfile | None = None) -> RebuiltPayload | None:  # fmt: skip
    """Rebuild the exact blocks call `index` of `session` sent, re-reading the entries it needs.

    By default the serializer and build profile are the ones the analysis chose for the call; pass
    `serializer="flatten"` to see what a flatten of that context would have been (e.g. for a delta call).
    """
    if not 0 <= index < len(session.turns):
        return None
    turn = session.turns[index]
    info = turn.extra.get("payload") or {}
    serializer = serializer or info.get("serializer") or call_basis(turn)[0]
    if serializer is None:
        return None
    if profile is None:
        date = turn.ts[:10] if turn.ts else None
        profile = PROFILE_BY_NAME.get(info.get("profile", "")) or default_profile(turn.provider, date)
    path = path_to(session, turn)
    if path is None:
        return None
    items = replay_path(path)
    rules = profile.rules
    messages = fold_context([i.msg for i in items], [i.kind for i in items], rules)
    present = present_messages(messages, rules)
    namer = ToolNamer(rules)
    for msg in present:
        namer.observe_message(msg)
    origins: list[str] = []
    if serializer == FLATTEN:
        pending = open_tool_calls(present)
        note = tool_watch_note(pending, completed_on_path(path), namer) if pending else None
        blocks = flatten_blocks(present, rules, namer, note, origins)
        sent = sum(1 for m in present if is_transmitted(m))
        result = senpi_dedupe(blocks, profile.dedupe)
        return RebuiltPayload(session.session_id, index, FLATTEN, profile, blocks, origins, result, len(items), sent)
    transmitted = [m for m in messages if is_transmitted(m)]
    count = info.get("count")
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


def simulate_turn(session: SessionState, index: int) -> dict[str, DedupeResult] | None:
    """Every dedupe policy on the raw payload of one call (rebuilt from disk): senpi's keep-last and
    keep-identical-previous for ultrawork, and keep-first over the session's directive tags."""
    rebuilt = rebuild_turn(session, index)
    if rebuilt is None:
        return None
    ledger = session.analyzers.get("directives")
    tags = ledger.recognized() if isinstance(ledger, DirectiveLedger) else None
    return simulate_all(rebuilt.blocks_raw, tags, rebuilt.scope())


# ---------------------------------------------------------------------------------------------- report helpers
def largest_payload(sessions: Iterable[SessionState]) -> tuple[SessionState, Turn] | None:
    """The flatten call with the most raw bytes (where directive copies pile up)."""
    best: tuple[SessionState, Turn] | None = None
    for session in sessions:
        for turn in session.turns:
            info = turn.extra.get("payload")
            if not info or info.get("serializer") != FLATTEN or turn.payload_bytes_raw is None:
                continue
            if best is None or turn.payload_bytes_raw > (best[1].payload_bytes_raw or 0):
                best = (session, turn)
    return best


def _empty_row() -> dict[str, Any]:
    return {"injections": 0, "variants": 0, "bytes_per_copy": None,
            "copies_in_largest_payload": 0, "bytes_in_largest_payload": 0}  # fmt: skip


def directives_section(sessions: Iterable[SessionState]) -> dict[str, Any]:
    """The report's `directives` section: the ledger per tag, the largest payload and every dedupe on it."""
    sessions = list(sessions)
    tags: dict[str, dict[str, Any]] = {}
    variants: dict[str, set[str]] = {}
    per_copy: dict[str, dict[int, int]] = {}
    for session in sessions:
        ledger = session.analyzers.get("directives")
        if not isinstance(ledger, DirectiveLedger):
            continue
        for tag_ledger in ledger.tags.values():
            if not tag_ledger.recognized:
                continue
            row = tags.setdefault(tag_ledger.tag, _empty_row())
            row["injections"] += tag_ledger.injections
            variants.setdefault(tag_ledger.tag, set()).update(v.id for v in tag_ledger.variants.values())
            sizes = per_copy.setdefault(tag_ledger.tag, {})
            for variant in tag_ledger.variants.values():
                sizes[variant.nbytes] = sizes.get(variant.nbytes, 0) + variant.copies
    for tag, row in tags.items():
        row["variants"] = len(variants.get(tag, ()))
        sizes = per_copy.get(tag) or {}
        row["bytes_per_copy"] = max(sizes.items(), key=lambda kv: (kv[1], kv[0]))[0] if sizes else None
    out: dict[str, Any] = {"tags": tags, "largest_payload": None, "dedupe": None}
    best = largest_payload(sessions)
    if best is None:
        return out
    session, turn = best
    out["largest_payload"] = {"session": session.session_id, "index": turn.index,
                              "payload_bytes_raw": turn.payload_bytes_raw}  # fmt: skip
    for tag, values in (turn.directives or {}).items():
        row = tags.setdefault(tag, _empty_row())
        row["copies_in_largest_payload"] = values.get("copies", 0)
        row["bytes_in_largest_payload"] = values.get("bytes", 0)
    sims = simulate_turn(session, turn.index)
    if sims is not None:
        out["dedupe"] = {}
        for name, result in sims.items():
            row = {"bytes_before": result.bytes_before, "bytes_after": result.bytes_after}
            if name.startswith("keep_first"):
                row.update(kept=result.kept, markers=result.markers)
            else:
                row["collapsed"] = result.collapsed
            out["dedupe"][name] = row
    return out


def counterfactual_bytes(sessions: Iterable[SessionState]) -> dict[str, int]:
    """Bytes the re-sending calls (flatten + fork) sent, and what they would have sent had every avoidable
    one been a delta of its new messages (the replay marks a call `avoidable`)."""
    logged = if_stable = 0
    for session in sessions:
        for turn in session.turns:
            if turn.kind not in ("flatten", "fork") or turn.payload_bytes is None:
                continue
            logged += turn.payload_bytes
            if_stable += stable_bytes(turn) or 0
    return {"bytes_logged": logged, "bytes_if_stable": if_stable}
