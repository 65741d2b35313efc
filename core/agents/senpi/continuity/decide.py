"""senpi's continuity decision, pure: the registry a call sees, and what the call decides and logs.

senpi keeps, per session, a registry entry (senpi-formats §4.1): the hashes of the messages the SDK
lineage holds (`sentCount`, `sentHashes`), the assistant boundaries (`assistantUuidByIndex`, keyed by each
call's len(H)), and a pending fork (`assistant_rewritten` from a rewritten commit, `compaction` from an
accepted compaction). Each call decides bootstrap / delta / fork / flatten from them (§4.3) and logs
kind / reason / count (§2.6). Most of what the decision needs is on disk, and the rest follows from it by the
build's rules:

* a thinking-level switch (`thinking_level_change`) closes the live entry and keeps a binding; what the next
  call decides from it depends on the build (`BuildProfile.thinking_keeps_hashes`, `binding_drift_check`,
  `binding_drift_reattaches`, `binding_fork_newest`): on v2026.8.4-2 the binding's hashes are emptied and
  there is no drift check, so it forks from 0 with `history_rolled_back`; from v2026.8.18-3 it flattens with
  `options_changed`; from 2026.9.7-2 it reattaches with `toolset_changed`;
* the thinking level is part of the fingerprint (`toolsetHash`, §4.8), so a live entry created with another
  level drifts (`options_changed`): before v2026.8.18-3 a resumed entry keeps the binding's identity
  (`resume_current_identity`), so the call after a resume across a switch reattaches again;
* idle expiry follows from the gap between the previous call's end and this call's start against the
  registry's 30-minute idle lifetime; the reaper may have closed the entry (a binding reattaches) or the call
  may find it still live (it reattaches with `idle_ttl`): both are tried, and when they differ the logged
  decision says which one happened.

What stays hidden (the account, the system prompt and tool set, restarts, terminal failures, a model switch
inside the provider) makes the logged decision be taken as it is (`logged_only`, with what the files lack),
and the registry is re-synchronized from what was logged. Nothing is guessed: when the replay knows the
inputs and its build's rules give another decision than the log, that is a contradiction, shown as such.

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
    thinking: str | None = None  # the thinking level the live entry's fingerprint was made with (None: unknown)
    binding: Binding | None = None  # what a visible close kept (no live entry then)
    close_cause: str | None = None  # the pending close cause that close left (senpi re-attributes registry_miss)


@dataclass(frozen=True, slots=True)
class Binding:
    """The in-memory binding senpi keeps when it closes a live entry (senpi-formats §4.5): the sent hashes (None =
    emptied, as v2026.8.4-2's thinking switch keeps them), the count, the boundaries, the thinking level."""

    sent: HashChain | None
    sent_count: int
    bounds: Bounds | None
    thinking: str | None


FRESH = Registry()

#: thinking-level pairs senpi may map to the same reasoning options (the `toolsetHash` input, §4.8): minimal and
#: low share an effort on adaptive-thinking models, high and xhigh a token budget on the others, xhigh and max an
#: effort where the model has no native xhigh. Which applies depends on the model's thinking map, not on disk.
SAME_REASONING_MAYBE = frozenset(
    {frozenset({"minimal", "low"}), frozenset({"high", "xhigh"}), frozenset({"xhigh", "max"})}
)
IDLE_TTL_MS = 30 * 60_000  # the registry's idle lifetime (`SESSION_REGISTRY_IDLE_TTL_MS`)
#: a gap this close to the lifetime is not decided by the files: the entry's last use is the previous call's end
#: to within the milliseconds between its result and its transcript entry, but not to the second
IDLE_MARGIN_MS = 5_000


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
    thinking: str | None = None  # the thinking level in force for this call (the newest `thinking_level_change`)
    gap_ms: int | None = None  # from the previous call's end (its transcript entry) to this call's start


@dataclass(slots=True)
class StepResult:
    decision: Decision | None
    frm: int | None  # the decision's start index (None when unknown)
    why: str
    logged_only: bool = False
    cause: str = ""  # short cause, e.g. "pending fork from turn 3 (assistant_rewritten)"
    pending_turn: int | None = None
    #: the decision passed a drift check whose account / system prompt / tool inputs are not on disk (a logged
    #: drift reason then means one of them changed)
    drift_open: bool = False
    #: the replay went through a rule of this build that only the profile decides (a close kept a binding, an
    #: idle expiry, a thinking-level drift): a logged decision that differs contradicts the profile
    by_rule: bool = False
    note: str = ""  # which of the registries an idle gap allows this call found, and how that is known


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


def _thinking_drift(have: str | None, want: str | None, profile: BuildProfile) -> str | None:
    """The drift reason a thinking-level difference gives (`toolsetHash` holds the reasoning options), `""` when the
    two levels may map to the same options (not on disk), None when there is none or a level is unknown."""
    if have is None or want is None or have == want:
        return None
    if frozenset({have, want}) in SAME_REASONING_MAYBE:
        return ""
    return "options_changed" if "options_changed" in profile.reasons else "toolset_changed"


def _unsure_levels(have: str | None, want: str | None) -> str:
    return (
        f"a thinking level of {have} then {want}: whether the two give the same reasoning options (and so the same "
        "toolsetHash) depends on the model's thinking map, which is not on disk"
    )


_CLOSERS = {"thinking_level_selected": "the thinking-level switch", "idle_ttl": "the idle reaper"}


def _cold_reason(reg: Registry, reason: str) -> str:
    """A cold seed's or a resume's `registry_miss` re-attributed to the pending close cause (§2.6)."""
    return reg.close_cause if reason == "registry_miss" and reg.close_cause else reason


def _from_binding(reg: Registry, f: CallFacts, profile: BuildProfile) -> StepResult:
    """`decideFromBinding` for the in-memory binding a visible close kept (senpi-formats §4.3, newer §6.1)."""
    b = reg.binding
    assert b is not None
    closer = _CLOSERS.get(reg.close_cause or "", f"a close ({reg.close_cause})")
    kept = f"{closer} closed the entry and kept a binding of {b.sent_count} message(s)"
    if b.sent is None and b.sent_count:
        kept += ", its sent hashes emptied (this build)"
    drift = None
    if profile.binding_drift_check:
        drift = _thinking_drift(b.thinking, f.thinking, profile)
        if drift == "":
            return StepResult(None, None, _unsure_levels(b.thinking, f.thinking), cause=kept)
        if drift and not profile.binding_drift_reattaches:
            why = f"{kept}; the thinking level changed ({b.thinking} -> {f.thinking}): {drift} -> flatten"
            return StepResult(Decision("flatten", drift, f.n), 0, why, cause=kept, drift_open=True, by_rule=True)
    s = chain_prefix_len(b.sent, f.chain) if b.sent is not None else 0
    open_ = profile.binding_drift_check
    if s == b.sent_count:
        reason = drift or _cold_reason(reg, "registry_miss")
        why = f"{kept}; its prefix still matches -> reattach, {f.n - b.sent_count} message(s) sent"
        return StepResult(
            Decision("fork", reason, f.n - b.sent_count), b.sent_count, why, cause=kept, drift_open=open_, by_rule=True
        )
    rolled = "history_rolled_back" if s < b.sent_count else "sent_stream_diverged"
    last = b.bounds is not None and b.bounds is not UNKNOWN and b.bounds.key == b.sent_count
    if b.bounds is UNKNOWN:
        return StepResult(None, None, f"{kept}; its boundaries are not known to the replay", cause=kept)
    if profile.binding_fork_newest:
        k = boundary_below(b.bounds, s + 1)
        if k is UNKNOWN:
            return StepResult(None, None, f"{kept}; the boundary below {s + 1} is not known to the replay", cause=kept)
        if k is None:
            reason = rolled if last else _cold_reason(reg, "registry_miss")
            why = f"{kept}; {s} of its messages match and no boundary lies within them -> flatten"
            return StepResult(Decision("flatten", reason, f.n), 0, why, cause=kept, drift_open=open_, by_rule=True)
        assert isinstance(k, int)
        why = f"{kept}; {s} of its messages match -> fork at boundary {k}, {f.n - k} message(s) sent"
        return StepResult(Decision("fork", rolled, f.n - k), k, why, cause=kept, drift_open=open_, by_rule=True)
    if not last:
        why = f"{kept}; {s} of its messages match and it has no last assistant -> flatten"
        reason = _cold_reason(reg, "registry_miss")
        return StepResult(Decision("flatten", reason, f.n), 0, why, cause=kept, drift_open=open_, by_rule=True)
    why = f"{kept}; {s} of its messages match -> fork at its last assistant from {s}, {f.n - s} message(s) sent"
    return StepResult(Decision("fork", rolled, f.n - s), s, why, cause=kept, drift_open=open_, by_rule=True)


def decide(reg: Registry, f: CallFacts, profile: BuildProfile, *, idle: bool = False) -> StepResult:
    """senpi's `decideNativeContinuity` + observation mapping for the inputs visible on disk. `idle`: the live
    entry is past its idle lifetime (`idleExpired`)."""
    if not reg.live:
        if reg.binding is not None:
            return _from_binding(reg, f, profile)
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
    if idle:
        why = f"idle {_minutes(f.gap_ms)} (lifetime 30 min), the live entry still there -> reattach, {new} new"
        return StepResult(Decision("fork", "idle_ttl", new), reg.sent_count, why, cause="idle expiry", by_rule=True)
    drift = _thinking_drift(reg.thinking, f.thinking, profile)
    if drift == "":
        return StepResult(None, None, _unsure_levels(reg.thinking, f.thinking), cause="thinking level")
    if drift:
        cause = f"the live entry was made at thinking level {reg.thinking}, this call runs at {f.thinking}"
        why = f"{cause}: {drift} -> reattach, {new} new"
        return StepResult(Decision("fork", drift, new), reg.sent_count, why, cause=cause, drift_open=True, by_rule=True)
    why = f"delta: live entry, {reg.sent_count} sent message(s) still a prefix, {new} new"
    return StepResult(
        Decision("delta", "prefix_matched", new), reg.sent_count, why, cause="prefix intact", drift_open=True
    )


def _minutes(ms: int | None) -> str:
    if ms is None:
        return "?"
    return f"{ms // 60_000} min {ms % 60_000 // 1000} s"


def _same(logged: LoggedDecision, decision: Decision) -> bool:
    return (logged.kind, logged.reason, logged.count) == (decision.kind, decision.reason, decision.count)


def _logged_only_cause(logged: LoggedDecision, reg: Registry, replay: StepResult | None) -> str | None:
    """Why the replay cannot know this call's decision from disk, or None when it can."""
    kind, reason = logged.kind, logged.reason
    if kind == "disabled":
        return "non-resident call (resumeMode off or no session id): not visible on disk"
    if kind == "failed" or (kind == "flatten" and logged.count is None and reason in TERMINAL_REASONS):
        return "terminal failure: every attempt failed"
    if replay is not None and replay.decision is not None and replay.by_rule:
        # decided by the build's rules from what is on disk: only a hidden drift input can explain a difference
        if _same(logged, replay.decision) or reason not in DRIFT or not replay.drift_open:
            return None
        return f"{reason}: the account / system prompt / tool set in the fingerprint is not on disk"
    if reason == "idle_ttl" and replay is not None:
        return replay.why if replay.decision is None else None  # the gap decides: a logged expiry it denies differs
    if reason in DRIFT and (replay is None or replay.decision is None or replay.drift_open):
        return f"{reason}: the account / system prompt / tool set in the fingerprint is not on disk"
    if not reg.known and kind in ("fork", "flatten") and reason in TERMINAL_REASONS:
        return (
            f"{reason} re-attributed from the close after {reg.unknown_since}: whether that failure closed the entry "
            "and which binding senpi kept (the one before the failed turn, a retry checkpoint, or none) is not on disk"
        )
    if reason in CLOSES and reason != "thinking_level_selected":
        return f"a close of the live entry ({reason}) re-attributed to this call"
    if reason not in REPLAYABLE | DRIFT | {"idle_ttl", "thinking_level_selected"}:
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


def _sync(
    reg: Registry, f: CallFacts, kind: str, count: int | None, frm: int | None, reason: str, profile: BuildProfile
) -> Registry:
    """The registry after this call, given the decision actually taken."""
    if f.stop_reason in ("error", "aborted"):
        return replace(
            reg,
            known=False,
            unknown_since=f"turn {f.index} ended with {f.stop_reason}",
            closed=None,
            binding=None,
            close_cause=None,
        )
    if kind == "disabled":
        return reg
    if kind == "failed" or count is None:
        return replace(
            reg,
            known=False,
            unknown_since=f"turn {f.index} failed ({reason})",
            closed=None,
            binding=None,
            close_cause=None,
        )
    base = Registry(live=True, sent=f.chain, sent_count=f.n, invalidation=None, thinking=f.thinking)
    if kind in ("bootstrap", "flatten"):
        return replace(base, bounds=Bounds(f.n))
    if frm is None:
        frm = f.n - count
    if kind == "fork":
        source = reg.binding
        if source is not None and reg.known:
            # resumed from the binding a visible close kept: its boundaries up to `from`, plus `from` itself
            # (senpi maps the fork point there), and its identity unless this build takes the call's
            bounds = restrict(source.bounds, frm) if source.bounds is not UNKNOWN else UNKNOWN
            if frm >= 1 and bounds is not UNKNOWN and (bounds is None or bounds.key != frm):
                bounds = Bounds(frm, bounds)
            thinking = f.thinking if profile.resume_current_identity else source.thinking
        elif reason != "registry_miss" and reg.known and reg.live:
            bounds = restrict(reg.bounds, frm)  # live entry or in-memory binding: its boundaries up to `from`
            thinking = f.thinking if profile.resume_current_identity else reg.thinking
        else:
            bounds = Bounds(frm, UNKNOWN) if frm >= 1 else UNKNOWN  # a (possibly restored) binding: only `from`
            thinking = f.thinking
        return replace(base, bounds=push(bounds, f.n), thinking=thinking)
    # delta
    bounds = reg.bounds if reg.known and reg.live else (Bounds(frm, UNKNOWN) if frm >= 1 else UNKNOWN)
    thinking = reg.thinking if reg.known and reg.live else f.thinking
    return replace(base, bounds=push(bounds, f.n), thinking=thinking)


def _close_keeping_binding(reg: Registry, profile: BuildProfile, cause: str, *, keep_hashes: bool) -> Registry:
    """senpi closes the live entry and keeps a binding built from it (`keepBindingThenClose`, the idle reaper):
    the entry's pending fork goes with it; the close cause waits for the next observation."""
    binding = Binding(reg.sent if keep_hashes else None, reg.sent_count, reg.bounds, reg.thinking)
    return replace(reg, live=False, binding=binding, close_cause=cause, pending=None, pending_turn=None)


def _before_call(reg: Registry, f: CallFacts, prev_rewritten: bool, profile: BuildProfile) -> Registry:
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
        elif name == "thinking_level_change" and reg.live and reg.known and reg.closed is None:
            keep = profile.thinking_keeps_hashes
            reg = _close_keeping_binding(reg, profile, "thinking_level_selected", keep_hashes=keep)
        elif name in ("thinking_level_change", "model_change") and reg.live:
            reg = replace(reg, closed=f"a {name.replace('_', ' ')} {arg}".rstrip())
    return reg


def _variants(reg: Registry, f: CallFacts, profile: BuildProfile) -> list[tuple[str, Registry, bool]]:
    """The registries this call may have found, as (label, registry, idle expired): one, or for a gap past the
    idle lifetime the reaper's (closed, binding kept) and the live entry's; a gap within the margin adds the
    not-expired one."""
    gap = f.gap_ms
    if gap is None or not reg.live or not reg.known or reg.closed is not None or gap < IDLE_TTL_MS - IDLE_MARGIN_MS:
        return [("", reg, False)]
    reaped = _close_keeping_binding(reg, profile, "idle_ttl", keep_hashes=True)
    out = [("the idle reaper closed the entry", reaped, False), ("the call found the entry live", reg, True)]
    if gap < IDLE_TTL_MS + IDLE_MARGIN_MS:
        out.append(("not yet expired", reg, False))
    return out


def step(reg: Registry, f: CallFacts, profile: BuildProfile, prev_rewritten: bool) -> tuple[StepResult, Registry]:
    """One call: its decision (replayed, or logged-only) and the registry after it."""
    reg = _before_call(reg, f, prev_rewritten, profile)
    logged = f.logged
    replay: StepResult | None = None
    if reg.known and reg.closed is None:
        tried = [(label, r, decide(r, f, profile, idle=idle)) for label, r, idle in _variants(reg, f, profile)]
        label, reg, replay = tried[0]
        decided = {(d.kind, d.reason, d.count) for _, _, x in tried if (d := x.decision) is not None}
        if len(tried) > 1 and (len(decided) > 1 or any(x.decision is None for _, _, x in tried)):
            # the variants differ: the logged decision says which happened, when it is one of them
            match = next(
                (v for v in tried if logged is not None and v[2].decision is not None and _same(logged, v[2].decision)),
                None,
            )
            if match is not None:
                label, reg, replay = match
                replay.note = f" ({label}: the logged decision says so; a gap of {_minutes(f.gap_ms)})"
            else:
                gap = _minutes(f.gap_ms)
                options = "; ".join(
                    f"{lbl}: {_decision_text(x.decision) if x.decision else x.why}" for lbl, _, x in tried
                )
                replay = StepResult(
                    None, None, f"idle gap of {gap}, and whether {options} is not on disk", cause="idle expiry"
                )
        elif len(tried) > 1:
            replay.note = f" (a gap of {_minutes(f.gap_ms)}: reaped or found live, the same decision)"
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
            return result, _sync(reg, f, logged.kind, logged.count, frm, logged.reason, profile)
    if replay is None or replay.decision is None:
        why = replay.why if replay is not None else (reg.unknown_since or reg.closed or "not replayable")
        return StepResult(None, None, f"not replayable and nothing logged: {why}"), _sync(
            reg, f, "failed", None, None, "unknown", profile
        )
    replay.pending_turn = reg.pending_turn
    if logged is not None:
        # continue from what really happened, so one disagreement does not cascade
        frm = (
            0 if logged.kind in ("bootstrap", "flatten") else (f.n - logged.count if logged.count is not None else None)
        )
        return replay, _sync(reg, f, logged.kind, logged.count, frm, logged.reason, profile)
    d = replay.decision
    assert d is not None
    return replay, _sync(reg, f, d.kind, d.count, replay.frm, d.reason, profile)


def _decision_text(d: Decision) -> str:
    return f"{d.kind}/{d.reason}" + (f"/{d.count}" if d.count is not None else "")


def contradiction(logged: LoggedDecision, replay: Decision, profile: BuildProfile) -> str:
    """The sentence a call carries when its logged decision is not what its build decides from the files."""
    shown = _decision_text(Decision(logged.kind, logged.reason, logged.count))
    return f"logged {shown}; build {profile.id} decides {_decision_text(replay)}: the profile or the data is wrong"


def first_difference(logged: LoggedDecision, replay: Decision) -> str | None:
    if logged.kind != replay.kind:
        return f"kind: logged {logged.kind}, replay {replay.kind}"
    if logged.reason != replay.reason:
        return f"reason: logged {logged.reason}, replay {replay.reason}"
    if logged.count != replay.count:
        return f"count: logged {logged.count}, replay {replay.count}"
    return None
