"""The `continuity.report/1` contract as pydantic v2 models: what tests and scripts validate a report against.

Written from `reference/report-schema.md`, not from the builder, so a builder change that renames a field,
drops a key, emits a float count or a time without milliseconds fails here. Every contract key is required
(present, possibly null); new fields are allowed anywhere (`extra="allow"`), as the contract says. Types are
strict: a count must be an int, not a float that happens to be whole, and never a bool.

Fields this tool adds within /1 (allowed by the contract; scripts may rely on them as on the others):

* `redactions` `{enabled, total, by_kind}`: what redaction replaced (`[REDACTED:<kind>]` in the strings);
* `discovery` `{files, cap, left_out, counted_all}`: the candidate files found against the discovery cap
  (20,000): `left_out` were found past it and never read (`counted_all` false: the count stopped at 10 times
  the cap, so `left_out` is a lower bound); null for a report not built from live sources;
* `selection` `{session, since, until, sessions_matched, include_text}`: what the report was limited to;
* `continuity.attributed` (log lines matched to a transcript turn) and `continuity.timeline`
  `{kinds, group_size, starts, ends, counts}` (the decisions in order, grouped, for the HTML chart);
  `continuity.closes_paired`: `claude_sdk_oauth_session_close` lines paired with the call that wrote them;
* `sessions[]`: `started_at`, `models`, `profile` (the build profile chosen and why), `sidecar_verdict`;
* `turns[]`: `contradiction` (when the replay disagrees: "logged X; build Y decides Z: the profile or the data
  is wrong", Y the build profile the session's evidence points to), `closes` (senpi: the reasons of the close
  lines senpi wrote inside this call, in time order: `assistant_rewritten` before a flatten of a live entry,
  `other` before a reattach or fork, the error's cause before a failure; `[]` when none pairs, null for calls
  without a logged decision or of other agents);
* `turns[]`: `model`, `stop_reason`, `agreement`, `disagreement`, `why`, `logged_only`, `counterfactual`
  (the decision under a stable fingerprint), `avoidable`, `payload_bytes_if_stable`, `logged.source`,
  `logged.matched_log_line`, `commit.diff_total`, `commit.variant`, `tokens.prompt`, and for rewritten turns
  `content` `{blocks, chars[, text]}` (`text` only with `--include-text`);
* `directives.dedupe.<policy>`: `collapsed`, `kept`, `markers`, `nested` beside the bytes;
* the two sides of the agent's own dedupe (issue 22), every figure on one of them and every share dividing figures
  of one side, so no share passes 1: *serialized* (the prompt as the agent built it, before its dedupe:
  `payload_bytes_raw`, a directive entry's `copies`/`bytes`) and *sent* (what the provider received after it:
  `payload_bytes`, `copies_sent`/`bytes_sent`). `turns[].directives.<tag>` adds `copies_sent`/`bytes_sent`;
  `directives.tags.<tag>` adds `copies_sent_in_largest_payload`/`bytes_sent_in_largest_payload` and
  `all_payloads` (both sides summed over every reconstructed call, each side's share); `directives.payloads`
  holds those calls and their bytes on each side (what those shares divide by);
  `directives.largest_payload` adds `payload_bytes`, `kind`, the directive bytes on each side and each side's
  share (`check --max-directive-share` gates `share_sent`). On senpi's keep-last dedupe of a 70-prompt ulw
  flatten chain: 2,485 copies and 61.8 MB serialized, 70 and 1.7 MB sent, of 63.1 MB and 3.3 MB;
* `counterfactual.messages_resent_logged` / `messages_resent_avoidable` (null under a time window);
* from the schema's "Additions" (checked here as contract keys): `calls` (plus `calls.by_evidence`,
  `calls.tokens` and `calls.by_agent.<agent>.by_kind` / `.payload`), `sessions[].agent/path/tokens` (plus
  `log_lines`: the decision log lines naming the session), `turns[].agent/path/thread` (plus `turns[].call`
  `{kind, reason, evidence}`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from core.model import ABORTED, CALL_KINDS, CALL_RESEND_KINDS, EVIDENCE, KINDS

ISO_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"
IsoTime = Annotated[str, StringConstraints(pattern=ISO_PATTERN)]
Count = Annotated[int, Field(ge=0)]
Share = Annotated[float, Field(ge=0.0, le=1.0)]


def doc(description: str) -> Any:
    """A field's description: what it counts, and on which side of the agent's own dedupe."""
    return Field(description=description)


COPIES_SENT = (
    "blocks left in the payload sent, after the agent's dedupe (senpi collapses `ultrawork-mode` in flattens; an "
    "agent without a dedupe sends what it serialized); absent in reports that predate it"
)
DIRECTIVES = (
    "per tag, the blocks in the payload on both sides; null when the payload was not reconstructed, or (pi, "
    "Claude Code, mux) when it held no directive block"
)
DEDUPE = (
    "every dedupe policy simulated on the largest payload as serialized (`bytes_before` is its "
    "`payload_bytes_raw`); the agent's own rule leaves its `payload_bytes`"
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True, populate_by_name=True)


def _five_kinds(by_kind: dict[str, int], where: str) -> None:
    missing = [kind for kind in KINDS if kind not in by_kind]
    if missing:
        raise ValueError(f"{where}.by_kind lacks {', '.join(missing)} (all five kinds are always present)")


def _adds_up(by_kind: dict[str, int], by_reason: dict[str, dict[str, int]], total: int, where: str,
             noun: str) -> None:  # fmt: skip
    if sum(by_kind.values()) != total:
        raise ValueError(f"{where}.by_kind does not add up to {noun}")
    if sum(sum(kinds.values()) for kinds in by_reason.values()) != total:
        raise ValueError(f"{where}.by_reason does not add up to {noun}")


def _longest_first(streaks: list[Any], where: str) -> None:
    order = [(-s.length, s.start or "") for s in streaks]
    if order != sorted(order):
        raise ValueError(f"{where}.streaks must be sorted by length descending, then start ascending")


def _four_decimals(value: float | None, where: str) -> None:
    if value is not None and round(value, 4) != value:
        raise ValueError(f"{where} has more than 4 decimals: {value}")


class Source(_Model):
    path: str
    format: str | None
    bytes: Count
    lines: Count
    bad_lines: Count


class Streak(_Model):
    kind: str
    reason: str
    length: Annotated[int, Field(ge=2)]
    start: IsoTime | None
    end: IsoTime | None
    count_first: int | None
    count_last: int | None

    @model_validator(mode="after")
    def _not_delta(self) -> Streak:
        if self.kind == "delta":
            raise ValueError("delta runs are never streaks")
        return self


class Peak(_Model):
    value: int
    at: IsoTime | None
    kind: str


class Continuity(_Model):
    events: Count
    by_kind: dict[str, Count]
    by_reason: dict[str, dict[str, Count]]
    resend_share: Share | None
    streaks: list[Streak]
    peak_count: Peak | None
    closes: dict[str, Count]
    closes_paired: Count | None = None  # added by this tool (see the module docstring)

    @model_validator(mode="after")
    def _consistent(self) -> Continuity:
        _five_kinds(self.by_kind, "continuity")
        _four_decimals(self.resend_share, "continuity.resend_share")
        _adds_up(self.by_kind, self.by_reason, self.events, "continuity", "events")
        if (self.resend_share is None) != (self.events == 0):
            raise ValueError("continuity.resend_share is null exactly when events == 0")
        _longest_first(self.streaks, "continuity")
        return self


class AgentCalls(_Model):
    total: Count
    resend_share: Share | None
    payload: Literal["bytes", "tokens"]


class CallPeak(_Model):
    session: str
    index: Count
    bytes: Count


class Calls(_Model):
    total: Count
    by_kind: dict[str, Count]
    by_reason: dict[str, dict[str, Count]]
    resend_share: Share | None
    by_agent: dict[str, AgentCalls]
    streaks: list[Streak]
    peak: CallPeak | None

    @model_validator(mode="after")
    def _consistent(self) -> Calls:
        missing = [kind for kind in CALL_KINDS if kind not in self.by_kind]
        if missing:
            raise ValueError(f"calls.by_kind lacks {', '.join(missing)} (every call kind is always present)")
        _four_decimals(self.resend_share, "calls.resend_share")
        _adds_up(self.by_kind, self.by_reason, self.total, "calls", "total")
        if sum(agent.total for agent in self.by_agent.values()) != self.total:
            raise ValueError("calls.by_agent does not add up to total")
        judged = self.total - self.by_kind.get(ABORTED, 0)
        expected = round(sum(self.by_kind.get(k, 0) for k in CALL_RESEND_KINDS) / judged, 4) if judged else None
        if self.resend_share != expected:
            raise ValueError(f"calls.resend_share is {self.resend_share}, (fork+flatten+re-send)/(total-aborted) "
                             f"is {expected}")  # fmt: skip
        _longest_first(self.streaks, "calls")
        return self


class SessionTokens(_Model):
    input: Count
    output: Count
    cache_read: Count
    cache_write: Count


class Session(_Model):
    id: str
    path: str | None
    cwd: str | None
    turns: Count
    by_kind: dict[str, Count]
    rewritten: Count | None
    payload_bytes_total: Annotated[Count | None, doc("sum of its turns' `payload_bytes` (bytes sent)")]
    agent: str | None
    tokens: SessionTokens | None

    @model_validator(mode="after")
    def _kinds(self) -> Session:
        _five_kinds(self.by_kind, f"sessions[{self.id}]")
        return self


class LoggedDecision(_Model):
    kind: str
    reason: str
    count: int | None
    payload_bytes: Count | None
    collapsed_directives: Count | None


class Decision(_Model):
    kind: str
    reason: str
    count: int | None


class DirectiveCount(_Model):
    """One tag's blocks in one call's payload, on both sides of the agent's own dedupe."""

    copies: Annotated[Count, doc("blocks in the payload as serialized, before the agent's dedupe")]
    bytes: Annotated[Count, doc("UTF-8 bytes of those blocks (of `payload_bytes_raw`)")]
    copies_sent: Annotated[Count | None, doc(COPIES_SENT)] = None
    bytes_sent: Annotated[Count | None, doc("UTF-8 bytes of those blocks (of `payload_bytes`)")] = None

    @model_validator(mode="after")
    def _sent_within_serialized(self) -> DirectiveCount:
        if self.copies_sent is not None and self.copies_sent > self.copies:
            raise ValueError("a dedupe cannot send more copies than were serialized")
        if self.bytes_sent is not None and self.bytes_sent > self.bytes:
            raise ValueError("a dedupe cannot send more directive bytes than were serialized")
        return self


