"""Readings of a built report that both the Markdown and the HTML rendering need, in one place.

They read only the report dict (never state), so a report loaded back from JSON renders the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from msgspec import Struct

from core.model import ABORTED, CALL_KINDS, CALL_RESEND_KINDS, KINDS
from core.sanitize import display

VALUE_LIMIT = 160


def kinds_of(*mappings: dict[str, Any]) -> list[str]:
    """The five kinds, then any other kind the mappings mention, in first-seen order."""
    out = list(KINDS)
    for mapping in mappings:
        out.extend(kind for kind in mapping if kind not in out)
    return out


def turn_kind(turn: dict[str, Any]) -> str | None:
    """The kind a turn is shown under: its call's, else what the agent logged, else what the replay decided."""
    call = turn.get("call")
    if isinstance(call, dict) and call.get("kind") is not None:
        return str(call["kind"])
    for side in ("logged", "recomputed"):
        decision = turn.get(side)
        if isinstance(decision, dict) and decision.get("kind") is not None:
            return str(decision["kind"])
    return None


def turn_reason(turn: dict[str, Any]) -> str | None:
    call = turn.get("call")
    if isinstance(call, dict) and call.get("reason") is not None:
        return str(call["reason"])
    for side in ("logged", "recomputed"):
        decision = turn.get(side)
        if isinstance(decision, dict) and decision.get("reason") is not None:
            return str(decision["reason"])
    return None


def is_rewritten(turn: dict[str, Any]) -> bool:
    commit = turn.get("commit")
    return isinstance(commit, dict) and commit.get("outcome") == "rewritten"


