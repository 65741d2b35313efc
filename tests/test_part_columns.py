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


@pytest.mark.parametrize("typecode", ["b", "h", "i"])  # a session column starts one byte wide and widens
@pytest.mark.parametrize("seed", range(20))
def test_session_codes_translated_by_bytes_equal_the_pass_per_row(seed: int, typecode: str) -> None:
    rng = random.Random(seed)
    names = rng.choice([1, 2, 17, 127] if typecode == "b" else [1, 2, 17, 254, 255, 300])
    table = rng.sample(range(100_000), names)
    n = rng.randint(1, 3000)
    column = array(typecode, (rng.choice([NO_SESSION, rng.randrange(names)]) for _ in range(n)))
    expected = _mapped("i", [*table, NO_SESSION].__getitem__, column)
    got = _sessions_through(table, column)
    assert list(got) == list(expected)


def test_a_one_byte_column_never_reads_a_negative_code_as_a_session() -> None:
    """In a one-byte column a byte past 127 is a negative code (only -1 is written): the byte tables would have
    read 200 as session 200 of a 201-name vocabulary; it goes as the pass per row takes it."""
    table = list(range(1000, 1201))
    column = array("b", [0, -56, NO_SESSION])
    assert list(_sessions_through(table, column)) == list(_mapped("i", [*table, NO_SESSION].__getitem__, column))
    assert _sessions_through(table, column)[1] != 1200
