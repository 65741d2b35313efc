"""core.sources discovery: resolving user paths into roots, listing candidate files, ordering, limits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.sources import SourceError, discover, resolve_roots
from core.sources.discover import Scanner, logical_of, order_key, rotated_of

# ---------------------------------------------------------------------------- helper


def touch(root: Path, *rels: str) -> None:
    """Tiny test helper: create empty files (and their parent dirs) under ``root``."""
    for rel in rels:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"")


def rel(root: Path, paths: list[Path]) -> list[str]:
    return [str(p.relative_to(root)) for p in paths]


# ---------------------------------------------------------------------------- resolve_roots


def test_logs_dir_pulls_in_its_sibling_sessions_dir(tmp_path: Path) -> None:
    touch(tmp_path, "agent/logs/session.log", "agent/sessions/--x--/s.jsonl")
    assert resolve_roots([tmp_path / "agent/logs"]) == [tmp_path / "agent/logs", tmp_path / "agent/sessions"]


def test_logs_dir_without_sessions_is_just_itself(tmp_path: Path) -> None:
    touch(tmp_path, "agent/logs/session.log")
    assert resolve_roots([tmp_path / "agent/logs"]) == [tmp_path / "agent/logs"]


def test_agent_dir_yields_logs_and_sessions(tmp_path: Path) -> None:
    touch(tmp_path, "agent/logs/session.log", "agent/sessions/--x--/s.jsonl", "agent/auth.json")
    assert resolve_roots([tmp_path / "agent"]) == [tmp_path / "agent/logs", tmp_path / "agent/sessions"]
    touch(tmp_path, "only-sessions/sessions/a.jsonl")
    assert resolve_roots([tmp_path / "only-sessions"]) == [tmp_path / "only-sessions/sessions"]


def test_sessions_dir_and_single_file_yield_themselves(tmp_path: Path) -> None:
    touch(tmp_path, "agent/logs/session.log", "agent/sessions/--x--/s.jsonl")
    assert resolve_roots([tmp_path / "agent/sessions"]) == [tmp_path / "agent/sessions"]
    f = tmp_path / "agent/logs/session.log"
    assert resolve_roots([f]) == [f]


def test_roots_are_absolute_and_deduplicated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    touch(tmp_path, "agent/logs/session.log", "agent/sessions/a.jsonl")
    monkeypatch.chdir(tmp_path)
    got = resolve_roots([Path("agent/logs"), Path("agent"), Path("agent/sessions/../sessions")])
    assert got == [tmp_path / "agent/logs", tmp_path / "agent/sessions"]


def test_missing_path_raises_source_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(SourceError) as info:
        resolve_roots([tmp_path, missing])
    assert info.value.path == missing
    assert info.value.message == "does not exist"
    assert str(missing) in str(info.value)


# ---------------------------------------------------------------------------- discover


def test_discover_lists_candidates_and_skips_noise(tmp_path: Path) -> None:
    touch(
        tmp_path,
        "logs/session.log",
        "logs/session.log.1",
        "logs/session.log.rotate-lock",
        "logs/compaction.log",
        "logs/mcp/server.log",
        "sessions/--p--/2026-08-22T09-00-00-123Z_u.jsonl",
        "sessions/--p--/2026-08-22T09-00-00-123Z_u.jsonl.claude-sdk-oauth-binding.json",
        "sessions/--p--/.2026-08-22T09-00-00-123Z_u.jsonl.claude-sdk-oauth-binding.json-1234.tmp",
        "sessions/ws/partial.json",
        "sessions/ws/chat.jsonl",
        "sessions/.hidden/secret.jsonl",
        "sessions/notes.txt",
        "sessions/old.log.2",
    )
    got = rel(tmp_path, discover([tmp_path / "logs", tmp_path / "sessions"]))
    assert got == [
        "logs/compaction.log",
        "logs/mcp/server.log",
        "logs/session.log.1",
        "logs/session.log",
        "sessions/--p--/2026-08-22T09-00-00-123Z_u.jsonl",
        "sessions/--p--/2026-08-22T09-00-00-123Z_u.jsonl.claude-sdk-oauth-binding.json",
        "sessions/ws/chat.jsonl",
        "sessions/ws/partial.json",
    ]


def test_rotated_generation_sorts_before_its_live_file() -> None:
    paths = ["/l/session.log", "/l/a.log", "/l/session.log.1", "/l/session.log.jsonl", "/l/a.log.1"]
    assert sorted(paths, key=order_key) == [
        "/l/a.log.1",
        "/l/a.log",
        "/l/session.log.1",
        "/l/session.log",
        "/l/session.log.jsonl",
    ]


def test_logical_identity_of_a_log_family() -> None:
    assert logical_of("/l/session.log.1") == "/l/session.log"
    assert logical_of("/l/session.log") == "/l/session.log"
    assert logical_of("/s/a.jsonl") == "/s/a.jsonl"
    assert rotated_of("/l/session.log") == "/l/session.log.1"
    assert rotated_of("/s/a.jsonl") is None


def test_a_file_root_yields_itself_whatever_its_name(tmp_path: Path) -> None:
    touch(tmp_path, "capture.txt", "session.log")
    assert discover([tmp_path / "capture.txt"]) == [tmp_path / "capture.txt"]
    assert discover([tmp_path / "session.log"]) == [tmp_path / "session.log"]


def test_symlink_loops_are_walked_once(tmp_path: Path) -> None:
    touch(tmp_path, "s/a/x.jsonl")
    os.symlink(tmp_path / "s", tmp_path / "s/a/loop")
    os.symlink(tmp_path / "s/a", tmp_path / "s/again")
    assert rel(tmp_path, discover([tmp_path / "s"])) == ["s/a/x.jsonl"]


def test_symlinked_subdir_outside_the_root_is_followed(tmp_path: Path) -> None:
    touch(tmp_path, "elsewhere/y.jsonl", "s/x.jsonl")
    os.symlink(tmp_path / "elsewhere", tmp_path / "s/link")
    assert rel(tmp_path, discover([tmp_path / "s"])) == ["s/link/y.jsonl", "s/x.jsonl"]


def test_file_cap(tmp_path: Path) -> None:
    touch(tmp_path, *(f"s/d{i % 3}/f{i:03d}.jsonl" for i in range(30)))
    sc = Scanner([tmp_path / "s"], max_files=10)
    assert len(sc.scan()) == 10 and sc.capped
    sc = Scanner([tmp_path / "s"], max_files=30)
    assert len(sc.scan()) == 30 and not sc.capped


def test_default_cap_is_20000() -> None:
    from core.sources.discover import MAX_FILES

    assert MAX_FILES == 20_000


def test_scanner_sees_files_added_within_the_same_mtime_tick(tmp_path: Path) -> None:
    """Directory mtimes are coarse: a second file created right after a scan must not be missed."""
    touch(tmp_path, "s/a.jsonl")
    sc = Scanner([tmp_path / "s"])
    assert len(sc.scan()) == 1
    st = os.stat(tmp_path / "s")
    touch(tmp_path, "s/b.jsonl")
    os.utime(tmp_path / "s", ns=(st.st_atime_ns, st.st_mtime_ns))  # pretend the mtime did not move
    assert len(sc.scan()) == 2


def test_scanner_reuses_unchanged_directory_listings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    touch(tmp_path, "s/d1/a.jsonl", "s/d2/b.jsonl")
    old = 1_000_000_000
    for d in ("s/d1", "s/d2", "s"):
        os.utime(tmp_path / d, (old, old))  # long ago: outside the "recent" window
    sc = Scanner([tmp_path / "s"])
    assert len(sc.scan()) == 2
    listed: list[str] = []
    real = Scanner._list

    def spy(d: str, mtime_ns: int) -> object:
        listed.append(d)
        return real(d, mtime_ns)

    monkeypatch.setattr(Scanner, "_list", staticmethod(spy))
    assert len(sc.scan()) == 2
    assert listed == []  # nothing re-listed: one stat per directory
    touch(tmp_path, "s/d2/c.jsonl")  # d2's mtime moves
    assert len(sc.scan()) == 3
    assert listed == [str(tmp_path / "s/d2")]


def test_vanished_root_is_skipped(tmp_path: Path) -> None:
    touch(tmp_path, "s/a.jsonl")
    sc = Scanner([tmp_path / "s", tmp_path / "gone"])
    assert len(sc.scan()) == 1


def test_agent_and_logs_dirs_pull_in_the_event_recordings(tmp_path: Path) -> None:
    from core.sources.discover import resolve_roots

    agent = tmp_path / "agent"
    for name in ("logs", "sessions", "events"):
        (agent / name).mkdir(parents=True)
    expected = [agent / "logs", agent / "sessions", agent / "events"]
    assert resolve_roots([agent]) == expected
    assert resolve_roots([agent / "logs"]) == expected
