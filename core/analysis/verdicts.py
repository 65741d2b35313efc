"""Replay senpi's continuity decision over a transcript: what it should have logged, and what a stable
fingerprint would have logged instead.

senpi keeps, per session, a registry entry (senpi-formats §4.1): the hashes of the messages the SDK
lineage holds (`sentCount`, `sentHashes`), the assistant boundaries (`assistantUuidByIndex`, keyed by each
call's len(H)), and a pending fork (`assistant_rewritten` from a rewritten commit, `compaction` from an
accepted compaction). Each call decides bootstrap / delta / fork / flatten from them (§4.3) and logs
kind / reason / count (§2.6). Everything the decision needs is on disk except a few inputs (idle expiry,
account / model / options fingerprints, restarts, terminal failures): for those the logged decision is
taken as it is, the turn is marked `logged_only`, and the replay re-synchronizes its registry from what was
logged. Nothing is guessed.

Per turn this fills `recomputed`, `agreement`, `disagreement` (the first fact that differs), `why`,
`logged_only`, `counterfactual` (the same replay where a commit that differs only in volatile fields counts
as clean) and `avoidable`. Per session: `session.extra["verdicts"]` (agreement rate, disagreements),
`session.extra["counterfactual"]` (re-sends logged / avoidable, re-sent messages) and
`session.extra["sidecar_verdict"]` (would a restart reattach or flatten, and why).

Incremental: the registry is an immutable record, `H` a persistent hash chain, the boundaries a persistent
list; the state before every call is kept (a few pointers), so a late fact (an event recording read after
the transcript, a profile that changed with new evidence) re-runs the replay from the turn it affects only.
The registry is chronological (process memory), the hash chain follows the active branch: navigating the
tree changes H but not what the registry remembers, exactly as in senpi.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from core.analysis.commit import CommitAnalyzer
from core.analysis.context import ProviderContext, is_transmitted
from core.analysis.fingerprint import (
    FINGERPRINT_KEYS,
    FrozenChain,
    HashChain,
    chain_digest,
    chain_length,
    chain_prefix_len,
    freeze,
    sent_message_hash,
)
from core.analysis.pipeline import register_record_handler, register_session_analyzer
from core.analysis.profile import (
    API_ID,
    BINDING_TYPE,
    FIRST_TURN_MAX_ONE,
    TERMINAL_REASONS,
    BuildProfile,
    profile_of,
    tracker_of,
)
from core.model import (
    RESEND_KINDS,
    CloseLine,
    ContinuityLine,
    Decision,
    LoggedDecision,
    Sidecar,
    TranscriptEntry,
    Turn,
)
from core.timeutil import any_ms, parse_iso_ms

if TYPE_CHECKING:
    from core.state import SessionState, State

IDLE_TTL_MS = 30 * 60_000
SIDECAR_SUFFIX = ".claude-sdk-oauth-binding.json"
MAX_LISTED = 200  # disagreements / avoidable turns listed per session
SIDECAR_EAGER_TAIL = 512  # re-judge the sidecar on every entry while fewer messages follow its prefix

PENDING_REASON = {"assistant_rewritten": "assistant_rewritten", "compaction": "tainted_compaction"}
INVALIDATION_CAUSE = {"compaction": "tainted_compaction", "tree_changed": "branch_diverged", "fork": "tainted_fork"}
#: reasons the replay can derive from the transcript; every other reason is logged-only
REPLAYABLE = frozenset({"prefix_matched", "assistant_rewritten", "tainted_compaction", "history_rolled_back",
                        "sent_stream_diverged", "registry_miss"})  # fmt: skip
DRIFT = frozenset({"account_changed", "model_changed", "options_changed", "system_prompt_changed",
                   "toolset_changed", "credential_refreshed", "bound_account_token_expiring",
                   "cross_root_unsupported"})  # fmt: skip
CLOSES = frozenset({"capacity", "model_selected", "thinking_level_selected", "extensions_removed",
                    "resume_initialization_aborted", "resume_initialization_failed", "session_shutdown"})  # fmt: skip
#: sidecar restore (senpi-formats §4.7): entries allowed after the committed assistant
OLD_TAIL_CUSTOM = frozenset({"senpi.hooks.stop-state", "senpi.hooks.stop-diagnostics", "senpi.hooks.stop-output",
                             "pi-rules.scan", "rule-activation"})  # fmt: skip
NEW_LEDGER = frozenset({"custom", "label", "session_info", "thinking_level_change", "model_change",
                        "model_change_rejected", "configuration_update"})  # fmt: skip
MARKER_DATA = {"schemaVersion": 2, "marker": True}


# --------------------------------------------------------------------- persistent structures


@dataclass(frozen=True, slots=True)
class Bounds:
    """`assistantUuidByIndex` keys as a persistent list, largest first. `UNKNOWN` ends a list whose lower
    keys the replay cannot know (after re-synchronizing from a logged decision)."""

    key: int
    parent: Bounds | None = None


UNKNOWN = Bounds(-1)


def boundary_below(bounds: Bounds | None, n: int) -> int | Bounds | None:
    """senpi's `boundary_below(E, n)`: the largest key k with 1 <= k <= n-1; None if none; UNKNOWN."""
    node = bounds
    while node is not None:
        if node is UNKNOWN:
            return UNKNOWN
        if node.key <= n - 1:
            return node.key if node.key >= 1 else None
        node = node.parent
    return None


