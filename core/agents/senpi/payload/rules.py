"""Which serializer and which build's rules one provider call used: the small decisions behind a payload size.

The rules themselves are data in senpi's one build timeline (`core.agents.senpi.profiles`: each release's
serializer rules and dedupe rule); a call is measured under one of its serializer eras (`ERAS`). Kept apart
from the running analysis so the on-demand rebuild uses exactly the same choices as the per-turn numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from core.agents.senpi.facts import payload_info
from core.agents.senpi.payload.dedupe import KEEP_IDENTICAL_PREVIOUS, KEEP_LAST
from core.agents.senpi.payload.serialize import SerializerRules
from core.agents.senpi.profiles import API_ID, ERAS, ProfileTracker, SerializerEra

if TYPE_CHECKING:
    from core.kernel.pipeline import Session
    from core.model import Turn

FLATTEN, DELTA = "flatten", "delta"
FLATTEN_KINDS = frozenset({"bootstrap", "disabled"})  # plus `flatten` with a count
DELTA_KINDS = frozenset({"delta", "fork", "reattach"})
#: the call failed before anything knowable was sent (newer `failed`, older count-less terminal `flatten`)
TERMINAL_KINDS = frozenset({"failed"})


ERA_BY_NAME = {era.name: era for era in ERAS}
ERA_BY_DEDUPE = {KEEP_LAST: ERAS[0], KEEP_IDENTICAL_PREVIOUS: ERAS[-1]}
#: the distinct serializer rule sets: the analysis keeps one running serialization per set
LANE_RULES: tuple[SerializerRules, ...] = tuple({era.rules.name: era.rules for era in ERAS}.values())


def default_era(provider: str | None, date: str | None) -> SerializerEra:
    """The newest era the assistant's provider id allows whose first date is not after the call's date;
    with no date (or a date before all of them), the newest the provider allows."""
    compatible = [p for p in ERAS if provider is None or provider in p.providers] or list(ERAS)
    if date:
        dated = [p for p in compatible if p.since <= date]
        if dated:
            return dated[-1]
    return compatible[-1]


def external_era(session: Session) -> SerializerEra | None:
    """The session's build as the `profile` analyzer detected it (`core.agents.senpi.profiles`), mapped to the
    newest serializer era of the same dedupe rule at that build's date (releases of one day count as one);
    None without that analyzer."""
    tracker = session.analyzer(ProfileTracker)
    if tracker is None:
        return None
    build = tracker.profile
    date, dedupe = build.since_date, build.dedupe
    if dedupe not in ERA_BY_DEDUPE:
        return None
    fits = [p for p in ERAS if p.since <= date and p.dedupe == dedupe]
    return fits[-1] if fits else ERA_BY_DEDUPE[dedupe]


def call_basis(turn: Turn) -> tuple[str | None, int | None, str | None]:
    """(serializer, count, where the decision came from) for one call; serializer None when unknowable.

    The assistant's own diagnostic comes first (it is what the agent did), then the replay's recomputed
    decision, then a log line attributed by time. A terminal failure logged no usable decision, so the
    replay's decision (what the failed attempt was about to send) is used when there is one.
    """
    if turn.api is not None and turn.api != API_ID:
        return None, None, None
    logged, recomputed = turn.logged, turn.recomputed
    candidates: list[tuple[str, int | None, str]] = []
    if logged is not None and logged.source == "diagnostic":
        candidates.append((logged.kind, logged.count, "logged"))
    if recomputed is not None:
        candidates.append((recomputed.kind, recomputed.count, "recomputed"))
    if logged is not None and logged.source != "diagnostic":
        candidates.append((logged.kind, logged.count, "log"))
    for kind, count, source in candidates:
        serializer = serializer_of(kind, count)
        if serializer is not None:
            return serializer, count, source
        if not _terminal(kind, count):
            return None, count, source
    return None, None, candidates[0][2] if candidates else None


def serializer_of(kind: str, count: int | None) -> str | None:
    if kind in FLATTEN_KINDS or (kind == "flatten" and count is not None):
        return FLATTEN
    if kind in DELTA_KINDS and count is not None:
        return DELTA
    return None


def _terminal(kind: str, count: int | None) -> bool:
    return kind in TERMINAL_KINDS or (kind == "flatten" and count is None)


def stable_bytes(turn: Turn) -> int | None:
    """What the call would have sent had the fingerprint been stable: a delta of the messages that were new
    since the previous call when the replay found the re-send avoidable, else what it did send."""
    info = payload_info(turn)
    if turn.avoidable and info is not None:
        return info.delta_if_stable
    return turn.payload_bytes


def prompt_tokens(tokens: Mapping[str, int] | None) -> int | None:
    """Prompt tokens the provider billed: input + cache read + cache write (None without usage)."""
    if not tokens:
        return None
    parts = [tokens[k] for k in ("input", "cache_read", "cache_write") if k in tokens]
    return sum(parts) if parts else None
