"""Prompt-cache waste per call and over many: tokens a warm cache would have read, processed again, and what
they cost, by cause (issue 14; reference/report-schema.md, "Additions": `waste`).

Every figure comes from the call's own evidence, never recomputed elsewhere:

- `excess` is the cache rule's (`core.kernel.cache_verdict`: on a re-send, min(tokens not read from cache,
  expected read - cache read)); its cause is the call's reason: `cache_expired`, `prefix_rewritten`,
  `cache_miss`, `resume`, or the reason of a fork (`rewind`, `branch`, …), except that a fork whose cache had
  expired anyway is `cache_expired` (`waste_cause`). A compaction, a first call, a call
  below the cache minimum or with caching not in use has none: what it wrote is the expected cost of new
  content, not waste (`not_read_by_reason` shows those writes beside the waste);
- the share is excess / (cache write + uncached input) over the same calls: of what was not read from cache,
  the part a warm cache would have read;
- the actual cost of a call is what its agent wrote (pi's `usage.cost.total`) or, where it writes none, the list
  price of its tokens (`core.kernel.pricing`); the excess cost is its excess at the write price of its write
  lifetime (5 m / 1 h) minus the read price. A call of a model without a price adds to neither and is counted
  (`unpriced`): a total in dollars is never a guess.

Only calls of the session that holds them count (a copy of another session's call counts there), and only
calls judged from cache figures have an excess (senpi's resident lane logs its own decisions: its avoidable
re-sends are the counterfactual's, shown beside). Pure: fed turns, in any order.
"""

from __future__ import annotations

import heapq
from collections import Counter
from typing import Any

from msgspec import Struct, field

from core.kernel.pricing import PriceTable, call_cost, excess_cost
from core.model import ABORTED, Turn

__all__ = [
    "CAUSES",
    "CAUSE_TEXT",
    "CallWaste",
    "WasteStats",
    "call_waste",
    "cause_text",
    "lifetime_name",
    "waste_cause",
]

#: the causes of re-written cache in display order (a fork's reason follows them)
CAUSES: tuple[str, ...] = ("cache_expired", "prefix_rewritten", "cache_miss", "resume")
#: calls listed by name in a summary (the largest excess first)
TOP = 10

#: what each cause means, in words a reader of the first line knows (the reason stays beside it, as code)
CAUSE_TEXT: dict[str, str] = {
    "cache_expired": "cache expiry after an idle gap",
    "prefix_rewritten": "prefix rewrites",
    "cache_miss": "cache misses within the lifetime",
    "resume": "resumed sessions",
    "rewind": "rewinds",
    "branch": "branch switches",
    "branched_session": "branched sessions",
}


def cause_text(cause: str, lifetimes: dict[str, int] | None = None) -> str:
    """'cache expiry after > 5 min idle' (the lifetimes the expired writes had), 'prefix rewrites', …"""
    if cause == "cache_expired" and lifetimes:
        spans = [name for name in ("5 min", "1 h") if lifetimes.get(name)]
        if spans:
            return f"cache expiry after > {' / '.join(spans)} idle"
    return CAUSE_TEXT.get(cause, cause.replace("_", " "))


def lifetime_name(ttl_ms: object) -> str:
    """'5 min' / '1 h' for the two Anthropic lifetimes, else minutes."""
    if ttl_ms == 300_000:
        return "5 min"
    if ttl_ms == 3_600_000:
        return "1 h"
    return f"{ttl_ms // 60_000} min" if isinstance(ttl_ms, int) else "?"


class CallWaste(Struct, frozen=True):
    """One call's share of the waste figures."""

    judged: bool  # judged from cache figures: it has an excess (maybe 0) and counts in the share
    excess: int
    cause: str | None  # the call's reason when it has an excess
    not_read: int  # cache write + uncached input
    actual_usd: float | None
    actual_source: str | None  # "agent" (the agent wrote its cost) | "list" (list prices) | None (unpriced)
    excess_usd: float | None
    model: str | None
    ttl_ms: int | None = None  # the lifetime the gap was measured against (Anthropic-style usage)


