"""senpi's continuity decision, pure: the registry a call sees, and what the call decides and logs.

senpi keeps, per session, a registry entry (senpi-formats §4.1): the hashes of the messages the SDK
lineage holds (`sentCount`, `sentHashes`), the assistant boundaries (`assistantUuidByIndex`, keyed by each
call's len(H)), and a pending fork (`assistant_rewritten` from a rewritten commit, `compaction` from an
accepted compaction). Each call decides bootstrap / delta / fork / flatten from them (§4.3) and logs
kind / reason / count (§2.6). Everything the decision needs is on disk except a few inputs (idle expiry,
account / model / options fingerprints, restarts, terminal failures): for those the logged decision is
taken as it is (`logged_only`), and the registry is re-synchronized from what was logged. Nothing is guessed.

The registry is an immutable record, `H` a persistent hash chain (`core.kernel.hashing`), the boundaries a
persistent list: `step(reg, facts, profile)` is a pure function, so the replay (`replay`) can keep the state
before every call (a few pointers) and re-run from any turn.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.agents.senpi.profiles import FIRST_TURN_MAX_ONE, TERMINAL_REASONS, BuildProfile
from core.kernel.hashing import HashChain, chain_prefix_len
from core.model import Decision, LoggedDecision

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
            result = StepResult(
                Decision(logged.kind, logged.reason, logged.count),
                frm,
                f"logged-only: {cause}",
                logged_only=True,
                cause=cause,
            )
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
