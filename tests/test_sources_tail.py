"""core.sources tailing: append, partial lines, rotation, truncation, replacement, deletion, errors, limits, watching."""

from __future__ import annotations

import errno
import os
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import core.sources.tail as tail_mod
from core.sources import FileBatch, Line, Notice, Sources

# ---------------------------------------------------------------------------- helper


class Disk:
    """Tiny test helper: write/append files under a tmp dir and flatten what ``Sources.poll`` returns."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, rel: str) -> Path:
        return self.root / rel

    def write(self, rel: str, data: bytes) -> Path:
        p = self.path(rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        return p

    def append(self, rel: str, data: bytes) -> Path:
        p = self.path(rel)
        p.parent.mkdir(parents=True, exist_ok=True)
        with p.open("ab") as fh:
            fh.write(data)
        return p

    @staticmethod
    def lines(batches: list[FileBatch]) -> list[bytes]:
        return [ln.data for b in batches for ln in b.lines]

    @staticmethod
    def notices(batches: list[FileBatch]) -> list[Notice]:
        return [n for b in batches for n in b.notices]

    @staticmethod
    def kinds(batches: list[FileBatch]) -> list[str]:
        return [n.kind for b in batches for n in b.notices]


@pytest.fixture
def disk(tmp_path: Path) -> Disk:
    return Disk(tmp_path)


@pytest.fixture
def logs(disk: Disk) -> Disk:
    (disk.root / "logs").mkdir()
    return disk


def new_sources(*roots: Path, **kw: int) -> Sources:
    return Sources(list(roots), **kw)


# ---------------------------------------------------------------------------- append and partial lines


def test_append_returns_each_complete_line_once_and_holds_the_partial(disk: Disk) -> None:
    p = disk.write("a.jsonl", b"one\ntw")
    with new_sources(p) as src:
        b = src.poll()
        assert [(ln.lineno, ln.offset, ln.data) for ln in b[0].lines] == [(1, 0, b"one")]
        assert src.poll() == []  # "tw" is held, not returned
        disk.append("a.jsonl", b"o\nthree\n")
        b = src.poll()
        assert [(ln.lineno, ln.offset, ln.data) for ln in b[0].lines] == [(2, 4, b"two"), (3, 8, b"three")]
        assert b[0].path == str(p) and b[0].logical == str(p) and b[0].generation == 0
        assert src.poll() == []


def test_bytes_are_kept_verbatim_crlf_and_invalid_utf8(disk: Disk) -> None:
    raw = b'{"a":1}\r\n\xff\xfe bad \xc3\n\n'
    p = disk.write("x.jsonl", raw)
    with new_sources(p) as src:
        lines = src.poll()[0].lines
    assert [ln.data for ln in lines] == [b'{"a":1}\r', b"\xff\xfe bad \xc3", b""]
    for ln in lines:  # the offset points at the line's bytes in the file
        assert raw[ln.offset : ln.offset + len(ln.data)] == ln.data


def test_a_directory_root_tails_every_candidate_and_picks_up_new_files_in_new_subdirs(disk: Disk) -> None:
    disk.write("sessions/--a--/s1.jsonl", b"a1\n")
    with new_sources(disk.path("sessions")) as src:
        assert Disk.lines(src.poll()) == [b"a1"]
        disk.write("sessions/--b--/s2.jsonl", b"b1\n")
        disk.write("sessions/--b--/s2.jsonl.claude-sdk-oauth-binding.json", b"{}\n")
        disk.write("sessions/--b--/notes.txt", b"ignored\n")
        batches = src.poll()
        assert sorted(Disk.lines(batches)) == [b"b1", b"{}"]
        assert {Path(b.path).name for b in batches} == {"s2.jsonl", "s2.jsonl.claude-sdk-oauth-binding.json"}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    content=st.lists(st.binary(min_size=0, max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=25),
    cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=8),
    chunk=st.integers(min_value=1, max_value=64),
    budget=st.one_of(st.none(), st.integers(min_value=1, max_value=50)),
)
def test_any_write_split_and_read_budget_yields_exactly_the_lines(
    tmp_path_factory: pytest.TempPathFactory, content: list[bytes], cuts: list[int], chunk: int, budget: int | None
) -> None:
    """Property: however the writer splits its writes and however small the reads, the lines come out exact."""
    data = b"".join(c + b"\n" for c in content)
    p = tmp_path_factory.mktemp("prop") / "f.jsonl"
    p.write_bytes(b"")
    got: list[Line] = []
    with Sources([p], read_chunk=chunk) as src:
        prev = 0
        for cut in [*sorted(c % (len(data) + 1) for c in cuts), len(data)]:
            with p.open("ab") as fh:
                fh.write(data[prev:cut])
            prev = max(prev, cut)
            for _ in range(2000):
                got += [ln for b in src.poll(budget) for ln in b.lines]
                if src.pending_bytes() == 0:
                    break
    assert [ln.data for ln in got] == content
    assert [ln.lineno for ln in got] == list(range(1, len(content) + 1))
    for ln in got:
        assert data[ln.offset : ln.offset + len(ln.data) + 1] == ln.data + b"\n"


# ---------------------------------------------------------------------------- rotation


def rotate(disk: Disk, rel: str = "logs/session.log") -> None:
    """senpi's rotation: .1 is replaced, session.log renamed to session.log.1 (the next write creates a new one)."""
    os.replace(disk.path(rel), disk.path(rel + ".1"))


