"""`named_rows` counts only the rows that name a session (`named_mask`, from the session column's bytes) and
gives what counting every row gives."""

from __future__ import annotations

import random
from array import array

import pytest

from core.kernel.logcols import LogColumns, named_mask
from core.logblock import NO_SESSION
from core.report import calls
from core.report.calls import named_rows


def rows_of(seed: int, n: int) -> LogColumns:
    rng = random.Random(seed)
    cols = LogColumns()
    rows = cols.continuity
    ids = [f"s{i}" for i in range(rng.choice([1, 3, 300]))]
    share = rng.choice([0.0, 0.1, 0.5, 1.0])
    for name in ids:
        cols.sessions.code(name)
    rows.session = array("i", (cols.sessions.code(rng.choice(ids)) if rng.random() < share else NO_SESSION
                               for _ in range(n)))  # fmt: skip
    rows.kind = array("B", (rng.randrange(5) for _ in range(n)))
    rows.ts = array("q", [0]) * n
    return cols


def unmasked(monkeypatch: pytest.MonkeyPatch, *args: object) -> object:
    with monkeypatch.context() as patch:
        patch.setattr(calls, "named_mask", lambda codes: None)
        return named_rows(*args)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(12))
def test_named_rows_equal_counting_every_row(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    cols = rows_of(seed, random.Random(seed).randint(0, 4000))
    rows = cols.continuity
    keep = [random.Random(seed + 1).random() < 0.7 for _ in range(len(rows))]
    for selection in (None, keep):
        fast = named_rows(rows, selection)
        exact = unmasked(monkeypatch, rows, selection)
        assert fast == exact
        assert [list(by_kind) for _, by_kind in fast.values()] == [list(b) for _, b in exact.values()]  # type: ignore[union-attr]
        assert list(fast) == list(exact)  # type: ignore[arg-type]


def test_the_mask_marks_named_rows_and_refuses_codes_it_cannot_read() -> None:
    assert named_mask(array("i", [NO_SESSION, 0, 5, NO_SESSION, 2**30])) == bytes([0, 1, 1, 0, 1])
    assert named_mask(array("i", [0, -2])) is None  # a negative code other than -1
    assert named_mask(array("i", [-(2**24)])) is None
    assert named_mask(array("I", [0, 1])) is None  # not signed codes
    assert named_mask(array("i")) == b""
    for typecode in "bhiq":  # a session column starts one byte wide and widens (`core.kernel.logcols`)
        codes = array(typecode, [NO_SESSION, 0, 100, NO_SESSION, 127])
        assert named_mask(codes) == bytes([0, 1, 1, 0, 1]), typecode
        assert named_mask(array(typecode, [3, -2])) is None, typecode
        assert named_mask(array(typecode, [3, -100])) is None, typecode
