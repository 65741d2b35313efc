"""CI gate: measure a built report against thresholds, one printable line per threshold.

`continuity-tui check PATH... --max-resend-share 0.2` exits 1 when a measured value exceeds its maximum
(equal passes). The measures read only the report dict, so a saved JSON report can be checked too:

* resend-share: (fork + flatten) / decisions. With `--session`, over that session's turns; else over the
  log's continuity lines, or over all turns when no log line was read.
* avoidable: re-sends caused by a volatile-only rewrite (`counterfactual.resends_avoidable`).
* directive-share: the part of the largest raw payload made of tagged directive copies (the number behind
  "the 875 KB prompt was 73 % duplicates"); the largest payload is where duplicates hurt.
* payload-bytes: the largest payload one call sent, after the agent's own dedupe (reconstructed, else the size
  the agent logged); its line also gives that call's size before dedupe, the one directive-share is taken of.

A threshold whose value cannot be measured from the data fails: a gate that cannot see must not pass
silently. With no threshold given, every measure is printed as information and the check passes.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from core.model import RESEND_KINDS
from core.report.common import directive_share as common_directive_share
from core.report.common import largest_payloads, turn_kind, turn_payload
from core.sanitize import display


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Maxima from the command line; None = not checked."""

    max_resend_share: float | None = None
    max_avoidable: int | None = None
    max_directive_share: float | None = None
    max_payload_bytes: int | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Thresholds:
        return cls(
            max_resend_share=getattr(args, "max_resend_share", None),
            max_avoidable=getattr(args, "max_avoidable", None),
            max_directive_share=getattr(args, "max_directive_share", None),
            max_payload_bytes=getattr(args, "max_payload_bytes", None),
        )

    def any(self) -> bool:
        return any(
            v is not None
            for v in (self.max_resend_share, self.max_avoidable, self.max_directive_share, self.max_payload_bytes)
        )


@dataclass(frozen=True, slots=True)
class Measure:
    """A measured value and what it was measured on; `value` None = not measurable, `basis` says why."""

    value: float | int | None
    basis: str


@dataclass(frozen=True, slots=True)
class Result:
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
    """One Result per threshold given (or, with none given, one informational Result per measure)."""
    checks: list[tuple[str, Measure, float | int | None]] = [
        ("resend-share", resend_share(report), thresholds.max_resend_share),
        ("avoidable", avoidable(report), thresholds.max_avoidable),
        ("directive-share", directive_share(report), thresholds.max_directive_share),
        ("payload-bytes", payload_bytes(report), thresholds.max_payload_bytes),
    ]
    show_all = not thresholds.any()
    results = []
    for name, measure, limit in checks:
        if limit is None and not show_all:
            continue
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


def resend_share(report: dict[str, Any]) -> Measure:
    missing = _no_session(report)
    if missing:
        return Measure(None, missing)
    selection = report.get("selection") or {}
    cont = report.get("continuity") or {}
    if not selection.get("session") and cont.get("events"):
        return Measure(cont.get("resend_share"), f"{cont['events']} log decisions")
    kinds = [turn_kind(t) for t in report.get("turns") or []]
    decided = [k for k in kinds if k is not None]
    if not decided:
        return Measure(None, "no continuity decision in the logs or transcripts")
    share = round(sum(1 for k in decided if k in RESEND_KINDS) / len(decided), 4)
    where = f"session {selection['session']}" if selection.get("session") else "transcripts"
    plural = "" if len(decided) == 1 else "s"
    return Measure(share, f"{len(decided)} turn{plural} of {where}")


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
    directives = report.get("directives") or {}
    largest = directives.get("largest_payload")
    if largest and largest.get("payload_bytes_raw"):
        size = largest["payload_bytes_raw"]
        tags = directives.get("tags") or {}
        copies = sum(t.get("bytes_in_largest_payload") or 0 for t in tags.values())
        raw = largest_payloads(report)[1]
        noun = raw.noun if raw is not None else "payload"
        where = (
            f"largest {noun} before dedupe: session {largest.get('session')} turn {largest.get('index')}, {size} bytes"
        )
        return Measure(round(min(copies / size, 1.0), 4), where)
    # no flatten call: the largest payload of any call (a delta carries only its own new messages)
    sized = [
        t for t in report.get("turns") or [] if isinstance(t.get("payload_bytes_raw"), int) and t["payload_bytes_raw"]
    ]
    if not sized:
        return Measure(None, "no reconstructed payload")
    turn = max(sized, key=lambda t: t["payload_bytes_raw"])
    share = common_directive_share(turn) or 0.0
    where = f"largest payload before dedupe (no flatten): session {turn.get('session')} turn {turn.get('index')}"
    return Measure(round(share, 4), f"{where}, {turn['payload_bytes_raw']} bytes")


def payload_bytes(report: dict[str, Any]) -> Measure:
    missing = _no_session(report)
    if missing:
        return Measure(None, missing)
    best: dict[str, Any] | None = None
    best_size = -1
    for turn in report.get("turns") or []:
        size = turn_payload(turn)
        if size is not None and size > best_size:
            best, best_size = turn, size
    if best is None:
        return Measure(None, "no payload size known")
    kind = turn_kind(best) or "?"
    raw = best.get("payload_bytes_raw")
    before = f"; {raw} before dedupe" if isinstance(raw, int) and raw != best_size else ""
    return Measure(best_size, f"largest payload sent, after dedupe: session {best.get('session')} turn "
                              f"{best.get('index')}, {kind}{before}")  # fmt: skip


__all__ = ["Measure", "Result", "Thresholds", "evaluate"]