class Tokens(_Model):
    input: Count | None
    cache_read: Count | None
    cache_write: Count | None
    output: Count | None


class DiffChange(_Model):
    path: str
    change: str
    volatile: bool
    capture: Any
    commit: Any


class Commit(_Model):
    outcome: Literal["clean", "rewritten", "not-resident", "unknown"]
    source: Literal["events", "transcript", "inferred"]
    klass: Literal["volatile-only", "semantic"] | None = Field(alias="class")
    diff: list[DiffChange]

    @model_validator(mode="after")
    def _class_only_when_rewritten(self) -> Commit:
        if self.klass is not None and self.outcome != "rewritten":
            raise ValueError("commit.class is null unless outcome is rewritten")
        return self


class Fingerprints(_Model):
    senpi_sha256: str | None
    senpi_sha256_verbatim: str | None
    stable_xxh3: str | None


class Call(_Model):
    kind: str
    reason: str | None
    evidence: Literal[EVIDENCE] | None  # type: ignore[valid-type]


class Turn(_Model):
    session: str
    index: Count
    entry_id: str | None
    ts: IsoTime | None
    logged: LoggedDecision | None
    recomputed: Decision | None
    payload_bytes: Annotated[Count | None, doc("bytes of the prompt text sent, after the agent's own dedupe")]
    payload_bytes_raw: Annotated[Count | None, doc("the same prompt as serialized, before any dedupe")]
    directives: Annotated[dict[str, DirectiveCount] | None, doc(DIRECTIVES)]
    tokens: Tokens | None
    commit: Commit | None
    fingerprints: Fingerprints | None
    agent: str
    path: str
    thread: str
    call: Call | None
    # added by this tool (see the module docstring): typed when present
    contradiction: str | None = None
    closes: list[str] | None = None


