"""The faults of the reliability review's round 2 (shared/reviews/reliability.md, issue 17), each with numbered
lines and exact counts: copytruncate, an unreadable `session.log.1`, a file under two names, descriptors under
`ulimit -n 1024`, the discovery cap, plain renames at 10 rotations a second.

Lines are `L<gen>-<n>`: every test knows exactly which lines it wrote, and checks each is handed out once.
"""

from __future__ import annotations

import collections
import errno
import importlib
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest
from report_helpers import log_line

import core.sources.tail as tail_mod
from core.sources import FileBatch, Sources

RESETS = {"truncated", "replaced", "deleted", "recreated"}


def lines(n: int, tag: str, start: int = 0) -> bytes:
    return b"".join(f"{tag}-{i:05d}\n".encode() for i in range(start, start + n))


class Tally:
    """Every line and notice a `Sources` handed out, per stream."""

    def __init__(self) -> None:
        self.lines: collections.Counter[bytes] = collections.Counter()
        self.notices: list[tuple[str, str]] = []

    def add(self, batches: list[FileBatch]) -> Tally:
        for b in batches:
            self.lines.update(line.data for line in b.lines)
            self.notices += [(n.kind, n.message) for n in b.notices]
        return self

    def drain(self, src: Sources, rounds: int = 20) -> Tally:
        for _ in range(rounds):
            batches = src.poll()
            self.add(batches)
            if not batches and src.pending_bytes() == 0:
                break
        return self

    def doubled(self) -> list[bytes]:
        return [line for line, n in self.lines.items() if n > 1]

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.notices]


def expect(*chunks: bytes) -> set[bytes]:
    return {line for chunk in chunks for line in chunk.splitlines()}


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    d = tmp_path / "logs"
    d.mkdir()
    return d


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(data)


def copytruncate(log: Path) -> None:
    """What logrotate's copytruncate does: `cp session.log session.log.1 && truncate -s0 session.log`."""
    shutil.copyfile(log, log.with_name(log.name + ".1"))  # onto an existing .1 in place, as cp does
    os.truncate(log, 0)


# ---------------------------------------------------------------------------- copytruncate


def test_copytruncate_counts_each_line_once_and_reads_the_unread_rest_from_the_copy(logs: Path) -> None:
    log = logs / "session.log"
    first, unread, after = lines(10, "A"), lines(5, "B"), lines(3, "C")
    log.write_bytes(first)
    with Sources([logs]) as src:
        t = Tally().drain(src)
        append(log, unread)  # written, not yet read, when the copy is made
        copytruncate(log)
        append(log, after)
        t.drain(src)
    assert set(t.lines) == expect(first, unread, after) and t.doubled() == []
    assert t.kinds() == ["rotated"] and "copytruncate" in t.notices[0][1]


def test_a_copy_seen_before_the_truncation_waits_then_takes_over(logs: Path) -> None:
    log = logs / "session.log"
    first, between, after = lines(10, "A"), lines(4, "B"), lines(3, "C")
    log.write_bytes(first)
    with Sources([logs]) as src:
        t = Tally().drain(src)
        shutil.copyfile(log, logs / "session.log.1")
        t.drain(src)  # the copy is there, the log not yet truncated: nothing is read twice
        assert t.doubled() == [] and sum(t.lines.values()) == 10
        append(log, between)  # after the copy, before the truncation: read from the log while it lasts
        t.drain(src)
        os.truncate(log, 0)
        append(log, after)
        t.drain(src)
    assert set(t.lines) == expect(first, between, after) and t.doubled() == []
    assert RESETS.isdisjoint(t.kinds())


def test_repeated_copytruncate_onto_the_same_copy_never_doubles(logs: Path) -> None:
    log = logs / "session.log"
    written: list[bytes] = []
    with Sources([logs]) as src:
        t = Tally()
        for cycle in range(8):
            chunk = lines(20, f"G{cycle}")
            append(log, chunk)
            written.append(chunk)
            if cycle % 2:
                t.drain(src)  # every other cycle the tailer looks before the copy
            copytruncate(log)
            t.drain(src)
        tail = lines(5, "END")
        append(log, tail)
        t.drain(src)
    assert set(t.lines) == expect(*written, tail) and t.doubled() == []
    assert RESETS.isdisjoint(t.kinds()), t.notices


