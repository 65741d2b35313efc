"""Normalized records that flow from the format adapters into analysis and state.

Records are slotted dataclasses rather than pydantic models: they are created once per input line on the
hot path, and the adapters already validate the shapes they accept. pydantic is used where validation pays
(the report contract, `core.report.schema`).
"""

from __future__ import annotations

from typing import Any, Literal

from msgspec import Struct, field

#: The five kinds of senpi's continuity decisions, which a report always lists for log lines, in display order.
#: `failed` (newer senpi) and any unknown kind are added when seen.
KINDS: tuple[str, ...] = ("bootstrap", "delta", "fork", "flatten", "disabled")

#: Log-line kinds that re-send history. `failed`, `bootstrap`, `delta` and `disabled` are not re-sends.
RESEND_KINDS: frozenset[str] = frozenset({"fork", "flatten"})

# Closed vocabularies, as types (the report contract spells the same values: `core.report.schema`). A call's
# `kind` and `reason` stay `str`: logs may name kinds and reasons no release here knows, and they are shown.
LogSource = Literal["session-log", "compaction-log"]
#: where a `LoggedDecision` comes from: senpi's diagnostic on the message, a matched session.log line, or (agents
#: that log no decision) the prompt-cache figures or the transcript's structure
DecisionSource = Literal["diagnostic", "log", "cache", "transcript"]
ChangeKind = Literal["missing_in_capture", "missing_in_commit", "changed", "type_changed"]
CommitOutcome = Literal["clean", "rewritten", "not-resident", "unknown"]
CommitSource = Literal["events", "transcript", "inferred"]
DiffClass = Literal["volatile-only", "semantic"]
Serializer = Literal["flatten", "delta"]

#: A call that processed its history again, per the prompt-cache evidence (any agent on a stateless API).
RESEND = "re-send"
#: The first call after the history was replaced by a summary: rebuilt on purpose, not a re-send.
COMPACTION = "compaction"
#: A call with no usage at all: the request was aborted or failed before the provider reported any.
ABORTED = "aborted"

#: Every kind a call can have, in display order: senpi's five, `failed`, then what the cache and the
#: transcript's structure tell for every other agent. The report's `calls.by_kind` always lists all of them.
CALL_KINDS: tuple[str, ...] = (*KINDS, "failed", RESEND, COMPACTION, ABORTED)

#: Call kinds that re-send history: fork, flatten and re-send. A compaction is not one; an aborted call is left
#: out of the share altogether (it sent a request but nothing says what the provider processed).
CALL_RESEND_KINDS: frozenset[str] = frozenset({"fork", "flatten", RESEND})

#: What a call's verdict rests on: senpi's diagnostic on the message, a matched `session.log` line, this tool's
#: replay of the continuity decision, the provider's prompt-cache figures, or the transcript's structure
#: (compaction, branch, rewind, an aborted request).
EVIDENCE: tuple[str, ...] = ("diagnostic", "log", "replay", "cache", "transcript")

CONTINUITY_EVENT = "claude_sdk_oauth_session_continuity"
CLOSE_EVENT = "claude_sdk_oauth_session_close"


class Where(Struct):
    """Where a record came from: enough to re-read it lazily and to name it in a problem."""

    path: str
    line: int
    offset: int
    length: int = 0


class Problem(Struct):
    """One bad input line or file event worth showing: never fatal, always located."""

    path: str
    line: int | None
    offset: int | None
    error: str
    ts_ms: int | None = None  # when it was noticed (wall clock), for "newest first"


class LogEvent(Struct):
    """Any session.log / compaction.log line. Unknown events stay generic records, not errors."""

    where: Where
    source: LogSource
    ts: str
    ts_ms: int | None
    level: str
    event: str
    data: dict[str, Any]
    session_id: str | None = None


class ContinuityLine(Struct):
    """A `claude_sdk_oauth_session_continuity` line: one observed decision of one provider call."""

    where: Where
    ts: str
    ts_ms: int | None
    kind: str
    reason: str
    count: int | None
    session_id: str | None = None  # newer builds (2026.9.29+) only
    #: set by attribution: the session whose transcript diagnostic matched this line
    matched_session: str | None = None
    matched_turn: int | None = None


class CloseLine(Struct):
    """A `claude_sdk_oauth_session_close` line."""

    where: Where
    ts: str
    ts_ms: int | None
    reason: str
    session_id: str | None = None
    #: set by senpi's close pairing: the session and call whose start (or failure) wrote this line
    matched_session: str | None = None
    matched_turn: int | None = None


class TranscriptEntry(Struct):
    """One transcript line. `obj` is the parsed entry; state never keeps it (only summaries and offsets)."""

    where: Where
    type: str
    id: str | None
    parent_id: str | None
    timestamp: str | None
    obj: dict[str, Any]

    @property
    def message(self) -> dict[str, Any] | None:
        msg = self.obj.get("message")
        return msg if isinstance(msg, dict) else None

    @property
    def role(self) -> str | None:
        msg = self.message
        role = msg.get("role") if msg else None
        return role if isinstance(role, str) else None


class SessionHeader(Struct):
    """The `{"type":"session"}` first line of a transcript."""

    where: Where
    session_id: str
    version: int | None
    timestamp: str | None
    cwd: str | None
    parent_session: str | None = None


class Sidecar(Struct):
    """A `<transcript>.claude-sdk-oauth-binding.json` restart binding."""

    where: Where
    data: dict[str, Any]