def test_rotation_reads_the_rest_of_the_old_generation_before_the_new_file(logs: Disk) -> None:
    logs.write("logs/session.log", b"1\n2\n")
    logs.write("logs/session.log.rotate-lock", b"")
    with new_sources(logs.path("logs")) as src:
        assert Disk.lines(src.poll()) == [b"1", b"2"]
        logs.append("logs/session.log", b"3\n4\n")  # written, not yet read
        rotate(logs)
        logs.write("logs/session.log", b"5\n")
        batches = src.poll()
        assert [(Path(b.path).name, b.generation, [ln.data for ln in b.lines]) for b in batches] == [
            ("session.log.1", 0, [b"3", b"4"]),
            ("session.log", 1, [b"5"]),
        ]
        assert {b.logical for b in batches} == {str(logs.path("logs/session.log"))}
        assert Disk.kinds(batches) == ["rotated"]
        assert batches[0].lines[0].lineno == 3 and batches[0].lines[0].offset == 4
        assert batches[1].lines[0].lineno == 1 and batches[1].lines[0].offset == 0
        # the .1 file is the known generation: never re-read as a new file
        assert src.poll() == []
        logs.append("logs/session.log", b"6\n")
        assert Disk.lines(src.poll()) == [b"6"]


def test_second_rotation_drains_the_deleted_old_generation_through_its_descriptor(logs: Disk) -> None:
    logs.write("logs/session.log", b"a1\n")
    with new_sources(logs.path("logs")) as src:
        src.poll()
        rotate(logs)
        logs.write("logs/session.log", b"b1\n")
        assert Disk.lines(src.poll()) == [b"b1"]
        # A late line reaches the old generation (now .1), then two rotations happen before the next poll.
        logs.append("logs/session.log.1", b"a2\n")
        logs.append("logs/session.log", b"b2\n")
        rotate(logs)  # .1 (gen a) is replaced by gen b; we still hold gen a's fd
        logs.write("logs/session.log", b"c1\n")
        batches = src.poll()
        assert Disk.lines(batches) == [b"a2", b"b2", b"c1"]
        assert [b.generation for b in batches] == [0, 1, 2]
        assert src.poll() == []


