"""CI gate: measure a built report against thresholds, one printable line per threshold.

`continuity-tui check PATH... --max-resend-share 0.2` exits 1 when a measured value exceeds its maximum
(equal passes). The measures read only the report dict, so a saved JSON report can be checked too:

* resend-share: the share of calls that re-sent history, measured on each unit the data has, one line each:
  over calls (fork + flatten + re-send of the calls that reported usage, `calls.resend_share`: every agent's
  transcripts), and over log lines ((fork + flatten) / decisions, `continuity.resend_share`: senpi's
  `session.log`). Either over its maximum fails the check: the gate used to read only the log lines, and
  passed pi (47 re-sends in 910 calls) and Claude Code with `resend-share 0.0000`. With `--session`, over that
  session's calls, and its log lines when only the log names it (newer senpi builds write `sessionId`).
* avoidable: re-sends caused by a volatile-only rewrite (`counterfactual.resends_avoidable`).
* directive-share: the part of the largest payload (`directives.largest_payload`: the most bytes as serialized,
  where copies pile up) made of tagged directive copies, as sent: directive bytes left after the agent's own
  dedupe over the bytes the call sent, both of the sent side (≤ 1). Its line also gives the serialized side
  (copies before the dedupe over `payload_bytes_raw`): senpi's keep-last dedupe of a 70-prompt ulw chain
  serializes 1,741,252 directive bytes of 1,778,100 (0.9793) and sends 25,153 of 67,797 (0.3710). What was
  sent is what the model read and was billed; gating the serialized side failed builds for copies they never
  sent. For a build without dedupe the two are one figure (the number behind "the 875 KB prompt was 73 %
  duplicates").
* waste-usd / waste-share: what re-processing already-cached history cost beyond cache hits, in dollars at list
  prices (`waste.cost_usd.excess`), and its share of the tokens not read from cache (`waste.share`): the calls
  judged from cache figures (Claude Code, pi, mux, Codex). Calls of a model without a price are named and left
  out of the dollars; with no priced excess at all the dollar gate cannot see.
* payload-bytes: the largest payload one call sent, after the agent's own dedupe (reconstructed, else the size
  the agent logged); its line also gives that call's size before dedupe, the one directive-share is taken of.
  Only where the bytes are exact (senpi): other agents' transcripts hold no system prompt or tools.

A threshold whose value cannot be measured from the data fails: a gate that cannot see must not pass
silently. With no threshold given, every measure is printed as information and the check passes.
"""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from msgspec import Struct

from core.kernel.calls import resends
from core.model import ABORTED, CALL_RESEND_KINDS, RESEND_KINDS
from core.report.common import (
    inexact_agents,
    largest_composition,
    largest_payloads,
    largest_prompt,
    payload_exact,
    turn_composition,
    turn_kind,
    turn_payload,
)
from core.sanitize import display


class Thresholds(Struct, frozen=True):
    """Maxima from the command line; None = not checked."""

    max_resend_share: float | None = None
    max_avoidable: int | None = None
    max_directive_share: float | None = None
    max_payload_bytes: int | None = None
    max_waste_usd: float | None = None
    max_waste_share: float | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Thresholds:
        return cls(
            max_resend_share=getattr(args, "max_resend_share", None),
            max_avoidable=getattr(args, "max_avoidable", None),
            max_directive_share=getattr(args, "max_directive_share", None),
            max_payload_bytes=getattr(args, "max_payload_bytes", None),
            max_waste_usd=getattr(args, "max_waste_usd", None),
            max_waste_share=getattr(args, "max_waste_share", None),
        )

    def any(self) -> bool:
        return any(
            v is not None
            for v in (
                self.max_resend_share,
                self.max_avoidable,
                self.max_directive_share,
                self.max_payload_bytes,
                self.max_waste_usd,
                self.max_waste_share,
            )
        )


class Measure(Struct, frozen=True):
    """A measured value and what it was measured on; `value` None = not measurable, `basis` says why."""

    value: float | int | None
    basis: str


class Result(Struct, frozen=True):
    name: str
    measured: float | int | None
    limit: float | int | None
    ok: bool
    basis: str

    def line(self) -> str:
        """`PASS resend-share 0.1200 <= max 0.2000 (130 log decisions)`; one line, for CI logs."""
        value = _fmt(self.measured)
        basis = display(self.basis, 300)
        if self.limit is None:
            return f"INFO {self.name} {value} ({basis})"
        if self.measured is None:
            return f"FAIL {self.name} not measurable, max {_fmt(self.limit)} ({basis})"
        verdict, op = ("PASS", "<=") if self.ok else ("FAIL", ">")
        return f"{verdict} {self.name} {value} {op} max {_fmt(self.limit)} ({basis})"


