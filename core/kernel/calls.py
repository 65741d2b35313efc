"""Aggregates over provider calls (every agent's), the way `stats.LogStats` aggregates senpi's log lines.

A call is one provider request with a kind (`core.model.CALL_KINDS`) and a reason, whatever told them: senpi's
diagnostic or log line, the replay, the prompt cache, the transcript's structure. The re-send share counts
fork, flatten and re-send among the calls that reported usage: an `aborted` call sent a request, but nothing
says what the provider processed, so it is neither a re-send nor a call that avoided one (pi: 48 re-sends of
910 calls with usage, 27 aborted left out). Streaks are runs of one (kind, reason) within one conversation
thread, as `continuity.streaks` are runs of log lines; the peak is the call with the largest payload.

Pure: fed (kind, reason, …) in order, thread by thread (`end_thread` between them).
"""

from __future__ import annotations

from collections import Counter

from msgspec import Struct, field

from core.kernel.stats import Streak, longest_first, qualifies
from core.model import ABORTED, CALL_KINDS, CALL_RESEND_KINDS


class CallPeak(Struct, frozen=True):
    """The call with the largest payload (`payload_bytes_raw`, before the agent's own dedupe)."""

    session: str
    index: int
    bytes: int


class CallStats(Struct):
    """Totals, kinds, reasons, per-agent totals, streaks and the largest payload over the calls fed."""

    total: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)
    by_reason: dict[str, Counter[str]] = field(default_factory=dict)
    by_agent: dict[str, Counter[str]] = field(default_factory=dict)
    by_evidence: Counter[str] = field(default_factory=Counter)
    tokens: Counter[str] = field(default_factory=Counter)
    streaks: list[Streak] = field(default_factory=list)  # finished runs that qualify
    run: Streak | None = None  # the current run of the thread being fed
    peak: CallPeak | None = None

    def add(
        self,
        kind: str,
        reason: str,
        *,
        agent: str = "",
        evidence: str | None = None,
        ts: str | None = None,
        ts_ms: int | None = None,
        count: int | None = None,
        tokens: dict[str, int] | None = None,
        payload_raw: int | None = None,
        session: str = "",
        index: int = 0,
    ) -> None:
        self.total += 1
        self.by_kind[kind] += 1
        reasons = self.by_reason.get(reason)
        if reasons is None:
            reasons = self.by_reason[reason] = Counter()
        reasons[kind] += 1
        agents = self.by_agent.get(agent)
        if agents is None:
            agents = self.by_agent[agent] = Counter()
        agents[kind] += 1
        if evidence is not None:
            self.by_evidence[evidence] += 1
        if tokens:
            for key in ("input", "cache_read", "cache_write", "output"):
                self.tokens[key] += tokens.get(key) or 0
        if payload_raw is not None and (self.peak is None or payload_raw > self.peak.bytes):
            self.peak = CallPeak(session, index, payload_raw)
        run = self.run
        if run is not None and run.kind == kind and run.reason == reason:
            run.length += 1
            run.end, run.end_ms, run.count_last = ts or run.end, ts_ms, count
            return
        self._close_run()
        self.run = Streak(kind, reason, 1, ts_ms, ts_ms, ts or "", ts or "", count, count)

    def end_thread(self) -> None:
        """The calls fed next belong to another thread (or session): no streak runs across the boundary."""
        self._close_run()
        self.run = None

    def _close_run(self) -> None:
        if self.run is not None and qualifies(self.run):
            self.streaks.append(self.run)

    def all_streaks(self) -> list[Streak]:
        """Finished runs plus the open one, longest first, then earliest (the contract's order)."""
        return longest_first(self.streaks, self.run)

    def kinds(self) -> dict[str, int]:
        """Every call kind always (a zero shows as a zero), then any other kind seen."""
        return kinds_of(self.by_kind)

    def resend_share(self) -> float | None:
        return resend_share(self.by_kind)


def kinds_of(counter: Counter[str] | dict[str, int]) -> dict[str, int]:
    """`CALL_KINDS` in display order with their counts, then any other kind seen (alphabetical: a stable order)."""
    out = {kind: counter.get(kind, 0) for kind in CALL_KINDS}
    for kind in sorted(k for k in counter if k not in out):
        out[kind] = counter[kind]
    return out


def resend_share(by_kind: Counter[str] | dict[str, int], digits: int | None = 4) -> float | None:
    """(fork + flatten + re-send) / (calls - aborted), to `digits` decimals (the report's 4), exact with None (what
    a screen formats: 6 of 573 is 0.0105 at 4 decimals, which a one-decimal percentage then showed as 1.1 % beside
    the report's 1.0 %); None when no call reported usage."""
    judged = sum(by_kind.values()) - by_kind.get(ABORTED, 0)
    if judged <= 0:
        return None
    share = sum(by_kind.get(kind, 0) for kind in CALL_RESEND_KINDS) / judged
    return share if digits is None else round(share, digits)


def resends(by_kind: Counter[str] | dict[str, int]) -> int:
    return sum(by_kind.get(kind, 0) for kind in CALL_RESEND_KINDS)


__all__ = ["CallPeak", "CallStats", "kinds_of", "resend_share", "resends"]