class AllPayloads(_Model):
    """One tag over every reconstructed call of the selection, on both sides; each share of its own side."""

    copies: Annotated[Count, doc("blocks serialized, summed over the reconstructed calls")]
    bytes: Annotated[Count, doc("their bytes")]
    copies_sent: Annotated[Count, doc("blocks sent after the agent's dedupe, summed")]
    bytes_sent: Annotated[Count, doc("their bytes")]
    share: Annotated[Share | None, doc("bytes / directives.payloads.payload_bytes_raw")]
    share_sent: Annotated[Share | None, doc("bytes_sent / directives.payloads.payload_bytes (the dashboard's share)")]


class TagStats(_Model):
    injections: Annotated[Count | None, doc("times the block entered a transcript")]
    variants: Annotated[Count | None, doc("distinct byte-identical forms")]
    bytes_per_copy: Annotated[Count | None, doc("size of the most injected form")]
    copies_in_largest_payload: Annotated[Count, doc("blocks in the largest payload as serialized")]
    bytes_in_largest_payload: Annotated[Count, doc("their bytes (of its `payload_bytes_raw`)")]
    copies_sent_in_largest_payload: Annotated[Count | None, doc("blocks it sent after the agent's dedupe")] = None
    bytes_sent_in_largest_payload: Annotated[Count | None, doc("their bytes (of its `payload_bytes`)")] = None
    all_payloads: AllPayloads | None = None


