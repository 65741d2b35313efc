"""Build profiles: the rules senpi changed from one release to the next, as data, and picking one by evidence.

senpi changed its `assistantContentHash`, its first-turn rule, its log keys, its terminal-failure kind,
its pending-compaction handling and its ultrawork dedupe within weeks (senpi-formats §0, senpi-newer §2).
A recomputation is only right with the rules of the build that wrote the data, so every such rule lives
in a `BuildProfile`, and `detect_profile` chooses one from what the data shows:

* features that prove a build is at least X (provider id `anthropic-subscription`, `sessionId` on log
  lines, kind `failed`, binding markers, `environment-context` messages, new reason names, …);
* behaviours that prove a build is older than Y (`options_changed`, a count-less terminal `flatten`, a
  first call with two messages logged `flatten`/`registry_miss`, `fork`/`tainted_compaction`, …);
* dates: a session cannot have run a release published after its last entry;
* the logged decisions themselves: after a turn whose capture and commit differ only in thinking timing,
  the next call logged `assistant_rewritten` under the verbatim rule and `delta` under the later ones
  (`hash votes`, fed by `core.agents.senpi.commit`).

The newest rule is never assumed: among the releases the evidence allows, the one whose hash rule the
logged decisions support wins; when nothing separates them the latest release the session's dates allow
is taken, and the explanation says that no evidence distinguished the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from core.agents.senpi.fingerprint import PROJECTED, TIMING_STRIPPED, VERBATIM, HashRule
from core.agents.senpi.payload.serialize import RULES_FOLD, RULES_MAPPER, RULES_NEW, RULES_OLD, SerializerRules
from core.agents.shared.pi_family.calls import RESIDENT_API
from core.kernel.pipeline import SessionAnalyzer
from core.model import TranscriptEntry, Turn
from core.timeutil import parse_iso_ms

if TYPE_CHECKING:
    from core.kernel.pipeline import Session
    from core.kernel.ports import Reread

API_ID = RESIDENT_API
PROVIDER_OLD = "claude-sdk-oauth"  # the provider id builds before 2026.9.22-3 wrote (the same string as the lane)
PROVIDER_NEW = "anthropic-subscription"
BINDING_TYPE = "claude-sdk-oauth-binding"

FIRST_TURN_MAX_ONE = "at-most-one-transmitted"
FIRST_TURN_NO_ASSISTANT = "no-assistant-in-context"
FirstTurn = Literal["at-most-one-transmitted", "no-assistant-in-context"]  # when a cold seed is logged `bootstrap`
SidecarHashes = Literal["none", "branch-walk", "context"]  # what the sidecar's sentCount counts
PendingCompaction = Literal["fork-or-flatten", "flatten"]
TerminalKind = Literal["flatten", "failed"]  # a count-less flatten, or `failed` (2026.9.29+)
DedupeRule = Literal["keep-last", "keep-identical-previous"]  # the flatten's ultrawork dedupe

#: senpi-formats §2.4 (35 values at v2026.8.22-2)
REASONS_OLD: frozenset[str] = frozenset(
    {
        "prefix_matched", "registry_miss", "idle_ttl", "capacity", "model_selected", "thinking_level_selected",
        "bound_account_token_expiring", "account_changed", "model_changed", "toolset_changed", "system_prompt_changed",
        "assistant_stream_diverged", "sent_stream_diverged", "options_changed", "history_rolled_back",
        "assistant_rewritten", "transcript_missing", "cross_root_unsupported", "branch_diverged",
        "branch_boundary_unavailable", "branch_resume", "tainted_compaction", "tainted_fork", "tainted_abort",
        "tainted_assistant_provenance_unverified", "resume_initialization_failed", "resume_initialization_aborted",
        "resume_mode_off", "query_failed", "turn_attribution_failed", "abort_timeout", "extensions_removed",
        "session_shutdown", "timeout_retry", "other",
    }
)  # fmt: skip
TERMINAL_REASONS = frozenset({"abort_timeout", "turn_attribution_failed", "query_failed", "other"})


@dataclass(frozen=True, slots=True)
class BuildProfile:
    """Everything that differs by senpi build and matters to a recomputation."""

    id: str  # the first release with this exact set of rules, e.g. "2026.8.18-3"
    since_date: str  # its date, YYYY-MM-DD (release versions are dates)
    change: str  # what changed at this release, for explanations
    hash_rule: HashRule = VERBATIM  # assistantContentHash rule of the commit-boundary check
    first_turn: FirstTurn = FIRST_TURN_MAX_ONE
    empty_user_hashed: bool = True  # users with `content: []` count in H (before 2026.8.16)
    markers: bool = False  # binding marker / invalidation entries and the sidecar
    sidecar_hashes: SidecarHashes = "none"
    pending_compaction: PendingCompaction = "fork-or-flatten"  # flatten since 2026.10.1
    terminal_kind: TerminalKind = "flatten"
    dedupe: DedupeRule = "keep-last"
    invalidation_cause: bool = False  # a recorded invalidation cause replaces registry_miss on cold seeds
    provider: str = PROVIDER_OLD  # provider id on assistant messages and model_change entries
    session_id_on_lines: bool = False  # sessionId on continuity/close lines
    reasons: frozenset[str] = REASONS_OLD - {"timeout_retry"}
    #: how the prompt of a resident-lane call is serialized (`core.agents.senpi.payload.serialize`)
    serializer: SerializerRules = RULES_OLD
    #: thinking_level_select keeps the binding's sent hashes (2026.8.18-3); before, it keeps `sentHashes: []`, so
    #: the next call's prefix match stops at 0 and forks from the binding's last boundary (`history_rolled_back`)
    thinking_keeps_hashes: bool = False
    binding_drift_check: bool = False  # decideFromBinding checks account / model / options drift first (2026.8.18-3)
    #: a reattached or forked entry takes the call's account, model and fingerprint (2026.8.18-3); before, the
    #: binding's: after a resume across a thinking switch the next call on that entry drifts (`options_changed`)
    resume_current_identity: bool = False
    binding_drift_reattaches: bool = False  # prompt / toolset drift on a binding reattaches with it (2026.9.7-2)
    binding_fork_newest: bool = False  # a diverged binding forks at the newest boundary in the prefix (2026.9.29)

    @property
    def label(self) -> str:
        return f"senpi {self.id} ({self.hash_rule} hash, {self.first_turn} first turn, dedupe {self.dedupe})"

    def describe(self) -> dict[str, Any]:
        """The report's `profile`: every rule by name (the serializer and the reason vocabulary aside). A new dict
        each time; its values are the profile's own (immutable) field values, so the walk over `fields()` is made
        once per profile (`ProfileTracker.profile` describes the chosen one at every re-detection: ~4,500 times
        on the 100 MB bench corpus)."""
        return dict(_described(self))


_NOT_DESCRIBED = frozenset({"id", "since_date", "change", "reasons", "serializer"})


_DESCRIBED: dict[int, tuple[BuildProfile, tuple[tuple[str, Any], ...]]] = {}


def _described(profile: BuildProfile) -> tuple[tuple[str, Any], ...]:
    """`describe`'s items, made once per profile object (a profile holds dicts: it is not hashable)."""
    hit = _DESCRIBED.get(id(profile))
    if hit is not None and hit[0] is profile:
        return hit[1]
    out: dict[str, Any] = {"id": profile.id, "since_date": profile.since_date, "label": profile.label}
    out.update((f.name, getattr(profile, f.name)) for f in fields(profile) if f.name not in _NOT_DESCRIBED)
    items = tuple(out.items())
    if len(_DESCRIBED) < 1024:  # the timeline's profiles (a few dozen), kept alive here so an id is never reused
        _DESCRIBED[id(profile)] = (profile, items)
    return items