def entry_key(entry_id: str | None, line: int) -> str:
    """The id state keys a transcript entry by: its own id, or `#<line>` for an id-less one (pi v1 files, whose
    compactions name their first kept entry the same way)."""
    return entry_id if entry_id is not None else f"#{line}"


class EntryNode(Struct):
    """What state remembers of one transcript entry: its place in the tree and where to re-read it."""

    id: str
    parent_id: str | None
    type: str
    where: Where
    turn_index: int | None = None


class AgentEvent(Struct):
    """One line of an agent event recording (`--mode json` output): capture/commit evidence."""

    where: Where
    type: str
    obj: dict[str, Any]


Record = LogEvent | ContinuityLine | CloseLine | TranscriptEntry | SessionHeader | Sidecar | AgentEvent | Problem


class Decision(Struct):
    kind: str
    reason: str
    count: int | None = None


class LoggedDecision(Struct):
    """What the agent said it did for one call: from the assistant's diagnostic, else a matched log line."""

    kind: str
    reason: str
    count: int | None
    payload_bytes: int | None = None
    collapsed_directives: int | None = None
    ts_ms: int | None = None
    source: DecisionSource = "diagnostic"


class DiffChange(Struct):
    path: str  # jq-style, e.g. ".content[0].startedAt"
    change: ChangeKind
    volatile: bool
    capture: Any = None
    commit: Any = None


class CommitInfo(Struct):
    outcome: CommitOutcome
    source: CommitSource
    klass: DiffClass | None = None
    diff: list[DiffChange] = field(default_factory=list)
    variant: str | None = None  # which rule judged it: a hash rule (verbatim | timing-stripped | projected) or mux's
    capture_where: Where | None = None  # the recorded last message_update, for lazy re-read
    commit_where: Where | None = None
    #: the outcome under every hash rule (shared between turns, never mutated)
    outcomes: dict[str, CommitOutcome] | None = None
    #: where the diff came from: inferred | unknown | events-<capture kind>
    diff_source: str | None = None
    diff_truncated: int = 0  # changes beyond the diff's bound, not listed
    conflict: str | None = None  # the transcript and the recording disagree: how
    evidence_where: Where | None = None  # the binding marker / invalidation entry that decided it


class Turn(Struct):
    """One assistant message = one provider call. Summaries and pointers only, never message bodies."""

    session: str
    index: int
    entry_id: str | None
    ts: str | None
    ts_ms: int | None
    where: Where  # the assistant entry line, for lazy re-read in the drill-down
    model: str | None = None
    provider: str | None = None
    api: str | None = None
    stop_reason: str | None = None
    logged: LoggedDecision | None = None
    log_line: int | None = None  # index into LogState.continuity of the matched log line
    recomputed: Decision | None = None
    logged_only: bool = False  # the replay cannot know the cause from disk; the logged decision is taken
    agreement: bool | None = None
    disagreement: str | None = None  # the first fact that differs
    #: when the replay disagrees: "logged X; build Y decides Z: the profile or the data is wrong"
    contradiction: str | None = None
    why: str | None = None  # one-line explanation of the recomputed decision
    payload_bytes: int | None = None
    payload_bytes_raw: int | None = None
    payload_history_bytes: int | None = None
    payload_new_bytes: int | None = None
    directives: dict[str, dict[str, int]] | None = None
    tokens: dict[str, int] | None = None
    commit: CommitInfo | None = None
    fingerprints: dict[str, str] | None = None
    avoidable: bool | None = None
    payload_bytes_if_stable: int | None = None
    #: the decision a build with a stable fingerprint would have taken (senpi's replay)
    counterfactual: Decision | None = None
    #: how the prompt was serialized, when the payload analysis knows: the whole history, or what was new
    serializer: Serializer | None = None
    #: the figures a prompt-cache verdict rests on (`core.kernel.cache_verdict`), for agents judged by the cache
    cache: dict[str, Any] | None = None
    #: the session this call was copied from (a branched or resumed session file repeats its parent's calls);
    #: a copy is not a call of this session (it counts once, in the session that made it)
    copied_from: str | None = None
    #: the conversation the call belongs to: "main", or a sub-agent's ("agent:<id>" for Claude Code); a thread
    #: is judged against its own previous call
    thread: str = "main"
    #: what the call's own agent knows of it beyond these fields: that agent's typed record (its `turn_extras`
    #: put the parts a report shows into `turns[]`)
    facts: Any = None

    @property
    def kind(self) -> str | None:
        """The call's kind: what the agent logged (or its cache/structure verdict), else the replay's, else
        `aborted` for a call with no usage at all. None only for a call with usage that nothing judged."""
        if self.logged is not None:
            return self.logged.kind
        if self.recomputed is not None:
            return self.recomputed.kind
        return ABORTED if self.no_usage else None

    @property
    def reason(self) -> str | None:
        if self.logged is not None:
            return self.logged.reason
        if self.recomputed is not None:
            return self.recomputed.reason
        return "no_usage" if self.no_usage else None

    @property
    def evidence(self) -> str | None:
        """What the kind rests on (one of `EVIDENCE`)."""
        if self.logged is not None:
            return self.logged.source
        if self.recomputed is not None:
            return "replay"
        return "transcript" if self.no_usage else None

    @property
    def no_usage(self) -> bool:
        """No token figure at all, or only zeros: the provider reported nothing for this call."""
        return not self.tokens or not any(self.tokens.values())

    @property
    def rewritten(self) -> bool:
        return self.commit is not None and self.commit.outcome == "rewritten"
