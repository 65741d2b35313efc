"""The one sentence a report opens with: did calls re-send history, what did it cost, and why.

A maintainer who opens the report (or the issue it was pasted into) should have the answer before the first
table: the re-send share, the waste where the report has a `waste` section (tokens and dollars a warm cache
would have saved, issue 14), and the main cause. The review found the cause and the cost of the demo in
sections 8-9, behind 55.6 % and "16 / 20 avoidable".

Built from the report dict only, as segments (plain, strong, code) that each renderer formats and escapes its
own way: data (reason names) is always a code segment.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from msgspec import Struct

from core.kernel.waste import cause_text
from core.model import RESEND_KINDS
from core.report.common import turn_kind, turn_reason
from core.report.waste import usd_text

#: kinds that re-send history: senpi's fork and flatten, and the calls section's `re-send` (issue 13)
RESENDS = frozenset(RESEND_KINDS | {"re-send"})
#: a cause list names at most this many causes, then "other"
CAUSES = 3

Style = Literal["", "strong", "code"]


class Segment(Struct, frozen=True):
    text: str
    style: Style = ""


def headline(report: dict[str, Any]) -> list[Segment]:
    """The opening sentence as segments."""
    out: list[Segment] = []
    basis = _basis(report)
    waste = report.get("waste")
    if isinstance(waste, dict) and _waste(waste, out):
        if basis is not None and basis.resends is not None:
            out.append(Segment("; "))
            out += _resend_clause(basis, lead=False)
        out.append(Segment("."))
        return out
    if basis is None:
        return [Segment("No continuity decision was read: no decision log line and no call in the selection.")]
    out += _resend_clause(basis, lead=True)
    if basis.resends:
        cause = basis.main_cause()
        if cause is not None:
            reason, n = cause
            out += [
                Segment("; the main cause is "),
                Segment(reason, "code"),
                Segment(f" ({n:,} of the {basis.resends:,})"),
            ]
        out += _avoidable(report)
    out.append(Segment("."))
    return out


def plain_text(segments: list[Segment]) -> str:
    """The sentence as plain text (tests, logs)."""
    return "".join(segment.text for segment in segments)


# ---------------------------------------------------------------------- what the share is counted over
class _Basis(Struct, frozen=True):
    noun: str  # "calls" | "decisions logged"
    total: int
    resends: int | None
    by_kind: dict[str, int]
    by_reason: dict[str, dict[str, int]]

    def main_cause(self) -> tuple[str, int] | None:
        causes = Counter({r: sum(n for k, n in kinds.items() if k in RESENDS) for r, kinds in self.by_reason.items()})
        best = max(causes.items(), key=lambda item: (item[1], item[0]), default=None)
        return best if best is not None and best[1] else None


def _basis(report: dict[str, Any]) -> _Basis | None:
    """Calls when the report has a calls section (every agent), else the decisions logged, else the turns."""
    calls = report.get("calls")
    if isinstance(calls, dict) and calls.get("total"):
        by_kind = {str(k): int(v) for k, v in (calls.get("by_kind") or {}).items()}
        total = int(calls["total"]) - by_kind.get("aborted", 0)
        return _Basis("calls", total, sum(n for k, n in by_kind.items() if k in RESENDS), by_kind,
                      calls.get("by_reason") or {})  # fmt: skip
    cont = report.get("continuity") or {}
    if cont.get("events"):
        by_kind = {str(k): int(v) for k, v in (cont.get("by_kind") or {}).items()}
        return _Basis("decisions logged", int(cont["events"]), sum(n for k, n in by_kind.items() if k in RESENDS),
                      by_kind, cont.get("by_reason") or {})  # fmt: skip
    kinds: Counter[str] = Counter()
    reasons: dict[str, Counter[str]] = {}
    for turn in report.get("turns") or []:
        kind = turn_kind(turn)
        if kind is None:
            continue
        kinds[kind] += 1
        reasons.setdefault(turn_reason(turn) or "unknown", Counter())[kind] += 1
    if not kinds:
        return None
    return _Basis("calls", sum(kinds.values()), sum(n for k, n in kinds.items() if k in RESENDS), dict(kinds),
                  {r: dict(c) for r, c in reasons.items()})  # fmt: skip


def _resend_clause(basis: _Basis, *, lead: bool) -> list[Segment]:
    resends = basis.resends or 0
    if not resends:
        text = f"none of the {basis.total:,} {basis.noun} re-sent history"
        return [Segment(text[0].upper() + text[1:] if lead else text, "strong" if lead else "")]
    share = resends / basis.total if basis.total else 0.0
    text = f"{resends:,} of {basis.total:,} {basis.noun} ({share * 100:.1f} %) re-sent history"
    kinds = [(k, n) for k, n in basis.by_kind.items() if k in RESENDS and n]
    detail = ", ".join(f"{n:,} {k}{'s' if n != 1 and not k.endswith('s') else ''}" for k, n in kinds)
    out = [Segment(text, "strong" if lead else "")]
    if len(kinds) > 1:  # "(8 forks, 12 flattens)"; one kind alone adds nothing ("48 re-sends")
        out.append(Segment(f" ({detail})"))
    return out


def _avoidable(report: dict[str, Any]) -> list[Segment]:
    cf = report.get("counterfactual")
    if not isinstance(cf, dict) or not cf.get("resends_avoidable"):
        return []
    avoidable, logged = cf.get("resends_avoidable"), cf.get("resends_logged")
    out = [Segment(f", and {avoidable:,} of the {logged:,} re-sends in transcripts were avoidable: volatile-only "
                   "rewrites a stable fingerprint keeps as deltas")]  # fmt: skip
    sent, stable = cf.get("bytes_logged"), cf.get("bytes_if_stable")
    if isinstance(sent, int) and isinstance(stable, int) and sent > stable:
        out.append(Segment(f" ({sent:,} payload bytes sent where {stable:,} would do)"))
    return out


# ---------------------------------------------------------------------- waste (issue 14's section)
def _waste(waste: dict[str, Any], out: list[Segment]) -> bool:
    """'$1.83 of $27.73 (7 %) was spent re-writing cache that was already written (338,347 tokens in 6 calls):
    52 % cache expiry after > 5 min idle (`cache_expired`), 46 % prefix rewrites (`prefix_rewritten`), …'

    Dollars where the calls have prices, tokens otherwise; the causes split the dollars (or the tokens). False
    when no call was judged from cache figures (senpi's resident lane: the re-send clause says it all)."""
    if not waste.get("calls") and not waste.get("excess_tokens"):
        return False
    cost = waste.get("cost_usd") if isinstance(waste.get("cost_usd"), dict) else {}
    excess_usd, actual_usd = cost.get("excess"), cost.get("actual")
    tokens = waste.get("excess_tokens") if isinstance(waste.get("excess_tokens"), int) else 0
    by_calls = waste.get("calls_by_cause")
    calls = sum(int(n) for n in by_calls.values() if isinstance(n, int)) if isinstance(by_calls, dict) else None
    share = waste.get("share")
    of_share = f" ({share * 100:.0f} % of what was not read from cache)" if isinstance(share, int | float) else ""
    priced = isinstance(excess_usd, int | float) and isinstance(actual_usd, int | float) and actual_usd > 0
    if not tokens:
        spent = f" (${actual_usd:,.2f} spent)" if isinstance(actual_usd, int | float) else ""
        out.append(Segment(f"No cache that was already written was written again{spent}", "strong"))
        return True
    if priced:
        lead = f"{usd_text(excess_usd)} of {usd_text(actual_usd)} ({excess_usd / actual_usd * 100:.0f} %) was spent "
        lead += "re-writing cache that was already written"
        left = cost.get("excess_unpriced_tokens")
        unpriced = f"; {left:,} of them unpriced: {_models(waste)}" if isinstance(left, int) and left else ""
        out += [Segment(lead, "strong"), Segment(f" ({tokens:,} tokens{_in(calls)}{unpriced})")]
        causes = cost.get("by_cause") or {}
        if not causes or sum(v for v in causes.values() if isinstance(v, int | float)) <= 0:
            causes = waste.get("by_cause") or {}
    else:
        lead = f"{tokens:,} tokens{of_share} were written again that a warm cache would have read"
        told = "; ".join(part for part in (_in(calls).strip(), f"no list price for {_models(waste)}") if part)
        out += [Segment(lead, "strong"), Segment(f" ({told})" if told else "")]
        causes = waste.get("by_cause") or {}
    ranked = sorted(((str(c), float(v)) for c, v in causes.items() if isinstance(v, int | float) and v > 0),
                    key=lambda item: (-item[1], item[0]))  # fmt: skip
    total = sum(v for _, v in ranked)
    if total > 0:
        out.append(Segment(": "))
        lifetimes = waste.get("expired_after") if isinstance(waste.get("expired_after"), dict) else None
        for i, (cause, value) in enumerate(ranked[:CAUSES]):
            if i:
                out.append(Segment(", "))
            out += [Segment(f"{value / total * 100:.0f} % {cause_text(cause, lifetimes)} ("), Segment(cause, "code"),
                    Segment(")")]  # fmt: skip
        rest = sum(v for _, v in ranked[CAUSES:])
        if rest:
            out.append(Segment(f", {rest / total * 100:.0f} % other causes"))
    return True


def _models(waste: dict[str, Any]) -> str:
    """'claude-x, (no model)': the models whose calls have no dollar figure ('these models' when not named)."""
    pricing = waste.get("pricing") if isinstance(waste.get("pricing"), dict) else {}
    models = [str(m) for m in (pricing.get("unpriced_models") or {})]
    return ", ".join(models[:3]) if models else "these models"


def _in(calls: int | None) -> str:
    """' in 6 calls' (nothing when the section does not count them)."""
    return "" if calls is None else f" in {calls:,} call{'' if calls == 1 else 's'}"
