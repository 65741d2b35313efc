"""The restart sidecar's verdict: would a restart reattach from `<transcript>.claude-sdk-oauth-binding.json`, or
flatten, and why (senpi-formats §4.3 `from_binding`, §4.7).

The replay folds what follows the newest binding entry on the branch, entry by entry (`AfterBinding`), and
keeps the hash lists as they were when it was written, so judging a sidecar (read before or after its
transcript) costs no re-read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.agents.senpi.fingerprint import FINGERPRINT_KEYS
from core.agents.senpi.profiles import BuildProfile
from core.kernel.hashing import chain_digest, chain_length
from core.model import TranscriptEntry

if TYPE_CHECKING:
    from core.agents.senpi.continuity.replay import BranchMark
    from core.kernel.pipeline import Session

#: sidecar restore (senpi-formats §4.7): entries allowed after the committed assistant
OLD_TAIL_CUSTOM = frozenset({"senpi.hooks.stop-state", "senpi.hooks.stop-diagnostics", "senpi.hooks.stop-output",
                             "pi-rules.scan", "rule-activation"})  # fmt: skip
NEW_LEDGER = frozenset({"custom", "label", "session_info", "thinking_level_change", "model_change",
                        "model_change_rejected", "configuration_update"})  # fmt: skip
MARKER_DATA = {"schemaVersion": 2, "marker": True}


@dataclass(frozen=True, slots=True)
class AfterBinding:
    """What follows the newest binding entry on the branch, folded entry by entry (for the sidecar restore)."""

    next_entry: dict[str, Any] | None = None  # the very next entry (old rule: must be the assistant)
    first_message: dict[str, Any] | None = None  # the first message entry (newer rule: the assistant)
    old_bad: str | None = None  # first entry after the next one that the old restore rejects
    new_bad: str | None = None  # first entry the newer restore rejects (between or after)


def _summary(entry: TranscriptEntry, session: Session) -> dict[str, Any]:
    out: dict[str, Any] = {"type": entry.type, "id": entry.id, "role": entry.role}
    if entry.type == "message" and entry.role == "assistant":
        node = session.nodes.get(entry.id or "")
        turn = session.turns[node.turn_index] if node is not None and node.turn_index is not None else None
        out["fingerprints"] = dict(turn.fingerprints or {}) if turn is not None else {}
        out["turn"] = turn.index if turn is not None else None
    return out


def _describe_entry(entry: TranscriptEntry) -> str:
    detail = entry.role or entry.obj.get("customType") or ""
    return f"{entry.type} {detail}".strip() + (f" ({entry.id})" if entry.id else "")


def _after_binding(after: AfterBinding | None, entry: TranscriptEntry, session: Session) -> AfterBinding:
    after = after or AfterBinding()
    etype = entry.type
    next_entry, first_message, old_bad, new_bad = after.next_entry, after.first_message, after.old_bad, after.new_bad
    if next_entry is None:
        next_entry = _summary(entry, session)
    elif old_bad is None:
        ok = etype == "label" or (etype == "custom" and entry.obj.get("customType") in OLD_TAIL_CUSTOM)
        if not ok:
            old_bad = _describe_entry(entry)
    if first_message is None:
        if etype == "message":
            first_message = _summary(entry, session)
        elif etype not in NEW_LEDGER and new_bad is None:
            goal = etype == "custom_message" and entry.obj.get("customType") == "goal-continuation"
            if not goal:
                new_bad = _describe_entry(entry)
    elif new_bad is None:
        ok = (
            etype in NEW_LEDGER
            or etype == "custom_message"
            or (etype == "message" and entry.role in ("user", "toolResult"))
        )
        if not ok:
            new_bad = _describe_entry(entry)
    return AfterBinding(next_entry, first_message, old_bad, new_bad)


def sidecar_verdict(data: dict[str, Any], mark: BranchMark, profile: BuildProfile) -> dict[str, Any]:
    """Would a restart reattach from this sidecar, or flatten, and why (senpi-formats §4.3 from_binding, §4.7)."""
    out: dict[str, Any] = {"build": profile.id}
    marker_id = data.get("markerEntryId")
    stored_count = data.get("sentCount") if isinstance(data.get("sentCount"), int) else None
    stored_prefix = data.get("sentPrefixHash")
    stored_hash = data.get("assistantContentHash")
    checks: dict[str, bool | None] = {}
    problems: list[str] = []
    binding = mark.binding
    if binding is None:
        problems.append("no binding entry on the branch")
    elif not binding[1]:
        problems.append(f"the newest binding entry {binding[0]} is an invalidation ({binding[2]})")
    elif binding[0] != marker_id:
        problems.append(f"the newest binding entry {binding[0]} is not the sidecar's marker {marker_id}")
    checks["marker"] = not problems
    newer = profile.sidecar_hashes == "context"
    after = mark.after_binding or AfterBinding()
    rule_key = FINGERPRINT_KEYS[profile.hash_rule]
    if checks["marker"]:  # the other checks only mean something for the sidecar's own marker
        nxt = after.first_message if newer else after.next_entry
        if nxt is None or nxt.get("type") != "message" or nxt.get("role") != "assistant":
            checks["assistantContentHash"] = False
            problems.append("no assistant message after the marker")
        else:
            recomputed = nxt.get("fingerprints", {}).get(rule_key)
            out["assistantContentHash"] = recomputed
            checks["assistantContentHash"] = recomputed == stored_hash
            if recomputed != stored_hash:
                problems.append(f"assistantContentHash ({profile.hash_rule} rule) differs from the stored one")
        bad = after.new_bad if newer else after.old_bad
        checks["tail"] = bad is None
        if bad is not None:
            problems.append(f"an entry after the committed assistant rejects the binding: {bad}")
    # what the sidecar should say, recomputed from the transcript as of the marker
    hashes = mark.binding_chain if newer else mark.binding_walk
    if binding is not None and binding[1]:
        out["sentCount"] = chain_length(hashes)
        out["sentPrefixHash"] = chain_digest(hashes)
        checks["sentCount"] = out["sentCount"] == stored_count
        checks["sentPrefixHash"] = out["sentPrefixHash"] == stored_prefix
    out["checks"] = checks
    restore_ok = not problems
    out["restore"] = "accepted" if restore_ok else "rejected"
    n = chain_length(mark.chain)
    if not restore_ok:
        out.update(
            would="flatten",
            kind="flatten",
            reason="registry_miss",
            count=n,
            why="restore rejected (" + "; ".join(problems) + "): the next call after a restart is a cold "
            f"seed re-sending all {n} messages",
        )
        return out
    count = stored_count if isinstance(stored_count, int) else -1
    if count < 0 or n < count:
        out.update(
            would="flatten",
            kind="flatten",
            reason="history_rolled_back",
            count=n,
            why=f"the context holds {n} messages, fewer than the {count} the sidecar anchors",
        )
        return out
    live_prefix = chain_digest(mark.chain, count)
    if live_prefix == stored_prefix:
        out.update(
            would="reattach",
            kind="fork",
            reason="registry_miss",
            count=n - count,
            why=f"the first {count} transmitted messages of the context hash to the stored sentPrefixHash: "
            f"a restart reattaches and sends {n - count} message(s) plus the new prompt",
        )
        return out
    why = f"the first {count} transmitted messages of the restarted context do not hash to the stored sentPrefixHash"
    if profile.sidecar_hashes == "branch-walk" and chain_length(mark.binding_walk) != chain_length(mark.binding_chain):
        skipped = chain_length(mark.binding_chain) - chain_length(mark.binding_walk)
        why += (
            f": the sidecar counts message entries only (the branch walk skips {skipped} custom_message/summary "
            "message(s) the live context hashes), the residual senpi's changelog declares"
        )
    out.update(would="flatten", kind="flatten", reason="sent_stream_diverged", count=n, why=why)
    return out