def _timeline() -> tuple[BuildProfile, ...]:
    """Each release applies its changes to the previous profile (senpi-formats §0, senpi-newer §2): field values,
    and reasons the vocabulary gains (`reasons+`) or loses (`reasons-`)."""
    base = BuildProfile("2026.8.3", "2026-08-03", "continuity observations and session.log lines")
    changes: list[tuple[str, str, str, dict[str, Any]]] = [
        ("2026.8.11-2", "2026-08-11", "thinking timing excluded from assistantContentHash",
         {"hash_rule": TIMING_STRIPPED}),
        ("2026.8.16", "2026-08-16", "content-less user messages excluded from H", {"empty_user_hashed": False}),
        ("2026.8.18-3", "2026-08-18", "binding markers, invalidations and the restart sidecar; bindings checked for "
         "drift, kept with their hashes on a thinking switch; a resumed entry takes the call's identity",
         {"markers": True, "sidecar_hashes": "branch-walk", "thinking_keeps_hashes": True,
          "binding_drift_check": True, "resume_current_identity": True}),
        ("2026.8.20", "2026-08-20", "timeout_retry retry-checkpoint fork", {"reasons+": {"timeout_retry"}}),
        ("2026.9.3-3", "2026-09-03", "sidecar hashes from the converted context; session_unconfirmed; shared content "
         "mapper for flatten and delta", {"sidecar_hashes": "context", "reasons+": {"session_unconfirmed"},
                                         "serializer": RULES_MAPPER}),
        ("2026.9.7-2", "2026-09-07", "projected assistantContentHash; options_changed split; a binding reattaches on "
         "prompt / toolset drift", {"hash_rule": PROJECTED, "reasons-": {"options_changed"},
                                    "binding_drift_reattaches": True}),
        ("2026.9.9", "2026-09-09", "first turn = no assistant in the context (release not pinned)",
         {"first_turn": FIRST_TURN_NO_ASSISTANT}),
        ("2026.9.16", "2026-09-16", "recorded invalidation cause replaces registry_miss (release not pinned)",
         {"invalidation_cause": True}),
        ("2026.9.22-3", "2026-09-22", "provider id anthropic-subscription", {"provider": PROVIDER_NEW}),
        ("2026.9.24-3", "2026-09-24", "environment-context folded into the next user message",
         {"serializer": RULES_FOLD}),
        ("2026.9.28-4", "2026-09-28", "credential_refreshed", {"reasons+": {"credential_refreshed"}}),
        ("2026.9.29", "2026-09-29", "sessionId on log lines; terminal kind failed; a binding forks at the newest "
         "boundary in its prefix", {"terminal_kind": "failed", "session_id_on_lines": True,
                                    "binding_fork_newest": True}),
        ("2026.9.30", "2026-09-29", "write/edit offered as custom tools (serializer tool names)",
         {"serializer": RULES_NEW}),
        ("2026.10.1", "2026-10-01", "pending or tainted compaction flattens", {"pending_compaction": "flatten"}),
        ("2026.10.10-10", "2026-10-09", "ultrawork dedupe keeps identical-previous only",
         {"dedupe": "keep-identical-previous"}),
    ]  # fmt: skip
    out = [base]
    for since, date, change, values in changes:
        prev = out[-1]
        values = dict(values)
        reasons = (prev.reasons | values.pop("reasons+", frozenset())) - values.pop("reasons-", frozenset())
        out.append(replace(prev, id=since, since_date=date, change=change, reasons=reasons, **values))
    return tuple(out)


