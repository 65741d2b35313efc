"""`canonical_ms_column` (a block's canonical times added up a column at a time) equals `parse_iso_ms` time for
time, and refuses every column it cannot vouch for (the caller then converts the texts one by one)."""

from __future__ import annotations

import random

import pytest

from core.timeutil import canonical_ms_column, iso_ms, parse_iso_ms

GOOD = "2026-01-01T08:00:28.405Z"


def exact(texts: list[str]) -> list[int | None]:
    return [parse_iso_ms(text) for text in texts]


@pytest.mark.parametrize("seed", range(40))
def test_random_canonical_columns_equal_the_per_text_rule(seed: int) -> None:
    rng = random.Random(seed)
    low = rng.choice([2_678_400_000, 10**12, 1_700_000_000_000, 4_000_000_000_000, 7_200_000_000_000])
    span = rng.choice([1_000, 86_400_000, 31 * 86_400_000, 20 * 365 * 86_400_000])
    texts = [iso_ms(low + rng.randrange(span)) or "" for _ in range(rng.randint(1, 4000))]
    column = canonical_ms_column(texts)
    if column is None:  # only when the times span two 256-month pages or pass 2199
        keys = {(int(t[:4]) * 12 + int(t[5:7])) >> 8 for t in texts}
        assert len(keys) > 1 or max(texts) >= "2200"
    else:
        assert list(column) == exact(texts)


def test_every_day_of_the_calendar_and_every_field_bound() -> None:
    days = [iso_ms(day * 86_400_000 + 86_399_999) or "" for day in range(31, 84_000, 7)]
    for at in range(0, len(days), 500):
        texts = days[at : at + 500]
        column = canonical_ms_column(texts)
        if column is not None:
            assert list(column) == exact(texts)
    edges = ["2024-02-29T23:59:59.999Z", "2026-07-31T00:00:00.000Z", "1970-02-01T00:00:00.000Z",
             "2199-12-31T23:59:59.999Z", "2100-02-28T12:00:00.000Z", "2000-02-29T00:00:00.000Z"]  # fmt: skip
    for text in edges:
        column = canonical_ms_column([text])
        assert column is not None and list(column) == exact([text]), text


@pytest.mark.parametrize(
    "odd",
    [
        "2026-02-29T08:00:28.405Z",  # no such day
        "2100-02-29T08:00:28.405Z",  # not a leap year
        "2024-02-30T00:00:00.000Z",
        "2026-04-31T00:00:00.000Z",
        "2026-13-01T00:00:00.000Z",
        "2026-00-01T00:00:00.000Z",
        "2026-01-00T00:00:00.000Z",
        "2026-01-01T24:00:00.000Z",
        "2026-01-01T23:60:00.000Z",
        "2026-01-01T23:59:60.000Z",  # leap second: fromisoformat refuses it
        "1970-01-01T00:00:00.000Z",  # the day before January 1970 is negative
        "1969-12-31T23:59:59.999Z",
        "2200-01-01T00:00:00.000Z",
        "2026-01-01T08:00:28.405+",
        "2026-01-01 08:00:28.405Z",  # a space: fromisoformat takes it, but it is not the canonical text
        "2026-01-01t08:00:28.405z",
        "２026-01-01T08:00:28.405Z",  # a fullwidth digit
        "2026-01-01T08:00:28.4055",
        "2026-01-01T08:00:28.40Z",
        "2026-01-01T08:00:28.405Z\0",
        "",
    ],
)
def test_a_column_with_one_odd_time_is_refused(odd: str) -> None:
    assert canonical_ms_column([GOOD] * 5 + [odd] + [GOOD] * 5) is None
    assert canonical_ms_column([odd]) is None


def test_lengths_that_add_up_to_canonical_ones_are_refused() -> None:
    """A 23- and a 25-character text side by side fill two canonical widths; the NUL after each text shows the
    seam is not where a canonical time ends."""
    assert canonical_ms_column(["2026-01-01T08:00:28.405", "Z2026-01-01T08:00:28.405Z"]) is None
    assert canonical_ms_column(["2026-01-01T08:00:28.405Z\x002026-01-01T08:00:28.405Z", ""]) is None


def test_the_typed_log_decoder_takes_the_column_and_falls_back_across_pages() -> None:
    from core.agents.senpi.formats.typed_log import TypedLog

    decoder = TypedLog(lambda *args: [])
    one_page = [iso_ms(1_700_000_000_000 + i * 700_000) or "" for i in range(3000)]
    two_pages = ["2026-07-31T23:59:59.999Z", "2026-08-01T00:00:00.000Z"]  # month keys 24319 | 24320
    assert canonical_ms_column(two_pages) is None
    for texts in (one_page, two_pages):
        kept: dict[int, str] = {}
        assert list(decoder._times(texts, kept, 0)) == exact(texts)
        assert kept == {}
