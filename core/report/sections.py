"""The report sections that summarize what the payload analyses produced: `directives` and `counterfactual`.

Both read the per-turn fields the analyses fill (`payload_bytes`, `payload_bytes_raw`, `directives`,
`avoidable`, `payload_bytes_if_stable`), the per-session directive ledger (the `directives` session
analyzer: injections and byte-identical variants per tag), and the dedupe simulation of the payload
analysis. They only see the turns the selection kept, so `--session`, `--since` and `--until` narrow them
like everything else. A section is null when its producer left nothing to summarize.
"""

from __future__ import annotations

from typing import Any

from core.kernel.directives import DirectiveLedger, TagLedger
from core.model import RESEND_KINDS, Turn
from core.report.values import text
from core.state import SessionState

Selected = list[tuple[SessionState, list[Turn]]]


def largest_payload(selected: Selected) -> tuple[SessionState, Turn] | None:
    """The call with the most bytes before dedupe (`payload_bytes_raw`), of any kind: the payload a directive
    share and a dedupe simulation are taken of (schema "Additions"). Chosen among flatten calls it named a
    tiny first call where the agent serializes none (Claude Code: 695 bytes on pi, 20,687 on spotter, beside
    589,246 and 428,142); the first of equal sizes wins."""
    best: tuple[SessionState, Turn] | None = None
    for session, turns in selected:
        for turn in turns:
            if turn.payload_bytes_raw is None:
                continue
            if best is None or turn.payload_bytes_raw > (best[1].payload_bytes_raw or 0):
                best = (session, turn)
    return best


def directives(selected: Selected) -> dict[str, Any] | None:
    """`{tags, largest_payload, dedupe}`; null when no payload was reconstructed and no directive was seen."""
    turns = [turn for _, session_turns in selected for turn in session_turns]
    ledgers = [ledger for session, _ in selected if (ledger := _ledger_tags(session))]
    if not ledgers and not any(t.payload_bytes_raw is not None or t.directives is not None for t in turns):
        return None
    tags = _tag_rows(ledgers, turns)
    best = largest_payload(selected)
    largest: dict[str, Any] | None = None
    dedupe: dict[str, dict[str, Any]] | None = None
    if best is not None:
        session, turn = best
        largest = {
            "session": text(session.session_id),
            "index": turn.index,
            "payload_bytes_raw": turn.payload_bytes_raw,
        }
        for tag, values in (turn.directives or {}).items():
            row = tags.setdefault(text(tag), _empty_row())
            row["copies_in_largest_payload"] = int(values.get("copies", 0))
            row["bytes_in_largest_payload"] = int(values.get("bytes", 0))
        dedupe = simulate(session, turn)
    for row in tags.values():
        if row["bytes_per_copy"] is None and row["copies_in_largest_payload"]:
            row["bytes_per_copy"] = round(row["bytes_in_largest_payload"] / row["copies_in_largest_payload"])
    return {"tags": tags, "largest_payload": largest, "dedupe": dedupe}


def _empty_row() -> dict[str, Any]:
    return {
        "injections": None,
        "variants": None,
        "bytes_per_copy": None,
        "copies_in_largest_payload": 0,
        "bytes_in_largest_payload": 0,
    }


def _ledger_tags(session: SessionState) -> dict[str, TagLedger]:
    """The session's directive ledger (`tag -> TagLedger`), or {} when that analysis did not run."""
    ledger = session.analyzer(DirectiveLedger)
    return ledger.tags if ledger is not None else {}


def _tag_rows(ledgers: list[dict[str, TagLedger]], turns: list[Turn]) -> dict[str, dict[str, Any]]:
    """Per tag: injections summed over sessions, distinct byte-identical variants, the usual copy size."""
    rows: dict[str, dict[str, Any]] = {}
    variants: dict[str, set[int]] = {}
    dropped: dict[str, int] = {}
    copies_by_size: dict[str, dict[int, int]] = {}
    for tags in ledgers:
        for tag, ledger in tags.items():
            if not ledger.recognized:
                continue  # a candidate tag that never recurred: not a directive
            name = text(tag)
            row = rows.setdefault(name, _empty_row())
            row["injections"] = (row["injections"] or 0) + ledger.injections
            variants.setdefault(name, set()).update(ledger.variants.keys())
            dropped[name] = dropped.get(name, 0) + ledger.variants_dropped
            row["variants"] = len(variants[name]) + dropped[name]
            sizes = copies_by_size.setdefault(name, {})
            for variant in ledger.variants.values():
                sizes[variant.nbytes] = sizes.get(variant.nbytes, 0) + variant.copies
    for name, sizes in copies_by_size.items():
        if sizes:
            rows[name]["bytes_per_copy"] = max(sizes.items(), key=lambda kv: (kv[1], kv[0]))[0]
    for turn in turns:
        for tag in turn.directives or {}:
            rows.setdefault(text(tag), _empty_row())
    return dict(sorted(rows.items()))


def simulate(session: SessionState, turn: Turn) -> dict[str, dict[str, Any]] | None:
    """Every dedupe policy the payload analysis knows, run on one call's rebuilt raw payload."""
    results = session.dedupe(turn.index)  # rebuilt from disk: the raw blocks are not kept in memory
    if not results:
        return None
    return {
        text(policy): {
            "bytes_before": result.bytes_before,
            "bytes_after": result.bytes_after,
            "collapsed": result.collapsed,
            "kept": result.kept,
            "markers": result.markers,
            "nested": result.nested,
        }
        for policy, result in results.items()
    }


def counterfactual(turns: list[Turn], sessions: Selected | None = None) -> dict[str, Any] | None:
    """Re-sends (fork + flatten) as logged, those a stable fingerprint would have avoided, and their bytes.

    `bytes_logged` is what the re-sending calls sent; `bytes_if_stable` the same calls had every avoidable one
    been a delta of its new messages. Null until the replay has judged at least one turn. The message counts
    (new fields) come from the replay's session totals, given `sessions` (None under a time window).
    """
    if not any(t.avoidable is not None for t in turns):
        return None
    resends = [t for t in turns if t.kind in RESEND_KINDS]
    sized = [t for t in resends if t.payload_bytes is not None]
    if_stable = 0
    for turn in sized:
        stable = turn.payload_bytes_if_stable if turn.avoidable else None
        if_stable += stable if stable is not None else turn.payload_bytes or 0
    known = bool(sized) or not resends
    return {
        "resends_logged": len(resends),
        "resends_avoidable": sum(1 for t in resends if t.avoidable),
        "bytes_logged": sum(t.payload_bytes or 0 for t in sized) if known else None,
        "bytes_if_stable": if_stable if known else None,
        **_messages_resent(sessions),
    }


def _messages_resent(sessions: Selected | None) -> dict[str, int | None]:
    """Messages re-sent as logged vs. by avoidable re-sends, from the replay's per-session totals. Those
    totals cover whole sessions, so under a time window (`sessions` None) they are not known."""
    totals: dict[str, int | None] = {"messages_resent_logged": None, "messages_resent_avoidable": None}
    for session, _ in sessions or []:
        summary = session.counterfactual
        if not isinstance(summary, dict):
            continue
        for key in totals:
            value = summary.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                totals[key] = (totals[key] or 0) + value
    return totals
