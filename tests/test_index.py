"""The persistent index (`core.index`): a warm start gives exactly the report a cold start gives on the same
bytes, whatever happened to the files in between (appended, new, truncated, replaced, rotated, deleted).

Each case runs the real `report` command twice or more with the index on and compares with `--no-cache`;
`status` (spied on `Index.restore`) says whether the run resumed (`warm`) or read everything again.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from core import index as index_mod
from core.engine import Engine
from core.index import Index
from core.state.attribution import cold_pairs
from tests.report_helpers import SESSION_ID, Transcript, log_line, write_agent
from tui.cli import main

DEMO = Path(__file__).resolve().parent.parent / "core" / "demo" / "data"


def statuses_of(runs: list[Index]) -> list[str]:
    return [run.status for run in runs]


def report(paths: list[Path], tmp_path: Path, *extra: str) -> dict[str, Any]:
    """`continuity-tui report PATHS --format json`, parsed, without its time-of-run field."""
    out = tmp_path / f"report-{len(list(tmp_path.glob('report-*.json')))}.json"
    assert main(["report", *map(str, paths), "--format", "json", "-o", str(out), *extra]) == 0
    data = json.loads(out.read_bytes())
    data.pop("generated_at")
    return data


def cold(paths: list[Path], tmp_path: Path, *extra: str) -> dict[str, Any]:
    return report(paths, tmp_path, "--no-cache", *extra)


def index_files() -> list[Path]:
    return sorted(index_mod.cache_dir().glob("*.index"))


def agent(tmp_path: Path) -> Path:
    return write_agent(tmp_path / "data")


def transcript_of(agent_dir: Path) -> Path:
    return next(agent_dir.glob(f"sessions/*/*{SESSION_ID}.jsonl"))


# ---------------------------------------------------------------------------------------------- warm == cold
def test_warm_equals_cold_on_the_demo_data(tmp_path: Path, runs: list[Index]) -> None:
    data = tmp_path / "demo"
    shutil.copytree(DEMO, data)
    first = report([data], tmp_path)
    assert statuses_of(runs) == ["cold: no index yet"] and len(index_files()) == 1
    second = report([data], tmp_path)
    assert runs[-1].status == "warm"
    assert first == second == cold([data], tmp_path)


def test_warm_equals_cold_on_a_built_agent(tmp_path: Path, runs: list[Index]) -> None:
    root = agent(tmp_path)
    first = report([root / "logs"], tmp_path)
    second = report([root / "logs"], tmp_path)
    assert statuses_of(runs) == ["cold: no index yet", "warm"]
    assert first == second == cold([root / "logs"], tmp_path)
    assert first["problems"], "the built agent has bad lines: problems must survive the index too"


def _grow(tmp_path: Path, cut: float, suffixes: tuple[str, ...]) -> tuple[Path, Path]:
    """A copy of the demo data whose files ending in `suffixes` are cut at a fraction of their bytes (mid-line:
    a held partial line) and read (the index saved); then the rest is appended (same inode)."""
    source = tmp_path / "demo"
    shutil.copytree(DEMO, source)
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
    """Transcripts and event recordings grown since the index was saved: resumed at the saved offsets (the
    partial line held at the cut completed by the append), and the report equals a cold one on the whole files."""
    source, data = _grow(tmp_path, cut, (".jsonl",))
    warm = report([data], tmp_path)
    assert statuses_of(runs) == ["cold: no index yet", "warm"]
    assert warm == cold([data], tmp_path) == cold([source], tmp_path)


def test_appended_session_log_naming_a_known_session_reads_cold(tmp_path: Path, runs: list[Index]) -> None:
    """New log lines with the `sessionId` of a session already read: the analysis counts them as build-profile
    evidence only when the session exists as the line is read (never in a cold read, always in a resumed
    one), so such a history is read cold until that order dependence is gone (see `Engine.restore`)."""
    source, data = _grow(tmp_path, 0.3, (".jsonl", "session.log", "compaction.log"))
    grown = report([data], tmp_path)
    assert runs[-1].status == f"cold: {data / 'logs' / 'session.log'}: new log lines name a session already read"
    assert grown == cold([data], tmp_path) == cold([source], tmp_path)


@pytest.mark.parametrize("cut", [0.6, 0.95])
def test_appended_demo_files_equal_cold(tmp_path: Path, runs: list[Index], cut: float) -> None:
    """Every current file of the demo grown (resumed or not, whichever is safe): the report equals cold."""
    source, data = _grow(tmp_path, cut, (".jsonl", "session.log", "compaction.log"))
    assert report([data], tmp_path) == cold([data], tmp_path) == cold([source], tmp_path)


def test_appended_session_log_resumes(tmp_path: Path, runs: list[Index]) -> None:
    """Log lines without a session id (older builds) and a new transcript: resumed, equal to cold."""
    root = agent(tmp_path)
    log = root / "logs" / "session.log"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:3]) + lines[3][:10])
    report([root], tmp_path)
    log.write_bytes(b"".join(lines))
    assert report([root], tmp_path) == cold([root], tmp_path) and runs[-1].status == "warm"


def test_new_session_and_new_log_lines_resume(tmp_path: Path, runs: list[Index]) -> None:
    """The usual day: a new session in a new folder (sorting before the saved ones) and its log lines."""
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
    assert runs[-1].status == "warm"
    assert warm == cold([root], tmp_path)
    assert [s["path"] for s in warm["sources"]][2].startswith("sessions/--home-dev-aaa--/")


def test_old_history_copied_in_reads_cold(tmp_path: Path, runs: list[Index]) -> None:
    """A transcript dated among what was read (a backup restored, another machine's sessions): its decisions
    could pair with the log lines differently than a cold read pairs them, so the run reads everything."""
    root = agent(tmp_path)
    transcript = transcript_of(root)
    lines = transcript.read_bytes().splitlines(keepends=True)
    transcript.write_bytes(b"".join(lines[:4]))
    report([root], tmp_path)
    transcript.write_bytes(b"".join(lines))  # the same first bytes plus more: an append
    new = transcript.parent.parent / "--home-dev-aaa--" / transcript.name.replace("0001", "0009")
    new.parent.mkdir()
    new.write_bytes(b"".join(line.replace(b"0001", b"0009") for line in lines))
    after = report([root], tmp_path)
    assert runs[-1].status.startswith("cold: new decisions could pair")
    assert after == cold([root], tmp_path)


def test_unchanged_warm_run_does_not_rewrite_the_index(tmp_path: Path, runs: list[Index]) -> None:
    root = agent(tmp_path)
    report([root], tmp_path)
    (path,) = index_files()
    before = path.stat().st_ino
    report([root], tmp_path)
    assert runs[-1].status == "warm" and path.stat().st_ino == before


# ---------------------------------------------------------------------------------------------- invalidation
def _changed(tmp_path: Path, runs: list[Index], change: Any, why: str) -> None:
    root = agent(tmp_path)
    report([root], tmp_path)
    change(root)
    after = report([root], tmp_path)
    assert runs[-1].status.startswith("cold:") and why in runs[-1].status, runs[-1].status
    assert after == cold([root], tmp_path)
    assert report([root], tmp_path) == after and runs[-1].status == "warm"  # the cold run saved a fresh index


def test_truncated_file_invalidates(tmp_path: Path, runs: list[Index]) -> None:
    def truncate(root: Path) -> None:
        path = transcript_of(root)
        body = path.read_bytes()
        with path.open("r+b") as fh:
            fh.truncate(len(body) // 2)

    _changed(tmp_path, runs, truncate, "truncated")


def test_replaced_file_invalidates(tmp_path: Path, runs: list[Index]) -> None:
    def replace(root: Path) -> None:
        path = transcript_of(root)
        tmp = path.with_name(".tmp")
        tmp.write_bytes(path.read_bytes() + b"\n")
        os.replace(tmp, path)  # the same bytes and more, but another file: not an append

    _changed(tmp_path, runs, replace, "replaced")


def test_rewritten_head_invalidates(tmp_path: Path, runs: list[Index]) -> None:
    def rewrite(root: Path) -> None:
        path = transcript_of(root)
        body = path.read_bytes()
        with path.open("r+b") as fh:
            fh.write(body.replace(b"0198f0a1", b"0198f0a2", 1) + b"\n")  # same inode, longer, new head

    _changed(tmp_path, runs, rewrite, "head changed")


def test_rewritten_before_offset_invalidates(tmp_path: Path, runs: list[Index]) -> None:
    def rewrite(root: Path) -> None:
        path = transcript_of(root)
        body = path.read_bytes()
        at = len(body) - 100
        with path.open("r+b") as fh:
            fh.write(body[:at] + body[at:].replace(b"a", b"b") + b"\n")

    _changed(tmp_path, runs, rewrite, "before the saved offset")


def test_same_size_rewrite_invalidates(tmp_path: Path, runs: list[Index]) -> None:
    def rewrite(root: Path) -> None:
        path = transcript_of(root)
        stat = path.stat()
        body = path.read_bytes()
        at = len(body) // 2
        path.write_bytes(body[:at] + body[at:].replace(b"more", b"MORE"))
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))

    _changed(tmp_path, runs, rewrite, "same size")


def test_deleted_file_invalidates(tmp_path: Path, runs: list[Index]) -> None:
    _changed(tmp_path, runs, lambda root: transcript_of(root).unlink(), "deleted")


def test_grown_rotated_generation_invalidates(tmp_path: Path, runs: list[Index]) -> None:
    def grow(root: Path) -> None:
        with (root / "logs" / "session.log.1").open("ab") as fh:
            fh.write(b'{"ts":"2026-08-04T02:00:30.500Z","level":"info","event":"x"}\n')

    _changed(tmp_path, runs, grow, "rotated generation")


def test_rotation_invalidates(tmp_path: Path, runs: list[Index]) -> None:
    def rotate(root: Path) -> None:
        logs = root / "logs"
        os.replace(logs / "session.log", logs / "session.log.1")  # senpi: the old .1 is dropped
        (logs / "session.log").write_text(
            '{"ts":"2026-08-04T02:05:00.000Z","level":"info","event":"claude_sdk_oauth_session_continuity",'
            '"kind":"delta","reason":"prefix_matched","count":1}\n'
        )

    _changed(tmp_path, runs, rotate, "")


def test_rotation_of_a_log_we_saw_whole_invalidates(tmp_path: Path, runs: list[Index]) -> None:
    """session.log had no .1 when saved; now it sits at .1 and a new session.log exists."""

    def rotate(root: Path) -> None:
        logs = root / "logs"
        os.replace(logs / "session.log", logs / "session.log.1")
        (logs / "session.log").write_text("")

    root = agent(tmp_path)
    (root / "logs" / "session.log.1").unlink()
    report([root], tmp_path)
    rotate(root)
    after = report([root], tmp_path)
    assert runs[-1].status.startswith("cold:")
    assert after == cold([root], tmp_path)


def test_other_code_or_options_use_another_index(tmp_path: Path, runs: list[Index], monkeypatch: Any) -> None:
    root = agent(tmp_path)
    report([root], tmp_path)
    report([root], tmp_path, "--volatile", ".content[*].ts")
    assert statuses_of(runs) == ["cold: no index yet", "cold: no index yet"] and len(index_files()) == 2
    assert report([root], tmp_path, "--volatile", ".content[*].ts") == cold(
        [root], tmp_path, "--volatile", ".content[*].ts"
    )
    assert runs[-1].status == "warm"
    monkeypatch.setattr(index_mod, "code_digest", lambda: "another build")
    report([root], tmp_path)
    assert runs[-1].status == "cold: no index yet" and len(index_files()) == 3


# ---------------------------------------------------------------------------------------------- the file itself
@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b"garbage",
        lambda b: b[: len(b) // 2],  # a partial write
        lambda b: b[:-40] + bytes(40),  # the compressed pickle damaged
        lambda b: b.replace(b"continuity-tui index 1", b"continuity-tui index 9"),
        lambda b: b.split(b"\n", 1)[0] + b"\n{not json\n" + b.split(b"\n", 2)[2],
    ],
)
def test_corrupt_index_is_ignored_with_a_notice(tmp_path: Path, capsys: Any, runs: list[Index], damage: Any) -> None:
    root = agent(tmp_path)
    report([root], tmp_path)
    (path,) = index_files()
    path.write_bytes(damage(path.read_bytes()))
    capsys.readouterr()
    assert report([root], tmp_path) == cold([root], tmp_path)
    err = capsys.readouterr().err
    assert runs[-1].status.startswith("cold: index") and "ignored" in err and err.count("\n") == 1
    assert report([root], tmp_path) == cold([root], tmp_path) and runs[-1].status == "warm"  # rewritten whole


def test_no_cache_writes_nothing(tmp_path: Path) -> None:
    root = agent(tmp_path)
    cold([root], tmp_path)
    assert main(["check", str(root), "--no-cache", "--max-avoidable", "1000"]) in (0, 1)
    assert not index_mod.cache_dir().exists() or not any(index_mod.cache_dir().iterdir())


def test_check_uses_the_index(tmp_path: Path, runs: list[Index], capsys: Any) -> None:
    root = agent(tmp_path)
    code = main(["check", str(root), "--max-resend-share", "0.9"])
    first = capsys.readouterr().out
    assert main(["check", str(root), "--max-resend-share", "0.9"]) == code
    assert capsys.readouterr().out == first and statuses_of(runs) == ["cold: no index yet", "warm"]


def test_only_the_most_recent_indexes_are_kept(tmp_path: Path) -> None:
    for i in range(index_mod.KEEP + 3):
        root = write_agent(tmp_path / f"a{i}")
        report([root], tmp_path)
    assert len(index_files()) == index_mod.KEEP


def test_cache_dir_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CONTINUITY_TUI_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert index_mod.cache_dir() == tmp_path / "continuity-tui"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert index_mod.cache_dir() == Path.home() / ".cache" / "continuity-tui"


# ---------------------------------------------------------------------------------------------- the replay
def _pairs(engine: Engine) -> dict[tuple[str, int], int]:
    return {
        (key, turn.index): turn.log_line
        for key, session in engine.state.sessions.items()
        for turn in session.turns
        if turn.log_line is not None
    }


@pytest.mark.parametrize("chunk", [64 << 20, 20_000, 4_096, 700])
@pytest.mark.parametrize("which", ["demo", "agent", "crowded"])
def test_the_cold_replay_pairs_as_a_cold_drain_does(tmp_path: Path, chunk: int, which: str) -> None:
    """`resumed_in_order` trusts `cold_pairs` to know how a cold drain pairs log lines with decisions: check
    it against real cold drains, in one poll and in polls small enough to cut every file (the round-robin
    resumes a cut file after the others), on data where the pairing is ambiguous (`crowded`: two sessions
    with the same decisions at the same times, no session ids on the log lines)."""
    if which == "demo":
        root = DEMO
    else:
        root = agent(tmp_path)
        if which == "crowded":
            transcript = transcript_of(root)
            twin = transcript.parent.parent / "--home-dev-aaa--" / transcript.name.replace("0001", "0009")
            twin.parent.mkdir()
            twin.write_bytes(transcript.read_bytes().replace(b"0001", b"0009"))
    engine = Engine([root])
    try:
        engine.read_all(chunk)
        pairs = _pairs(engine)
        assert pairs, "nothing paired: the check would be vacuous"
        assert cold_pairs(engine.state, engine.sources.layout(), chunk) == pairs
    finally:
        engine.close()


def test_the_report_saves_its_index_from_a_forked_child_and_the_next_run_is_warm(
    tmp_path: Path, runs: list[Index], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Index.capture_behind` pickles in a forked child while the report is written (where fork is safe: one
    thread). What the child saves must be what a synchronous capture saves: the next run adopts it."""
    import threading

    forks: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    data = agent(tmp_path)
    single = threading.active_count() == 1
    first = report([data], tmp_path)
    assert len(forks) == (1 if single else 0)
    assert len(index_files()) == 1 and not list(index_mod.cache_dir().glob(".tmp-*"))
    second = report([data], tmp_path)
    assert statuses_of(runs) == ["cold: no index yet", "warm"]
    assert len(forks) == (1 if single else 0), "a warm run that read nothing new has nothing to save"
    assert first == second == cold([data], tmp_path)