def restrict(bounds: Bounds | None, limit: int) -> Bounds | None:
    """Keys <= limit (a forked entry keeps the uuids up to its fork point)."""
    node = bounds
    while node is not None and node is not UNKNOWN and node.key > limit:
        node = node.parent
    return node


def push(bounds: Bounds | None, key: int) -> Bounds:
    return Bounds(key, restrict(bounds, key - 1))


@dataclass(frozen=True, slots=True)
class Registry:
    """What senpi's registry remembers of this session between calls, as far as the replay knows it."""

    known: bool = True  # False: something not on disk happened; the next logged decision re-synchronizes
    unknown_since: str | None = None
    live: bool = False
    sent: HashChain | None = None
    sent_count: int = 0
    bounds: Bounds | None = None
    pending: str | None = None  # assistant_rewritten | compaction
    pending_turn: int | None = None  # the turn whose commit (or the compaction before which) set it
    closed: str | None = None  # a visible event closed the live entry; the next decision depends on hidden inputs
    invalidation: str | None = None  # newest invalidation reason (newer builds re-attribute cold seeds to it)


FRESH = Registry()


@dataclass(frozen=True, slots=True)
class CallFacts:
    """What the replay needs of one provider call, all from disk, no bodies."""

    index: int
    n: int  # len(H)
    chain: HashChain | None  # H
    assistant_before: bool  # an assistant message is already in the context (newer first-turn rule)
    events: tuple[str, ...]  # what happened since the previous call: compaction, closes, invalidations
    prev_turn: int | None  # the previous call of this lane (its commit may set a pending fork)
    start_ms: int | None
    stop_reason: str | None
    logged: LoggedDecision | None


@dataclass(slots=True)
class StepResult:
    decision: Decision | None
    frm: int | None  # the decision's start index (None when unknown)
    why: str
    logged_only: bool = False
    cause: str = ""  # short cause, e.g. "pending fork from turn 3 (assistant_rewritten)"
    pending_turn: int | None = None


# --------------------------------------------------------------------- the decision


def _first_turn(profile: BuildProfile, f: CallFacts) -> bool:
    if profile.first_turn == FIRST_TURN_MAX_ONE:
        return f.n <= 1
    return not f.assistant_before


def _fork_or_flatten(reg: Registry, n: int, reason: str, f: CallFacts, cause: str) -> StepResult:
    b = boundary_below(reg.bounds, n)
    if b is UNKNOWN:
        return StepResult(None, None, f"{cause}; the boundary below {n} is not known to the replay", cause=cause)
    if b is None:
        why = f"{cause}; no assistant boundary below {n} -> flatten, all {f.n} messages re-sent"
        return StepResult(Decision("flatten", reason, f.n), 0, why, cause=cause)
    assert isinstance(b, int)
    why = f"{cause}; fork at boundary {b} -> {f.n - b} message(s) re-sent from there"
    return StepResult(Decision("fork", reason, f.n - b), b, why, cause=cause)


def decide(reg: Registry, f: CallFacts, profile: BuildProfile) -> StepResult:
    """senpi's `decideNativeContinuity` + observation mapping for the inputs visible on disk."""
    if not reg.live:
        reason = "registry_miss"
        if profile.invalidation_cause and reg.invalidation:
            reason = INVALIDATION_CAUSE.get(reg.invalidation, reg.invalidation)
        first = _first_turn(profile, f)
        if first and reason == "registry_miss":
            why = f"first call: no live entry, {f.n} transmitted message(s)"
            return StepResult(Decision("bootstrap", reason, f.n), 0, why, cause="first call")
        rule = "at most one message" if profile.first_turn == FIRST_TURN_MAX_ONE else "no assistant in the context"
        why = f"cold seed with {f.n} transmitted message(s)"
        if not first:
            why += f": not a first turn under this build's rule ({rule}), so flatten, not bootstrap"
        return StepResult(Decision("flatten", reason, f.n), 0, why, cause="cold seed")
    if reg.pending is not None:
        origin = f"turn {reg.pending_turn}" if reg.pending_turn is not None else "an earlier turn"
        reason = PENDING_REASON.get(reg.pending, "other")
        cause = f"pending fork from {origin} ({reg.pending})"
        if reg.pending == "compaction":
            cause = f"compaction accepted before this call ({reason})"
            if profile.pending_compaction == "flatten":
                return StepResult(Decision("flatten", reason, f.n), 0, f"{cause}; this build flattens", cause=cause)
        return _fork_or_flatten(reg, reg.sent_count, reason, f, cause)
    s = chain_prefix_len(reg.sent, f.chain)
    if s < reg.sent_count:
        if f.n < reg.sent_count and s == f.n:
            cause = f"history rolled back: {f.n} message(s) now, {reg.sent_count} sent"
            return _fork_or_flatten(reg, f.n, "history_rolled_back", f, cause)
        cause = f"sent messages diverged at message {s + 1} of {reg.sent_count}"
        return _fork_or_flatten(reg, s + 1, "sent_stream_diverged", f, cause)
    new = f.n - reg.sent_count
    why = f"delta: live entry, {reg.sent_count} sent message(s) still a prefix, {new} new"
    return StepResult(Decision("delta", "prefix_matched", new), reg.sent_count, why, cause="prefix intact")