def test_a_backup_copy_without_truncation_is_never_read(logs: Path) -> None:
    log = logs / "session.log"
    first, more = lines(10, "A"), lines(5, "B")
    log.write_bytes(first)
    with Sources([logs]) as src:
        t = Tally().drain(src)
        shutil.copyfile(log, logs / "session.log.1")
        append(log, more)
        t.drain(src)
        assert src.pending_bytes() == 0
    assert set(t.lines) == expect(first, more) and t.doubled() == [] and t.notices == []


def test_lines_copytruncate_itself_loses_are_a_problem_never_silence(logs: Path) -> None:
    """Lines appended after the copy and before the truncation are in neither file: copytruncate loses them, for
    every tool. When the tailer saw them in the log (a look between the copy and the truncation that did not get
    to read them), it says so: a `copytruncate_lost` notice (a Problem in the engine) with the bytes and the
    offset where they began; every other line is read once."""
    log = logs / "session.log"
    first, window, after = lines(10, "A"), lines(3, "W"), lines(4, "C")
    log.write_bytes(first)
    with Sources([logs]) as src:
        t = Tally().drain(src)
        shutil.copyfile(log, logs / "session.log.1")
        append(log, window)  # after the copy: in the log only
        t.add(src.poll(max_bytes=0))  # looked (its size is known), read nothing
        os.truncate(log, 0)
        append(log, after)
        t.drain(src)
    assert set(t.lines) == expect(first, after) and t.doubled() == []
    lost = [message for kind, message in t.notices if kind == "copytruncate_lost"]
    assert len(lost) == 1 and f"{len(window)} bytes" in lost[0] and f"offset {len(first)}" in lost[0], t.notices
    assert RESETS.isdisjoint(t.kinds())


def test_an_engine_shows_copytruncates_own_loss_as_a_problem(logs: Path) -> None:
    from core.engine import Engine

    log = logs / "session.log"
    log.write_text("".join(log_line(i, "delta", f"r{i}", 1) + "\n" for i in range(5)))
    engine = Engine([logs])
    try:
        engine.drain()
        shutil.copyfile(log, logs / "session.log.1")
        append(log, (log_line(9, "delta", "lost", 1) + "\n").encode())
        engine.poll(max_bytes=0)
        os.truncate(log, 0)
        engine.drain()
        errors = [p.error for p in engine.state.problems]
    finally:
        engine.close()
    assert any("copytruncate loses them itself" in e for e in errors), errors


