"""The report's `waste` section, each session's `waste` and each call's `cost_usd` (schema "Additions").

How much did re-writing already-cached history cost, and why: the tokens a warm cache would have read that
calls processed again (`turns[].cache.excess`, the cache rule's), by cause, and what they cost beyond cache
hits at list prices, beside what the calls cost (`core.kernel.waste`). The section names the calls with the
largest excess, so every figure can be traced to the calls it adds up (`top`), and where the prices come
from (`pricing`: the bundled table's source and date, a `--prices` file, the models no price was found for).
For senpi sessions, whose resident lane logs its own decisions instead of cache figures, the avoidable
re-sends of the stable-fingerprint replay (`counterfactual`) stand in the same place.

The metrics (`core.report.openmetrics`) read the same per-call figures (`core.kernel.waste.call_waste`).
"""

from __future__ import annotations

from types import EllipsisType
from typing import Any

from core.kernel.pricing import BUNDLED, PriceTable
from core.kernel.waste import CallWaste, WasteStats, call_waste, lifetime_name
from core.model import Turn
from core.report.values import iso, opt_text, text
from core.state import SessionState

Selected = list[tuple[SessionState, list[Turn]]]

#: dollars in the report: 6 decimals (a call's excess can be a fraction of a cent)
USD_DIGITS = 6


def waste_stats(
    selected: Selected, prices: PriceTable = BUNDLED, figures: dict[int, CallWaste | None] | None = None
) -> tuple[WasteStats, dict[str, WasteStats]]:
    """Totals over the selection and per session (by session key). `figures` (by `id(turn)`) keeps each call's
    figures for `turn_cost`, which would otherwise compute them a second time per call."""
    total = WasteStats()
    per_session: dict[str, WasteStats] = {}
    for session, turns in selected:
        stats = WasteStats()
        agent = session.agent.name
        for turn in turns:
            waste = call_waste(turn, prices)
            if figures is not None:
                figures[id(turn)] = waste
            stats.add(turn, waste, agent, session.session_id)
        per_session[session.key] = stats
        total.merge(stats)
    return total, per_session


def usd(value: float | None) -> float | None:
    return None if value is None else round(value, USD_DIGITS)


def waste_section(
    stats: WasteStats, prices: PriceTable, counterfactual: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """`waste`: null when no call was judged from cache figures and no senpi replay ran."""
    senpi = _senpi(counterfactual)
    if not stats.calls and senpi is None:
        return None
    causes = stats.causes()
    pricing = prices.describe()
    pricing["unpriced_calls"] = stats.unpriced
    pricing["unpriced_models"] = {text(model, 200): n for model, n in stats.unpriced_models.most_common(20)}
    pricing["actual_from"] = {text(source): n for source, n in stats.sources.most_common()}
    return {
        "calls": stats.calls,
        "excess_tokens": stats.excess,
        "share": stats.share,
        "not_read_tokens": stats.not_read,
        "by_cause": {text(cause): n for cause, n in causes},
        # the lifetimes that ran out, in excess tokens of the expired calls ("5 min", "1 h")
        "expired_after": dict(stats.expired.most_common()),
        "calls_by_cause": {text(cause): stats.calls_by_cause[cause] for cause, _ in causes},
        "cost_usd": {
            "actual": usd(stats.actual),
            "excess": usd(stats.excess_cost),
            "by_cause": {text(c): usd(stats.usd_by_cause[c]) for c, _ in causes if c in stats.usd_by_cause},
            "excess_unpriced_tokens": stats.unpriced_excess,
        },
        "pricing": pricing,
        # what the calls wrote or sent uncached, by reason: the waste beside the expected cost of new content
        # (first calls, compactions, deltas)
        "not_read_by_reason": {text(reason): n for reason, n in stats.not_read_by_reason.most_common()},
        "by_agent": {
            text(agent): {"excess_tokens": int(tokens), "excess_usd": usd(cost)}
            for agent, (tokens, cost) in sorted(stats.by_agent.items())
        },
        "top": [_top(call) for call in stats.largest()],
        "counterfactual": senpi,
    }


def session_waste(stats: WasteStats) -> dict[str, Any] | None:
    """`sessions[].waste`: the session's excess, share, cost and causes; null for a session with no call judged
    from cache figures and no priced call."""
    if not stats.calls and not stats.priced:
        return None
    return {
        "excess_tokens": stats.excess,
        "share": stats.share,
        "by_cause": {text(cause): n for cause, n in stats.causes()},
        "cost_usd": {"actual": usd(stats.actual), "excess": usd(stats.excess_cost)},
    }


def turn_cost(turn: Turn, prices: PriceTable, waste: CallWaste | EllipsisType | None = ...) -> dict[str, Any] | None:
    """`turns[].cost_usd`: what the call cost (its agent's figure, else list price) and what its excess cost;
    null for a copy of another session's call or a call with no usage. `waste`: its figures when known."""
    if waste is ...:
        waste = call_waste(turn, prices)
    if waste is None:
        return None
    return {"actual": usd(waste.actual_usd), "source": opt_text(waste.actual_source),
            "excess": usd(waste.excess_usd)}  # fmt: skip


def usd_text(value: object) -> str:
    """'$1.83' (under a cent: '$0.0042'); '–' for no figure."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "–"
    return f"${value:,.2f}" if value == 0 or abs(value) >= 0.01 else f"${value:,.4f}"


def gap_text(gap_ms: object, ttl_ms: object = None) -> str:
    """'19 min / 5 min': the idle gap before a call against the lifetime of what it did not read back."""
    if not isinstance(gap_ms, int) or isinstance(gap_ms, bool):
        return "–"
    if gap_ms < 120_000:
        gap = f"{gap_ms / 1000:.0f} s"
    elif gap_ms < 7_200_000:
        gap = f"{gap_ms / 60_000:.0f} min"
    else:
        gap = f"{gap_ms / 3_600_000:.1f} h"
    return f"{gap} / {lifetime_name(ttl_ms)}" if isinstance(ttl_ms, int) else gap


def _top(call: dict[str, Any]) -> dict[str, Any]:
    return {
        "session": text(call["session"]),
        "index": call["index"],
        "entry_id": opt_text(call["entry_id"]),
        "ts": iso(call["ts_ms"], call["ts"]),
        "cause": opt_text(call["cause"]),
        "excess": call["excess"],
        "excess_usd": usd(call["excess_usd"]),
        "expected_read": call["expected_read"],
        "cache_read": call["cache_read"],
        "cache_write": call["cache_write"],
        "gap_ms": call["gap_ms"],
        "ttl_ms": call["ttl_ms"],
        "model": opt_text(call["model"]),
        # where the prompts parted (a prefix re-write) and what the user side added before the call
        "where": opt_text(call["where"]),
        "after": [text(item, 80) for item in call["after"]] if call["after"] else None,
    }


def _senpi(cf: dict[str, Any] | None) -> dict[str, Any] | None:
    """senpi's counterfactual as waste: the re-sends a stable fingerprint avoids, their bytes and messages."""
    if not isinstance(cf, dict) or cf.get("resends_logged") is None:
        return None
    sent, stable = cf.get("bytes_logged"), cf.get("bytes_if_stable")
    avoidable = sent - stable if isinstance(sent, int) and isinstance(stable, int) else None
    return {
        "resends": cf.get("resends_logged"),
        "resends_avoidable": cf.get("resends_avoidable"),
        "bytes_avoidable": avoidable,
        "messages_avoidable": cf.get("messages_resent_avoidable"),
    }


__all__ = ["gap_text", "session_waste", "turn_cost", "usd_text", "waste_section", "waste_stats"]
