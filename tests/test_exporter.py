"""`continuity-tui metrics` as a real process: it serves /metrics with content negotiation, follows appended lines,
stops cleanly on SIGTERM, never imports Textual, binds loopback unless told otherwise, and says why it cannot
start in one line."""

from __future__ import annotations

import gzip
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.engine import Engine
from core.report.openmetrics import Exposition
from tests.exporter_support import Running, parse, start, stop, total, wait_for
from tui.exporter import ListenError, is_loopback, parse_listen

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "core" / "demo" / "data"
OPENMETRICS = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    target = tmp_path / "agent"
    shutil.copytree(DEMO, target)
    return target


@pytest.fixture
def exporter(demo: Path, tmp_path: Path) -> Iterator[Running]:
    running = start([demo], tmp_path, "--no-cache")
    yield running
    if running.proc.poll() is None:
        running.proc.kill()
        running.proc.wait(10)


def calls(body: bytes) -> float:
    return sum(total(parse(body), "continuity_calls_total").values())


def test_serves_both_formats_follows_appended_lines_and_stops_on_sigterm(exporter: Running, demo: Path) -> None:
    ready = wait_for(lambda: calls(exporter.get()[2]) > 0)
    assert ready
    status, headers, text = exporter.get()
    assert status == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4")
    status, headers, om = exporter.get(accept=OPENMETRICS)
    assert status == 200 and headers["Content-Type"].startswith("application/openmetrics-text; version=1.0.0")
    assert om.endswith(b"# EOF\n") and b"# TYPE continuity_build info" in om and b"# EOF" not in text
    om_samples = {k: v for k, v in parse_openmetrics(om).items() if k[0].startswith("continuity_calls")}
    assert om_samples == {k: v for k, v in parse(text).items() if k[0].startswith("continuity_calls")}
    status, headers, packed = exporter.get(gzip_ok=True)
    assert headers.get("Content-Encoding") == "gzip" and calls(gzip.decompress(packed)) == calls(text)
    assert exporter.get("/")[0] == 200 and exporter.get("/nothing")[0] == 404

    log = demo / "logs" / "session.log"
    before = sum(total(parse(text), "continuity_log_decisions_total").values())
    lines = [line for line in log.read_bytes().splitlines(keepends=True) if b"session_continuity" in line][:5]
    with log.open("ab") as fh:
        fh.write(b"".join(lines))
    grown = wait_for(
        lambda: sum(total(parse(exporter.get()[2]), "continuity_log_decisions_total").values()) == before + 5
    )
    assert grown, "the appended decision lines never showed"

    started = time.monotonic()
    assert stop(exporter) == 0
    assert time.monotonic() - started < 5
    assert b"Traceback" not in exporter.stderr.read_bytes()


def parse_openmetrics(body: bytes) -> dict:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    out = {}
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            out[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return out


def test_never_imports_textual(demo: Path, tmp_path: Path) -> None:
    running = start([demo], tmp_path, "--no-cache", python=("-X", "importtime"))
    try:
        assert wait_for(lambda: calls(running.get()[2]) > 0)
    finally:
        assert stop(running) == 0
    imported = running.stderr.read_text(errors="replace")
    assert "prometheus_client" in imported  # (the import log is there)
    assert not re.search(r"\|\s+(textual|rich)(\.|$)", imported, re.MULTILINE)


def test_a_busy_port_or_a_bad_address_is_one_line_and_exit_2(demo: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        cmd = [sys.executable, "-m", "tui.cli", "metrics", str(demo), "--no-cache", "--listen", f"127.0.0.1:{port}"]
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.decode().strip() == f"continuity-tui: --listen 127.0.0.1:{port}: Address already in use"
    for value in ("9464", "host:port", "::1:9464", "127.0.0.1:70000"):
        cmd = [sys.executable, "-m", "tui.cli", "metrics", str(demo), "--listen", value]
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=60)
        assert done.returncode == 2 and done.stderr.count(b"\n") == 1 and b"--listen" in done.stderr


def test_listen_addresses() -> None:
    assert parse_listen("127.0.0.1:9464") == ("127.0.0.1", 9464)
    assert parse_listen("[::1]:9464") == ("::1", 9464)
    assert parse_listen(":9464") == ("0.0.0.0", 9464)
    assert parse_listen("localhost:0") == ("localhost", 0)
    for bad in ("9464", "::1:9464", "h:x", "h:-1"):
        with pytest.raises(ListenError):
            parse_listen(bad)
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")


def test_the_default_address_is_loopback() -> None:
    from tui.cli import DEFAULT_LISTEN, build_parser

    args = build_parser().parse_args(["metrics"])
    assert args.listen is None and DEFAULT_LISTEN == "127.0.0.1:9464"
    assert is_loopback(parse_listen(DEFAULT_LISTEN)[0])


def test_before_the_backfill_only_the_progress_is_exposed() -> None:
    engine = Engine([DEMO])
    engine.drain()
    exposition = Exposition(engine, ready=False)
    waiting = {name for (name, _labels) in parse(exposition.render())}
    exposition.ready = True
    full = {name for (name, _labels) in parse(exposition.render())}
    engine.close()
    assert waiting == {
        "continuity_unread_bytes",
        "continuity_pending_problems",
        "continuity_source_files",
        "continuity_build_info",
    }
    assert "continuity_calls_total" in full and "continuity_log_decisions_total" in full


def test_the_index_is_saved_on_sigterm_and_restored_next_start(demo: Path, tmp_path: Path) -> None:
    cache = Path(os.environ["CONTINUITY_TUI_CACHE_DIR"])
    first = start([demo], tmp_path)
    body = wait_for(lambda: (b := first.get()[2]) and calls(b) > 0 and b)
    assert stop(first) == 0
    assert list(cache.glob("*")), "no index saved on a clean stop"
    second = start([demo], tmp_path)
    try:
        again = wait_for(lambda: (b := second.get()[2]) and calls(b) > 0 and b)
        assert calls(again) == calls(body)
    finally:
        assert stop(second) == 0