def _logged_only_cause(logged: LoggedDecision, reg: Registry, replay: StepResult | None) -> str | None:
    """Why the replay cannot know this call's decision from disk, or None when it can."""
    kind, reason = logged.kind, logged.reason
    if kind == "disabled":
        return "non-resident call (resumeMode off or no session id): not visible on disk"
    if kind == "failed" or (kind == "flatten" and logged.count is None and reason in TERMINAL_REASONS):
        return "terminal failure: every attempt failed"
    if reason == "idle_ttl":
        return "idle expiry (30 min): whether the reaper or the next call closed the entry is not on disk"
    if reason in DRIFT:
        return f"{reason}: the account / model / options fingerprint is not on disk"
    if reason in CLOSES:
        return f"a close of the live entry ({reason}) re-attributed to this call"
    if reason not in REPLAYABLE:
        return f"{reason}: a cause the transcript does not record"
    if reg.closed is not None:
        return f"after {reg.closed} the decision depends on the binding and fingerprints, not on disk"
    if not reg.known:
        return f"the replay lost track of the registry ({reg.unknown_since})"
    if reason == "registry_miss":
        first_seed = replay is not None and replay.decision is not None and replay.decision.reason == "registry_miss"
        if kind == "fork":
            return "reattach from a binding (a restart with a sidecar, or after a close): not visible on disk"
        if not first_seed:
            return "cold seed without a registry entry (restart without a usable sidecar, or eviction)"
    if replay is None or replay.decision is None:
        return replay.why if replay is not None else "not replayable"
    return None


def _sync(reg: Registry, f: CallFacts, kind: str, count: int | None, frm: int | None, reason: str) -> Registry:
    """The registry after this call, given the decision actually taken."""
    if f.stop_reason in ("error", "aborted"):
        return replace(reg, known=False, unknown_since=f"turn {f.index} ended with {f.stop_reason}", closed=None)
    if kind == "disabled":
        return reg
    if kind == "failed" or count is None:
        return replace(reg, known=False, unknown_since=f"turn {f.index} failed ({reason})", closed=None)
    base = Registry(live=True, sent=f.chain, sent_count=f.n, invalidation=None)
    if kind in ("bootstrap", "flatten"):
        return replace(base, bounds=Bounds(f.n))
    if frm is None:
        frm = f.n - count
    if kind == "fork":
        if reason != "registry_miss" and reg.known and reg.live:
            bounds = restrict(reg.bounds, frm)  # live entry or in-memory binding: its boundaries up to `from`
        else:
            bounds = Bounds(frm, UNKNOWN) if frm >= 1 else UNKNOWN  # a (possibly restored) binding: only `from`
        return replace(base, bounds=push(bounds, f.n))
    # delta
    bounds = reg.bounds if reg.known and reg.live else (Bounds(frm, UNKNOWN) if frm >= 1 else UNKNOWN)
    return replace(base, bounds=push(bounds, f.n))


def _before_call(reg: Registry, f: CallFacts, prev_rewritten: bool) -> Registry:
    """Apply what happened between the previous call and this one: the previous commit, then later events."""
    if prev_rewritten and reg.live and reg.known:
        reg = replace(reg, pending="assistant_rewritten", pending_turn=f.prev_turn)
    for event in f.events:
        name, _, arg = event.partition(":")
        if name == "compaction":
            if reg.live:
                reg = replace(reg, pending="compaction", pending_turn=None)
            reg = replace(reg, invalidation="compaction")
        elif name == "invalidation":
            reg = replace(reg, invalidation=arg)
            if arg in ("model_selected", "extensions_removed", "fork") and reg.live:
                reg = replace(reg, closed=f"invalidation {arg}")
        elif name in ("thinking_level_change", "model_change") and reg.live:
            reg = replace(reg, closed=f"a {name.replace('_', ' ')} {arg}".rstrip())
        elif name == "idle" and reg.live:
            reg = replace(reg, closed=f"{int(arg) // 60_000} min idle")
    return reg


def step(reg: Registry, f: CallFacts, profile: BuildProfile, prev_rewritten: bool) -> tuple[StepResult, Registry]:
    """One call: its decision (replayed, or logged-only) and the registry after it."""
    reg = _before_call(reg, f, prev_rewritten)
    replay = decide(reg, f, profile) if reg.known and reg.closed is None else None
    logged = f.logged
    if logged is not None:
        cause = _logged_only_cause(logged, reg, replay)
        if cause is not None:
            frm = (
                None if logged.count is None else (0 if logged.kind in ("bootstrap", "flatten") else f.n - logged.count)
            )
            result = StepResult(Decision(logged.kind, logged.reason, logged.count), frm,
                                f"logged-only: {cause}", logged_only=True, cause=cause)  # fmt: skip
            return result, _sync(reg, f, logged.kind, logged.count, frm, logged.reason)
    if replay is None:
        why = reg.unknown_since or reg.closed or "not replayable"
        return StepResult(None, None, f"not replayable and nothing logged: {why}"), _sync(
            reg, f, "failed", None, None, "unknown"
        )
    replay.pending_turn = reg.pending_turn
    if logged is not None:
        # continue from what really happened, so one disagreement does not cascade
        frm = (
            0 if logged.kind in ("bootstrap", "flatten") else (f.n - logged.count if logged.count is not None else None)
        )
        return replay, _sync(reg, f, logged.kind, logged.count, frm, logged.reason)
    d = replay.decision
    assert d is not None
    return replay, _sync(reg, f, d.kind, d.count, replay.frm, d.reason)