def _fmt(value: float | int | None) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def evaluate(report: dict[str, Any], thresholds: Thresholds) -> list[Result]:
    """One Result per threshold given and unit measured (or, with none given, one informational Result each)."""
    checks: list[tuple[str, list[Measure], float | int | None]] = [
        ("resend-share", resend_shares(report), thresholds.max_resend_share),
        ("avoidable", [avoidable(report)], thresholds.max_avoidable),
        ("directive-share", [directive_share(report)], thresholds.max_directive_share),
        ("payload-bytes", [payload_bytes(report)], thresholds.max_payload_bytes),
        ("waste-usd", [waste_usd(report)], thresholds.max_waste_usd),
        ("waste-share", [waste_share(report)], thresholds.max_waste_share),
    ]
    show_all = not thresholds.any()
    results = []
    for name, measures, limit in checks:
        if limit is None and not show_all:
            continue
        for measure in measures:
            ok = limit is None or (measure.value is not None and measure.value <= limit)
            results.append(Result(name, measure.value, limit, ok, measure.basis))
    return results


# ---------------------------------------------------------------------- measures
def _no_session(report: dict[str, Any]) -> str | None:
    selection = report.get("selection") or {}
    wanted = selection.get("session")
    if wanted and not report.get("sessions"):
        return f"no session matches {wanted}"
    return None


def resend_shares(report: dict[str, Any]) -> list[Measure]:
    """The re-send share over calls where the report has calls, over log lines where it has log lines: both
    when both (a senpi history has both; pi, Claude Code, mux and Codex have calls only; a bare `logs/` dir
    has log lines only)."""
    missing = _no_session(report)
    if missing:
        return [Measure(None, missing)]
    selection = report.get("selection") or {}
    session = selection.get("session")
    of = f" of session {session}" if session else ""
    out: list[Measure] = []
    calls = report.get("calls")
    if isinstance(calls, dict):
        if calls.get("total"):
            by_kind = calls.get("by_kind") or {}
            aborted = int(by_kind.get(ABORTED, 0))
            judged = int(calls["total"]) - aborted
            left_out = f"; {aborted} aborted, with no usage, not counted" if aborted else ""
            out.append(Measure(calls.get("resend_share"), f"over calls{of}: {resends(by_kind)} re-sends in "
                                                          f"{_n(judged, 'call')}{left_out}"))  # fmt: skip
    else:  # a report saved before the calls section: its turns are the calls
        out += _turns_share(report, of)
    cont = report.get("continuity") or {}
    if not session and cont.get("events"):
        by_kind = cont.get("by_kind") or {}
        logged = sum(int(by_kind.get(kind, 0)) for kind in RESEND_KINDS)
        out.append(Measure(cont.get("resend_share"), f"over log lines: {logged} re-sends in {cont['events']} log "
                                                     "decisions"))  # fmt: skip
    elif session:
        logged_only = [s for s in report.get("sessions") or [] if s.get("path") is None and s.get("log_lines")]
        if logged_only:
            kinds = Counter[str]()
            for entry in logged_only:
                kinds.update({str(k): int(v) for k, v in (entry.get("by_kind") or {}).items()})
            events = sum(kinds.values())
            logged = sum(kinds[kind] for kind in RESEND_KINDS)
            out.append(Measure(round(logged / events, 4), f"over log lines{of}: {logged} re-sends in {events} log "
                                                          "decisions (no transcript)"))  # fmt: skip
    if not out:
        return [Measure(None, "no call and no continuity decision in the logs or transcripts")]
    return out


def _turns_share(report: dict[str, Any], of: str) -> list[Measure]:
    kinds = [turn_kind(t) for t in report.get("turns") or []]
    decided = [k for k in kinds if k is not None and k != ABORTED]
    if not decided:
        return []
    share = round(sum(1 for k in decided if k in CALL_RESEND_KINDS) / len(decided), 4)
    return [Measure(share, f"over calls{of}: {_n(len(decided), 'turn')} of transcripts")]


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def avoidable(report: dict[str, Any]) -> Measure:
    missing = _no_session(report)
    if missing:
        return Measure(None, missing)
    cf = report.get("counterfactual")
    if not cf or cf.get("resends_avoidable") is None:
        return Measure(None, "no replay with a stable fingerprint (transcripts without commit evidence)")
    return Measure(cf["resends_avoidable"], f"of {cf.get('resends_logged')} re-sends in transcripts")


def directive_share(report: dict[str, Any]) -> Measure:
    missing = _no_session(report)
    if missing:
        return Measure(None, missing)
    largest = (report.get("directives") or {}).get("largest_payload") or {}
    comp = largest_composition(report)
    raw = largest_payloads(report)[1]
    noun = raw.noun if raw is not None else "payload"
    if raw is None and _messages_only(report, largest):
        noun = "call's messages"  # its transcripts hold no system prompt or tools: not a payload size (calls' rule)
    kind = largest.get("kind") or (raw.kind if raw is not None else None)
    if comp is None:  # a saved report without `largest_payload` (older builds chose it among flatten calls)
        sized = [t for t in report.get("turns") or [] if isinstance(t.get("payload_bytes_raw"), int)]
        turn = max(sized, key=lambda t: t["payload_bytes_raw"], default=None)
        comp = turn_composition(turn) if turn is not None else None
        largest, kind = turn or {}, turn_kind(turn) if turn is not None else None
    if comp is None or not comp.payload_raw:
        return Measure(None, "no reconstructed payload")
    where = f"session {largest.get('session')} turn {largest.get('index')}" + (f", {kind}" if kind else "")
    share_raw, share_sent = _round4(comp.share_raw), _round4(comp.share_sent)  # as the report rounds them
    serialized = f"{comp.directives_raw} of {comp.payload_raw} bytes serialized ({_fmt(share_raw)})"
    if not comp.sent_known:  # a saved report from before the sent-side counts: all it can say
        return Measure(share_raw, f"largest {noun}, {where}: {serialized}; the report predates sent-side counts")
    if not comp.deduped:
        return Measure(share_sent, f"largest {noun}, {where}: {comp.directives_sent} of {comp.payload_sent} "
                                   "bytes sent, as serialized (no dedupe)")  # fmt: skip
    sent = f"{comp.directives_sent} of {comp.payload_sent} bytes sent"
    return Measure(share_sent, f"largest {noun}, {where}: {sent}; {serialized}")