def waste_cause(reason: str, evidence: dict[str, Any] | None) -> str:
    """What made a call write its history again: its reason, unless the cache had expired by the time of a
    structural re-send (a rewind or branch after the lifetime: the cache's own reading, `cache_reason`, is kept
    in its evidence). Then the expiry alone explains the write: the real hive session rewinds after 12.9 h idle,
    where a 5-minute cache was long gone, and its 0.37 USD belong to idle expiry, not to the rewind."""
    if evidence is not None and evidence.get("cache_reason") == "cache_expired":
        return "cache_expired"
    return reason


def call_waste(turn: Turn, prices: PriceTable) -> CallWaste | None:
    """The waste figures of one call; None for a copy of another session's call or a call with no usage."""
    if turn.copied_from is not None or turn.no_usage or turn.kind == ABORTED:
        return None
    tokens = turn.tokens or {}
    ev = turn.cache if isinstance(turn.cache, dict) else None
    judged = ev is not None and isinstance(ev.get("rule"), str)
    write_5m = _int(ev.get("write_5m")) if ev is not None else None
    write_1h = _int(ev.get("write_1h")) if ev is not None else None
    price = prices.lookup(turn.model)
    agent = ev.get("agent_cost_usd") if ev is not None else None
    if isinstance(agent, int | float) and not isinstance(agent, bool):
        actual, source = float(agent), "agent"
    else:
        actual = call_cost(price, tokens, write_5m, write_1h)
        source = "list" if actual is not None else None
    excess = (_int(ev.get("excess")) or 0) if judged and ev is not None else 0
    cause = waste_cause(turn.reason, ev) if excess else None
    not_read = (tokens.get("cache_write") or 0) + (tokens.get("input") or 0)
    excess_usd = excess_cost(price, excess, tokens, write_5m, write_1h) if excess else 0.0
    ttl = _int(ev.get("ttl_ms")) if ev is not None else None
    return CallWaste(judged, excess, cause, not_read, actual, source, excess_usd, turn.model, ttl)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class WasteStats(Struct):
    """Sums of `CallWaste` over the calls fed (one session, a selection, everything read)."""

    calls: int = 0  # calls judged from cache figures
    excess: int = 0
    not_read: int = 0
    by_cause: Counter[str] = field(default_factory=Counter)
    calls_by_cause: Counter[str] = field(default_factory=Counter)
    usd_by_cause: dict[str, float] = field(default_factory=dict)
    not_read_by_reason: Counter[str] = field(default_factory=Counter)
    actual_usd: float = 0.0
    priced: int = 0  # calls with an actual cost
    sources: Counter[str] = field(default_factory=Counter)
    excess_usd: float = 0.0
    unpriced: int = 0  # calls with usage but no price (no actual cost)
    unpriced_excess: int = 0  # excess tokens of calls whose excess has no price
    unpriced_models: Counter[str] = field(default_factory=Counter)
    by_agent: dict[str, list[float]] = field(default_factory=dict)  # agent -> [excess tokens, excess usd]
    #: excess tokens of the expired calls by the lifetime that ran out ("5 min", "1 h")
    expired: Counter[str] = field(default_factory=Counter)
    top: list[tuple[int, int, dict[str, Any]]] = field(default_factory=list)  # heap of (excess, seq, call)
    _seq: int = 0

    def add(self, turn: Turn, waste: CallWaste | None, agent: str = "", session: str = "") -> None:
        if waste is None:
            return
        if waste.actual_usd is not None:
            self.actual_usd += waste.actual_usd
            self.priced += 1
            if waste.actual_source:
                self.sources[waste.actual_source] += 1
        else:
            self.unpriced += 1
            self.unpriced_models[waste.model or "(no model)"] += 1
        if not waste.judged:
            return
        self.calls += 1
        self.not_read += waste.not_read
        self.not_read_by_reason[turn.reason or "unknown"] += waste.not_read
        if not waste.excess:
            return
        cause = waste.cause or "unknown"
        self.excess += waste.excess
        self.by_cause[cause] += waste.excess
        self.calls_by_cause[cause] += 1
        if cause == "cache_expired":
            self.expired[lifetime_name(waste.ttl_ms)] += waste.excess
        slot = self.by_agent.setdefault(agent, [0, 0.0])
        slot[0] += waste.excess
        if waste.excess_usd is None:
            self.unpriced_excess += waste.excess
        else:
            self.excess_usd += waste.excess_usd
            self.usd_by_cause[cause] = self.usd_by_cause.get(cause, 0.0) + waste.excess_usd
            slot[1] += waste.excess_usd
        self._seq += 1
        item = (waste.excess, -self._seq, _call_ref(turn, waste, session))
        if len(self.top) < TOP:
            heapq.heappush(self.top, item)
        elif item[:2] > self.top[0][:2]:
            heapq.heapreplace(self.top, item)

    def merge(self, other: WasteStats) -> None:
        """Add another set's sums (a session's into the totals)."""
        self.calls += other.calls
        self.excess += other.excess
        self.not_read += other.not_read
        self.by_cause.update(other.by_cause)
        self.calls_by_cause.update(other.calls_by_cause)
        for cause, usd in other.usd_by_cause.items():
            self.usd_by_cause[cause] = self.usd_by_cause.get(cause, 0.0) + usd
        self.not_read_by_reason.update(other.not_read_by_reason)
        self.expired.update(other.expired)
        self.actual_usd += other.actual_usd
        self.priced += other.priced
        self.sources.update(other.sources)
        self.excess_usd += other.excess_usd
        self.unpriced += other.unpriced
        self.unpriced_excess += other.unpriced_excess
        self.unpriced_models.update(other.unpriced_models)
        for agent, (tokens, usd) in other.by_agent.items():
            slot = self.by_agent.setdefault(agent, [0, 0.0])
            slot[0] += tokens
            slot[1] += usd
        for item in other.top:
            self._seq += 1
            moved = (item[0], -self._seq, item[2])
            if len(self.top) < TOP:
                heapq.heappush(self.top, moved)
            elif moved[:2] > self.top[0][:2]:
                heapq.heapreplace(self.top, moved)

    def copy(self) -> WasteStats:
        """An independent copy (a summary that goes on counting while the old one is on screen)."""
        out = WasteStats()
        out.merge(self)
        return out

    # ------------------------------------------------------------------ reading
    @property
    def share(self) -> float | None:
        """excess / (cache write + uncached input) over the judged calls, 4 decimals; None without any."""
        return round(self.excess / self.not_read, 4) if self.not_read else None

    def causes(self) -> list[tuple[str, int]]:
        """(cause, excess tokens), largest first (then in `CAUSES` order, then by name)."""
        rank = {cause: i for i, cause in enumerate(CAUSES)}
        return sorted(self.by_cause.items(), key=lambda kv: (-kv[1], rank.get(kv[0], 99), kv[0]))

    @property
    def actual(self) -> float | None:
        """What the calls cost; None when no call had a price."""
        return self.actual_usd if self.priced else None

    @property
    def excess_cost(self) -> float | None:
        """What the excess cost beyond cache hits; None when there was excess and none of it had a price."""
        if self.excess and self.unpriced_excess == self.excess:
            return None
        return self.excess_usd

    def largest(self) -> list[dict[str, Any]]:
        """The calls with the largest excess, largest first (the figures a summary can be traced to)."""
        return [item[2] for item in sorted(self.top, key=lambda item: (-item[0], -item[1]))]


def _call_ref(turn: Turn, waste: CallWaste, session: str) -> dict[str, Any]:
    ev = turn.cache or {}
    return {
        "session": session or turn.session,
        "index": turn.index,
        "entry_id": turn.entry_id,
        "ts_ms": turn.ts_ms,
        "ts": turn.ts,
        "cause": waste.cause,
        "excess": waste.excess,
        "excess_usd": waste.excess_usd,
        "expected_read": ev.get("expected_read"),
        "cache_read": ev.get("cache_read"),
        "cache_write": ev.get("cache_write"),
        "gap_ms": ev.get("gap_ms"),
        "ttl_ms": ev.get("ttl_ms"),
        "model": turn.model,
        "where": changed.get("where") if isinstance(changed := ev.get("changed_at"), dict) else None,
        "after": list(new) if isinstance(new := ev.get("new_input"), list | tuple) else None,
    }