def first_difference(logged: LoggedDecision, replay: Decision) -> str | None:
    if logged.kind != replay.kind:
        return f"kind: logged {logged.kind}, replay {replay.kind}"
    if logged.reason != replay.reason:
        return f"reason: logged {logged.reason}, replay {replay.reason}"
    if logged.count != replay.count:
        return f"count: logged {logged.count}, replay {replay.count}"
    return None


# --------------------------------------------------------------------- per-turn and per-session results


@dataclass(slots=True)
class TurnResult:
    """A turn's contribution to the session summaries (kept so a re-run can subtract it)."""

    agree: bool | None = None
    logged_only: bool = False
    resend: bool = False
    avoidable: bool = False
    resent_logged: int = 0
    resent_avoidable: int = 0
    disagreement: str | None = None


@dataclass
class Totals:
    turns: int = 0
    replayed: int = 0
    agree: int = 0
    disagree: int = 0
    logged_only: int = 0
    resends: int = 0
    avoidable: int = 0
    resent_logged: int = 0
    resent_avoidable: int = 0

    def add(self, r: TurnResult, sign: int) -> None:
        self.turns += sign
        if r.agree is not None:
            self.replayed += sign
            if r.agree:
                self.agree += sign
            else:
                self.disagree += sign
        self.logged_only += sign * r.logged_only
        self.resends += sign * r.resend
        self.avoidable += sign * r.avoidable
        self.resent_logged += sign * r.resent_logged
        self.resent_avoidable += sign * r.resent_avoidable


@dataclass(slots=True)
class BranchMark:
    """Branch-dependent state after one entry of the active branch (pointers only)."""

    chain: HashChain | FrozenChain | None  # frozen once the session is parked (`VerdictReplay.park`)
    assistant: bool  # an assistant message is in the context
    walk: HashChain | FrozenChain | None  # senpi's branch walk: message entries only (the OLD sidecar's hashes)
    compacted: bool
    binding: tuple[str, bool, str | None] | None  # (entry id, is the exact marker, invalidation reason)
    after_binding: AfterBinding | None
    binding_chain: HashChain | FrozenChain | None  # H when the newest binding entry was written
    binding_walk: HashChain | FrozenChain | None
    env: tuple[Any, ...] | None = None  # an environment-context message waiting to fold into the next user
    words: tuple[tuple[str, str], ...] = ()  # ask-user words of the current run of tool results


ENV_CONTEXT_TYPE = "environment-context"
_ENV_OPEN, _ENV_CLOSE = "<environment_context>", "</environment_context>"


def _is_env_message(msg: dict[str, Any]) -> bool:
    """A converted environment-context message (recognised by its text when the entry type is gone)."""
    content = msg.get("content")
    if msg.get("role") != "user" or not isinstance(content, list) or len(content) != 1:
        return False
    block = content[0]
    text = block.get("text") if isinstance(block, dict) else None
    return isinstance(text, str) and text.startswith(_ENV_OPEN) and text.rstrip().endswith(_ENV_CLOSE)


def _user_words(msg: dict[str, Any]) -> list[tuple[str, str]]:
    """`details.userWords` of a tool result: the ask-user words newer builds turn into a user message."""
    details = msg.get("details")
    words = details.get("userWords") if isinstance(details, dict) else None
    items = words if isinstance(words, list) else [words] if isinstance(words, dict) else []
    out = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            out.append((str(item.get("label", "")), item["text"]))
    return out


