"""``generate()``: merge all sessions' writes by time into one agent dir, then write the manifest."""

from __future__ import annotations

import heapq
import random
import shutil
from collections.abc import Iterator
from pathlib import Path

from core.demo.sim.ids import iso_ms
from core.demo.sim.manifest import FileTruth, Manifest, ProblemTruth
from core.demo.sim.scenarios import corpus_specs, demo_specs
from core.demo.sim.session import SessionSim
from core.demo.sim.sink import DEFAULT_ROTATE_BYTES, SESSION_LOG, Located, Sink, Write
from core.demo.sim.specs import AGENT_HOME, SessionSpec

DEMO_ROTATE_BYTES = 6 * 1024
_OUTPUTS = ("logs", "sessions", "events", "manifest.json")


def _prepare_output(out_dir: Path) -> None:
    """Start from an empty dir; only a previous simulator output (it has a manifest.json) is cleared."""
    if out_dir.exists() and any(out_dir.iterdir()):
        if not (out_dir / "manifest.json").exists():
            raise FileExistsError(f"{out_dir} is not empty and holds no simulator manifest.json")
        for name in _OUTPUTS:
            target = out_dir / name
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
    out_dir.mkdir(parents=True, exist_ok=True)


def _session_stream(
    index: int, spec: SessionSpec, seed: int, scenario: str, scale: float, sims: dict[int, SessionSim]
) -> Iterator[tuple[int, int, int, Write]]:
    """One session's writes as (ms, session index, sequence, write), checked to be in time order."""
    sim = SessionSim(spec, random.Random(f"{seed}/{scenario}/{index}"), scale)
    sims[index] = sim
    seq, last = 0, -1
    for step in sim.run():
        for write in step:
            if write.ms < last:
                raise AssertionError(f"session {index} went back in time at {iso_ms(write.ms)}")
            last = write.ms
            yield write.ms, index, seq, write
            seq += 1


def _log_problems(ms: int) -> list[tuple[str, Write]]:
    """Bad lines at the end of session.log: bad JSON, invalid UTF-8, and a torn line (a crashed writer's
    unterminated prefix with the next process's line appended to it)."""
    ts = [iso_ms(ms + 1_000 * i).encode() for i in range(1, 4)]
    lines = (
        (
            "bad_json",
            b'{"ts":"' + ts[0] + b'","level":"info","event":"claude_sdk_oauth_session_continuity",'
            b'"kind":"delta","reason":}\n',
        ),
        (
            "invalid_utf8",
            b'{"ts":"' + ts[1] + b'","level":"warn","event":"provider_error","kind":"error",'
            b'"error":"\xc3\x28 socket hang up"}\n',
        ),
        (
            "torn",
            b'{"ts":"'
            + ts[2]
            + b'","level":"info","event":"claude_sdk_oauth_sess{"ts":"'
            + ts[2]
            + b'","level":"debug","event":"queue_enqueue","mode":"steer","count":1}\n',
        ),
    )
    return [
        (kind, Write(ms + 1_000 * (i + 1), "append", SESSION_LOG, data, Located()))
        for i, (kind, data) in enumerate(lines)
    ]


def generate(
    out_dir: Path,
    scenario: str = "demo",
    *,
    seed: int = 7,
    scale: float = 1.0,
    rotate_bytes: int | None = None,
    sessions: int | None = None,
) -> Manifest:
    """Write a simulated senpi agent dir into ``out_dir`` and return the true values behind it.

    ``scenario`` is ``"demo"`` (three sessions, ~2 MB, bundled with the app) or ``"corpus"`` (hundreds of
    sessions for benchmarks; ``scale`` multiplies tool-output sizes). The same arguments always produce the
    same bytes. ``rotate_bytes`` is session.log's rotation threshold (senpi: 5 MiB; the demo uses a small one
    so that its small log still rotates once). ``sessions`` sets the corpus's session count (default
    ``CORPUS_SESSIONS``; ignored by the demo). ``out_dir/manifest.json`` holds the returned manifest.
    """
    if scenario not in ("demo", "corpus"):
        raise ValueError(f"unknown scenario {scenario!r}")
    out_dir = Path(out_dir)
    _prepare_output(out_dir)
    demo = scenario == "demo"
    threshold = rotate_bytes or (DEMO_ROTATE_BYTES if demo else DEFAULT_ROTATE_BYTES)
    sink = Sink(out_dir, threshold, record_replay=demo)
    specs = demo_specs() if demo else corpus_specs(seed, sessions)
    sims: dict[int, SessionSim] = {}
    streams = [_session_stream(i, spec, seed, scenario, scale, sims) for i, spec in enumerate(specs)]
    first = last = None
    for ms, _, _, write in heapq.merge(*streams):
        first = ms if first is None else first
        last = ms
        sink.apply(write)
    assert first is not None and last is not None
    manifest = Manifest(scenario, seed, scale, agent_dir_virtual=AGENT_HOME, rotate_bytes=threshold)
    for kind, write in _log_problems(last):
        sink.apply(write)
        assert write.locate is not None
        manifest.problems.append(ProblemTruth(SESSION_LOG, kind, write.locate))
        last = write.ms
    sink.finish()
    manifest.started, manifest.ended = iso_ms(first), iso_ms(last)
    manifest.rotations = [iso_ms(ms) for ms in sink.rotations]
    for index in sorted(sims):
        manifest.sessions.append(sims[index].truth)
        manifest.problems.extend(sims[index].problems)
    manifest.files = _file_truths(out_dir)
    manifest.replay = sink.replay
    (out_dir / "manifest.json").write_text(manifest.to_json() + "\n", encoding="utf-8")
    return manifest


def _file_truths(out_dir: Path) -> list[FileTruth]:
    files = []
    for path in sorted(p for p in out_dir.rglob("*") if p.is_file() and p.name != "manifest.json"):
        data = path.read_bytes()
        files.append(FileTruth(path.relative_to(out_dir).as_posix(), len(data), data.count(b"\n")))
    return files
