"""core.sources newest-first reading (the dashboard's order): what a budget-limited poll serves first.

Correctness only: which file's lines come first, that nothing is lost or repeated, that a file cut short
by the budget is finished before older files, and that a live append jumps the backlog.
"""

from __future__ import annotations

import os
from pathlib import Path

from core.engine import Engine
from core.sources import FileBatch, Sources


def _write(path: Path, lines: int, tag: str, mtime_s: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(f'{{"n":{i},"tag":"{tag}"}}\n'.encode() for i in range(lines)))
    os.utime(path, (mtime_s, mtime_s))
    return path


def _order(batches: list[FileBatch]) -> list[str]:
    return [Path(b.path).name for b in batches if b.lines]


def test_newest_file_is_read_first_and_finished_before_older_ones(tmp_path: Path) -> None:
    _write(tmp_path / "a" / "old.jsonl", 200, "old", 1_000_000)
    _write(tmp_path / "b" / "mid.jsonl", 200, "mid", 2_000_000)
    _write(tmp_path / "c" / "new.jsonl", 200, "new", 3_000_000)
    seen: list[str] = []
    total = 0
    with Sources([tmp_path], newest_first=True) as src:
        for _ in range(100):
            batches = src.poll(1500)  # a few dozen lines per poll: every file takes several polls
            if not batches:
                break
            seen += _order(batches)
            total += sum(len(b.lines) for b in batches)
    # runs of one file, newest first; each file is finished before the next older one starts
    runs = [name for i, name in enumerate(seen) if i == 0 or seen[i - 1] != name]
    assert runs == ["new.jsonl", "mid.jsonl", "old.jsonl"]
    assert total == 600


def test_discovery_order_is_the_default(tmp_path: Path) -> None:
    _write(tmp_path / "a" / "old.jsonl", 5, "old", 1_000_000)
    _write(tmp_path / "c" / "new.jsonl", 5, "new", 3_000_000)
    with Sources([tmp_path]) as src:
        assert _order(src.poll()) == ["old.jsonl", "new.jsonl"]


def test_a_live_append_jumps_the_backlog(tmp_path: Path) -> None:
    backlog = _write(tmp_path / "a" / "history.jsonl", 2000, "h", 1_000_000)
    live = _write(tmp_path / "b" / "live.jsonl", 1, "live", 500_000)  # older than the backlog at first
    with Sources([tmp_path], newest_first=True) as src:
        first = src.poll(1000)
        assert _order(first) == ["history.jsonl"]
        with live.open("ab") as fh:
            fh.write(b'{"n":1,"tag":"live"}\n')  # now the newest file
        second = src.poll(1000)
        assert _order(second)[0] == "live.jsonl"
        assert [ln.data for b in second if b.path.endswith("live.jsonl") for ln in b.lines] == [
            b'{"n":0,"tag":"live"}',
            b'{"n":1,"tag":"live"}',
        ]
        rest = 0
        while batches := src.poll(1 << 20):
            rest += sum(len(b.lines) for b in batches if b.path == str(backlog))
        assert rest + sum(len(b.lines) for b in first + second if b.path == str(backlog)) == 2000


def test_a_rotated_log_family_still_reads_the_old_generation_first(tmp_path: Path) -> None:
    _write(tmp_path / "logs" / "session.log.1", 3, "gen0", 2_000_000)
    _write(tmp_path / "logs" / "session.log", 3, "gen1", 3_000_000)
    _write(tmp_path / "logs" / "other.log", 3, "other", 1_000_000)
    with Sources([tmp_path / "logs"], newest_first=True) as src:
        batches = src.poll()
    assert _order(batches) == ["session.log.1", "session.log", "other.log"]


def test_a_big_log_shares_each_poll_with_the_newest_transcripts(tmp_path: Path) -> None:
    """session.log is always the newest file (every session appends to it) but mostly history: it gets half
    of a poll, the newest transcripts the rest, so the session being written is read in the first poll."""
    _write(tmp_path / "logs" / "session.log", 2000, "log", 3_000_000)
    _write(tmp_path / "sessions" / "new.jsonl", 20, "new", 2_000_000)
    _write(tmp_path / "sessions" / "old.jsonl", 20, "old", 1_000_000)
    with Sources([tmp_path / "logs", tmp_path / "sessions"], newest_first=True) as src:
        first = src.poll(4000)
        assert {"session.log", "new.jsonl"} <= set(_order(first))
        assert len([b for b in first if b.path.endswith("new.jsonl") for _ in b.lines]) == 20
        logged = sum(len(b.lines) for b in first if b.path.endswith("session.log"))
        assert 0 < logged < 2000
        total = sum(len(b.lines) for b in first)
        while batches := src.poll(4000):
            total += sum(len(b.lines) for b in batches)
    assert total == 2040


def test_engine_results_do_not_depend_on_the_order(tmp_path: Path) -> None:
    """Small newest-first polls (the dashboard) end where one discovery-order drain (the report) does."""
    from core.demo.bundle import demo_source

    def summary(engine: Engine) -> tuple[object, ...]:
        turns = {
            key: [(t.index, t.entry_id, t.kind, t.log_line is not None, t.payload_bytes) for t in s.turns]
            for key, s in engine.state.sessions.items()
        }
        problems = sorted((p.path, p.line, p.error) for p in engine.state.problems)
        return turns, problems, engine.state.log.stats.events

    reference = Engine([demo_source()])
    reference.drain()
    newest = Engine([demo_source()], newest_first=True)
    polls = 0
    while True:
        polled = newest.poll(16 * 1024)  # smaller than some lines: every poll must still make progress
        polls += 1
        if not polled.lines and not polled.changed:
            break
    newest.finish_pending()
    newest.report_partials()  # what a drain ends with (a snapshot names torn last lines)
    assert newest.sources.pending_bytes() == 0
    assert polls > 3
    assert summary(newest) == summary(reference)
    assert summary(reference)[0]  # the demo has sessions with turns
    reference.close()
    newest.close()