def _fold(
    chain: HashChain | None,
    assistant: bool,
    env: tuple[Any, ...] | None,
    words: tuple[tuple[str, str], ...],
    added: list[dict[str, Any]],
    entry_is_env: bool,
    entry_is_call: bool,
    hasher: Callable[[dict[str, Any]], str] = sent_message_hash,
) -> tuple[HashChain | None, bool, tuple[Any, ...] | None, tuple[tuple[str, str], ...]]:
    """Append converted messages to H with newer builds' conversion rules (senpi-newer §5.2):

    * an environment-context message directly followed by a user message becomes that user's leading
      text block(s); otherwise it stays a user message of its own;
    * after a run of tool results carrying ask-user words, one synthesized user message
      (`[<label>]` then the words, per word) follows the run;
    * errored / aborted assistants are dropped from the context, so they do not count as "an assistant in
      the context" for the first-turn rule.
    Older builds have neither message, so the rules are inert for them.
    """

    def flush_env(chain: HashChain | None) -> HashChain | None:
        if env is None:
            return chain
        return HashChain(chain, sent_message_hash({"role": "user", "content": list(env)}))

    def flush_words(chain: HashChain | None) -> HashChain | None:
        if not words:
            return chain
        blocks: list[dict[str, str]] = []
        for label, text in words:
            blocks += [{"type": "text", "text": f"[{label}]"}, {"type": "text", "text": text}]
        return HashChain(chain, sent_message_hash({"role": "user", "content": blocks}))

    for msg in added:
        role = msg.get("role")
        if role != "toolResult" and words:
            chain, words = flush_words(chain), ()
        if (entry_is_env or _is_env_message(msg)) and isinstance(msg.get("content"), list):
            chain = flush_env(chain)
            env = tuple(msg["content"])
            continue
        if env is not None:
            content = msg.get("content")
            if role == "user" and not entry_is_env:
                blocks = list(content) if isinstance(content, list) else [{"type": "text", "text": content}]
                msg = {**msg, "content": list(env) + blocks}
            else:
                chain = flush_env(chain)
            env = None
        if is_transmitted(msg):
            chain = HashChain(chain, hasher(msg))
            if role == "toolResult":
                words = words + tuple(_user_words(msg))
        elif role == "assistant" and msg.get("stopReason") not in ("error", "aborted"):
            assistant = True
    if entry_is_call:
        chain, words = flush_words(chain), ()
        chain, env = flush_env(chain), None
    return chain, assistant, env, words


def _discard(items: list[int], value: int) -> None:
    """Remove `value` from a sorted list if present (O(log n) to find it)."""
    i = bisect.bisect_left(items, value)
    if i < len(items) and items[i] == value:
        del items[i]


