"""Build profiles: the rules that differ between the senpi releases the simulator plays.

Versions are data: every behaviour that changed between releases is one field of :class:`Build`, named by
what it does and dated by the release that introduced it, so a scenario picks a build and the code never
compares version strings.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.demo.sim.digest import HASH_PROJECTED, HASH_VERBATIM


@dataclass(frozen=True)
class Build:
    """What one simulated senpi release does differently. Data, not scattered version checks."""

    version: str
    provider: str  # assistant ``provider`` and model_change provider
    hash_rule: str  # assistantContentHash variant of the commit-boundary check
    markers: bool  # marker/invalidation entries and the sidecar (>= 2026.8.18-3)
    session_id_on_log: bool  # sessionId on continuity/close lines and the AgentSession stamp (>= 2026.9.29)
    failed_kind: bool  # terminal failures log kind ``failed`` instead of count-less ``flatten``
    new_dedupe: bool  # ultrawork dedupe rule of 2026.10.10-10
    first_turn_no_assistant: bool  # "first turn" = no assistant in context (09-09) instead of |H| <= 1
    env_context: bool  # hidden environment-context message, folded into the following user (2026.9.24-3)
    drop_failed_assistants: bool  # convertToLlm drops errored/aborted assistant turns (2026.9.4-2)
    write_edit_custom: bool  # write/edit offered as mcp__custom-tools__ (2026.9.30)
    timeout_retry: bool  # retry-checkpoint decision (2026.8.20)
    new_omo: bool  # omo delivers the ultrawork directive as a hidden custom message
    file_at_first_user: bool  # the transcript is created at the first user message, not the first assistant
    split_options_reason: bool  # options_changed split into system_prompt_changed / toolset_changed (2026.9.7-2)
    fork_at_newest_boundary: bool  # binding forks at the newest mapped boundary in the prefix (2026.9.29)
    binding_drift_check: bool  # decideFromBinding checks account / model / options drift first (2026.8.18-3)
    thinking_keeps_hashes: bool  # thinking_level_select keeps the binding's sent hashes (2026.8.18-3);
    # before, the kept binding has ``sentHashes: []``: the next call's prefix match stops at 0 and, with no drift
    # check on the binding path, forks from the last boundary with ``history_rolled_back``, re-sending everything
    resume_takes_current_identity: bool  # a reattached / forked entry gets the call's account, model and
    # fingerprint (2026.8.18-3); before, the binding's: after a resume across a thinking switch every later call on
    # that entry drifts and reattaches with ``options_changed`` (senpi-live: fork/options_changed/1 after the fork)


OLD_BUILD = Build(
    version="2026.8.4-2",
    provider="claude-sdk-oauth",
    hash_rule=HASH_VERBATIM,
    markers=False,
    session_id_on_log=False,
    failed_kind=False,
    new_dedupe=False,
    first_turn_no_assistant=False,
    env_context=False,
    drop_failed_assistants=False,
    write_edit_custom=False,
    timeout_retry=False,
    new_omo=False,
    file_at_first_user=False,
    split_options_reason=False,
    fork_at_newest_boundary=False,
    binding_drift_check=False,
    thinking_keeps_hashes=False,
    resume_takes_current_identity=False,
)

NEW_BUILD = Build(
    version="2026.10.10-12",
    provider="anthropic-subscription",
    hash_rule=HASH_PROJECTED,
    markers=True,
    session_id_on_log=True,
    failed_kind=True,
    new_dedupe=True,
    first_turn_no_assistant=True,
    env_context=True,
    drop_failed_assistants=True,
    write_edit_custom=True,
    timeout_retry=True,
    new_omo=True,
    file_at_first_user=True,
    split_options_reason=True,
    fork_at_newest_boundary=True,
    binding_drift_check=True,
    thinking_keeps_hashes=True,
    resume_takes_current_identity=True,
)

API_ID = "claude-sdk-oauth"
