"""The reading order a resumed run is checked against (`core.sources.order.DrainOrder`) and the cold pairing of
logged decisions with calls (`cold_pairs`): both replay in plain data what a drain does, so both are checked
against real drains, in one poll and in polls small enough to cut every file (the round-robin resumes a cut
file after the others), cold and resumed from stored offsets."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from core.engine import Engine, split_blocks
from core.index import Index
from core.sources import Block, Line
from core.sources.order import BEFORE, DrainOrder
from core.state.attribution import cold_pairs
from tests.index_support import DEMO, agent, demo_without_recordings
from tests.report_helpers import SESSION_ID

CHUNKS = [64 << 20, 20_000, 4_096, 700]


def _delivered(engine: Engine, chunk: int) -> list[tuple[int, str, int, int]]:
    """(poll, path, offset, length) of every line a drain of `engine` applies, in the order it applies them."""
    out: list[tuple[int, str, int, int]] = []
    polls = [-1]
    sources_poll = engine.sources.poll
    lines_of = engine._lines

    def poll(*args: Any, **kwargs: Any) -> Any:
        polls[0] += 1
        return sources_poll(*args, **kwargs)

    def lines(path: str, logical: str, batch: list[Line | Block]) -> None:
        out.extend((polls[0], path, line.offset, len(line.data)) for line in split_blocks(batch))
        lines_of(path, logical, batch)

    engine.sources.poll = poll  # type: ignore[method-assign]
    engine._lines = lines  # type: ignore[method-assign]
    engine.read_all(chunk)
    return out


def _check(order: DrainOrder, delivered: list[tuple[int, str, int, int]]) -> None:
    arrivals = [order.arrival(path, offset, length) for _, path, offset, length in delivered]
    assert all(a is not None and a != BEFORE for a in arrivals)
    assert [a[0] for a in arrivals if a is not None] == [poll for poll, *_ in delivered]
    assert arrivals == sorted(arrivals, key=lambda a: a or BEFORE)  # delivered in arrival order


def _data(which: str, tmp_path: Path) -> Path:
    if which == "demo":
        data = tmp_path / "demo"
        shutil.copytree(DEMO, data)
        return data
    root = agent(tmp_path)
    if which == "crowded":  # two sessions with the same decisions at the same times, no session ids on lines
        transcript = next(root.glob(f"sessions/*/*{SESSION_ID}.jsonl"))
        twin = transcript.parent.parent / "--home-dev-aaa--" / transcript.name.replace("0001", "0009")
        twin.parent.mkdir()
        twin.write_bytes(transcript.read_bytes().replace(b"0001", b"0009"))
    return root


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("which", ["demo", "agent", "crowded"])
def test_a_cold_drain_arrives_as_replayed(tmp_path: Path, chunk: int, which: str) -> None:
    engine = Engine([_data(which, tmp_path)])
    try:
        delivered = _delivered(engine, chunk)
        _check(DrainOrder(engine.sources.layout(), chunk), delivered)
    finally:
        engine.close()


@pytest.mark.parametrize("chunk", CHUNKS)
def test_a_resumed_drain_arrives_as_replayed(tmp_path: Path, chunk: int) -> None:
    """Streams restored from the index start at their stored offsets: what they stored never arrives
    (`BEFORE`), what was appended arrives in the order of a drain of the rest."""
    root = demo_without_recordings(tmp_path)
    first = Engine([root])
    index = Index.for_engine(first, volatile=[], mode="report")
    index.restore(first)
    first.read_all(chunk)
    index.commit(first)
    index.close()
    first.close()
    for path in root.rglob("*.jsonl"):  # every stored transcript grows: its session is rebuilt when it does
        with path.open("ab") as fh:
            fh.write(b'{"type":"custom","customType":"x","id":"feedf00d","parentId":null,"data":{}}\n')
    engine = Engine([root])
    index = Index.for_engine(engine, volatile=[], mode="report")
    assert index.restore(engine)
    try:
        start = dict(index._start)
        assert start, "nothing was restored: the check would be vacuous"
        delivered = _delivered(engine, chunk)
        order = DrainOrder(engine.sources.layout(), chunk, start)
        _check(order, delivered)
        stored_bytes = {(path, offset) for path, offset in _stored_lines(root, start)}
        assert not stored_bytes & {(path, offset) for _, path, offset, _ in delivered}
    finally:
        index.close()
        engine.close()


def _stored_lines(root: Path, start: dict[str, int]) -> list[tuple[str, int]]:
    """(path, offset) of every line before a restored stream's start (single-generation streams)."""
    out = []
    for logical, pos in start.items():
        data = Path(logical).read_bytes()[:pos]
        offset = 0
        for line in data.split(b"\n")[:-1]:
            out.append((logical, offset))
            offset += len(line) + 1
    return out


def _pairs(engine: Engine) -> dict[tuple[str, int], int]:
    return {
        (key, turn.index): turn.log_line
        for key, session in engine.state.sessions.items()
        for turn in session.turns
        if turn.log_line is not None
    }


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("which", ["demo", "agent", "crowded"])
def test_the_cold_replay_pairs_as_a_cold_drain_does(tmp_path: Path, chunk: int, which: str) -> None:
    """A resumed report pairs logged decisions with calls as `cold_pairs` says a cold drain does
    (`Index.settle`): check it against real cold drains, on data where the pairing is ambiguous (`crowded`)."""
    engine = Engine([_data(which, tmp_path)])
    try:
        engine.read_all(chunk)
        pairs = _pairs(engine)
        assert pairs, "nothing paired: the check would be vacuous"
        assert cold_pairs(engine.state, engine.sources.layout(), chunk) == pairs
    finally:
        engine.close()
