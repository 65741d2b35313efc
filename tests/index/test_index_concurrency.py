"""Two runs on the same paths never corrupt the index (SQLite's locking, WAL mode) and a busy store is skipped,
never waited on: one run writes a scope at a time (the last one to start takes it over), and whatever the
interleaving, the next run's report is the cold one."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from core.engine import READ_CHUNK, Engine
from core.index import Index, index_path
from tests.index_support import agent, cold, demo_without_recordings, report, stored_sessions
from tests.report_helpers import Transcript


def _spawn(root: Path, out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "report", str(root), "--format", "json", "-o", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ},
    )  # fmt: skip


def _json(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_bytes())
    data.pop("generated_at")
    return data


def test_concurrent_reports_on_the_same_paths_agree(tmp_path: Path) -> None:
    root = demo_without_recordings(tmp_path)
    for round_ in range(4):
        outs = [tmp_path / f"r{round_}-{i}.json" for i in range(3)]
        children = [_spawn(root, out) for out in outs]
        for child in children:
            _, err = child.communicate(timeout=300)
            assert child.returncode == 0, err
            assert b"index" not in err, err  # busy or taken over: silent, never an error
        expected = cold([root], tmp_path)
        assert all(_json(out) == expected for out in outs)
        later = Transcript(f"0198f0a1-aaaa-7bbb-8ccc-00000000010{round_}", "/home/dev/more")
        later.user(600 + round_, "more")
        later.assistant(601 + round_, "bootstrap", "registry_miss", 1, payload_bytes=200)
        folder = root / "sessions" / "--home-dev-more--"
        folder.mkdir(exist_ok=True)
        (folder / f"2026-08-04T02-1{round_}-00-000Z_{later.session_id}.jsonl").write_text(later.text())
    assert report([root], tmp_path) == cold([root], tmp_path)
    conn = sqlite3.connect(index_path())
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()


def test_a_busy_store_is_skipped_not_waited_on(tmp_path: Path) -> None:
    """Another process holds the write lock for longer than the whole run: the run reads, reports, and leaves
    the store as it was (its writes skipped), well before the lock is let go."""
    root = agent(tmp_path)
    report([root], tmp_path)  # a store exists, with this scope
    before = stored_sessions()
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        conn = sqlite3.connect(index_path(), isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        held.set()
        release.wait(120)
        conn.execute("ROLLBACK")
        conn.close()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(30)
        started = time.monotonic()
        engine = Engine([root])
        index = Index.for_engine(engine, volatile=[], mode="report")
        index.restore(engine)  # loads (readers are not blocked in WAL mode), cannot claim: reads only
        engine.read_all(READ_CHUNK)
        assert index.settle(engine, READ_CHUNK)
        index.commit(engine)
        index.close()
        engine.close()
        elapsed = time.monotonic() - started
        assert index.status.endswith("not written: index busy (another run is writing it)") and not index.writing
        assert elapsed < 60
    finally:
        release.set()
        holder.join()
    assert stored_sessions() == before
    assert report([root], tmp_path) == cold([root], tmp_path)


def test_the_last_run_to_start_takes_the_scope_over(tmp_path: Path) -> None:
    root = agent(tmp_path)
    first, second = Engine([root]), Engine([root])
    a = Index.for_engine(first, volatile=[], mode="report")
    b = Index.for_engine(second, volatile=[], mode="report")
    a.restore(first)
    b.restore(second)  # claims the scope: `a` may no longer write it
    for engine, index in ((first, a), (second, b)):
        engine.read_all(READ_CHUNK)
        assert index.settle(engine, READ_CHUNK)
        index.commit(engine)
        index.close()
        engine.close()
    assert not a.writing and "another run took the index over" in a.status
    assert b.writing and len(stored_sessions()) == 2


def _open_at_once(path: str, barrier: Any, out: Any) -> None:
    from core.index.store import open_store

    barrier.wait()
    try:
        store = open_store(Path(path))
        out.put(store.replaced)
        store.conn.close()
    except Exception as exc:  # what the test reports
        out.put(f"{type(exc).__name__}: {exc}")


def test_processes_making_the_store_at_once_never_take_it_for_a_foreign_file(tmp_path: Path) -> None:
    """Four processes open a store that does not exist yet at the same moment, 20 times: none replaces it nor
    fails (read one by one, the id, version and tables of a store being made gave "another program's SQLite
    file"; 2 of 40 rounds replaced or failed before)."""
    import multiprocessing

    from core.index.store import prepare_dir

    context = multiprocessing.get_context("fork")
    for round_ in range(20):
        directory = tmp_path / f"cache-{round_}"
        prepare_dir(directory)
        barrier, out = context.Barrier(4), context.Queue()
        children = [context.Process(target=_open_at_once, args=(str(directory / "index.sqlite3"), barrier, out))
                    for _ in range(4)]  # fmt: skip
        for child in children:
            child.start()
        results = [out.get(timeout=60) for _ in children]
        for child in children:
            child.join(timeout=60)
        assert results == [None] * 4, (round_, results)