PROFILES: tuple[BuildProfile, ...] = _timeline()
_INDEX = {p.id: i for i, p in enumerate(PROFILES)}


@dataclass(frozen=True, slots=True)
class SerializerEra:
    """Consecutive releases of the timeline that serialize a prompt alike (same serializer rules, same ultrawork
    dedupe): what the payload analysis measures a call under, and confirms against a logged `payloadBytes`.

    Detection picks a release from evidence in the transcript and logs; what a prompt looked like shows only in
    its size, so the payload analysis weighs the eras itself (`core.agents.senpi.payload.rules`)."""

    name: str  # its first release
    since: str  # that release's date; "" for the first era (the oldest modelled stands for anything older)
    rules: SerializerRules
    dedupe: str
    providers: frozenset[str]  # the provider ids its releases write on assistant messages


def _eras(profiles: tuple[BuildProfile, ...]) -> tuple[SerializerEra, ...]:
    out: list[SerializerEra] = []
    for profile in profiles:
        last = out[-1] if out else None
        if last is not None and (last.rules, last.dedupe) == (profile.serializer, profile.dedupe):
            out[-1] = replace(last, providers=last.providers | {profile.provider})
        else:
            since = profile.since_date if out else ""
            out.append(
                SerializerEra(profile.id, since, profile.serializer, profile.dedupe, frozenset({profile.provider}))
            )
    return tuple(out)


ERAS: tuple[SerializerEra, ...] = _eras(PROFILES)


def profile_by_id(profile_id: str) -> BuildProfile:
    return PROFILES[_INDEX[profile_id]]


