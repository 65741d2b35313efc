"""The report sections that summarize what the payload analyses produced: `directives` and `counterfactual`.

Both read the per-turn fields the analyses fill (`payload_bytes`, `payload_bytes_raw`, `directives`,
`avoidable`, `payload_bytes_if_stable`), the per-session directive ledger (the `directives` session
analyzer: injections and byte-identical variants per tag), and the dedupe simulation of the payload
analysis. They only see the turns the selection kept, so `--session`, `--since` and `--until` narrow them
like everything else. A section is null when its producer left nothing to summarize.
"""

from __future__ import annotations

from typing import Any

from core.kernel.directives import DirectiveLedger, TagLedger, sent_counts
from core.model import RESEND_KINDS, Turn
from core.report.values import opt_text, text
from core.state import SessionState

Selected = list[tuple[SessionState, list[Turn]]]


def largest_payload(selected: Selected) -> tuple[SessionState, Turn] | None:
    """The call with the most bytes as serialized (`payload_bytes_raw`), of any kind: where directive copies
    pile up, the payload a directive share and a dedupe simulation are taken of (schema "Additions"). Chosen
    among flatten calls it named a tiny first call where the agent serializes none (Claude Code: 695 bytes on
    pi, 20,687 on spotter, beside 589,246 and 428,142); the first of equal sizes wins."""
    best: tuple[SessionState, Turn] | None = None
    for session, turns in selected:
        for turn in turns:
            if turn.payload_bytes_raw is None:
                continue
            if best is None or turn.payload_bytes_raw > (best[1].payload_bytes_raw or 0):
                best = (session, turn)
    return best


def share(part: int, whole: int | None) -> float | None:
    """A share of a payload, 4 decimals; None of nothing. Both sizes are of the same side (serialized or
    sent), so it cannot pass 1."""
    return round(part / whole, 4) if whole else None


def measured(turns: list[Turn]) -> list[Turn]:
    """The calls whose payload was reconstructed (`payload_bytes_raw` set): every producer of it scans the payload
    for directives in the same pass (None there means none: pi, Claude Code and mux write no empty dict), so these
    are the calls a directive share may divide by; a size only the agent logged says nothing of its blocks."""
    return [t for t in turns if t.payload_bytes_raw is not None]


def directives(selected: Selected) -> dict[str, Any] | None:
    """`{tags, payloads, largest_payload, dedupe}`; null when no payload was reconstructed and no directive was seen.

    Two sides, never mixed in one figure: *serialized* (the prompt as the agent built it, before its own
    dedupe: `payload_bytes_raw`, `copies`, `bytes`) and *sent* (after that dedupe: `payload_bytes`,
    `copies_sent`, `bytes_sent`). senpi's keep-last dedupe of a flatten chain with one ulw copy per prompt
    serializes ~2,500 copies (62 MB) over 70 calls and sends 70 (1.7 MB): a share takes its numerator and
    its denominator from the same side."""
    turns = [turn for _, session_turns in selected for turn in session_turns]
    ledgers = [ledger for session, _ in selected if (ledger := _ledger_tags(session))]
    if not ledgers and not any(t.payload_bytes_raw is not None or t.directives is not None for t in turns):
        return None
    tags = _tag_rows(ledgers, turns)
    calls = measured(turns)
    raw_total = sum(t.payload_bytes_raw or 0 for t in calls)
    sent_total = sum(_sent_size(t) for t in calls)
    totals: dict[str, list[int]] = {}
    for turn in calls:
        for tag, values in (turn.directives or {}).items():
            into = totals.setdefault(text(tag), [0, 0, 0, 0])
            copies_sent, bytes_sent = sent_counts(values)
            into[0] += int(values.get("copies", 0))
            into[1] += int(values.get("bytes", 0))
            into[2] += copies_sent
            into[3] += bytes_sent
    best = largest_payload(selected)
    largest: dict[str, Any] | None = None
    dedupe: dict[str, dict[str, Any]] | None = None
    if best is not None:
        session, turn = best
        raw = turn.payload_bytes_raw or 0
        sent = _sent_size(turn)
        in_raw = in_sent = 0
        for tag, values in (turn.directives or {}).items():
            row = tags.setdefault(text(tag), _empty_row())
            copies_sent, bytes_sent = sent_counts(values)
            row["copies_in_largest_payload"] = int(values.get("copies", 0))
            row["bytes_in_largest_payload"] = int(values.get("bytes", 0))
            row["copies_sent_in_largest_payload"] = copies_sent
            row["bytes_sent_in_largest_payload"] = bytes_sent
            in_raw += row["bytes_in_largest_payload"]
            in_sent += bytes_sent
        largest = {
            "session": text(session.session_id),
            "index": turn.index,
            "payload_bytes_raw": raw,
            "payload_bytes": sent,
            "kind": opt_text(turn.kind),
            "directive_bytes": in_raw,
            "directive_bytes_sent": in_sent,
            "share": share(in_raw, raw),
            "share_sent": share(in_sent, sent),
        }
        dedupe = simulate(session, turn)
    for name, row in tags.items():
        copies, nbytes, copies_sent, bytes_sent = totals.get(name, (0, 0, 0, 0))
        row["all_payloads"] = {
            "copies": copies, "bytes": nbytes, "copies_sent": copies_sent, "bytes_sent": bytes_sent,
            "share": share(nbytes, raw_total), "share_sent": share(bytes_sent, sent_total),
        }  # fmt: skip
    for row in tags.values():
        if row["bytes_per_copy"] is None and row["copies_in_largest_payload"]:
            row["bytes_per_copy"] = round(row["bytes_in_largest_payload"] / row["copies_in_largest_payload"])
    payloads = {"calls": len(calls), "payload_bytes_raw": raw_total, "payload_bytes": sent_total}
    return {"tags": tags, "payloads": payloads, "largest_payload": largest, "dedupe": dedupe}


def _sent_size(turn: Turn) -> int:
    """Bytes the call sent; a reconstructed call without its own sent size sent what it serialized."""
    if turn.payload_bytes is not None:
        return turn.payload_bytes
    return turn.payload_bytes_raw or 0


def _empty_row() -> dict[str, Any]:
    return {
        "injections": None,
        "variants": None,
        "bytes_per_copy": None,
        "copies_in_largest_payload": 0,
        "bytes_in_largest_payload": 0,
        "copies_sent_in_largest_payload": 0,
        "bytes_sent_in_largest_payload": 0,
        "all_payloads": None,
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