def test_copytruncate_under_a_live_writer_loses_only_what_copytruncate_itself_loses(logs: Path) -> None:
    """A writer appends numbered lines (~25,000 a second) while copytruncate runs every 100 ms and a tailer
    polls. The only lines allowed missing are those written between a copy and its truncation (in neither
    file); none is counted twice.

    The rotator copies only once the tailer has polled twice since the last truncation (the first of those may
    have begun before it; the second began after it and ended before this copy), and never after the polling
    ended: a `.1` overwritten by the next copy before any poll could read it loses its unread rest in the
    rotation itself (logrotate's `rotate 1` loses it so), which is no fault of the tailer. Rotating blind on a
    100 ms clock, 4 of 200 runs under load (3 busy loops on 2 CPUs) failed so, 50-700 lines "unexplained" (and
    likely the 1,990 of one CI run): a rotation between the loop's last poll and its deadline, then the
    rotator's one more after it, or a 530 ms poll with two copies in it. (6 more of those 200 doubled lines: a
    tailer bug, see the next test.) Waiting so, 0 of 200 failed under the same load."""
    log = logs / "session.log"
    log.touch()
    stop = threading.Event()
    lost_windows: list[tuple[int, int]] = []
    written = [0]
    polls = [0]  # polls done by the loop below

    def writer() -> None:
        fd = os.open(log, os.O_WRONLY | os.O_APPEND)
        try:
            while not stop.is_set():
                for _ in range(50):  # ~25,000 lines a second
                    os.write(fd, f"W-{written[0]:07d}\n".encode())
                    written[0] += 1
                time.sleep(0.002)
        finally:
            os.close(fd)

    def rotator() -> None:
        polled = polls[0]
        while not stop.wait(0.1):
            while polls[0] < polled + 2:  # bounded: the loop below polls until its deadline, then sets stop
                if stop.wait(0.001):
                    return
            shutil.copyfile(log, logs / "session.log.1")
            os.truncate(log, 0)
            polled = polls[0]
            after = written[0]
            copied = (logs / "session.log.1").read_bytes().rsplit(b"\n", 2)
            last = int(copied[-2][2:]) if len(copied) >= 2 and copied[-2].startswith(b"W-") else -1
            lost_windows.append((last + 1, after + 1))  # in the log after the copy's end, until the truncation

    with Sources([logs]) as src:
        t = Tally()
        threads = [threading.Thread(target=writer), threading.Thread(target=rotator)]
        for th in threads:
            th.start()
        try:
            deadline = time.monotonic() + 1.5
            while time.monotonic() < deadline:
                t.add(src.poll())
                polls[0] += 1
                time.sleep(0.005)
        finally:
            stop.set()  # (a failing poll must not leave the threads running: the run would hang)
        for th in threads:
            th.join()
        t.drain(src)
    assert t.doubled() == []
    seen = {int(line[2:]) for line in t.lines}
    missing = [n for n in range(written[0]) if n not in seen]
    unexplained = [n for n in missing if not any(lo <= n <= hi for lo, hi in lost_windows)]
    assert unexplained == [], (
        unexplained[:5],
        len(unexplained),
        [w for w in lost_windows if w[0] > unexplained[0] - 5000][:3],
    )
    # the run did real work: most of what was written was read (a count of lines, not a speed: a loaded suite's
    # writer wrote 9,850 lines in those 1.5 s, an idle one ~25,000, and `> 10_000` failed the suite for it)
    assert len(seen) > 1000 and len(seen) >= written[0] // 2