class VerdictReplay:
    """Per-session replay of the continuity decision (see the module docstring)."""

    def __init__(self, session: SessionState) -> None:
        self.session = session
        self.marks: list[BranchMark] = []
        self.calls: list[CallFacts | None] = []
        self.before: list[tuple[Registry, Registry]] = []
        self.results: list[TurnResult | None] = []
        self.reg = FRESH
        self.cf = FRESH
        self.totals = Totals()
        self.disagreements: dict[int, str] = {}
        self._disagreeing: list[int] = []  # sorted keys of `disagreements`: summaries list the first ones
        self.avoidable_turns: list[int] = []  # sorted
        self._events: list[str] = []
        self._last_line = 0
        self._prev_call: int | None = None
        self._prev_end_ms: int | None = None
        self._profile_version = -1

    # ----------------------------------------------------------------- branch state
    def _mark(self) -> BranchMark:
        if self.marks:
            return self.marks[-1]
        return BranchMark(None, False, None, False, None, None, None, None)

    def on_branch(self, session: SessionState, keep: int) -> None:
        del self.marks[keep:]

    def park(self, session: SessionState) -> None:
        """The session is done (`State.park`): keep the summaries already written (`session.extra`, the turns)
        and the newest branch mark (a restart binding read later is judged against it); drop the other marks
        (only a branch switch reads them) and the per-call facts, registries and results only a re-run needs
        (a parked session never re-runs: an event recording for one of its turns rebuilds it). The hash lists
        left never grow again: they are kept as blobs of raw digests (`freeze`)."""
        last = self.marks[-1] if self.marks else None
        self.marks = []
        if last is not None:
            frozen = {name: freeze(getattr(last, name)) for name in ("chain", "walk", "binding_chain", "binding_walk")}
            self.marks = [replace(last, **frozen)]
        self.calls = []
        self.before = []
        self.results = []
        self._events = []
        self.reg = self.cf = FRESH  # the registries after the last call: only a re-run reads them

    def on_entry(self, session: SessionState, entry: TranscriptEntry, turn: Turn | None) -> None:
        replayed = entry.where.line <= self._last_line
        if not replayed:
            self._last_line = entry.where.line
        prev = self._mark()
        mark = self._advance(prev, entry)
        if not replayed:
            self._chronological(entry, turn, prev, mark)
        self.marks.append(mark)
        if not replayed and session.sidecar is not None:
            # O(messages since the anchored prefix) each: on every entry while that tail is short, else per call
            count = session.sidecar.get("sentCount")
            tail = chain_length(mark.chain) - count if isinstance(count, int) else 0
            if turn is not None or entry.type == "custom" or tail < SIDECAR_EAGER_TAIL:
                self.update_sidecar_verdict()

    def _advance(self, prev: BranchMark, entry: TranscriptEntry) -> BranchMark:
        memo: dict[int, str] = {}

        def hasher(msg: dict[str, Any]) -> str:
            """Each message is hashed once even when H and the branch walk both need it."""
            value = memo.get(id(msg))
            if value is None:
                value = memo[id(msg)] = sent_message_hash(msg)
            return value

        ctx = self.session.analyzer("context")
        chain, assistant, env, words = prev.chain, prev.assistant, prev.env, prev.words
        if isinstance(ctx, ProviderContext):
            if ctx.reset is not None:
                chain, assistant, env, words = None, False, None, ()
                added = ctx.reset
            else:
                added = ctx.added
            is_env = entry.type == "custom_message" and entry.obj.get("customType") == ENV_CONTEXT_TYPE
            is_call = entry.type == "message" and entry.role == "assistant"
            chain, assistant, env, words = _fold(chain, assistant, env, words, added, is_env, is_call, hasher)
        walk, compacted = prev.walk, prev.compacted
        if entry.type == "compaction":
            compacted, walk = True, None
        elif entry.type == "message" and not compacted:
            msg = entry.message
            if msg is not None and msg.get("role") in ("user", "toolResult") and is_transmitted(msg):
                walk = HashChain(walk, hasher(msg))
        binding, after, b_chain, b_walk = prev.binding, prev.after_binding, prev.binding_chain, prev.binding_walk
        if entry.type == "custom" and entry.obj.get("customType") == BINDING_TYPE:
            data = entry.obj.get("data")
            reason = data.get("reason") if isinstance(data, dict) and isinstance(data.get("reason"), str) else None
            binding = (entry.id or "", data == MARKER_DATA, reason)
            after, b_chain, b_walk = None, chain, walk
        elif binding is not None:
            after = _after_binding(after, entry, self.session)
        return BranchMark(chain, assistant, walk, compacted, binding, after, b_chain, b_walk, env, words)

    # ----------------------------------------------------------------- chronological state
    def _chronological(self, entry: TranscriptEntry, turn: Turn | None, prev: BranchMark, mark: BranchMark) -> None:
        etype = entry.type
        if etype == "compaction":
            self._events.append("compaction")
        elif etype == "custom" and entry.obj.get("customType") == BINDING_TYPE:
            data = entry.obj.get("data")
            if isinstance(data, dict) and data.get("invalidated"):
                reason = data.get("reason")
                if reason not in ("assistant_rewritten", "compaction"):  # the commit / compaction entry say these
                    self._events.append(f"invalidation:{reason}")
        elif etype in ("thinking_level_change", "model_change") and self._prev_call is not None:
            arg = entry.obj.get("thinkingLevel") if etype == "thinking_level_change" else entry.obj.get("modelId")
            self._events.append(f"{etype}:{arg}" if isinstance(arg, str) else etype)
        if turn is None or entry.message is None:
            return
        msg = entry.message
        while len(self.calls) < turn.index:
            self.calls.append(None)
            self.before.append((self.reg, self.cf))
            self.results.append(None)
        if msg.get("api") != API_ID:
            self._store(turn.index, None)  # another lane or agent: its own analysis explains it
            return
        start = any_ms(msg.get("timestamp"))
        events = list(self._events)
        if start is not None and self._prev_end_ms is not None and start - self._prev_end_ms >= IDLE_TTL_MS:
            events.append(f"idle:{start - self._prev_end_ms}")
        facts = CallFacts(
            index=turn.index,
            n=chain_length(mark.chain),
            chain=mark.chain,
            assistant_before=prev.assistant,
            events=tuple(events),
            prev_turn=self._prev_call,
            start_ms=start,
            stop_reason=msg.get("stopReason") if isinstance(msg.get("stopReason"), str) else None,
            logged=turn.logged,
        )
        self._events.clear()
        self._prev_call = turn.index
        self._prev_end_ms = parse_iso_ms(entry.timestamp) or start
        self._store(turn.index, facts)
        if self._profile_moved():
            self.rerun(0)
        else:
            self.rerun(turn.index)

    def _profile_moved(self) -> bool:
        """True (after re-judging every commit) when the build profile changed since the last replay."""
        tracker = tracker_of(self.session)
        if tracker is None:
            return False
        _ = tracker.profile  # re-detects if the evidence changed
        if tracker.version == self._profile_version:
            return False
        self._profile_version = tracker.version
        commit = self.session.analyzer("commit")
        if isinstance(commit, CommitAnalyzer):
            commit.refresh_profile(tracker.version)
        return True

    def _store(self, index: int, facts: CallFacts | None) -> None:
        if index < len(self.calls):
            self.calls[index] = facts
        else:
            self.calls.append(facts)
            self.before.append((self.reg, self.cf))
            self.results.append(None)

    # ----------------------------------------------------------------- replay
    def commit_changed(self, index: int, *, outcome_changed: bool) -> None:
        """A turn's commit outcome or class changed (a recording arrived): re-run the calls after it."""
        if self.session.parked is not None:
            return  # not reached: a recording for a parked session rebuilds it first (`RecordingMatcher`)
        if self._profile_moved():
            self.rerun(0)
            return
        nxt = next((i for i in range(index + 1, len(self.calls)) if self.calls[i] is not None), None)
        if nxt is not None:
            # same outcome and class: only the next call's explanation changes (O(1), not O(turns))
            self.rerun(nxt, only=not outcome_changed)

    def rerun(self, start: int, *, only: bool = False) -> None:
        """Replay every call from turn `start` on (just that call when `only`), from the registry saved before it."""
        if start >= len(self.calls):
            return
        reg, cf = self.before[start]
        profile = profile_of(self.session)
        commit = self.session.analyzer("commit")
        judged = commit if isinstance(commit, CommitAnalyzer) else None
        for index in range(start, start + 1 if only else len(self.calls)):
            self.before[index] = (reg, cf)
            facts = self.calls[index]
            if facts is None:
                continue
            prev = facts.prev_turn
            outcome = judged.outcome(prev) if judged is not None and prev is not None else None
            volatile = judged.volatile_only(prev) if judged is not None and prev is not None else False
            result, reg = step(reg, facts, profile, outcome == "rewritten")
            cf_result, cf = step(cf, facts, profile, outcome == "rewritten" and not volatile)
            self._record(facts, result, cf_result, volatile)
        if not only:
            self.reg, self.cf = reg, cf
        self._summarize()

    def _record(self, f: CallFacts, result: StepResult, cf_result: StepResult, prev_volatile: bool) -> None:
        turn = self.session.turns[f.index]
        old = self.results[f.index]
        if old is not None:
            self.totals.add(old, -1)
        r = TurnResult(logged_only=result.logged_only)
        turn.recomputed = result.decision
        turn.logged_only = result.logged_only
        turn.counterfactual = cf_result.decision
        logged = f.logged
        turn.agreement, turn.disagreement = None, None
        if self.disagreements.pop(f.index, None) is not None:
            _discard(self._disagreeing, f.index)
        if logged is not None and result.decision is not None and not result.logged_only:
            diff = first_difference(logged, result.decision)
            turn.agreement = diff is None
            turn.disagreement = diff
            r.agree = diff is None
            if diff is not None:
                r.disagreement = diff
                self.disagreements[f.index] = diff
                bisect.insort(self._disagreeing, f.index)
        actual = logged if logged is not None else result.decision
        turn.avoidable = None
        _discard(self.avoidable_turns, f.index)
        why = result.why
        if actual is not None and actual.kind in RESEND_KINDS:
            r.resend = True
            new = f.n - self._sent_before(f.index)
            r.resent_logged = max(0, (actual.count if actual.count is not None else f.n) - max(new, 0))
            cf = cf_result.decision
            avoidable = cf is not None and cf.kind not in RESEND_KINDS
            turn.avoidable = avoidable
            if avoidable:
                r.avoidable = True
                bisect.insort(self.avoidable_turns, f.index)
                assert cf is not None
                r.resent_avoidable = max(0, (actual.count or 0) - (cf.count or 0))
        commit = self.session.analyzer("commit")
        if result.pending_turn is not None and not result.logged_only and result.cause.startswith("pending fork"):
            explain = commit.explain(result.pending_turn) if isinstance(commit, CommitAnalyzer) else ""
            d = result.decision
            step_note = ""
            if d is not None and d.kind == "flatten":
                step_note = ", no boundary below it -> flatten"
            elif d is not None and d.kind == "fork":
                step_note = f" -> fork at boundary {result.frm}"
            verdict = ": avoidable" if turn.avoidable else (": not avoidable" if turn.avoidable is False else "")
            why = f"{result.cause}{step_note}; {explain}{verdict}"
        elif turn.avoidable:
            why += "; avoidable with a stable fingerprint"
        turn.why = why
        self.results[f.index] = r
        self.totals.add(r, 1)

    def _sent_before(self, index: int) -> int:
        reg, _ = self.before[index]
        return reg.sent_count if reg.known and reg.live else 0

    def _summarize(self) -> None:
        t = self.totals
        profile = profile_of(self.session)
        tracker = tracker_of(self.session)
        rate = round(t.agree / t.replayed, 4) if t.replayed else None
        self.session.extra["verdicts"] = {
            "profile": profile.id,
            "profile_why": tracker.why if tracker is not None else "",
            "turns": t.turns,
            "replayed": t.replayed,
            "agree": t.agree,
            "disagree": t.disagree,
            "logged_only": t.logged_only,
            "agreement_rate": rate,
            "disagreements": [{"index": i, "fact": self.disagreements[i]} for i in self._disagreeing[:MAX_LISTED]],
        }
        self.session.extra["counterfactual"] = {
            "resends_logged": t.resends,
            "resends_avoidable": t.avoidable,
            "messages_resent_logged": t.resent_logged,
            "messages_resent_avoidable": t.resent_avoidable,
            "avoidable_turns": self.avoidable_turns[:MAX_LISTED],
        }

    # ----------------------------------------------------------------- sidecar
    def update_sidecar_verdict(self) -> None:
        data = self.session.sidecar
        if data is None:
            return
        self.session.extra["sidecar_verdict"] = sidecar_verdict(data, self._mark(), profile_of(self.session), self)