def test_rotation_before_the_new_file_exists_then_creation(logs: Disk) -> None:
    logs.write("logs/session.log", b"1\n")
    with new_sources(logs.path("logs")) as src:
        src.poll()
        logs.append("logs/session.log", b"2\n")
        rotate(logs)
        batches = src.poll()
        assert Disk.lines(batches) == [b"2"] and Disk.kinds(batches) == ["rotated"]
        logs.write("logs/session.log", b"3\n")
        batches = src.poll()
        assert Disk.lines(batches) == [b"3"] and Disk.kinds(batches) == []  # not "recreated": a normal rotation
        assert batches[0].generation == 1


def test_startup_reads_session_log_1_first(logs: Disk) -> None:
    logs.write("logs/session.log", b"new1\n")
    logs.write("logs/session.log.1", b"old1\nold2\n")
    with new_sources(logs.path("logs")) as src:
        batches = src.poll()
    assert Disk.lines(batches) == [b"old1", b"old2", b"new1"]
    assert [(Path(b.path).name, b.generation) for b in batches] == [("session.log.1", 0), ("session.log", 1)]


def test_startup_read_order_holds_under_a_tiny_budget(logs: Disk) -> None:
    logs.write("logs/session.log", b"new1\n")
    logs.write("logs/session.log.1", b"old1\nold2\n")
    got: list[bytes] = []
    with new_sources(logs.path("logs"), read_chunk=3) as src:
        for _ in range(50):
            got += Disk.lines(src.poll(max_bytes=4))
    assert got == [b"old1", b"old2", b"new1"]


def test_single_file_root_session_log_also_reads_its_rotated_generation(logs: Disk) -> None:
    logs.write("logs/session.log.1", b"old\n")
    p = logs.write("logs/session.log", b"new\n")
    with new_sources(p) as src:
        assert Disk.lines(src.poll()) == [b"old", b"new"]


def test_unterminated_fragment_of_a_rotated_generation_is_emitted_as_a_line(logs: Disk) -> None:
    logs.write("logs/session.log", b"1\ntorn")
    with new_sources(logs.path("logs")) as src:
        assert Disk.lines(src.poll()) == [b"1"]
        rotate(logs)
        logs.write("logs/session.log", b"x\n")
        batches = src.poll()
        assert [(b.generation, [(ln.lineno, ln.offset, ln.data) for ln in b.lines]) for b in batches] == [
            (0, [(2, 2, b"torn")]),
            (1, [(1, 0, b"x")]),
        ]


def test_fragment_of_a_rotated_generation_waits_until_the_new_file_has_bytes(logs: Disk) -> None:
    """A long-lived appender may finish its line on the old inode right after the rename: join it, don't split."""
    logs.write("logs/session.log", b"1\npar")
    with new_sources(logs.path("logs")) as src:
        src.poll()
        rotate(logs)
        assert Disk.lines(src.poll()) == []
        logs.append("logs/session.log.1", b"tial\n")
        assert Disk.lines(src.poll()) == [b"partial"]


# ---------------------------------------------------------------------------- truncation, replacement, delete


def test_truncation_resets_to_zero_with_a_notice(disk: Disk) -> None:
    p = disk.write("t.jsonl", b"aaaa\nbbbb\n")
    with new_sources(p) as src:
        src.poll()
        with p.open("r+b") as fh:
            fh.truncate(0)
        disk.append("t.jsonl", b"c\n")
        batches = src.poll()
        assert Disk.kinds(batches) == ["truncated"]
        n = Disk.notices(batches)[0]
        assert n.message == "t.jsonl truncated (size 2 < offset 10); reading from 0"
        assert batches[0].generation == 1
        assert [(ln.lineno, ln.offset, ln.data) for ln in batches[0].lines] == [(1, 0, b"c")]