class Payloads(_Model):
    """The calls whose payload was reconstructed (`turns[].payload_bytes_raw` not null): the denominators."""

    calls: Count
    payload_bytes_raw: Annotated[Count, doc("their bytes as serialized")]
    payload_bytes: Annotated[Count, doc("their bytes as sent")]


class LargestPayload(_Model):
    """The call with the largest `payload_bytes_raw`, of any kind: where copies pile up; dedupe is simulated on it."""

    session: str
    index: Count
    payload_bytes_raw: Annotated[Count, doc("its bytes as serialized")]
    payload_bytes: Annotated[Count | None, doc("its bytes as sent")] = None
    kind: str | None = None
    directive_bytes: Annotated[Count | None, doc("directive bytes in it as serialized")] = None
    directive_bytes_sent: Annotated[Count | None, doc("directive bytes in it as sent")] = None
    share: Annotated[Share | None, doc("directive_bytes / payload_bytes_raw")] = None
    share_sent: Annotated[Share | None, doc("directive_bytes_sent / payload_bytes: what `check` gates")] = None


class DedupeResult(_Model):
    bytes_before: Count
    bytes_after: Count


class Directives(_Model):
    tags: dict[str, TagStats]
    largest_payload: LargestPayload | None
    dedupe: Annotated[dict[str, DedupeResult] | None, doc(DEDUPE)]
    payloads: Payloads | None = None


class Counterfactual(_Model):
    resends_logged: Count
    resends_avoidable: Count | None
    bytes_logged: Count | None
    bytes_if_stable: Count | None


class Problem(_Model):
    path: str
    line: int | None
    offset: int | None
    error: str


class Redactions(_Model):
    enabled: bool
    total: Count
    by_kind: dict[str, Count]


class Discovery(_Model):
    files: Count
    cap: Count
    left_out: Count
    counted_all: bool


class Report(_Model):
    schema_: Literal["continuity.report/1"] = Field(alias="schema")
    generated_at: IsoTime
    tool_version: str
    sources: list[Source]
    continuity: Continuity
    calls: Calls
    sessions: list[Session]
    turns: list[Turn]
    directives: Directives | None
    counterfactual: Counterfactual | None
    problems: Annotated[list[Problem], Field(max_length=1000)]
    problems_total: Count
    #: added by this tool within /1 (new fields are allowed): what redaction replaced
    redactions: Redactions | None = None
    #: added by this tool within /1: files found against the discovery cap, and how many it left out
    discovery: Discovery | None = None

    @model_validator(mode="after")
    def _totals(self) -> Report:
        if self.problems_total < len(self.problems):
            raise ValueError("problems_total is smaller than the problems listed")
        calls = sum(1 for turn in self.turns if turn.call is not None)
        if calls != self.calls.total:
            raise ValueError(f"calls.total is {self.calls.total}, but {calls} turns are calls")
        last: dict[str, int] = {}
        for turn in self.turns:
            if turn.index <= last.get(turn.session, -1):
                raise ValueError(f"turns of session {turn.session} are not in index order")
            last[turn.session] = turn.index
        return self


def validate(report: dict[str, Any]) -> Report:
    """Validate a built (or loaded) report against the contract; raises pydantic.ValidationError."""
    return Report.model_validate(report)