@dataclass
class Evidence:
    """What one session's data shows about the build that wrote it. Counters only, no bodies."""

    first_ms: int | None = None
    last_ms: int | None = None
    providers: set[str] = field(default_factory=set)
    markers: int = 0
    invalidations: int = 0
    marker_after_compaction: int = 0
    env_context: int = 0
    context_edits: int = 0
    reasons: dict[str, int] = field(default_factory=dict)  # logged reasons
    kinds: dict[str, int] = field(default_factory=dict)  # logged kinds
    terminal_flatten: int = 0  # count-less flatten with a terminal reason
    bootstrap_multi: int = 0  # bootstrap with count > 1
    first_flatten_multi: int = 0  # first call, no assistant in context, flatten/registry_miss with count >= 2
    fork_tainted_compaction: int = 0
    session_id_lines: int = 0
    #: per turn index: {rule: +1 (the rule explains the logged behaviour) | -1 (contradicts it)}
    hash_votes: dict[int, dict[str, int]] = field(default_factory=dict)
    _totals: dict[str, list[int]] = field(
        default_factory=lambda: {r: [0, 0] for r in (VERBATIM, TIMING_STRIPPED, PROJECTED)}
    )

    def set_votes(self, turn_index: int, votes: dict[str, int] | None) -> bool:
        """Replace one turn's votes (running totals kept, so reading them is O(1)). True if they changed."""
        old = self.hash_votes.pop(turn_index, None)
        if old:
            for rule, vote in old.items():
                self._totals[rule][0 if vote > 0 else 1] -= 1
        if votes:
            self.hash_votes[turn_index] = votes
            for rule, vote in votes.items():
                self._totals[rule][0 if vote > 0 else 1] += 1
        return (old or None) != (votes or None)

    def vote_totals(self) -> dict[str, tuple[int, int]]:
        """{rule: (turns whose logged behaviour it explains, turns it contradicts)}"""
        return {rule: (agree, disagree) for rule, (agree, disagree) in self._totals.items()}


_DAY_MS = 86_400_000
_MAX_MS = 253_402_300_800_000  # 10000-01-01: datetime's range ends just before


