"""Resumed vs cold over random histories (hypothesis): files cut at random points grow piece by piece (often
mid-line), logs rotate (renamed, or copied and truncated), transcripts are truncated, replaced, deleted or
added, sidecars rewritten; after every step a run that resumes from the index reports exactly what a cold run
reports on the same bytes."""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.index import ENV_DIR
from tests.index_support import DEMO
from tui.cli import main

OPS = (
    "append", "append", "append", "log", "rotate", "copytruncate", "truncate", "replace", "delete", "new", "sidecar",
    "again",  # nothing changed: the run reads the log's report view the previous run stored (`core.state.logview`)
)  # fmt: skip


@contextmanager
def _history(seed: int) -> Iterator[tuple[Path, dict[Path, bytes], random.Random]]:
    """A fresh copy of the demo (no recordings) with every file cut at a random point, what each file is still
    to receive, and its own index directory."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="index-history-") as tmp:
        base = Path(tmp)
        root = base / "demo"
        shutil.copytree(DEMO, root)
        shutil.rmtree(root / "events")
        rests: dict[Path, bytes] = {}
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            body = path.read_bytes()
            if path.name.endswith(".json") or rng.random() < 0.3:
                continue  # sidecars are JSON documents, written whole
            cut = rng.randrange(len(body) + 1)
            path.write_bytes(body[:cut])
            rests[path] = body[cut:]
        before = os.environ.get(ENV_DIR)
        os.environ[ENV_DIR] = str(base / "index")
        try:
            yield root, rests, rng
        finally:
            if before is None:
                os.environ.pop(ENV_DIR, None)
            else:
                os.environ[ENV_DIR] = before


def _report(root: Path, *extra: str) -> dict[str, Any]:
    out = root.parent / "report.json"
    assert main(["report", str(root), "--format", "json", "-o", str(out), *extra]) == 0
    data = json.loads(out.read_bytes())
    data.pop("generated_at")
    return data


def _transcripts(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("sessions/*/*.jsonl"))


def _apply(op: str, root: Path, rests: dict[Path, bytes], rng: random.Random, step: int) -> None:
    logs = root / "logs"
    if op == "append" and rests:
        path = rng.choice(sorted(rests))
        rest = rests[path]
        take = rest[: rng.randrange(1, len(rest) + 1)] if rest else b""
        rests[path] = rest[len(take) :]
        if path.exists():
            with path.open("ab") as fh:
                fh.write(take)
    elif op == "log":
        line = (
            f'{{"ts":"2026-10-12T15:{step:02d}:00.000Z","level":"info",'
            '"event":"claude_sdk_oauth_session_continuity","kind":"delta","reason":"prefix_matched","count":1}\n'
        )
        with (logs / "session.log").open("a") as fh:
            fh.write(line[: rng.randrange(1, len(line) + 1)] if rng.random() < 0.3 else line)
    elif op == "rotate" and (logs / "session.log").exists():
        os.replace(logs / "session.log", logs / "session.log.1")
        (logs / "session.log").write_bytes(b"")
        rests.pop(logs / "session.log", None)
    elif op == "copytruncate" and (logs / "session.log").exists():
        shutil.copyfile(logs / "session.log", logs / "session.log.1")
        with (logs / "session.log").open("r+b") as fh:
            fh.truncate(0)
        rests.pop(logs / "session.log", None)
    elif op in ("truncate", "replace", "delete", "sidecar") and _transcripts(root):
        path = rng.choice(_transcripts(root))
        if op == "truncate":
            with path.open("r+b") as fh:
                fh.truncate(rng.randrange(path.stat().st_size + 1))
        elif op == "replace":
            body = path.read_bytes()
            tmp = path.with_name(".replacing")
            tmp.write_bytes(body[: rng.randrange(len(body) + 1)])
            os.replace(tmp, path)
        elif op == "delete":
            path.unlink()
            rests.pop(path, None)
        else:
            sidecar = path.with_name(path.name + ".claude-sdk-oauth-binding.json")
            if sidecar.exists():
                data = json.loads(sidecar.read_bytes())
                data["sentCount"] = rng.randrange(1, 40)
                tmp = sidecar.with_name(".sidecar")
                tmp.write_text(json.dumps(data))
                os.replace(tmp, sidecar)
    elif op == "new" and _transcripts(root):
        source = rng.choice(_transcripts(root))
        old = source.name.split("_", 1)[1].split(".", 1)[0]
        new = f"{old[:4]}{step:04x}{old[8:]}"
        folder = root / "sessions" / f"--new-{step}--"
        folder.mkdir(exist_ok=True)
        (folder / source.name.replace(old, new)).write_bytes(source.read_bytes().replace(old.encode(), new.encode()))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), ops=st.lists(st.sampled_from(OPS), min_size=1, max_size=5))
def test_a_resumed_run_reports_what_a_cold_run_does(seed: int, ops: list[str]) -> None:
    with _history(seed) as (root, rests, rng):
        _report(root)  # the first run writes the index
        for step, op in enumerate(ops):
            _apply(op, root, rests, rng, step)
            assert _report(root) == _report(root, "--no-cache"), (seed, ops[: step + 1])