def test_truncate_and_regrow_past_the_offset_is_caught_by_the_head_fingerprint(disk: Disk) -> None:
    p = disk.write("t.jsonl", b'{"id":"first"}\n')
    with new_sources(p) as src:
        src.poll()
        ino = p.stat().st_ino
        with p.open("r+b") as fh:  # same inode, rewritten and longer than before
            fh.truncate(0)
            fh.write(b'{"id":"other"}\n{"id":"second"}\n')
        assert p.stat().st_ino == ino
        batches = src.poll()
        assert Disk.kinds(batches) == ["replaced"]
        assert Disk.lines(batches) == [b'{"id":"other"}', b'{"id":"second"}']
        assert batches[-1].generation == 1


def test_atomic_replace_drains_the_old_file_then_reads_the_new_one_from_zero(disk: Disk) -> None:
    p = disk.write("chat.jsonl", b"a\n")
    with new_sources(disk.root) as src:
        src.poll()
        disk.append("chat.jsonl", b"b\n")  # written before the rename, never read yet
        tmp = disk.write(".chat.jsonl.tmp", b"A\nB\nC\n")
        os.replace(tmp, p)
        batches = src.poll()
        assert [(b.generation, [ln.data for ln in b.lines], [n.kind for n in b.notices]) for b in batches] == [
            (0, [b"b"], []),
            (1, [b"A", b"B", b"C"], ["replaced"]),
        ]
        assert src.poll() == []


def test_delete_then_recreate(disk: Disk) -> None:
    p = disk.write("d.jsonl", b"1\n")
    with new_sources(disk.root) as src:
        src.poll()
        disk.append("d.jsonl", b"2\n")
        p.unlink()
        batches = src.poll()
        assert Disk.lines(batches) == [b"2"]  # written before the unlink: still read through the descriptor
        assert Disk.kinds(batches) == ["deleted"]
        assert src.poll() == []  # said once
        [fs] = src.files
        assert not fs.exists
        disk.write("d.jsonl", b"new\n")
        batches = src.poll()
        assert Disk.kinds(batches) == ["recreated"]
        assert [(b.generation, [(ln.lineno, ln.offset, ln.data) for ln in b.lines]) for b in batches] == [
            (1, [(1, 0, b"new")])
        ]


def test_delete_closes_the_descriptor(disk: Disk) -> None:
    p = disk.write("d.jsonl", b"1\n")
    before = len(os.listdir("/proc/self/fd"))
    with new_sources(p) as src:
        src.poll()
        assert len(os.listdir("/proc/self/fd")) == before + 1
        p.unlink()
        src.poll()
        assert len(os.listdir("/proc/self/fd")) == before


def test_a_directory_where_a_file_was_is_a_notice_not_an_exception(disk: Disk) -> None:
    p = disk.write("x.jsonl", b"1\n")
    with new_sources(p) as src:
        src.poll()
        p.unlink()
        p.mkdir()
        batches = src.poll()
        assert Disk.kinds(batches) == ["not_a_file"]
        assert src.poll() == []  # once
        assert src.files[0].error is not None
        p.rmdir()
        disk.write("x.jsonl", b"2\n")
        batches = src.poll()
        assert Disk.kinds(batches) == ["recreated"] and Disk.lines(batches) == [b"2"]


def test_a_fifo_is_not_opened(disk: Disk) -> None:
    p = disk.path("pipe.log")
    os.mkfifo(p)
    with new_sources(p) as src:
        assert Disk.kinds(src.poll()) == ["not_a_file"]  # and, above all, poll() did not block