def turn_payload(turn: dict[str, Any]) -> int | None:
    """Bytes this call sent: reconstructed when known, else what the agent logged."""
    value = turn.get("payload_bytes")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    logged = turn.get("logged")
    value = logged.get("payload_bytes") if isinstance(logged, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class Payload(Struct, frozen=True):
    """One call's payload, with both sizes: sent (after the agent's own dedupe) and before dedupe (raw)."""

    session: str | None
    index: int | None
    kind: str | None
    sent: int | None
    raw: int | None
    #: "payload" when no call has more bytes before dedupe, else "flatten payload" (a report written before
    #: `directives.largest_payload` was chosen among calls of any kind chose it among flatten calls)
    noun: str = "payload"


def largest_payloads(report: dict[str, Any]) -> tuple[Payload | None, Payload | None]:
    """(the largest payload sent, the largest before dedupe), each labelled with its other size.

    Two numbers used to stand side by side unlabelled (`check`: 151514 and 101940 for the same turn 20; the
    summary said 151,514 where the graph's top said 102K): the raw one is where directive copies pile up and
    dedupe is simulated (`directives.largest_payload`), the sent one is what the provider received. Often the
    same call; when not, both are named."""
    turns = report.get("turns") or []
    exact = payload_exact(report)  # bytes only where they are exact: tokens stand for the others (`largest_prompt`)
    sent: Payload | None = None
    by_key: dict[tuple[Any, Any], dict[str, Any]] = {}
    most_raw = 0
    for turn in turns:
        by_key[(turn.get("session"), turn.get("index"))] = turn
        if not exact(turn):
            continue
        raw_size = turn.get("payload_bytes_raw")
        if isinstance(raw_size, int) and raw_size > most_raw:
            most_raw = raw_size
        size = turn_payload(turn)
        if size is not None and (sent is None or size > (sent.sent or 0)):
            raw = turn.get("payload_bytes_raw")
            sent = Payload(turn.get("session"), turn.get("index"), turn_kind(turn), size,
                           raw if isinstance(raw, int) else None)  # fmt: skip
    largest = (report.get("directives") or {}).get("largest_payload")
    raw_payload: Payload | None = None
    if isinstance(largest, dict) and isinstance(largest.get("payload_bytes_raw"), int):
        turn = by_key.get((largest.get("session"), largest.get("index"))) or {}
        if turn and not exact(turn):
            return sent, None
        noun = "payload" if largest["payload_bytes_raw"] >= most_raw else "flatten payload"
        raw_payload = Payload(largest.get("session"), largest.get("index"), turn_kind(turn), turn_payload(turn),
                              largest["payload_bytes_raw"], noun)  # fmt: skip
    return sent, raw_payload


def same_call(a: Payload | None, b: Payload | None) -> bool:
    return a is not None and b is not None and (a.session, a.index) == (b.session, b.index)


class Composition(Struct, frozen=True):
    """Directive bytes inside payload bytes, on both sides of the agent's own dedupe: as serialized (before
    it: `payload_bytes_raw`, `copies`, `bytes`) and as sent (after it: `payload_bytes`, `copies_sent`,
    `bytes_sent`). A share divides figures of one side, so neither can pass 1: dividing serialized copies by
    sent bytes read 2,324 % on a keep-last senpi flatten chain (issue 22)."""

    payload_raw: int
    payload_sent: int
    directives_raw: int
    directives_sent: int
    #: False for a report written before the sent-side counts existed: its sent figures are the serialized ones
    sent_known: bool = True

    @property
    def share_raw(self) -> float | None:
        """Exact: a percentage is printed from it, the report's 4-decimal figure rounded from it (never a
        percentage of the rounded figure: 0.370535 is 37.1 % and 0.3705, not 37.0 %)."""
        return self.directives_raw / self.payload_raw if self.payload_raw else None

    @property
    def share_sent(self) -> float | None:
        return self.directives_sent / self.payload_sent if self.payload_sent else None

    @property
    def deduped(self) -> bool:
        """Whether the agent's dedupe changed anything: only then do the two sides both matter."""
        return (self.payload_raw, self.directives_raw) != (self.payload_sent, self.directives_sent)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def turn_composition(turn: dict[str, Any]) -> Composition | None:
    """One call's composition; None when its payload was not measured."""
    directives = turn.get("directives")
    raw = _int(turn.get("payload_bytes_raw"))
    if not isinstance(directives, dict) or raw is None:
        return None
    sent = _int(turn.get("payload_bytes"))
    known = True
    d_raw = d_sent = 0
    for values in directives.values():
        if not isinstance(values, dict):
            continue
        nbytes = _int(values.get("bytes")) or 0
        bytes_sent = _int(values.get("bytes_sent"))
        known = known and bytes_sent is not None
        d_raw += nbytes
        d_sent += nbytes if bytes_sent is None else bytes_sent
    return Composition(raw, raw if sent is None else sent, d_raw, d_sent, known)


def largest_composition(report: dict[str, Any]) -> Composition | None:
    """The composition of `directives.largest_payload` (the report's own figures; for a report written before
    they existed, the same call's turn)."""
    largest = (report.get("directives") or {}).get("largest_payload")
    if not isinstance(largest, dict):
        return None
    fields = [_int(largest.get(k)) for k in ("payload_bytes_raw", "payload_bytes", "directive_bytes",
                                            "directive_bytes_sent")]  # fmt: skip
    if all(v is not None for v in fields):
        raw, sent, d_raw, d_sent = (v or 0 for v in fields)
        return Composition(raw, sent, d_raw, d_sent)
    for turn in report.get("turns") or []:
        if (turn.get("session"), turn.get("index")) == (largest.get("session"), largest.get("index")):
            return turn_composition(turn)
    return None


class TagRow(Struct, frozen=True):
    """One directive tag as the Markdown and HTML tables show it: over every reconstructed payload on both sides
    (None for a report written before those totals), and in the largest payload on both sides."""

    tag: str
    injections: int | None
    variants: int | None
    bytes_per_copy: int | None
    copies: int | None
    bytes: int | None
    copies_sent: int | None
    bytes_sent: int | None
    share: float | None  # bytes / the payloads' bytes as serialized
    share_sent: float | None  # bytes_sent / the payloads' bytes as sent
    largest_copies: int
    largest_copies_sent: int

    @property
    def deduped(self) -> bool:
        return (self.copies, self.bytes, self.largest_copies) != (
            self.copies_sent, self.bytes_sent, self.largest_copies_sent)  # fmt: skip


def tag_rows(report: dict[str, Any]) -> tuple[list[TagRow], bool]:
    """The `directives.tags` rows, most bytes sent first (as the dashboard's pane orders them), and whether
    the agent's own dedupe changed anything, i.e. whether both sides are worth a column."""
    directives = report.get("directives") or {}
    payloads = directives.get("payloads") if isinstance(directives.get("payloads"), dict) else {}
    raw_total, sent_total = _int(payloads.get("payload_bytes_raw")), _int(payloads.get("payload_bytes"))
    rows: list[TagRow] = []
    for tag, t in (directives.get("tags") or {}).items():
        if not isinstance(t, dict):
            continue
        every = t.get("all_payloads") if isinstance(t.get("all_payloads"), dict) else {}
        largest = _int(t.get("copies_in_largest_payload")) or 0
        largest_sent = _int(t.get("copies_sent_in_largest_payload"))
        rows.append(TagRow(
            str(tag), _int(t.get("injections")), _int(t.get("variants")), _int(t.get("bytes_per_copy")),
            _int(every.get("copies")), _int(every.get("bytes")), _int(every.get("copies_sent")),
            _int(every.get("bytes_sent")), _exact(every.get("bytes"), raw_total, every.get("share")),
            _exact(every.get("bytes_sent"), sent_total, every.get("share_sent")),
            largest, largest if largest_sent is None else largest_sent,
        ))  # fmt: skip
    rows.sort(key=lambda r: (-(r.bytes_sent or 0), -(r.bytes or 0), -r.largest_copies, -(r.injections or 0), r.tag))
    deduped = any(r.deduped for r in rows) or payloads.get("payload_bytes_raw") != payloads.get("payload_bytes")
    comp = largest_composition(report)
    return rows, deduped or (comp is not None and comp.deduped)


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _exact(part: Any, whole: int | None, rounded: Any) -> float | None:
    """A share from its integers (what a percentage is printed from), else the report's rounded figure."""
    if _int(part) is not None and whole:
        return part / whole
    return _float(rounded)


def copies(turn: dict[str, Any]) -> list[tuple[str, int, int | None]] | None:
    """(tag, copies sent, copies serialized when the agent's dedupe changed them, else None) per directive tag
    in the call's payload; None when directives are not known."""
    directives = turn.get("directives")
    if not isinstance(directives, dict):
        return None
    out: list[tuple[str, int, int | None]] = []
    for tag, d in directives.items():
        if not isinstance(d, dict):
            continue
        serialized = _int(d.get("copies")) or 0
        sent = _int(d.get("copies_sent"))
        if sent is None:
            sent = serialized
        out.append((str(tag), sent, serialized if serialized != sent else None))
    return out


def copies_text(turn: dict[str, Any], quote: Callable[[str], str]) -> str:
    """`ultrawork-mode ×1 (70 serialized)`: the copies sent per tag, and as serialized where the agent's dedupe
    changed them; `quote` renders a tag for the output (Markdown code span, HTML `<code>`)."""
    found = copies(turn)
    if found is None:
        return "–"
    return (
        ", ".join(
            f"{quote(tag)} ×{sent}" + (f" ({serialized:,} serialized)" if serialized is not None else "")
            for tag, sent, serialized in found
        )
        or "none"
    )


def share_sent(turn: dict[str, Any]) -> float | None:
    """The directives' share of what the call sent (`turn_composition`), None when it is not known."""
    comp = turn_composition(turn)
    return comp.share_sent if comp is not None else None


def value_text(value: Any) -> str:
    """One side of a field diff as compact JSON, inert and bounded."""
    try:
        dumped = orjson.dumps(value).decode("utf-8")
    except TypeError:
        dumped = str(value)
    return display(dumped, VALUE_LIMIT)


def diff_total(commit: dict[str, Any]) -> int:
    total = commit.get("diff_total")
    return total if isinstance(total, int) else len(commit.get("diff") or [])


def agreement(report: dict[str, Any]) -> tuple[int, int] | None:
    """(turns whose replayed decision matches the logged one, turns the replay judged); None if none judged."""
    judged = [t.get("agreement") for t in report.get("turns") or [] if isinstance(t.get("agreement"), bool)]
    return (sum(judged), len(judged)) if judged else None


def disagreements(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Turns where the replay decided differently from what the agent logged."""
    return [t for t in report.get("turns") or [] if t.get("agreement") is False]


def decision_text(decision: Any) -> str:
    """`flatten/assistant_rewritten/3` for a logged or recomputed decision; `–` when absent."""
    if not isinstance(decision, dict) or decision.get("kind") is None:
        return "–"
    parts = [str(decision.get("kind")), str(decision.get("reason"))]
    if isinstance(decision.get("count"), int):
        parts.append(str(decision["count"]))
    return "/".join(parts)


def profile_of(session: dict[str, Any]) -> tuple[str, str | None] | None:
    """(label, why) of the build profile the analysis chose for a session, when it chose one."""
    profile = session.get("profile")
    if not isinstance(profile, dict):
        return None
    label = profile.get("label") or profile.get("id")
    if label is None:
        return None
    why = profile.get("why")
    return str(label), str(why) if why is not None else None


# ---------------------------------------------------------------------- calls (the unit, every agent's)
class CallFigures(Struct, frozen=True):
    """What a summary says first about the calls (`calls` section): how many, of which kinds, the re-send share
    and its basis, the tokens."""

    total: int
    by_agent: dict[str, int]
    by_kind: dict[str, int]  # the kinds that happened, in display order
    resends: int
    judged: int  # calls that reported usage: what the share is taken of
    aborted: int
    share: float | None
    tokens: dict[str, int] | None


def call_figures(report: dict[str, Any]) -> CallFigures | None:
    """The calls of the report, or None when it has none (a logs-only report, or one saved before `calls`)."""
    calls = report.get("calls")
    if not isinstance(calls, dict) or not calls.get("total"):
        return None
    by_kind = {str(k): int(v) for k, v in (calls.get("by_kind") or {}).items() if isinstance(v, int) and v}
    aborted = by_kind.get(ABORTED, 0)
    agents = calls.get("by_agent") or {}
    tokens = calls.get("tokens")
    return CallFigures(
        total=int(calls["total"]),
        by_agent={str(a): int(v.get("total") or 0) for a, v in agents.items() if isinstance(v, dict)},
        by_kind=by_kind,
        resends=sum(n for k, n in by_kind.items() if k in CALL_RESEND_KINDS),
        judged=int(calls["total"]) - aborted,
        aborted=aborted,
        share=calls.get("resend_share"),
        tokens=tokens if isinstance(tokens, dict) else None,
    )


def inexact_agents(report: dict[str, Any]) -> list[str]:
    """The agents whose calls the summaries measure in prompt tokens: their transcripts hold no system prompt
    and no tool schemas, so payload bytes would count the messages only (`calls.by_agent[…].payload`)."""
    agents = (report.get("calls") or {}).get("by_agent") or {}
    return sorted(str(a) for a, v in agents.items() if isinstance(v, dict) and v.get("payload") == "tokens")


def payload_exact(report: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
    """Whether a turn's payload bytes are exact (its agent's transcripts rebuild the prompt byte for byte). A report
    without the agent of a turn (saved before `calls`) counts its bytes as exact, as it did."""
    inexact = set(inexact_agents(report))
    return lambda turn: turn.get("agent") not in inexact


class Prompt(Struct, frozen=True):
    """The call with the most prompt tokens (input + cache read + cache write) among the inexact agents' calls."""

    session: str | None
    index: int | None
    kind: str | None
    tokens: int
    agents: tuple[str, ...]  # the agents measured so (named where the summary says why)


def largest_prompt(report: dict[str, Any]) -> Prompt | None:
    """The largest prompt in tokens of the calls whose payload bytes are not exact (None when there are none)."""
    inexact = inexact_agents(report)
    if not inexact:
        return None
    best: tuple[int, dict[str, Any]] | None = None
    for turn in report.get("turns") or []:
        tokens = turn.get("tokens")
        if turn.get("agent") not in inexact or not isinstance(tokens, dict):
            continue
        size = sum(int(tokens.get(k) or 0) for k in ("input", "cache_read", "cache_write"))
        if size and (best is None or size > best[0]):
            best = (size, turn)
    if best is None:
        return None
    size, turn = best
    return Prompt(turn.get("session"), turn.get("index"), turn_kind(turn), size, tuple(inexact))


def kind_order(kinds: Any) -> list[str]:
    """Kinds in the calls' display order (`CALL_KINDS`), any other after them by name: one order for every run."""
    rank = {kind: i for i, kind in enumerate(CALL_KINDS)}
    return sorted({str(k) for k in kinds}, key=lambda k: (rank.get(k, len(rank)), k))


def prompt_tokens(tokens: Any) -> int | None:
    """input + cache read + cache write of a `tokens` object (a turn's or a session's); None when absent."""
    if not isinstance(tokens, dict):
        return None
    return sum(int(tokens.get(k) or 0) for k in ("input", "cache_read", "cache_write"))