def test_a_copy_handed_over_in_the_survey_that_spots_it_is_not_taken_for_a_rewrite(
    logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The interleaving that doubled 1,450-2,100 lines in 6 of 200 loaded runs of the live-writer test above: a
    survey stats ``.1`` while `cp` has emptied it (the last copy, read to its end), the copy is complete when
    ``_spot_copy`` reads its head, and the log truncated when its own head is checked. The log's check hands its
    reading over to the copy; the copy, visited next with the stat taken before (size 0 < its new offset), was
    then "rewritten by a copy" and read again from 0: every line of it already read from the log came twice."""
    log, rot = logs / "session.log", logs / "session.log.1"
    first, second, unread = lines(10, "A"), lines(6, "B"), lines(4, "C")
    log.write_bytes(first)
    with Sources([logs]) as src:
        t = Tally().drain(src)
        copytruncate(log)
        append(log, second)
        t.drain(src)  # .1 (the first copy) read to its end, the log's B lines read
        append(log, unread)
        rot.write_bytes(b"")  # the next `cp` opened .1 (O_TRUNC) when the survey stats it ...
        real = tail_mod._first_head

        def cp_finishes_then_truncate(path: str, opener: object = tail_mod._open_readonly) -> bytes:
            if path.endswith(".1") and not rot.stat().st_size:
                rot.write_bytes(second + unread)  # ... and has written it, the log truncated, when its head is read
                os.truncate(log, 0)
            return real(path, opener)  # type: ignore[arg-type]

        monkeypatch.setattr(tail_mod, "_first_head", cp_finishes_then_truncate)
        t.drain(src)
        monkeypatch.undo()
        after = lines(3, "D")
        append(log, after)
        t.drain(src)
    assert t.doubled() == [], (len(t.doubled()), t.notices)
    assert set(t.lines) == expect(first, second, unread, after)
    assert RESETS.isdisjoint(t.kinds()), t.notices


# ---------------------------------------------------------------------------- unreadable .1


def _deny(monkeypatch: pytest.MonkeyPatch, suffix: str) -> None:
    real = tail_mod._open_readonly

    def deny(path: str) -> int:
        if path.endswith(suffix):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(tail_mod, "_open_readonly", deny)


def test_an_unreadable_rotated_generation_does_not_hold_up_the_log(logs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (logs / "session.log.1").write_bytes(lines(5, "OLD"))
    (logs / "session.log").write_bytes(lines(10, "NEW"))
    _deny(monkeypatch, "session.log.1")
    with Sources([logs]) as src:
        t = Tally().drain(src)
        assert set(t.lines) == expect(lines(10, "NEW"))
        assert t.kinds() == ["unreadable"] and "session.log.1" in t.notices[0][1]
        assert src.pending_bytes() == 0  # the dashboard's "backfill left" does not wait for it
        append(logs / "session.log", lines(3, "LIVE"))
        t.drain(src)
        assert expect(lines(3, "LIVE")) <= set(t.lines)
        monkeypatch.undo()  # readable again: its lines come in late, once
        t.drain(src)
    assert set(t.lines) == expect(lines(5, "OLD"), lines(10, "NEW"), lines(3, "LIVE")) and t.doubled() == []


def _senpi_logs(logs: Path) -> None:
    (logs / "session.log.1").write_text("".join(log_line(i, "delta", "prefix_matched", 1) + "\n" for i in range(5)))
    (logs / "session.log").write_text("".join(log_line(10 + i, "delta", "prefix_matched", 1) + "\n" for i in range(10)))


def _no_dac_override() -> list[str] | None:
    """A prefix that runs a command without root's permission bypass, as the review ran its permission cases."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    probe = subprocess.run([setpriv, "--bounding-set=-dac_override,-dac_read_search", "--", "true"], check=False)
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--"] if probe.returncode == 0 else None


@pytest.mark.parametrize("command", ["report", "check"])
def test_report_and_check_read_the_log_when_its_rotated_file_is_mode_000(logs: Path, command: str) -> None:
    prefix = _no_dac_override()
    if prefix is None:
        pytest.skip("cannot drop root's permission bypass here (no setpriv)")
    _senpi_logs(logs)
    os.chmod(logs / "session.log.1", 0)
    proc = subprocess.run([*prefix, sys.executable, "-m", "tui.cli", command, str(logs), "--no-cache"],
                          capture_output=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr
    if command == "report":
        report = orjson.loads(proc.stdout)
        assert report["continuity"]["events"] == 10
        assert [p["error"] for p in report["problems"]] == ["session.log.1 unreadable: Permission denied"]
    else:
        assert b"INFO" in proc.stdout


# ---------------------------------------------------------------------------- one file, two names


@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_a_file_under_two_names_is_read_once(tmp_path: Path, link: str) -> None:
    logs, sessions = tmp_path / "logs", tmp_path / "sessions" / "--x--"
    logs.mkdir()
    sessions.mkdir(parents=True)
    log = logs / "session.log"
    log.write_bytes(lines(10, "A"))
    alias = sessions / "current.jsonl"
    if link == "symlink":
        alias.symlink_to(Path("../../logs/session.log"))
    else:
        os.link(log, alias)
    with Sources([logs, tmp_path / "sessions"]) as src:
        t = Tally().drain(src)
        append(log, lines(5, "B"))
        t.drain(src)
    assert set(t.lines) == expect(lines(10, "A"), lines(5, "B")) and t.doubled() == []
    assert t.kinds() == ["alias"] and "another name" in t.notices[0][1]


def test_a_symlink_to_a_rotating_log_follows_it_without_false_resets(tmp_path: Path) -> None:
    logs, sessions = tmp_path / "logs", tmp_path / "sessions" / "--x--"
    logs.mkdir()
    sessions.mkdir(parents=True)
    log = logs / "session.log"
    (sessions / "current.jsonl").symlink_to(log)  # created first: it is surveyed before the log
    written = []
    with Sources([tmp_path / "sessions", logs]) as src:
        t = Tally()
        for gen in range(5):
            chunk = lines(7, f"R{gen}")
            log.write_bytes(chunk) if gen == 0 else append(log, chunk)
            written.append(chunk)
            t.drain(src)
            os.replace(log, logs / "session.log.1")  # senpi's rotation
            log.touch()
        t.drain(src)
    assert set(t.lines) == expect(*written) and t.doubled() == []
    assert [k for k in t.kinds() if k != "rotated"] == ["alias"]


def test_a_hard_link_goes_on_when_the_first_name_is_deleted(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_bytes(lines(4, "A"))
    os.link(a, b)
    with Sources([tmp_path]) as src:
        t = Tally().drain(src)
        a.unlink()
        t.drain(src)
        append(b, lines(3, "B"))
        t.drain(src)
    assert set(t.lines) == expect(lines(4, "A"), lines(3, "B")) and t.doubled() == []


# ---------------------------------------------------------------------------- descriptors and the cap


def test_3000_transcripts_under_ulimit_1024_give_no_false_too_many_open_files(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    for i in range(3000):
        d = root / f"--p{i // 100}--"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"t{i:04d}.jsonl").write_bytes(b'{"type":"session","version":3,"id":"s%d"}\n' % i)
    script = (
        "import resource, sys, os\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (1024, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))\n"
        "from core.sources import Sources\n"
        "peak, errors, n = 0, [], 0\n"
        f"with Sources([{str(root)!r}]) as src:\n"
        "    for _ in range(50):\n"
        "        batches = src.poll(1 << 16)\n"
        "        peak = max(peak, len(os.listdir('/proc/self/fd')))\n"
        "        n += sum(len(b.lines) for b in batches)\n"
        "        errors += [x.message for b in batches for x in b.notices]\n"
        "        if not batches and src.pending_bytes() == 0: break\n"
        "print(n, peak, len(errors), errors[:2])\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    n, peak, errors = proc.stdout.split()[:3]
    assert (int(n), int(errors)) == (3000, 0), proc.stdout
    assert int(peak) < 400, proc.stdout  # a quarter of the limit, and the interpreter's own


def test_the_file_cap_is_in_the_report_and_counts_what_it_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.engine import Engine
    from core.report import ReportOptions, build_report, render
    from core.report.schema import validate

    monkeypatch.setattr(importlib.import_module("core.sources.discover"), "MAX_FILES", 40)
    root = tmp_path / "sessions" / "--p--"
    root.mkdir(parents=True)
    for i in range(55):
        (root / f"t{i:03d}.jsonl").write_bytes(b'{"type":"session","version":3,"id":"s%d"}\n' % i)
    engine = Engine([tmp_path / "sessions"])
    try:
        engine.drain()
        report = build_report(engine, ReportOptions())
    finally:
        engine.close()
    validate(report)
    assert report["discovery"] == {"files": 40, "cap": 40, "left_out": 15, "counted_all": True}
    assert len(report["sources"]) == 40
    md, html = render(report, "md"), render(report, "html")
    assert "15 files left out" in md and "15 files left out" in html


# ---------------------------------------------------------------------------- fast rotation


def test_ten_rotations_a_second_are_rotations_never_resets(logs: Path) -> None:
    """senpi's rotation (rename to .1, a new file at the next write) every 0.1 s for 3 s, with polls at random
    gaps (0.01-0.15 s): every line once, and no deleted/recreated/replaced.

    No watcher here, so a generation no poll has looked at cannot be read once the next rotation renames over it
    (docs/guarantees.md, known limits): the writer never rotates a generation before a poll that began after it
    was created has ended. On an idle machine that gate never holds it (10 rotations a second); under load
    (a stalled writer catching up rotated every 2 ms; a stalled poller saw 1 of 9,939 lines lost in a loaded
    suite) the pace drops instead of the test measuring the machine."""
    import random

    log = logs / "session.log"
    stop = threading.Event()
    written = [0]
    polls = {"started": 0, "done": 0}

    def writer() -> None:
        rng = random.Random(7)
        next_rotation = time.monotonic() + 0.1
        created_before: int | None = None  # polls started before the current generation existed
        while not stop.is_set():
            with open(log, "ab") as fh:
                for _ in range(rng.randint(1, 20)):
                    fh.write(f"W-{written[0]:07d}\n".encode())
                    written[0] += 1
            if created_before is None:
                created_before = polls["started"]
            if time.monotonic() >= next_rotation and polls["done"] > created_before:
                os.replace(log, logs / "session.log.1")
                next_rotation, created_before = time.monotonic() + 0.1, None
            time.sleep(0.002)

    rng = random.Random(11)
    with Sources([logs]) as src:
        t = Tally()
        th = threading.Thread(target=writer)
        th.start()
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            polls["started"] += 1
            t.add(src.poll())
            polls["done"] += 1
            time.sleep(rng.choice([0.01, 0.03, 0.08, 0.15]))
        stop.set()
        th.join()
        t.drain(src)
    assert t.doubled() == []
    assert {int(line[2:]) for line in t.lines} == set(range(written[0]))
    assert RESETS.isdisjoint(t.kinds()), collections.Counter(t.kinds())


def test_ten_rotations_a_second_lose_nothing_while_the_poller_is_slower_than_two(logs: Path) -> None:
    """The same writer, with a watcher, and a poller that comes back only every 0.35-0.6 s (the dashboard's
    first polls, while its index is restored and the analysis warms up; a busy machine): three to six
    rotations between two polls, so a file is created, rotated and deleted (renamed over by the next) before
    any poll sees it. The watch thread opens each new generation of a log family as it appears: every line once.
    (Before: 186-491 lines lost at start-up in the review's battery; here 40-60 % of them.)"""
    import random

    log = logs / "session.log"
    log.touch()
    stop = threading.Event()
    written = [0]

    def writer() -> None:
        rng = random.Random(7)
        next_rotation = time.monotonic() + 0.1
        while not stop.is_set():
            with open(log, "ab") as fh:
                for _ in range(rng.randint(1, 20)):
                    fh.write(f"W-{written[0]:07d}\n".encode())
                    written[0] += 1
            if time.monotonic() >= next_rotation:
                os.replace(log, logs / "session.log.1")
                next_rotation += 0.1
            time.sleep(0.002)

    rng = random.Random(11)
    with Sources([logs]) as src:
        src.start_watching()
        t = Tally().add(src.poll())
        time.sleep(0.3)  # the watch threads are up (watchfiles arms its inotify watches)
        th = threading.Thread(target=writer)
        th.start()
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            time.sleep(rng.uniform(0.35, 0.6))
            t.add(src.poll())
        stop.set()
        th.join()
        time.sleep(0.2)
        t.drain(src)
    assert t.doubled() == []
    missing = set(range(written[0])) - {int(line[2:]) for line in t.lines}
    assert not missing, f"{len(missing)} of {written[0]} lines lost"
    assert RESETS.isdisjoint(t.kinds()), collections.Counter(t.kinds())


async def test_the_status_line_says_what_the_file_cap_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tui_fixtures import screen_output, wait_loaded

    from core.engine import Engine
    from tui.app import ContinuityApp

    monkeypatch.setattr(importlib.import_module("core.sources.discover"), "MAX_FILES", 40)
    root = tmp_path / "sessions" / "--p--"
    root.mkdir(parents=True)
    for i in range(55):
        (root / f"t{i:03d}.jsonl").write_bytes(b'{"type":"session","version":3,"id":"s%d"}\n' % i)
    app = ContinuityApp(Engine([tmp_path / "sessions"]))
    async with app.run_test(size=(160, 30)) as pilot:
        await wait_loaded(pilot, app)
        _raw, lines = screen_output(app)
    assert any("15 files left out (cap 40)" in line for line in lines), lines[-3:]
