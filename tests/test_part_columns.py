"""A part's columns taken back by the state (`extend_translated`): line numbers moved by one addition of big
integers and session codes moved by byte translations give what a pass per row gives (`_mapped`), and every
column those cannot vouch for takes the pass per row."""

from __future__ import annotations

import random
from array import array

import pytest

from core.kernel.logcols import _mapped, _plus, _sessions_through
from core.logblock import NO_SESSION


@pytest.mark.parametrize("seed", range(20))
def test_line_numbers_moved_at_once_equal_the_pass_per_row(seed: int) -> None:
    rng = random.Random(seed)
    top = rng.choice([10, 70_000, 2**24 - 1, 2**24, 2**31, 2**32 - 10])
    column = array("I", sorted(rng.randrange(1, top) for _ in range(rng.randint(1, 3000))))
    base = rng.choice([1, 137, 1_000_000, 2**32 - top - 1, 2**32 - 5, 2**33])
    expected = _mapped("I", base.__add__, column)
    got = _plus(column, base)
    assert list(got) == list(expected)
    assert type(got) is type(expected)  # past 2**32 both are lists (the column widens)


def test_a_sum_past_the_lane_takes_the_pass_per_row() -> None:
    column = array("I", [1, 2, 2**32 - 1])
    assert _plus(column, 1) == [2, 3, 2**32]
    assert list(_plus(array("I", [5, 2**24 + 1]), 2**32 - 2**25)) == [2**32 - 2**25 + 5, 2**32 - 2**25 + 2**24 + 1]


@pytest.mark.parametrize("seed", range(20))
def test_session_codes_translated_by_bytes_equal_the_pass_per_row(seed: int) -> None:
    rng = random.Random(seed)
    names = rng.choice([1, 2, 17, 254, 255, 300])
    table = rng.sample(range(100_000), names)
    column = array("i", (rng.choice([NO_SESSION, rng.randrange(names)]) for _ in range(rng.randint(1, 3000))))
    expected = _mapped("i", [*table, NO_SESSION].__getitem__, column)
    got = _sessions_through(table, column)
    assert list(got) == list(expected)


def test_a_code_outside_the_table_is_not_translated_to_something() -> None:
    """A code the part's vocabulary does not have goes as the pass per row takes it (a byte table would have
    made it 0)."""
    column = array("i", [0, 1, 2, 5])
    with pytest.raises(IndexError):
        _mapped("i", [7, 8, NO_SESSION].__getitem__, column)
    with pytest.raises(IndexError):
        _sessions_through([7, 8], column)
    assert list(_sessions_through([7, 8], array("i", [0, 1, 2]))) == [7, 8, NO_SESSION]
    with pytest.raises(IndexError):
        _sessions_through([7, 8], array("i", [0, 1, 300]))