def _date(ms: int) -> str:
    """The UTC date of an epoch-ms timestamp. Every entry asks for it, and entries of one day share it, so an
    integer in datetime's range is answered per day from a cache."""
    if type(ms) is int and 0 <= ms < _MAX_MS:
        return _day(ms // _DAY_MS)
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d")


@lru_cache(maxsize=1024)
def _day(day: int) -> str:
    return datetime.fromtimestamp(day * 86_400, tz=UTC).strftime("%Y-%m-%d")


@lru_cache(maxsize=1024)
def _newest_by_date(date: str) -> int:
    """The index of the newest profile released on or before `date` (0 when none)."""
    return max((i for i, p in enumerate(PROFILES) if p.since_date <= date), default=0)


def _bounds(ev: Evidence) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(lower bounds, upper bounds) as (profile index, why): the build is >= / <= that profile."""
    lo: list[tuple[int, str]] = []
    hi: list[tuple[int, str]] = []

    def at_least(since: str, why: str) -> None:
        lo.append((_INDEX[since], why))

    def before(since: str, why: str) -> None:
        hi.append((_INDEX[since] - 1, why))

    if PROVIDER_NEW in ev.providers:
        at_least("2026.9.22-3", "provider id anthropic-subscription")
    if ev.session_id_lines:
        at_least("2026.9.29", f"sessionId on {ev.session_id_lines} log line(s)")
    if ev.kinds.get("failed"):
        at_least("2026.9.29", "kind failed logged")
    if ev.markers or ev.invalidations:
        at_least("2026.8.18-3", f"{ev.markers} binding marker(s), {ev.invalidations} invalidation(s)")
    if ev.marker_after_compaction:
        at_least("2026.9.3-3", "a binding marker after a compaction")
    if ev.env_context:
        at_least("2026.9.22-3", "environment-context messages")
    if ev.context_edits:
        at_least("2026.10.1", "context_edit entries")
    if ev.bootstrap_multi:
        at_least("2026.9.9", "bootstrap with more than one message")
    for reason, since in (
        ("system_prompt_changed", "2026.9.7-2"),
        ("toolset_changed", "2026.9.7-2"),
        ("cross_root_unsupported", "2026.9.7-2"),
        ("credential_refreshed", "2026.9.28-4"),
        ("session_unconfirmed", "2026.9.3-3"),
        ("timeout_retry", "2026.8.20"),
    ):
        if ev.reasons.get(reason):
            at_least(since, f"reason {reason} logged")
    if ev.reasons.get("options_changed"):
        before("2026.9.7-2", "reason options_changed logged")
    if ev.terminal_flatten:
        before("2026.9.29", "count-less terminal flatten logged")
    if ev.first_flatten_multi:
        before("2026.9.9", "a first call with several messages logged flatten/registry_miss")
    if ev.fork_tainted_compaction:
        before("2026.10.1", "fork/tainted_compaction logged")
    if ev.last_ms is not None:
        date = _date(ev.last_ms)
        newest = _newest_by_date(date)
        hi.append((newest, f"last entry dated {date}"))
    return lo, hi


def detect_profile(ev: Evidence) -> tuple[BuildProfile, str]:
    """The build profile the evidence supports, and a one-line why."""
    lo_b, hi_b = _bounds(ev)
    lo, lo_why = max(lo_b, default=(0, "no newer feature seen"))
    hi, hi_why = min(hi_b, default=(len(PROFILES) - 1, "no upper bound"))
    notes: list[str] = []
    if lo > hi:
        notes.append(f"conflicting evidence ({lo_why} vs {hi_why}: the session may span an upgrade)")
        hi = lo
    candidates = list(range(lo, hi + 1))
    totals = ev.vote_totals()
    if len({PROFILES[i].hash_rule for i in candidates}) > 1:
        scores = {rule: agree - disagree for rule, (agree, disagree) in totals.items()}
        best = max(scores[PROFILES[i].hash_rule] for i in candidates)
        voted = [i for i in candidates if scores[PROFILES[i].hash_rule] == best]
        if len(voted) < len(candidates) and best > 0:
            rule = PROFILES[voted[0]].hash_rule
            agree, disagree = totals[rule]
            notes.append(f"{agree} logged decision(s) agree with the {rule} hash rule, {disagree} contradict it")
            candidates = voted
    chosen = PROFILES[candidates[-1]]
    parts = [f"{lo_why} (>= {PROFILES[lo].id})" if lo_b else "no newer feature seen"]
    parts.append(f"{hi_why} (<= {PROFILES[hi].id})" if hi_b else "no upper bound")
    parts.extend(notes)
    if len(candidates) > 1:
        parts.append(f"nothing separates {PROFILES[candidates[0]].id} … {chosen.id}; taking the latest the dates allow")
    return chosen, "; ".join(parts)


class ProfileTracker(SessionAnalyzer):
    """Per-session evidence collector; `profile` is re-detected only when the evidence changed."""

    #: a stored session (`core.index`) keeps the chosen profile in `session.profile`; without a tracker, log
    #: lines read later credit it nothing. Whether a cold read would credit it differently (log lines are build
    #: evidence only for a session that exists when they are read) is the index's to check: it reads cold then
    in_stored_session = False

    def __init__(self, session: Session, reread: Reread) -> None:
        self.session = session
        self.evidence = Evidence()
        self._dirty = True
        self._profile: BuildProfile = PROFILES[0]
        self._why = ""
        self.version = 0  # bumps when the chosen profile changes
        self._last_line = 0
        self._compacted_on_branch = False
        self._resident_calls = 0
        self._assistant_in_context = False

    # ----------------------------------------------------------------- the chosen profile
    @property
    def profile(self) -> BuildProfile:
        if self._dirty:
            self._dirty = False
            profile, why = detect_profile(self.evidence)
            self._why = why
            if profile.id != self._profile.id or self.version == 0:
                self._profile = profile
                self.version += 1
            self.session.profile = {**profile.describe(), "why": why}
        return self._profile

    @property
    def why(self) -> str:
        _ = self.profile
        return self._why

    def touch(self) -> None:
        self._dirty = True

    def set_hash_votes(self, turn_index: int, votes: dict[str, int] | None) -> None:
        """Record (or clear) what one turn's logged behaviour says about the hash rule."""
        if self.evidence.set_votes(turn_index, votes):
            self._dirty = True

    def refresh(self, session: Session) -> None:
        """A surface reads the session: settle the choice (and `session.profile`)."""
        _ = self.profile

    def adopt(self, parked: ProfileTracker) -> None:
        """A parked session is rebuilt from its file (`State.unpark`): keep the evidence that came from other
        files (log lines naming it), which re-reading the transcript cannot give."""
        self.evidence.session_id_lines = parked.evidence.session_id_lines
        self._dirty = True

    def log_line_with_session_id(self, lines: int = 1) -> None:
        first = self.evidence.session_id_lines == 0
        self.evidence.session_id_lines += lines
        if first and lines:
            self._dirty = True

    # ----------------------------------------------------------------- entries
    def on_entry(self, session: Session, entry: TranscriptEntry, turn: Turn | None) -> None:
        if entry.where.line <= self._last_line:  # re-delivered after a branch switch: already counted
            self._on_replayed(entry)
            return
        self._last_line = entry.where.line
        ev = self.evidence
        obj = entry.obj
        ts = parse_iso_ms(entry.timestamp)
        if ts is not None:
            ev.first_ms = ts if ev.first_ms is None else min(ev.first_ms, ts)
            if ev.last_ms is None or ts > ev.last_ms:
                if ev.last_ms is None or _date(ts) != _date(ev.last_ms):
                    self._dirty = True  # a new day may admit a newer release
                ev.last_ms = ts
        etype = entry.type
        if etype == "compaction":
            self._compacted_on_branch = True
        elif etype == "model_change" and isinstance(obj.get("provider"), str):
            self._add_provider(obj["provider"])
        elif etype == "context_edit":
            ev.context_edits += 1
            self._dirty = True
        elif etype == "custom" and obj.get("customType") == BINDING_TYPE:
            data = obj.get("data")
            if isinstance(data, dict) and data.get("marker"):
                ev.markers += 1
                if self._compacted_on_branch:
                    ev.marker_after_compaction += 1
            elif isinstance(data, dict) and data.get("invalidated"):
                ev.invalidations += 1
            self._dirty = True
        elif etype == "custom_message" and obj.get("customType") == "environment-context":
            ev.env_context += 1
            self._dirty = True
        elif etype == "message" and entry.role == "assistant":
            self._on_assistant(entry, turn)

    def _on_replayed(self, entry: TranscriptEntry) -> None:
        if entry.type == "compaction":
            self._compacted_on_branch = True

    def on_branch(self, session: Session, keep: int) -> None:
        # evidence is about the build, not the branch; only the branch-dependent flag is reset
        self._compacted_on_branch = False
        self._assistant_in_context = False

    def _add_provider(self, provider: str) -> None:
        if provider not in self.evidence.providers:
            self.evidence.providers.add(provider)
            self._dirty = True

    def _on_assistant(self, entry: TranscriptEntry, turn: Turn | None) -> None:
        msg = entry.message or {}
        resident = msg.get("api") == API_ID
        if resident and isinstance(msg.get("provider"), str):
            self._add_provider(msg["provider"])
        logged = turn.logged if turn is not None else None
        first_call = resident and self._resident_calls == 0
        if resident:
            self._resident_calls += 1
        if logged is not None:
            ev = self.evidence
            ev.kinds[logged.kind] = ev.kinds.get(logged.kind, 0) + 1
            ev.reasons[logged.reason] = ev.reasons.get(logged.reason, 0) + 1
            if logged.kind == "flatten" and logged.count is None and logged.reason in TERMINAL_REASONS:
                ev.terminal_flatten += 1
            if logged.kind == "bootstrap" and (logged.count or 0) > 1:
                ev.bootstrap_multi += 1
            if (
                first_call
                and not self._assistant_in_context
                and logged.kind == "flatten"
                and logged.reason == "registry_miss"
                and (logged.count or 0) >= 2
            ):
                ev.first_flatten_multi += 1
            if logged.kind == "fork" and logged.reason == "tainted_compaction":
                ev.fork_tainted_compaction += 1
            if ev.kinds[logged.kind] == 1 or ev.reasons[logged.reason] == 1 or first_call:
                self._dirty = True  # only a kind or reason never seen before can move a bound
        self._assistant_in_context = True


def profile_of(session: Session) -> BuildProfile:
    """The build profile chosen for a session (the first profile when the session has no tracker)."""
    tracker = session.analyzer(ProfileTracker)
    return tracker.profile if tracker is not None else PROFILES[0]
