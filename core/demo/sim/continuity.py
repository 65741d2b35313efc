"""Continuity: registry entry, binding, decision (§4.3 / newer §6) and the observation mapping (§2.6).

:class:`Continuity` is senpi's per-session state machine: one decision per call, the close lines it causes,
the staged observation that becomes the session.log line and the diagnostic. Every build difference is a
:class:`~core.demo.sim.builds.Build` field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from core.demo.sim.builds import Build
from core.demo.sim.digest import prefix_digest

IDLE_TTL_MS = 30 * 60_000
REASONS = frozenset(
    [
        "prefix_matched",
        "registry_miss",
        "idle_ttl",
        "capacity",
        "model_selected",
        "thinking_level_selected",
        "bound_account_token_expiring",
        "account_changed",
        "model_changed",
        "toolset_changed",
        "system_prompt_changed",
        "assistant_stream_diverged",
        "sent_stream_diverged",
        "options_changed",
        "history_rolled_back",
        "assistant_rewritten",
        "transcript_missing",
        "cross_root_unsupported",
        "branch_diverged",
        "branch_boundary_unavailable",
        "branch_resume",
        "tainted_compaction",
        "tainted_fork",
        "tainted_abort",
        "tainted_assistant_provenance_unverified",
        "resume_initialization_failed",
        "resume_initialization_aborted",
        "resume_mode_off",
        "query_failed",
        "turn_attribution_failed",
        "abort_timeout",
        "extensions_removed",
        "session_shutdown",
        "timeout_retry",
        "other",
        "session_unconfirmed",
        "credential_refreshed",
    ]
)


def sanitize_close_cause(text: str) -> str:
    """``sanitizeCloseCause`` (§2.4): vocabulary values pass, known error texts map, the rest is ``other``."""
    if text in REASONS:
        return text
    low = text.lower()
    if "did not terminate" in low or "interrupt failed" in low:
        return "abort_timeout"
    if any(
        s in low
        for s in ("user_message_uuid did not match", "result arrived before replay claim", "pre-replay buffer overflow")
    ):
        return "turn_attribution_failed"
    if any(
        s in low
        for s in ("query ended before", "claude sdk oauth query", "claude code", "anthropic subscription query")
    ):
        return "query_failed"
    return "other"


def sanitize_reason(text: str) -> str:
    """``sanitizeReason`` (§2.4): vocabulary, ``tainted:<x>`` → ``tainted_<x>``, else the close-cause rule."""
    if text in REASONS:
        return text
    if text.startswith("tainted:") and f"tainted_{text[8:]}" in REASONS:
        return f"tainted_{text[8:]}"
    return sanitize_close_cause(text)


@dataclass(frozen=True)
class Fingerprint:
    """The identity a live entry or binding was created with; drift between two of them forces a resume."""

    account: str
    model: str
    system_prompt_hash: str
    toolset_hash: str


@dataclass
class Entry:
    """A live registry entry: one Claude Code query that holds the first ``sent_count`` transmitted messages."""

    sdk_session_id: str
    sent_hashes: list[str]
    sent_count: int
    uuids: dict[int, str]  # assistantUuidByIndex: a call's |H| -> its last top-level SDK assistant uuid
    fingerprint: Fingerprint
    last_used: int
    pending_fork: str | None = None


@dataclass
class Binding:
    """What senpi remembers to resume a closed entry (in memory; sidecar bindings carry a prefix digest)."""

    sdk_session_id: str
    sent_hashes: list[str]
    sent_count: int
    uuids: dict[int, str]
    last_assistant_uuid: str | None
    fingerprint: Fingerprint
    sent_prefix_hash: str | None = None
    unanswered_digest: str | None = None


@dataclass(frozen=True)
class Decision:
    """One result of ``decideNativeContinuity``."""

    kind: str  # bootstrap | delta | reattach | fork | flatten
    start: int = 0  # ``from``: index of the first transmitted message this call sends
    reason: str | None = None
    at_uuid: str | None = None


@dataclass(frozen=True)
class Observation:
    """The logged continuity record: session.log ``kind``/``reason``/``count`` and the diagnostic details."""

    kind: str
    reason: str
    count: int | None


@dataclass(frozen=True)
class CallStart:
    """Everything decided at the start of a provider call."""

    decision: Decision
    observation: Observation
    first_turn: bool
    flatten: bool  # the call sends the whole history (flatten serializer)
    closed: str | None  # reason of the close line written at call start, if a live entry was closed
    from_volatile: bool  # the decision consumed a pending fork left by a timing-only rewrite


_OBSERVED = {"delta": "incremental", "reattach": "resume", "fork": "resume", "flatten": "cold", "bootstrap": "cold"}


class Continuity:
    """senpi's per-session continuity state: live entry, binding, pending close cause; one decision per call.

    The methods follow the order senpi runs them in: :meth:`begin_call` (decision, closes, staged observation),
    :meth:`finish_call` (recordSyncedStream) and :meth:`commit` (the message_end boundary check).
    """

    def __init__(self, build: Build, new_sdk_session: Callable[[], str]) -> None:
        self.build = build
        self._new_sdk_session = new_sdk_session
        self.entry: Entry | None = None
        self.binding: Binding | None = None
        self.pending_close: str | None = None
        self.pending_from_volatile = False  # the pending fork came from a timing-only rewrite

    def stable_copy(self) -> Continuity:
        """This state as a build with a stable fingerprint holds it before the next call: the same entry, binding
        and pending close cause, but no pending fork that a timing-only rewrite left. One call's counterfactual:
        the history before it is the real one (the analysis's definition, so the two are comparable)."""
        copy = Continuity(self.build, self._new_sdk_session)
        if self.entry is not None:
            copy.entry = dataclasses.replace(
                self.entry, sent_hashes=list(self.entry.sent_hashes), uuids=dict(self.entry.uuids)
            )
            if self.pending_from_volatile:
                copy.entry.pending_fork = None
        if self.binding is not None:
            copy.binding = dataclasses.replace(
                self.binding, sent_hashes=list(self.binding.sent_hashes), uuids=dict(self.binding.uuids)
            )
        copy.pending_close = self.pending_close
        return copy

    # -- closing -------------------------------------------------------------------------------------------
    def close(self, raw_reason: str) -> str | None:
        """Close the live entry (keeping a binding); returns the logged reason, or None without an entry."""
        if self.entry is None:
            return None
        self.binding = self._binding_from_entry(self.entry)
        self.entry = None
        self.pending_close = sanitize_reason(raw_reason)
        return self.pending_close

    def select_thinking_level(self) -> str | None:
        """``thinking_level_select``: keep the binding and close the entry (``thinking_level_selected``).

        Before 2026.8.18-3 the kept binding has ``sentHashes: []`` (senpi's code at v2026.8.4-2), so the next
        call cannot match its prefix; from then on the hashes are kept and the options drift decides.
        """
        closed = self.close("thinking_level_selected")
        if closed is not None and not self.build.thinking_keeps_hashes:
            assert self.binding is not None
            self.binding.sent_hashes = []
        return closed

    def idle_expired(self, now: int) -> bool:
        return self.entry is not None and now - self.entry.last_used >= IDLE_TTL_MS

    def last_used(self) -> int | None:
        return self.entry.last_used if self.entry else None

    # -- the decision --------------------------------------------------------------------------------------
    def decide(self, hashes: list[str], fp: Fingerprint, now: int) -> Decision:
        """``decideNativeContinuity`` for this build, given the current hashes and identity."""
        entry = self.entry
        if entry is None:
            return Decision("bootstrap") if self.binding is None else self._from_binding(hashes, fp, self.binding)
        pending = entry.pending_fork
        if pending is not None:
            if pending == "compaction" and self.build.new_dedupe:
                return Decision("flatten", reason="tainted_compaction")
            reason = {"assistant_rewritten": "assistant_rewritten", "compaction": "tainted_compaction"}
            return self._fork_or_flatten(entry, entry.sent_count, reason.get(pending, "other"))
        s = _prefix_len(entry.sent_hashes[: entry.sent_count], hashes)
        if s < entry.sent_count:
            if len(hashes) < entry.sent_count and s == len(hashes):
                return self._fork_or_flatten(entry, len(hashes), "history_rolled_back")
            return self._fork_or_flatten(entry, s + 1, "sent_stream_diverged")
        if now - entry.last_used >= IDLE_TTL_MS:
            return Decision("reattach", entry.sent_count, "idle_ttl")
        drift = self._drift(entry.fingerprint, fp)
        if drift:
            return Decision("reattach", entry.sent_count, drift)
        return Decision("delta", entry.sent_count)

    def _drift(self, have: Fingerprint, want: Fingerprint) -> str | None:
        if have.account != want.account:
            return "account_changed"
        if have.model != want.model:
            return "model_changed"
        split = self.build.split_options_reason
        if have.system_prompt_hash != want.system_prompt_hash:
            return "system_prompt_changed" if split else "options_changed"
        if have.toolset_hash != want.toolset_hash:
            return "toolset_changed" if split else "options_changed"
        return None

    def _fork_or_flatten(self, entry: Entry, n: int, reason: str) -> Decision:
        below = [k for k in entry.uuids if 1 <= k <= n - 1]
        if not below:
            return Decision("flatten", reason=reason)
        k = max(below)
        return Decision("fork", k, reason, entry.uuids[k])

    def _from_binding(self, hashes: list[str], fp: Fingerprint, binding: Binding) -> Decision:
        drift = self._drift(binding.fingerprint, fp) if self.build.binding_drift_check else None
        if drift and (not self.build.split_options_reason or drift == "model_changed"):
            return Decision("flatten", reason=drift)
        retry = self._retry_checkpoint(hashes, binding)
        if retry is not None:
            return retry
        if binding.sent_prefix_hash is not None:
            intact = prefix_digest(hashes, binding.sent_count) == binding.sent_prefix_hash
            if len(hashes) >= binding.sent_count and intact:
                return Decision("reattach", binding.sent_count, drift or "registry_miss")
            rolled = len(hashes) < binding.sent_count
            return Decision("flatten", reason="history_rolled_back" if rolled else "sent_stream_diverged")
        s = _prefix_len(binding.sent_hashes, hashes)
        if s == binding.sent_count:
            return Decision("reattach", binding.sent_count, drift or "registry_miss")
        reason = "history_rolled_back" if s < binding.sent_count else "sent_stream_diverged"
        if not self.build.fork_at_newest_boundary:
            if not binding.last_assistant_uuid:
                return Decision("flatten", reason="registry_miss")
            return Decision("fork", s, reason, binding.last_assistant_uuid)
        within = [k for k in binding.uuids if 1 <= k <= s]
        if not within:
            return Decision("flatten", reason=reason if binding.last_assistant_uuid else "registry_miss")
        k = max(within)
        return Decision("fork", k, reason, binding.uuids[k])

    def _retry_checkpoint(self, hashes: list[str], binding: Binding) -> Decision | None:
        if not self.build.timeout_retry or binding.unanswered_digest is None:
            return None
        if prefix_digest(hashes) != binding.unanswered_digest or len(hashes) < binding.sent_count:
            return None
        if _prefix_len(binding.sent_hashes, hashes) != binding.sent_count:
            return None
        if not binding.last_assistant_uuid:
            return Decision("flatten", reason="timeout_retry")
        return Decision("fork", binding.sent_count, "timeout_retry", binding.last_assistant_uuid)

    # -- executing a call ----------------------------------------------------------------------------------
    def begin_call(self, hashes: list[str], fp: Fingerprint, now: int, *, has_assistant: bool) -> CallStart:
        """Decide, close/replace the entry the way ``createResidentAttempt`` does, and stage the observation."""
        if self.build.first_turn_no_assistant:
            first_turn = self.entry is None and self.binding is None and not has_assistant
        else:
            first_turn = self.entry is None and self.binding is None and len(hashes) <= 1
        decision = self.decide(hashes, fp, now)
        from_volatile = bool(self.entry and self.entry.pending_fork and self.pending_from_volatile)
        observed_reason = decision.reason or ("registry_miss" if decision.kind == "bootstrap" else None)
        closed: str | None = None
        if decision.kind in ("reattach", "fork"):
            source = self.binding if self.entry is None else self._binding_from_entry(self.entry)
            assert source is not None
            closed = self.close("reattach")
            start = decision.start
            self.entry = Entry(
                sdk_session_id=self._new_sdk_session() if decision.kind == "fork" else source.sdk_session_id,
                sent_hashes=hashes[:start],
                sent_count=start,
                uuids={k: v for k, v in source.uuids.items() if k <= start},
                fingerprint=fp if self.build.resume_takes_current_identity else source.fingerprint,
                last_used=now,
            )
        elif decision.kind in ("flatten", "bootstrap"):
            closed = self.close(observed_reason or "registry_miss")
            self.entry = Entry(self._new_sdk_session(), [], 0, {}, fp, now)
        observation = self._observe(decision, observed_reason, first_turn, len(hashes))
        self.pending_from_volatile = False
        flatten = decision.kind in ("flatten", "bootstrap")
        return CallStart(decision, observation, first_turn, flatten, closed, from_volatile)

    def _observe(self, decision: Decision, reason: str | None, first_turn: bool, n: int) -> Observation:
        """``observeSessionSyncDecision`` (§2.6); the pending close cause is consumed at emit."""
        observed = _OBSERVED[decision.kind]
        pending, self.pending_close = self.pending_close, None
        if observed == "incremental":
            return Observation("delta", "prefix_matched", n - decision.start)
        if observed == "resume":
            if reason == "registry_miss" and pending:
                final = pending
            else:
                final = "branch_resume" if reason is None else sanitize_reason(reason)
            return Observation("fork", final, n - decision.start)
        final = pending if reason == "registry_miss" and pending else sanitize_reason(reason or "registry_miss")
        kind = "bootstrap" if first_turn and final == "registry_miss" else "flatten"
        return Observation(kind, final, n)

    def finish_call(self, hashes: list[str], sdk_uuid: str, now: int) -> None:
        """``recordSyncedStream`` after a successful call, and the in-memory binding built from it."""
        entry = self.entry
        assert entry is not None
        entry.sent_hashes = list(hashes)
        entry.sent_count = len(hashes)
        entry.uuids[len(hashes)] = sdk_uuid
        entry.last_used = now
        self.binding = self._binding_from_entry(entry)

    def fail_call(self, hashes: list[str], error: str) -> str | None:
        """Every attempt failed: close the entry with the pump error, remember a retry checkpoint binding."""
        checkpoint = self._binding_from_entry(self.entry) if self.entry else self.binding
        closed = self.close(error)
        if checkpoint is not None:
            checkpoint.unanswered_digest = prefix_digest(hashes)
            self.binding = checkpoint
        return closed

    def commit_rewritten(self, volatile_only: bool) -> None:
        """A rewritten commit records the pending fork that the next call consumes."""
        if self.entry is not None:
            self.entry.pending_fork = "assistant_rewritten"
            self.pending_from_volatile = volatile_only
        if self.build.markers:
            self.binding = None  # invalidate: forget the in-memory binding

    @staticmethod
    def _binding_from_entry(entry: Entry) -> Binding:
        return Binding(
            sdk_session_id=entry.sdk_session_id,
            sent_hashes=entry.sent_hashes[: entry.sent_count],
            sent_count=entry.sent_count,
            uuids=dict(entry.uuids),
            last_assistant_uuid=entry.uuids.get(entry.sent_count),
            fingerprint=entry.fingerprint,
        )


def _prefix_len(a: list[str], b: list[str]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def sanitize_terminal_failure(error_message: str) -> str:
    """``sanitizeTerminalFailure`` for an Error: a non-``other`` close cause, else ``query_failed``."""
    cause = sanitize_close_cause(error_message)
    return cause if cause != "other" else "query_failed"
