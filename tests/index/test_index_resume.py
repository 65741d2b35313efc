"""The persistent index (`core.index`): a resumed run gives exactly the report a cold run gives on the same bytes,
whatever happened to the files in between (appended, new, truncated, replaced, rewritten, rotated, deleted).

Each case runs the real `report` command twice or more with the index on and compares with `--no-cache`;
`status` (`runs`, a spy on `Index.restore`) says what the run loaded (`warm: …`) or why it read everything.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from core.index import KEEP, Index, cache_dir, index_path
from core.index import run as run_mod
from tests.index_support import (
    DEMO,
    agent,
    cold,
    demo_without_recordings,
    report,
    stored,
    stored_sessions,
)
from tests.report_helpers import SESSION_ID, Transcript, log_line, write_agent
from tui.cli import main


def transcript_of(agent_dir: Path) -> Path:
    return next(agent_dir.glob(f"sessions/*/*{SESSION_ID}.jsonl"))


def statuses(runs: list[Index]) -> list[str]:
    return [run.status for run in runs]


# ---------------------------------------------------------------------------------------------- warm == cold
def test_the_demo_data_resumes_and_equals_cold(tmp_path: Path, runs: list[Index]) -> None:
    data = tmp_path / "demo"
    shutil.copytree(DEMO, data)
    first = report([data], tmp_path)
    second = report([data], tmp_path)
    assert runs[0].status == "cold: no index yet"
    assert first == second == cold([data], tmp_path)
    # the demo's finished sessions have event recordings attached (a recording's diff is message text): they
    # are read from their files at every start, like the session still being written
    assert set(runs[-1].not_kept.values()) == {"event recordings are attached to its calls"}


def test_finished_sessions_are_loaded_as_stored(tmp_path: Path, runs: list[Index]) -> None:
    data = demo_without_recordings(tmp_path)
    first = report([data], tmp_path)
    second = report([data], tmp_path)
    assert runs[0].status == "cold: no index yet"
    assert runs[1].status.startswith("warm: 2 sessions")
    assert first == second == cold([data], tmp_path)
    assert len(stored_sessions()) == 2 and stored("SELECT count(*) FROM calls") == [(34,)]


def test_a_built_agent_resumes_with_its_problems(tmp_path: Path, runs: list[Index]) -> None:
    root = agent(tmp_path)
    first = report([root / "logs"], tmp_path)
    second = report([root / "logs"], tmp_path)
    assert statuses(runs)[0] == "cold: no index yet" and runs[1].status.startswith("warm: 2 sessions")
    assert first == second == cold([root / "logs"], tmp_path)
    assert first["problems"], "the built agent has bad lines: problems must survive the index too"


def _grow(tmp_path: Path, cut: float, suffixes: tuple[str, ...]) -> tuple[Path, Path]:
    """A copy of the demo data (no recordings) whose files ending in `suffixes` are cut at a fraction of their
    bytes (mid-line: a held partial line) and read (the index written); then the rest is appended (same inode)."""
    source = demo_without_recordings(tmp_path, "whole")
    data = tmp_path / "growing"
    shutil.copytree(source, data)
    files = sorted(p for p in data.rglob("*") if p.is_file() and p.name.endswith(suffixes))
    for path in files:
        body = path.read_bytes()
        path.write_bytes(body[: int(len(body) * cut)])
    report([data], tmp_path)
    for path in files:
        whole = (source / path.relative_to(data)).read_bytes()
        with path.open("ab") as fh:
            fh.write(whole[path.stat().st_size :])
    return source, data


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.95])
def test_appended_transcripts_resume_and_equal_cold(tmp_path: Path, runs: list[Index], cut: float) -> None:
    """Transcripts grown since they were stored: each is rebuilt from its file (a parked session that grew), and
    the report equals a cold one on the whole files."""
    source, data = _grow(tmp_path, cut, (".jsonl",))
    warm = report([data], tmp_path)
    assert warm == cold([data], tmp_path) == cold([source], tmp_path)


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.95])
def test_appended_demo_files_equal_cold(tmp_path: Path, runs: list[Index], cut: float) -> None:
    """Every current file of the demo grown, logs too: the report equals cold."""
    source, data = _grow(tmp_path, cut, (".jsonl", "session.log", "compaction.log"))
    assert report([data], tmp_path) == cold([data], tmp_path) == cold([source], tmp_path)
    assert report([data], tmp_path) == cold([source], tmp_path) and runs[-1].status.startswith("warm")


def test_appended_session_log_resumes(tmp_path: Path, runs: list[Index]) -> None:
    root = agent(tmp_path)
    log = root / "logs" / "session.log"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:3]) + lines[3][:10])
    report([root], tmp_path)
    log.write_bytes(b"".join(lines))
    assert report([root], tmp_path) == cold([root], tmp_path) and runs[-1].status.startswith("warm")


def test_new_session_and_new_log_lines_resume(tmp_path: Path, runs: list[Index]) -> None:
    """The usual day: a new session in a new folder (sorting before the stored ones) and its log lines."""
    root = agent(tmp_path)
    report([root], tmp_path)
    later = Transcript("0198f0a1-aaaa-7bbb-8ccc-000000000003", "/home/dev/aaa")
    later.user(600, "a new day")
    later.assistant(601, "bootstrap", "registry_miss", 1, payload_bytes=2000)
    later.user(660, "go on")
    later.assistant(661, "flatten", "idle_ttl", 3)
    folder = root / "sessions" / "--home-dev-aaa--"
    folder.mkdir()
    (folder / "2026-08-04T02-10-00-000Z_0198f0a1-aaaa-7bbb-8ccc-000000000003.jsonl").write_text(later.text())
    with (root / "logs" / "session.log").open("a") as fh:
        fh.write(log_line(601, "bootstrap", "registry_miss", 1) + "\n" + log_line(661, "flatten", "idle_ttl", 3) + "\n")
    warm = report([root], tmp_path)
    assert runs[-1].status.startswith("warm: 2 sessions")
    assert warm == cold([root], tmp_path)
    assert [s["path"] for s in warm["sources"]][2].startswith("sessions/--home-dev-aaa--/")
    assert len(stored_sessions()) == 3


def test_old_history_copied_in_pairs_as_a_cold_read(tmp_path: Path, runs: list[Index]) -> None:
    """A transcript dated among what was stored (a backup restored): its decisions could pair with the log lines
    differently than a cold read pairs them; the resumed run pairs them as a cold drain does (`cold_pairs`)."""
    root = agent(tmp_path)
    transcript = transcript_of(root)
    report([root], tmp_path)
    new = transcript.parent.parent / "--home-dev-aaa--" / transcript.name.replace("0001", "0009")
    new.parent.mkdir()
    new.write_bytes(transcript.read_bytes().replace(b"0001", b"0009"))
    after = report([root], tmp_path)
    assert runs[-1].status.startswith("warm")
    assert after == cold([root], tmp_path)


def test_an_unchanged_history_writes_nothing(tmp_path: Path, runs: list[Index]) -> None:
    root = agent(tmp_path)
    report([root], tmp_path)
    before = stored("SELECT id, key FROM sessions ORDER BY id")
    report([root], tmp_path)
    assert runs[-1].status.startswith("warm") and stored("SELECT id, key FROM sessions ORDER BY id") == before


# ---------------------------------------------------------------------------------------------- invalidation
def _changed(tmp_path: Path, runs: list[Index], change: Any, why: str = "") -> None:
    """After `change`, the changed file is dropped from the store and read again: the report equals a cold one,
    and the run after that loads it again."""
    root = demo_without_recordings(tmp_path)
    report([root], tmp_path)
    change(root)
    after = report([root], tmp_path)
    assert why in runs[-1].status, runs[-1].status
    assert after == cold([root], tmp_path)
    again = report([root], tmp_path)
    assert again == after and runs[-1].status.startswith("warm")


def _session_file(root: Path) -> Path:
    return next(root.glob("sessions/--home-mika-work-ledger-api--/2026-08-07*.jsonl"))


def test_truncated_file_is_read_again(tmp_path: Path, runs: list[Index]) -> None:
    def truncate(root: Path) -> None:
        path = _session_file(root)
        with path.open("r+b") as fh:
            fh.truncate(path.stat().st_size // 2)

    _changed(tmp_path, runs, truncate, "1 changed")


def test_replaced_file_is_read_again(tmp_path: Path, runs: list[Index]) -> None:
    def replace(root: Path) -> None:
        path = _session_file(root)
        tmp = path.with_name(".tmp")
        tmp.write_bytes(path.read_bytes() + b"\n")
        os.replace(tmp, path)  # the same bytes and more, but another file: not an append

    _changed(tmp_path, runs, replace, "1 changed")


def test_rewritten_head_is_read_again(tmp_path: Path, runs: list[Index]) -> None:
    def rewrite(root: Path) -> None:
        path = _session_file(root)
        body = path.read_bytes()
        with path.open("r+b") as fh:
            fh.write(body.replace(b"019fdb7e", b"019fdb7f", 1) + b"\n")  # same inode, longer, new head

    _changed(tmp_path, runs, rewrite, "1 changed")


def test_rewritten_before_the_offset_is_read_again(tmp_path: Path, runs: list[Index]) -> None:
    def rewrite(root: Path) -> None:
        path = _session_file(root)
        body = path.read_bytes()
        at = len(body) - 100
        with path.open("r+b") as fh:
            fh.write(body[:at] + body[at:].replace(b"a", b"b") + b"\n")

    _changed(tmp_path, runs, rewrite, "1 changed")


def test_same_size_rewrite_is_read_again(tmp_path: Path, runs: list[Index]) -> None:
    def rewrite(root: Path) -> None:
        path = _session_file(root)
        stat = path.stat()
        body = path.read_bytes()
        at = len(body) // 2
        path.write_bytes(body[:at] + body[at:].replace(b"e", b"E"))
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))

    _changed(tmp_path, runs, rewrite, "1 changed")


def test_deleted_file_is_forgotten(tmp_path: Path, runs: list[Index]) -> None:
    root = demo_without_recordings(tmp_path)
    report([root], tmp_path)
    _session_file(root).unlink()
    assert report([root], tmp_path) == cold([root], tmp_path)
    report([root], tmp_path)
    assert len(stored_sessions()) == 1


def test_changed_restart_sidecar_rebuilds_its_session(tmp_path: Path, runs: list[Index]) -> None:
    """A stored session keeps none of what judging a restart sidecar needs: a sidecar rewritten since is read
    again and the session rebuilt from its file, as a parked one woken by a recording."""
    root = demo_without_recordings(tmp_path)
    report([root], tmp_path)
    sidecar = next(root.glob("sessions/*/*.claude-sdk-oauth-binding.json"))
    body = sidecar.read_bytes()
    tmp = sidecar.with_name(".tmp")
    tmp.write_bytes(body.replace(b'"sentCount":18', b'"sentCount":17'))
    os.replace(tmp, sidecar)
    assert report([root], tmp_path) == cold([root], tmp_path)


def test_rotation_of_a_log_equals_cold(tmp_path: Path, runs: list[Index]) -> None:
    root = agent(tmp_path)
    report([root], tmp_path)
    logs = root / "logs"
    os.replace(logs / "session.log", logs / "session.log.1")  # senpi: the old .1 is dropped
    (logs / "session.log").write_text(
        '{"ts":"2026-08-04T02:05:00.000Z","level":"info","event":"claude_sdk_oauth_session_continuity",'
        '"kind":"delta","reason":"prefix_matched","count":1}\n'
    )
    assert report([root], tmp_path) == cold([root], tmp_path)


# ---------------------------------------------------------------------------------------------- scopes
def test_other_code_or_options_use_another_scope(tmp_path: Path, runs: list[Index], monkeypatch: Any) -> None:
    root = agent(tmp_path)
    report([root], tmp_path)
    report([root], tmp_path, "--volatile", ".content[*].ts")
    assert statuses(runs) == ["cold: no index yet", "cold: no index yet"]
    assert report([root], tmp_path, "--volatile", ".content[*].ts") == cold(
        [root], tmp_path, "--volatile", ".content[*].ts"
    )
    assert runs[-1].status.startswith("warm")
    monkeypatch.setattr(run_mod, "code_digest", lambda: "another build")
    report([root], tmp_path)
    assert runs[-1].status == "cold: no index yet" and len(stored("SELECT id FROM scopes")) == 3


def test_only_the_most_recent_scopes_are_kept(tmp_path: Path) -> None:
    for i in range(KEEP + 3):
        root = write_agent(tmp_path / f"a{i}")
        report([root], tmp_path)
    assert len(stored("SELECT id FROM scopes")) == KEEP
    assert len(stored("SELECT DISTINCT scope FROM sessions")) == KEEP


def test_no_cache_writes_nothing(tmp_path: Path) -> None:
    root = agent(tmp_path)
    cold([root], tmp_path)
    assert main(["check", str(root), "--no-cache", "--max-avoidable", "1000"]) in (0, 1)
    assert not cache_dir().exists() or not any(cache_dir().iterdir())


def test_check_uses_the_index(tmp_path: Path, runs: list[Index], capsys: Any) -> None:
    root = agent(tmp_path)
    code = main(["check", str(root), "--max-resend-share", "0.9"])
    first = capsys.readouterr().out
    assert main(["check", str(root), "--max-resend-share", "0.9"]) == code
    assert capsys.readouterr().out == first
    assert runs[0].status == "cold: no index yet" and runs[1].status.startswith("warm")


def test_cache_dir_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CONTINUITY_TUI_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "continuity-tui"
    assert index_path() == tmp_path / "continuity-tui" / "index.sqlite3"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_dir() == Path.home() / ".cache" / "continuity-tui"


def test_index_path_prints_where_it_is(capsys: Any) -> None:
    assert main(["index", "--path"]) == 0
    assert capsys.readouterr().out == f"{index_path()}\n"


@pytest.mark.parametrize("change", ["delete", "unrecognised"])
def test_a_restart_sidecar_gone_since_reads_its_session_again(tmp_path: Path, runs: list[Index], change: str) -> None:
    """The verdict a stored session carries was judged from its sidecar: a sidecar deleted, or rewritten into
    something no longer read as one, leaves the session as a cold read has it (no sidecar), so it is read again
    (found by the random histories: the stored verdict stayed)."""
    root = demo_without_recordings(tmp_path)
    report([root], tmp_path)
    sidecar = next(root.glob("sessions/*/*.claude-sdk-oauth-binding.json"))
    if change == "delete":
        sidecar.unlink()
    else:
        tmp = sidecar.with_name(".tmp")
        tmp.write_text('{"note": "not a binding"}')
        os.replace(tmp, sidecar)
    assert report([root], tmp_path) == cold([root], tmp_path)