def test_unreadable_file_is_a_notice_once_and_recovers(disk: Disk, monkeypatch: pytest.MonkeyPatch) -> None:
    disk.write("ok.jsonl", b"fine\n")
    disk.write("locked.jsonl", b"secret\n")
    real_open = tail_mod._open_readonly

    def deny(path: str) -> int:
        if path.endswith("locked.jsonl"):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_open(path)

    monkeypatch.setattr(tail_mod, "_open_readonly", deny)
    with new_sources(disk.root) as src:
        batches = src.poll()
        assert Disk.lines(batches) == [b"fine"]  # the other file is unaffected
        [n] = Disk.notices(batches)
        assert n.kind == "unreadable" and n.path.endswith("locked.jsonl") and "Permission denied" in n.message
        assert src.poll() == []  # not repeated every poll
        assert next(f for f in src.files if f.path.endswith("locked.jsonl")).error is not None
        monkeypatch.setattr(tail_mod, "_open_readonly", real_open)
        assert Disk.lines(src.poll()) == [b"secret"]
        assert all(f.error is None for f in src.files)


def test_read_error_is_a_notice_once_then_recovers(disk: Disk, monkeypatch: pytest.MonkeyPatch) -> None:
    disk.write("e.jsonl", b"1\n")
    real = os.pread

    def boom(fd: int, n: int, off: int) -> bytes:
        raise OSError(errno.EIO, "Input/output error")

    with new_sources(disk.root) as src:
        monkeypatch.setattr(os, "pread", boom)
        batches = src.poll()
        assert Disk.kinds(batches) == ["unreadable"] and "Input/output error" in Disk.notices(batches)[0].message
        assert Disk.lines(batches) == []
        monkeypatch.setattr(os, "pread", real)
        disk.append("e.jsonl", b"2\n")
        assert Disk.lines(src.poll()) == [b"1", b"2"]


def test_a_stat_error_other_than_absence_changes_nothing(disk: Disk, monkeypatch: pytest.MonkeyPatch) -> None:
    """EACCES on a parent dir must not look like a deletion (that would re-read the file from 0 later)."""
    p = disk.write("s.jsonl", b"1\n")
    real = os.stat

    def denied(path: str | os.PathLike[str], *a: object, **kw: object) -> os.stat_result:
        if os.fspath(path) == str(p):
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real(path, *a, **kw)  # type: ignore[arg-type]

    with new_sources(p) as src:
        src.poll()
        disk.append("s.jsonl", b"2\n")
        monkeypatch.setattr(os, "stat", denied)
        batches = src.poll()
        assert Disk.kinds(batches) == ["unreadable"]
        monkeypatch.setattr(os, "stat", real)
        batches = src.poll()
        assert Disk.kinds(batches) == [] and Disk.lines(batches) == [b"2"]
        assert [b.generation for b in batches] == [0]


def test_streams_of_deleted_files_are_forgotten_beyond_a_cap(disk: Disk, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tail_mod, "_MAX_TOMBSTONES", 2)
    for i in range(5):
        disk.write(f"f{i}.jsonl", b"x\n")
    with new_sources(disk.root) as src:
        src.poll()
        for i in range(4):
            disk.path(f"f{i}.jsonl").unlink()
        assert Disk.kinds(src.poll()) == ["deleted"] * 4
        assert sorted(Path(f.path).name for f in src.files) == ["f2.jsonl", "f3.jsonl", "f4.jsonl"]
        disk.write("f3.jsonl", b"y\n")  # still remembered: announced as recreated
        disk.write("f0.jsonl", b"z\n")  # forgotten: simply a new file
        batches = src.poll()
        assert {Path(b.path).name: [n.kind for n in b.notices] for b in batches} == {
            "f0.jsonl": [],
            "f3.jsonl": ["recreated"],
        }


# ---------------------------------------------------------------------------- limits


def test_oversized_line_is_skipped_with_a_notice_and_numbering_continues(disk: Disk) -> None:
    big = b"x" * 5000
    raw = b"a\n" + big + b"\nb\n" + b"y" * 1001 + b"\nc\n"
    p = disk.write("o.jsonl", raw)
    with new_sources(p, max_line_bytes=1000, read_chunk=256) as src:
        batches = src.poll()
    lines = [(ln.lineno, ln.offset, ln.data) for b in batches for ln in b.lines]
    assert lines == [(1, 0, b"a"), (3, 5003, b"b"), (5, 5005 + 1002, b"c")]
    notes = Disk.notices(batches)
    assert [(n.kind, n.lineno, n.offset) for n in notes] == [("oversized_line", 2, 2), ("oversized_line", 4, 5005)]
    assert "5000 bytes" in notes[0].message