@dataclass(frozen=True, slots=True)
class AfterBinding:
    """What follows the newest binding entry on the branch, folded entry by entry (for the sidecar restore)."""

    next_entry: dict[str, Any] | None = None  # the very next entry (old rule: must be the assistant)
    first_message: dict[str, Any] | None = None  # the first message entry (newer rule: the assistant)
    old_bad: str | None = None  # first entry after the next one that the old restore rejects
    new_bad: str | None = None  # first entry the newer restore rejects (between or after)


def _summary(entry: TranscriptEntry, session: SessionState) -> dict[str, Any]:
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


def _after_binding(after: AfterBinding | None, entry: TranscriptEntry, session: SessionState) -> AfterBinding:
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


def sidecar_verdict(data: dict[str, Any], mark: BranchMark, profile: BuildProfile, replay: VerdictReplay) -> dict:
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
        out.update(would="flatten", kind="flatten", reason="registry_miss", count=n,
                   why="restore rejected (" + "; ".join(problems) + "): the next call after a restart is a cold "
                   f"seed re-sending all {n} messages")  # fmt: skip
        return out
    count = stored_count if isinstance(stored_count, int) else -1
    if count < 0 or n < count:
        out.update(would="flatten", kind="flatten", reason="history_rolled_back", count=n,
                   why=f"the context holds {n} messages, fewer than the {count} the sidecar anchors")  # fmt: skip
        return out
    live_prefix = chain_digest(mark.chain, count)
    if live_prefix == stored_prefix:
        out.update(would="reattach", kind="fork", reason="registry_miss", count=n - count,
                   why=f"the first {count} transmitted messages of the context hash to the stored sentPrefixHash: "
                   f"a restart reattaches and sends {n - count} message(s) plus the new prompt")  # fmt: skip
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


