"""core.sources while nothing changes: a heartbeat poll re-stats only hot files, yet no change is ever missed.

With a watcher running, a poll that follows no watch event re-stats only the streams modified in the last
``HOT_S`` seconds, plus a slice of the others sized so that each is re-stat'ed within ``COLD_SURVEY_S``;
after an event whose paths are unknown it re-stats everything. These tests pin the
guarantees: an event always leads to a full survey, a hot file is seen on the very next heartbeat, a cold file
changed behind the watcher's back is seen by the next full survey, and the file list stays current.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import core.sources.tail as tail_mod
from core.sources import Sources


def _lines(batches: list) -> list[bytes]:
    return [ln.data for b in batches for ln in b.lines]


def _old(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, (1_000_000, 1_000_000))  # last modified long ago: a cold file
    return path


def test_an_event_triggers_a_full_survey(tmp_path: Path) -> None:
    cold = _old(tmp_path / "s" / "old.jsonl", b'{"n":0}\n')
    with Sources([tmp_path]) as src:
        src.start_watching()
        assert _lines(src.poll()) == [b'{"n":0}']
        time.sleep(0.3)
        src.wait(0.0)  # drain anything the first writes fired
        with cold.open("ab") as fh:
            fh.write(b'{"n":1}\n')
        deadline = time.monotonic() + 10
        while not src.wait(0.5) and time.monotonic() < deadline:
            pass
        assert _lines(src.poll()) == [b'{"n":1}']


def test_a_hot_file_is_seen_on_a_heartbeat_without_event(tmp_path: Path) -> None:
    hot = tmp_path / "s" / "live.jsonl"
    hot.parent.mkdir(parents=True)
    hot.write_bytes(b'{"n":0}\n')
    with Sources([tmp_path]) as src:
        src.start_watching()
        assert _lines(src.poll()) == [b'{"n":0}']
        src._fired = False  # as if the watcher missed the next write
        src._last_full = time.monotonic()
        with hot.open("ab") as fh:
            fh.write(b'{"n":1}\n')
        assert _lines(src.poll()) == [b'{"n":1}']


def test_a_cold_file_changed_without_event_is_seen_by_the_next_full_survey(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold = _old(tmp_path / "s" / "old.jsonl", b'{"n":0}\n')
    with Sources([tmp_path]) as src:
        src.start_watching()
        assert _lines(src.poll()) == [b'{"n":0}']
        with cold.open("ab") as fh:
            fh.write(b'{"n":1}\n')
        os.utime(cold, (1_000_000, 1_000_000))  # and it still looks cold
        src._fired = False  # the watcher missed it
        src._last_full = time.monotonic()
        assert _lines(src.poll()) == []  # a heartbeat does not re-stat cold files …
        monkeypatch.setattr(tail_mod, "COLD_SURVEY_S", 0.0)
        assert _lines(src.poll()) == [b'{"n":1}']  # … the full survey does


def test_cold_files_are_re_stated_a_slice_per_heartbeat_all_within_the_survey_period(tmp_path: Path) -> None:
    files = [_old(tmp_path / "s" / f"old{i}.jsonl", b'{"n":0}\n') for i in range(4)]
    with Sources([tmp_path]) as src:
        src.start_watching()
        assert len(_lines(src.poll())) == 4
        time.sleep(0.3)
        src.wait(0.0)
        src.poll()  # whatever the first writes fired
        for f in files:
            with f.open("ab") as fh:
                fh.write(b'{"n":1}\n')
            os.utime(f, (1_000_000, 1_000_000))  # still cold
        src._fired = False  # the watcher missed all four
        src._last_full = time.monotonic()
        assert _lines(src.poll()) == []  # a heartbeat right after the last one owes no re-stat yet
        src._rolled_at = time.monotonic() - tail_mod.COLD_SURVEY_S / 2
        assert len(_lines(src.poll())) == 2  # half the period: half the streams
        src._rolled_at = time.monotonic() - tail_mod.COLD_SURVEY_S / 2
        assert len(_lines(src.poll())) == 2  # the other half: every stream within one period
        assert src._last_full != float("-inf")


def test_without_a_watcher_every_poll_surveys_everything(tmp_path: Path) -> None:
    cold = _old(tmp_path / "s" / "old.jsonl", b'{"n":0}\n')
    with Sources([tmp_path]) as src:
        assert _lines(src.poll()) == [b'{"n":0}']
        with cold.open("ab") as fh:
            fh.write(b'{"n":1}\n')
        os.utime(cold, (1_000_000, 1_000_000))
        assert _lines(src.poll()) == [b'{"n":1}']


def test_the_file_list_follows_changes_and_stays_put_when_idle(tmp_path: Path) -> None:
    f = tmp_path / "s" / "a.jsonl"
    f.parent.mkdir(parents=True)
    f.write_bytes(b'{"n":0}\n')
    with Sources([tmp_path]) as src:
        src.poll()
        first = src.files
        assert [(s.bytes_read, s.lines_read, s.size) for s in first] == [(8, 1, 8)]
        src.poll()
        assert src.files == first  # nothing changed: the same numbers
        with f.open("ab") as fh:
            fh.write(b'{"n":1}\n{"n":2')
        src.poll()
        assert [(s.bytes_read, s.lines_read, s.size) for s in src.files] == [(22, 2, 22)]
        assert src.pending_bytes() == 0
        assert src.file_count() == 1
        f.unlink()
        src.poll()
        assert [s.exists for s in src.files] == [False]
        assert src.file_count() == 0


def _wait_event(src: Sources) -> None:
    deadline = time.monotonic() + 10
    while not src.wait(0.5) and time.monotonic() < deadline:
        pass


def test_an_event_on_a_known_file_surveys_that_file_not_everything(tmp_path: Path) -> None:
    cold = _old(tmp_path / "s" / "old.jsonl", b'{"n":0}\n')
    other = _old(tmp_path / "t" / "other.jsonl", b'{"n":0}\n')
    with Sources([tmp_path]) as src:
        src.start_watching()
        assert len(_lines(src.poll())) == 2
        time.sleep(0.3)
        src.wait(0.0)
        src.poll()  # whatever the first writes fired
        full_at = src._last_full
        with cold.open("ab") as fh:
            fh.write(b'{"n":1}\n')
        with other.open("ab") as fh:
            fh.write(b'{"n":9}\n')
        os.utime(other, (1_000_000, 1_000_000))
        _wait_event(src)
        got = _lines(src.poll())
        assert b'{"n":1}' in got  # the file the event named
        assert src._last_full == full_at  # without a full survey
        # (other.jsonl was named too: hints are per path, so it is read as well; nothing is lost either way)


def test_an_event_on_a_new_file_rescans(tmp_path: Path) -> None:
    _old(tmp_path / "s" / "old.jsonl", b'{"n":0}\n')
    with Sources([tmp_path]) as src:
        src.start_watching()
        src.poll()
        time.sleep(0.3)
        src.wait(0.0)
        src.poll()
        src._last_full = time.monotonic()
        new = tmp_path / "s" / "new.jsonl"
        new.write_bytes(b'{"n":5}\n')
        _wait_event(src)
        assert _lines(src.poll()) == [b'{"n":5}']


def test_hints_overflow_into_unknown() -> None:
    from core.sources.watch import MAX_HINTS, DirWatcher

    watcher = DirWatcher([], [], lambda _p: True)
    watcher._hint({"/a", "/b"})
    assert watcher.take_hints() == {"/a", "/b"}
    assert watcher.take_hints() == set()
    watcher._hint({f"/{i}" for i in range(MAX_HINTS + 1)})
    assert watcher.take_hints() is None
    watcher._hint(None)
    watcher._hint({"/a"})
    assert watcher.take_hints() is None  # unknown stays unknown until taken