def _messages_only(report: dict[str, Any], largest: dict[str, Any]) -> bool:
    """Whether the largest payload is a call of an agent whose bytes are its messages' only (pi, Claude Code, mux,
    Codex: `calls.by_agent[…].payload` is tokens)."""
    exact = payload_exact(report)
    key = (largest.get("session"), largest.get("index"))
    turn = next((t for t in report.get("turns") or [] if (t.get("session"), t.get("index")) == key), None)
    return turn is not None and not exact(turn)


def _round4(value: float | None) -> float | None:
    return round(value, 4) if value is not None else None


def payload_bytes(report: dict[str, Any]) -> Measure:
    """The largest payload sent, in bytes, over the calls whose bytes are exact (senpi's, rebuilt byte for byte):
    other agents' transcripts hold no system prompt or tools, so their bytes are not the payload and are left out
    (named in the basis); with no exact call at all the gate cannot see, and says so."""
    missing = _no_session(report)
    if missing:
        return Measure(None, missing)
    exact = payload_exact(report)
    best: dict[str, Any] | None = None
    best_size = -1
    for turn in report.get("turns") or []:
        size = turn_payload(turn)
        if size is not None and size > best_size and exact(turn):
            best, best_size = turn, size
    inexact = inexact_agents(report)
    if best is None:
        if inexact:
            prompt = largest_prompt(report)
            largest = f"; its largest prompt: {prompt.tokens} tokens" if prompt is not None else ""
            return Measure(None, f"{', '.join(inexact)} transcripts give no byte-exact payload (no system prompt "
                                 f"or tools){largest}")  # fmt: skip
        return Measure(None, "no payload size known")
    kind = turn_kind(best) or "?"
    raw = best.get("payload_bytes_raw")
    before = f"; {raw} before dedupe" if isinstance(raw, int) and raw != best_size else ""
    left_out = f"; {', '.join(inexact)} calls not measured: no byte-exact payload" if inexact else ""
    return Measure(best_size, f"largest payload sent, after dedupe: session {best.get('session')} turn "
                              f"{best.get('index')}, {kind}{before}{left_out}")  # fmt: skip


def _waste(report: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    missing = _no_session(report)
    if missing:
        return None, missing
    waste = report.get("waste")
    if not isinstance(waste, dict) or not waste.get("calls"):
        return None, "no call judged from prompt-cache figures (Claude Code, pi, mux, Codex)"
    return waste, None


def waste_usd(report: dict[str, Any]) -> Measure:
    """Dollars beyond cache hits spent re-processing cached history (`waste.cost_usd.excess`)."""
    waste, why = _waste(report)
    if waste is None:
        return Measure(None, why or "")
    cost = waste.get("cost_usd") or {}
    pricing = waste.get("pricing") or {}
    unpriced = pricing.get("unpriced_models") or {}
    left = cost.get("excess_unpriced_tokens") or 0
    note = f"; {left} excess tokens of {', '.join(map(str, list(unpriced)[:3]))} have no price" if left else ""
    value = cost.get("excess")
    if not isinstance(value, int | float):
        return Measure(None, f"no list price for the calls with excess{note}")
    value = round(float(value), 4)
    return Measure(value, f"{waste.get('excess_tokens')} excess tokens in {_excess_calls(waste)} of "
                          f"{waste.get('calls')} calls, at {pricing.get('source')} as of {pricing.get('as_of')}"
                          f"{note}")  # fmt: skip


def _excess_calls(waste: dict[str, Any]) -> int:
    return sum(int(n) for n in (waste.get("calls_by_cause") or {}).values() if isinstance(n, int))


def waste_share(report: dict[str, Any]) -> Measure:
    """Excess tokens over the tokens not read from cache (`waste.share`)."""
    waste, why = _waste(report)
    if waste is None:
        return Measure(None, why or "")
    return Measure(waste.get("share"), f"{waste.get('excess_tokens')} excess of {waste.get('not_read_tokens')} "
                                       f"tokens not read from cache, in {_excess_calls(waste)} of "
                                       f"{waste.get('calls')} calls")  # fmt: skip


__all__ = ["Measure", "Result", "Thresholds", "evaluate"]