def test_a_line_of_exactly_the_limit_passes(disk: Disk) -> None:
    p = disk.write("o.jsonl", b"z" * 1000 + b"\n")
    with new_sources(p, max_line_bytes=1000, read_chunk=100) as src:
        assert Disk.lines(src.poll()) == [b"z" * 1000]


def test_oversized_line_is_not_held_in_memory_while_it_grows(disk: Disk) -> None:
    p = disk.write("o.jsonl", b"ok\n" + b"q" * 3000)
    with new_sources(p, max_line_bytes=1000, read_chunk=512) as src:
        assert Disk.lines(src.poll()) == [b"ok"]
        g = next(g for s in src._streams.values() for g in s.gens)
        assert g.skipping and len(g.partial) == 0
        disk.append("o.jsonl", b"q" * 3000 + b"\nafter\n")
        batches = src.poll()
        assert Disk.lines(batches) == [b"after"]
        assert [(n.kind, n.lineno, n.offset) for n in Disk.notices(batches)] == [("oversized_line", 2, 3)]
        assert batches[0].lines[0].lineno == 3


def test_a_real_10mb_line_comes_out_intact_with_the_default_limit(disk: Disk) -> None:
    big = bytes(range(256)).replace(b"\n", b"") * (10 * 1024 * 1024 // 255 + 1)
    p = disk.write("big.jsonl", b"head\n" + big + b"\ntail\n")
    with new_sources(p) as src:
        lines = [ln for b in src.poll() for ln in b.lines]
    assert [ln.data[:4] for ln in lines] == [b"head", big[:4], b"tail"]
    assert lines[1].data == big and len(big) > 10 * 1024 * 1024
    assert lines[2].offset == 5 + len(big) + 1


def test_max_bytes_bounds_each_poll_and_pending_bytes_counts_down(disk: Disk, monkeypatch: pytest.MonkeyPatch) -> None:
    disk.write("a.jsonl", b"".join(b"a%03d\n" % i for i in range(100)))
    disk.write("b.jsonl", b"".join(b"b%03d\n" % i for i in range(100)))
    reads: list[int] = []
    real = os.pread

    def counting(fd: int, n: int, off: int) -> bytes:
        data = real(fd, n, off)
        if n != tail_mod.HEAD_BYTES:  # the head fingerprint read is not part of the budget
            reads.append(len(data))
        return data

    with new_sources(disk.root, read_chunk=64) as src:
        src.poll(max_bytes=0)
        assert src.pending_bytes() == 1000
        monkeypatch.setattr(os, "pread", counting)
        polls: list[list[bytes]] = []
        pending = [src.pending_bytes()]
        while src.pending_bytes():
            before = len(reads)
            polls.append(Disk.lines(src.poll(max_bytes=100)))
            assert sum(reads[before:]) <= 100
            pending.append(src.pending_bytes())
    assert max(reads) <= 64  # per-read chunks are bounded too
    assert pending == [1000 - 100 * i for i in range(11)]
    got = [ln for p in polls for ln in p]
    assert sorted(got) == sorted([b"a%03d" % i for i in range(100)] + [b"b%03d" % i for i in range(100)])
    # round-robin: the second file progresses on the second poll, not after the first file is done
    assert polls[0][0].startswith(b"a") and polls[1][0].startswith(b"b")


def test_descriptor_lru_keeps_reading_correctly(disk: Disk) -> None:
    for i in range(5):
        disk.write(f"f{i}.jsonl", b"x\n")
    with new_sources(disk.root, max_open=2) as src:
        assert len(Disk.lines(src.poll())) == 5
        assert len(src._lru) == 2
        # f0 was evicted; rewrite it in place (same inode, longer, different head) while we hold no fd
        with disk.path("f0.jsonl").open("r+b") as fh:
            fh.write(b"yy\nzz\n")
        for i in range(1, 5):
            disk.append(f"f{i}.jsonl", b"more\n")
        batches = src.poll()
        assert sorted(Disk.lines(batches)) == sorted([b"yy", b"zz"] + [b"more"] * 4)
        assert Disk.kinds(batches) == ["replaced"]


# ---------------------------------------------------------------------------- status, lifecycle


def test_files_and_pending_bytes_report_progress(logs: Disk) -> None:
    logs.write("logs/session.log.1", b"old\n")
    logs.write("logs/session.log", b"new\npart")
    with new_sources(logs.path("logs")) as src:
        assert src.files == [] and src.pending_bytes() == 0  # nothing known before the first poll
        src.poll()
        stats = {Path(f.path).name: f for f in src.files}
        assert set(stats) == {"session.log.1", "session.log"}
        assert stats["session.log"].bytes_read == 8 and stats["session.log"].lines_read == 1
        assert stats["session.log"].size == 8 and stats["session.log"].exists
        assert stats["session.log.1"].lines_read == 1
        assert {f.logical for f in src.files} == {str(logs.path("logs/session.log"))}
        assert src.pending_bytes() == 0


def test_close_is_idempotent_and_poll_after_close_is_empty(disk: Disk) -> None:
    p = disk.write("a.jsonl", b"1\n")
    src = new_sources(p)
    src.poll()
    src.close()
    src.close()
    disk.append("a.jsonl", b"2\n")
    assert src.poll() == []


def _watch_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("sources-watch")]


