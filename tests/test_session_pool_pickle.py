"""A parked session crosses the process boundary as calls of its dataclasses' own `__init__`
(`core.session_pool.dumps`): it loads to the very object graph the standard pickler gives (every field, every
shared object), on the simulator's corpus and senpi-live; a class the call could not rebuild (a hand-written
`__init__` or `__getstate__`, a slot that is no field, a `__post_init__`, a field `__init__` does not take) and a
cycle of such objects are pickled as before."""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import core.session_pool as sp
from core.demo.sim.generator import generate
from core.demo.sim.sink import DEFAULT_ROTATE_BYTES
from core.engine import Engine

REPO = Path(__file__).resolve().parent.parent
SENPI_LIVE = REPO.parent / "shared" / "realdata" / "senpi-live" / "agent"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("corpus") / "agent"
    generate(out, "corpus", seed=7, scale=1.0, rotate_bytes=DEFAULT_ROTATE_BYTES, sessions=21)
    return out


def _aparts(root: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[bytes, bytes]]:
    """(fast, standard) pickles of every transcript of `root` a worker reads apart, of the same `Apart` object."""
    taken: list[tuple[bytes, bytes]] = []
    dumps = sp.dumps

    def both(value: Any, *, fast: bool = True) -> bytes:
        data = dumps(value)
        taken.append((data, dumps(value, fast=False)))
        return data

    monkeypatch.setattr(sp, "dumps", both)
    for path, group, _ in sp.candidates(Engine([root], jobs=1)):
        sp.read_transcript(path, group)
    monkeypatch.setattr(sp, "dumps", dumps)
    return taken


@pytest.mark.parametrize("which", ["corpus", "senpi-live"])
def test_a_parked_session_loads_to_the_graph_the_standard_pickler_gives(
    which: str, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = corpus if which == "corpus" else SENPI_LIVE
    if not root.is_dir():
        pytest.skip(f"{root} is absent")
    pairs = _aparts(root, monkeypatch)
    assert len(pairs) >= (15 if which == "corpus" else 1)
    for fast, standard in pairs:
        # the standard pickler writes equal bytes for equal graphs (fields, sharing, order)
        assert sp.dumps(pickle.loads(fast), fast=False) == sp.dumps(pickle.loads(standard), fast=False)
        assert len(fast) < len(standard)


@dataclass(slots=True)
class Plain:
    a: int
    b: Any = None


@dataclass(slots=True)
class Posted:
    a: int
    seen: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.seen.append(self.a)


@dataclass(slots=True)
class NotInInit:
    a: int
    b: int = field(init=False, default=0)


@dataclass(slots=True)
class OwnState:
    a: int

    def __getstate__(self) -> tuple[int]:
        return (self.a,)

    def __setstate__(self, state: tuple[int]) -> None:
        self.a = state[0] + 1  # what loading it does: the bypass would skip it


class ExtraSlot(Plain):
    __slots__ = ("extra",)


@dataclass(slots=True, kw_only=True)
class KeywordOnly:
    a: int


def test_only_classes_their_init_rebuilds_are_stored_by_it() -> None:
    assert sp._by_init(Plain) is not None
    for cls in (Posted, NotInInit, OwnState, ExtraSlot, KeywordOnly):
        assert sp._by_init(cls) is None, cls


def test_a_cycle_of_such_objects_is_pickled_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sp, "_TABLE", {**sp._dispatch_table(), Plain: sp._by_init(Plain)})
    one = Plain(1)
    two = Plain(2, one)
    one.b = two  # one -> two -> one: each needs the other built first (RecursionError), the standard pickler
    back = pickle.loads(sp.dumps(one))
    assert back.b.b is back and back.b.a == 2
    one.b = [two]  # through a list (memoized before its items): written by the calls
    back = pickle.loads(sp.dumps(one))
    assert back.b[0].b is back and back.b[0].a == 2
    shared = Plain(3)
    pair = pickle.loads(sp.dumps([Plain(4, shared), Plain(5, shared)]))
    assert pair[0].b is pair[1].b and pair[0].b == shared
