"""Counts, reasons, streaks, peak and rates over continuity lines."""

from __future__ import annotations

from core.kernel.stats import LogStats
from core.model import CloseLine, ContinuityLine, Where
from core.timeutil import iso_ms

T0 = 1_786_000_000_000


def line(i: int, kind: str, reason: str, count: int | None = None, ts_ms: int | None = None) -> ContinuityLine:
    ts = ts_ms if ts_ms is not None else T0 + i * 1000
    return ContinuityLine(Where("/l", i + 1, i * 100), iso_ms(ts) or "", ts, kind, reason, count)


def feed(*lines: ContinuityLine) -> LogStats:
    stats = LogStats()
    for item in lines:
        stats.add_continuity(item)
    return stats


def test_all_five_kinds_always_listed_and_others_added() -> None:
    stats = feed(line(0, "delta", "prefix_matched", 1), line(1, "failed", "query_failed"))
    assert stats.kinds() == {"bootstrap": 0, "delta": 1, "fork": 0, "flatten": 0, "disabled": 0, "failed": 1}
    assert LogStats().kinds() == {"bootstrap": 0, "delta": 0, "fork": 0, "flatten": 0, "disabled": 0}


def test_resend_share_counts_fork_and_flatten_only() -> None:
    stats = feed(
        line(0, "bootstrap", "registry_miss", 1),
        line(1, "fork", "assistant_rewritten", 2),
        line(2, "flatten", "assistant_rewritten", 5),
        line(3, "failed", "query_failed"),
    )
    assert stats.resend_share() == 0.5
    assert LogStats().resend_share() is None
    assert stats.by_reason["assistant_rewritten"] == {"fork": 1, "flatten": 1}


def test_streaks_are_maximal_runs_excluding_delta_and_singletons() -> None:
    stats = feed(
        line(0, "delta", "prefix_matched", 1),
        line(1, "delta", "prefix_matched", 1),  # delta runs never count
        line(2, "fork", "assistant_rewritten", 2),  # single: not a streak
        line(3, "flatten", "assistant_rewritten", 4),
        line(4, "flatten", "assistant_rewritten", 6),
        line(5, "flatten", "assistant_rewritten", 8),
        line(6, "flatten", "idle_ttl", 9),  # same kind, other reason: breaks the run
        line(7, "flatten", "idle_ttl", 10),
    )
    streaks = stats.all_streaks()
    assert [(s.kind, s.reason, s.length, s.count_first, s.count_last) for s in streaks] == [
        ("flatten", "assistant_rewritten", 3, 4, 8),
        ("flatten", "idle_ttl", 2, 9, 10),  # the open run at the end qualifies too
    ]
    assert streaks[0].start_ms == T0 + 3000 and streaks[0].end_ms == T0 + 5000
    assert streaks[0].start_text() == iso_ms(T0 + 3000)  # canonical times are not kept as text


def test_equal_length_streaks_sort_by_start() -> None:
    stats = feed(
        line(0, "fork", "a", 1), line(1, "fork", "a", 2), line(2, "delta", "prefix_matched", 1),
        line(3, "fork", "b", 1), line(4, "fork", "b", 2),
    )  # fmt: skip
    assert [s.reason for s in stats.all_streaks()] == ["a", "b"]


def test_close_lines_do_not_break_a_streak() -> None:
    stats = LogStats()
    stats.add_continuity(line(0, "fork", "idle_ttl", 1))
    stats.add_close(CloseLine(Where("/l", 2, 0), "t", T0, "idle_ttl"))
    stats.add_continuity(line(2, "fork", "idle_ttl", 1))
    assert stats.all_streaks()[0].length == 2
    assert stats.closes == {"idle_ttl": 1}


def test_peak_is_the_largest_count_on_resend_or_bootstrap_lines() -> None:
    stats = feed(
        line(0, "delta", "prefix_matched", 500),  # deltas never peak
        line(1, "flatten", "assistant_rewritten", 132),
        line(2, "fork", "assistant_rewritten", 132),  # a tie keeps the first
        line(3, "flatten", "query_failed"),
    )
    assert stats.peak is not None
    assert (stats.peak.value, stats.peak.kind, stats.peak.at) == (132, "flatten", iso_ms(T0 + 1000))


def test_rates_per_minute_over_ten_minutes() -> None:
    now = T0 + 20 * 60_000
    stats = feed(
        line(0, "flatten", "x", 1, ts_ms=now - 11 * 60_000),  # outside the window
        line(1, "flatten", "x", 1, ts_ms=now - 5 * 60_000),
        line(2, "delta", "prefix_matched", 1, ts_ms=now - 60_000),
        line(3, "delta", "prefix_matched", 1, ts_ms=now - 1000),
    )
    rates = stats.rates_per_minute(now)
    assert rates["flatten"] == 0.1 and rates["delta"] == 0.2 and rates["fork"] == 0.0
    # historical data: the window ends at the newest line, not at wall-clock now
    assert stats.window_end(now + 3_600_000) == now - 1000
    assert stats.window_end(now) == now


def test_the_streak_table_is_all_streaks_read_from_the_columns() -> None:
    """`streak_table` (the report's streaks, made in C passes) gives `all_streaks`, field for field and in its
    order: ties of length and start broken by start text, unusable times (NO_TIME starts sort as 0), times kept
    as text, counts outside int64, and the open run."""
    import random

    from core.kernel.stats import Streak, Streaks

    rng = random.Random(7)
    for _ in range(40):
        finished = []
        for _ in range(rng.randrange(0, 60)):
            start_ms = rng.choice([None, 0, T0, T0 + 1000, T0 + 2000, -5])
            text = rng.choice(["", "", "2026-13-01T00:00:00Z", "noon", "2025-01-01T00:00:00+02:00"])
            first = rng.choice([None, 1, 7, 2**70, -(2**64)])
            finished.append(Streak(rng.choice(["fork", "flatten", "bootstrap"]), rng.choice(["a", "b", "c"]),
                                   rng.randrange(2, 5), start_ms, rng.choice([None, T0 + 5000]), text,
                                   rng.choice(["", "late"]), first, rng.choice([None, 3, 2**65])))  # fmt: skip
        stats = LogStats()
        stats.streaks = Streaks.of(finished)
        stats.run = rng.choice([None, Streak("delta", "x", 9, T0, T0, "", "", 1, 2),
                                Streak("fork", "a", rng.randrange(1, 5), T0, T0 + 1, "", "", None, None)])  # fmt: skip
        expected = [(s.kind, s.reason, s.length, s.start_ms, s.end_ms, s.start, s.end, s.count_first, s.count_last)
                    for s in stats.all_streaks()]  # fmt: skip
        assert stats.streak_table() == expected