def test_wait_returns_early_on_an_event_and_close_leaves_no_thread(logs: Disk) -> None:
    logs.write("logs/session.log", b"1\n")
    f = logs.write("elsewhere/one.jsonl", b"x\n")
    src = new_sources(logs.path("logs"), f)
    try:
        src.start_watching()
        assert len(_watch_threads()) == 2  # the tree root and the single file's parent
        src.poll()
        time.sleep(0.3)  # let inotify settle, drain start-up noise
        src.wait(0.0)

        def later() -> None:
            time.sleep(0.2)
            logs.append("logs/session.log", b"2\n")

        threading.Thread(target=later).start()
        t0 = time.monotonic()
        assert src.wait(10.0) is True
        assert time.monotonic() - t0 < 5.0
        assert Disk.lines(src.poll()) == [b"2"]

        # an atomic replace of a single-file root is still seen (the parent dir is watched, not the file)
        time.sleep(0.3)
        src.wait(0.0)
        tmp = logs.write("elsewhere/.one.tmp", b"y\n")
        os.replace(tmp, f)
        assert src.wait(10.0) is True
        assert Disk.lines(src.poll()) == [b"y"]
    finally:
        src.close()
    assert _watch_threads() == []
    src.close()


def test_wait_without_an_event_is_the_heartbeat(disk: Disk) -> None:
    disk.write("a.jsonl", b"")
    with new_sources(disk.root) as src:
        src.start_watching()
        time.sleep(0.3)
        src.wait(0.0)
        t0 = time.monotonic()
        assert src.wait(0.3) is False
        assert time.monotonic() - t0 >= 0.25
        # the rotate-lock and temp files are filtered out: they do not wake the poller
        disk.write("x.log.rotate-lock", b"")
        assert src.wait(0.6) is False
    assert _watch_threads() == []


def test_wait_without_watching_sleeps_and_close_wakes_it(disk: Disk) -> None:
    src = new_sources(disk.root)
    threading.Timer(0.1, src.close).start()
    t0 = time.monotonic()
    assert src.wait(10.0) is False
    assert time.monotonic() - t0 < 5.0