# --------------------------------------------------------------------- records outside one transcript


class SidecarAndLogHandler:
    """Sidecars (restart verdicts) and log lines carrying a session id (build evidence)."""

    handles = (Sidecar, ContinuityLine, CloseLine, TranscriptEntry)

    def __init__(self) -> None:
        self.pending_sidecars: dict[str, Sidecar] = {}
        self._ids: dict[str, SessionState] = {}
        self._indexed = -1

    def _by_id(self, state: State, session_id: str) -> SessionState | None:
        """Session by senpi session id; the index is rebuilt only when sessions were added (O(1) per line)."""
        session = self._ids.get(session_id)
        if session is not None and state.sessions.get(session.key) is not session:
            session = None  # forgotten (truncated, replaced, rebuilt from a parked state): index again
            self._indexed = -1
        if session is None and self._indexed != len(state.sessions):
            self._indexed = len(state.sessions)
            self._ids = {s.session_id: s for s in state.sessions.values()}
            session = self._ids.get(session_id)
        return session

    def on_record(self, state: State, record: Any) -> None:
        if isinstance(record, Sidecar):
            key = record.where.path[: -len(SIDECAR_SUFFIX)] if record.where.path.endswith(SIDECAR_SUFFIX) else None
            session = state.sessions.get(key) if key else None
            sid = record.data.get("sessionId")
            if session is None and isinstance(sid, str):
                session = self._by_id(state, sid)
            if session is None:
                if key:
                    self.pending_sidecars[key] = record
                return
            self._apply(session, record)
        elif isinstance(record, ContinuityLine | CloseLine):
            if record.session_id is None:
                return
            session = self._by_id(state, record.session_id)
            tracker = tracker_of(session) if session is not None else None
            if tracker is not None:
                tracker.log_line_with_session_id()
        elif isinstance(record, TranscriptEntry) and self.pending_sidecars:
            waiting = self.pending_sidecars.pop(record.where.path, None)
            if waiting is not None:
                session = state.sessions.get(record.where.path)
                if session is not None:
                    self._apply(session, waiting)

    @staticmethod
    def _apply(session: SessionState, record: Sidecar) -> None:
        session.sidecar = record.data
        session.sidecar_where = record.where
        replay = session.analyzer("verdicts")
        if isinstance(replay, VerdictReplay):
            replay.update_sidecar_verdict()


def counterfactual_summary(sessions: Any) -> dict[str, Any]:
    """The report's top-level `counterfactual`, summed over sessions (`state.sessions.values()`).

    Bytes come from the payload reconstruction (`turn.payload_bytes`, `turn.payload_bytes_if_stable`);
    they are null when no turn has them.
    """
    out: dict[str, Any] = {"resends_logged": 0, "resends_avoidable": 0, "messages_resent_logged": 0,
                           "messages_resent_avoidable": 0}  # fmt: skip
    bytes_logged = bytes_stable = 0
    have_bytes = False
    for session in sessions:
        summary = session.extra.get("counterfactual") or {}
        for key in out:
            out[key] += int(summary.get(key, 0))
        for turn in session.turns:
            if turn.payload_bytes is None:
                continue
            have_bytes = True
            bytes_logged += turn.payload_bytes
            stable = (
                turn.payload_bytes_if_stable if turn.avoidable and turn.payload_bytes_if_stable is not None else None
            )
            bytes_stable += stable if stable is not None else turn.payload_bytes
    out["bytes_logged"] = bytes_logged if have_bytes else None
    out["bytes_if_stable"] = bytes_stable if have_bytes else None
    return out


def agreement_summary(sessions: Any) -> dict[str, Any]:
    """Agreement over all sessions: replayed turns, agreeing, disagreeing, logged-only, rate."""
    replayed = agree = logged_only = 0
    for session in sessions:
        v = session.extra.get("verdicts") or {}
        replayed += int(v.get("replayed", 0))
        agree += int(v.get("agree", 0))
        logged_only += int(v.get("logged_only", 0))
    return {"replayed": replayed, "agree": agree, "disagree": replayed - agree, "logged_only": logged_only,
            "agreement_rate": round(agree / replayed, 4) if replayed else None}  # fmt: skip


register_session_analyzer("verdicts", VerdictReplay)
register_record_handler(SidecarAndLogHandler)
