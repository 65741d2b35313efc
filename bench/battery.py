"""The reliability battery of ``../shared/reviews/reliability.md``, as one command: every attack, one table.

``python -m bench.battery`` (from the repo, with its venv) runs every case below; ``python -m bench.battery
rotate10 secrets`` runs some. Each case prints one JSON line as it ends and the run ends with a Markdown table
(BENCHMARKS.md, "Reliability battery"); the results also go to ``bench/out/battery.json``.

Lines are **numbered**: each continuity line of a log carries ``reason`` ``r<N>`` and ``count`` N, so what was
read is checked line by line: ``lost`` (written, in a file that still holds it or that the tool had open, never
counted), ``doubled`` (counted twice or more), ``tracebacks`` (a Python traceback on stderr), ``problems``
(what the tool showed about it) and ``silent`` (a bad input it said nothing about).

* **Live cases** run the engine as the dashboard's ingest worker does (``Engine(watch=True, newest_first=True)``,
  polls of 512 KiB while there is backlog, else a wait on the watcher or the 1 s heartbeat), in this process,
  from the source tree it is run from, while a writer appends numbered lines and mangles the log: rotation
  (rename to ``.1``), copytruncate (``cp`` then ``truncate -s0``, logrotate's), truncation, replacement,
  deletion, lines split across writes. ``startup`` adds a poller that comes back only every 0.35-0.6 s (a
  dashboard's first polls, a busy machine). Lines copytruncate itself loses (written between its copy and its
  truncation: in neither file, for every tool) are counted apart (``copytruncate_window``), never as lost; the
  battery's writer is single-threaded, so that window holds none of its lines.
* **Report cases** run the installed ``continuity-tui`` (next to this interpreter) on files built for the
  attack: malformed lines, non-UTF-8 bytes, a BOM, an unreadable ``.1`` (mode 000, with ``CAP_DAC_OVERRIDE``
  dropped when run as root), a file under two names, FIFOs, devices and sockets named ``*.jsonl``, a 200 MB line
  with no newline and a 2 GB sparse file, 3,000 files under ``ulimit -n 1024``, 25,000 files (the discovery
  cap), closed pipes and full outputs, the 26 secret kinds in every format, Markdown live text, a dashboard
  whose terminal goes away (tmux).

Nothing here asserts (the tests do): it measures, on whatever machine it runs, and takes ~5 minutes.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: the tree whose engine the live cases run (``BATTERY_SOURCE=/other/checkout`` measures another one, with its
#: venv's interpreter: the report cases run the ``continuity-tui`` next to it)
SOURCE = Path(os.environ.get("BATTERY_SOURCE", ROOT))
CLI = str(Path(sys.executable).with_name("continuity-tui"))
OUT = Path(os.environ.get("BATTERY_OUT", ROOT / "bench" / "out" / "battery.json"))
RESULTS: list[dict[str, Any]] = []
T0_MS = 1_785_808_800_000
T0 = "2026-08-04T02:00:00.000Z"

Op = Callable[[Path, int, int, list[tuple[int, int]]], int]


def line(n: int) -> bytes:
    """Numbered continuity line N (reason ``r<N>``, count N), one ms apart."""
    ms = T0_MS + n
    ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"
    return (
        f'{{"ts":"{ts}","level":"info","event":"claude_sdk_oauth_session_continuity","kind":"delta",'
        f'"reason":"r{n}","count":{n}}}\n'
    ).encode()


def numbered(lo: int, hi: int) -> bytes:
    return b"".join(line(i) for i in range(lo, hi))


def record(case: str, **fields: Any) -> None:
    row = {"case": case, **fields}
    RESULTS.append(row)
    print(json.dumps(row), flush=True)


def scratch(name: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"battery-{name}-"))


def run(args: list[str], timeout: float = 300, **kw: Any) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(args, capture_output=True, timeout=timeout, check=False, **kw)


def report(*args: str, timeout: float = 300) -> tuple[dict[str, Any] | None, subprocess.CompletedProcess[bytes]]:
    proc = run([CLI, "report", *args, "--no-cache"], timeout=timeout)
    try:
        return json.loads(proc.stdout), proc
    except ValueError:
        return None, proc


def counted(rep: dict[str, Any] | None) -> collections.Counter[int]:
    """How many times each numbered line was counted in a JSON report."""
    out: collections.Counter[int] = collections.Counter()
    for reason, kinds in ((rep or {}).get("continuity", {}).get("by_reason") or {}).items():
        if reason.startswith("r") and reason[1:].isdigit():
            out[int(reason[1:])] += sum(kinds.values())
    return out


def lost(counts: Mapping[int, int], numbers: range) -> int:
    """How many of the numbered lines ``numbers`` were never counted."""
    return sum(1 for k in numbers if not counts.get(k))


def doubled(counts: Mapping[int, int]) -> int:
    """How many numbered lines were counted more than once."""
    return sum(1 for v in counts.values() if v > 1)


def tracebacks(*procs: subprocess.CompletedProcess[bytes]) -> int:
    return sum(p.stderr.count(b"Traceback") for p in procs)


# ---------------------------------------------------------------------------------------------- live cases
class Live:
    """An engine as the dashboard runs it, in a thread; ``slow_until``: until then, every poll is followed by a
    pause of 0.35-0.6 s (a dashboard's first polls while it restores its index, a busy machine)."""

    def __init__(self, root: Path, slow_for: float = 0.0) -> None:
        sys.path.insert(0, str(SOURCE))
        from core.engine import Engine

        self.engine = Engine([root], watch=True, newest_first=True)
        self.slow_until = time.monotonic() + slow_for
        self.rng = random.Random(11)
        self.stop = threading.Event()
        #: exceptions that ended the ingest thread (the dashboard's worker would die the same way): a traceback
        self.tracebacks = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            while not self.stop.is_set():
                result = self.engine.poll(512 << 10)
                if time.monotonic() < self.slow_until:
                    time.sleep(self.rng.uniform(0.35, 0.6))
                elif not (result.lines or result.changed):
                    self.engine.wait(1.0)
        except Exception:
            self.tracebacks += 1
            traceback.print_exc()

    def settle(self, quiet: float = 2.0, limit: float = 60.0) -> float:
        """Until nothing new was counted for ``quiet`` s and nothing is pending; returns the seconds taken."""
        start = time.monotonic()
        last, since = -1, start
        while time.monotonic() - start < limit:
            n = self.engine.total_lines
            if n != last:
                last, since = n, time.monotonic()
            elif time.monotonic() - since >= quiet and self.engine.sources.pending_bytes() == 0:
                break
            time.sleep(0.05)
        return time.monotonic() - start - quiet

    def counts(self) -> collections.Counter[int]:
        with self.engine.lock:
            return collections.Counter(
                int(c.reason[1:]) for c in self.engine.state.log.continuity if c.reason[:1] == "r"
            )

    def problems(self) -> list[str]:
        with self.engine.lock:
            return [p.error for p in self.engine.state.problems]

    def close(self) -> None:
        self.stop.set()
        self.engine.close()
        self.thread.join(5)


def _open(log: Path) -> int:
    return os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)


def writer(
    log: Path, rate: float, duration: float, op: Op | None, every: float, split: bool = False
) -> tuple[int, list]:
    """Append numbered lines at ``rate``/s for ``duration`` s, running ``op`` every ``every`` s; ``split``: each
    write ends in the middle of a line (the rest comes with the next write)."""
    n, held = 0, b""
    window: list[tuple[int, int]] = []
    start = time.monotonic()
    next_op = start + every
    fd = _open(log)
    while time.monotonic() - start < duration:
        target = int((time.monotonic() - start) * rate)
        chunk = held + numbered(n, target)
        n = max(n, target)
        if split and len(chunk) > 40:
            cut = len(chunk) - random.randint(1, 30)
            chunk, held = chunk[:cut], chunk[cut:]
        else:
            held = b""
        if chunk:
            os.write(fd, chunk)
        if op is not None and time.monotonic() >= next_op:
            if held:  # an operation comes between whole lines, as senpi writes each line in one append
                os.write(fd, held)
                held = b""
            fd = op(log, fd, n, window)
            next_op += every
        time.sleep(0.002)
    if held:
        os.write(fd, held)
    os.close(fd)
    return n, window


def op_rotate(log: Path, fd: int, n: int, window: list[tuple[int, int]]) -> int:
    os.replace(log, log.with_name(log.name + ".1"))
    os.close(fd)
    return _open(log)


def op_copytruncate(log: Path, fd: int, n: int, window: list[tuple[int, int]]) -> int:
    rot = log.with_name(log.name + ".1")
    subprocess.run(["cp", str(log), str(rot)], check=True)
    os.truncate(log, 0)
    tail = rot.read_bytes().rsplit(b"\n", 2)
    last = json.loads(tail[-2])["count"] if len(tail) >= 2 and tail[-2] else -1
    window.append((last + 1, n))  # written after the copy's end and before the truncation: lost by copytruncate
    return fd


def _after_catch_up(log: Path) -> None:
    """A destructive operation loses what was not read yet, by definition: it waits until the tool has read the
    file (0.35 s at these rates), so a line missing afterwards is a real loss."""
    time.sleep(0.35)


def op_truncate(log: Path, fd: int, n: int, window: list[tuple[int, int]]) -> int:
    _after_catch_up(log)
    os.truncate(log, 0)
    return fd


def op_replace(log: Path, fd: int, n: int, window: list[tuple[int, int]]) -> int:
    _after_catch_up(log)
    tmp = log.with_name(".tmp-replace")
    tmp.write_bytes(b"")
    os.replace(tmp, log)
    os.close(fd)
    return _open(log)


def op_delete(log: Path, fd: int, n: int, window: list[tuple[int, int]]) -> int:
    _after_catch_up(log)
    os.unlink(log)
    os.close(fd)
    return _open(log)


def op_mixed(seed: int) -> Op:
    rng = random.Random(seed)
    ops = [op_rotate, op_copytruncate, op_truncate, op_replace, op_delete]
    return lambda log, fd, n, window: rng.choice(ops)(log, fd, n, window)


def live_case(
    name: str, rate: float, duration: float, op: Op | None, every: float, *, slow_for: float = 0.0, split: bool = False
) -> None:
    root = scratch("live")
    logs = root / "logs"
    logs.mkdir()
    log = logs / "session.log"
    log.touch()
    live = Live(logs, slow_for)
    try:
        time.sleep(0.5)
        written, window = writer(log, rate, duration, op, every, split)
        caught = live.settle()
        counts, problems = live.counts(), live.problems()
    finally:
        live.close()
    allowed = {k for lo, hi in window for k in range(lo, hi)}
    missing = [k for k in range(written) if k not in counts and k not in allowed]
    resets = sum(1 for p in problems if any(w in p for w in ("deleted", "recreated", "replaced", "truncated")))
    record(
        name,
        lines=written,
        lost=len(missing),
        doubled=doubled(counts),
        tracebacks=live.tracebacks,
        copytruncate_window=len(allowed),
        problems=len(problems),
        reset_notices=resets,
        caught_up_s=round(caught, 2),
        first_lost=missing[:3],
    )
    shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------------------------------------- report cases
def case_malformed() -> None:
    """Good numbered lines among bad ones, each a located Problem: broken JSON, NUL, invalid UTF-8, UTF-16,
    100k-deep JSON, 1e400, an oversized line with a newline, CRLF endings (good), a torn last line."""
    root = scratch("malformed")
    logs = root / "logs"
    logs.mkdir()
    bad = [
        b"{broken",
        b"\x00\x00\x00",
        b'{"ts": "\xff\xfe bad utf-8"}',
        '{"a": 1}'.encode("utf-16"),
        b"[" * 100_000,
        b'{"count": 1e400}',
        b"x" * (70 << 20),
    ]
    body, good = b"", 0
    for i, junk in enumerate(bad):
        body += numbered(good, good + 5) + junk + b"\n"
        good += 5
        if i == 2:
            body += line(good).replace(b"\n", b"\r\n")
            good += 1
    body += numbered(good, good + 5) + b'{"torn'
    good += 5
    (logs / "session.log").write_bytes(body)
    rep, proc = report(str(logs))
    counts = counted(rep)
    probs = (rep or {}).get("problems", [])
    located = sum(1 for p in probs if p.get("line") is not None and p.get("offset") is not None)
    record(
        "malformed lines (7 kinds, CRLF, torn tail)",
        lines=good,
        lost=lost(counts, range(good)),
        doubled=doubled(counts),
        tracebacks=tracebacks(proc),
        problems=len(probs),
        expected_problems=len(bad) + 1,
        located=located,
        silent=max(0, len(bad) + 1 - len(probs)),
    )
    shutil.rmtree(root, ignore_errors=True)


def case_bom() -> None:
    root = scratch("bom")
    logs = root / "logs"
    logs.mkdir()
    (logs / "session.log").write_bytes(b"\xef\xbb\xbf" + numbered(0, 10))
    rep, proc = report(str(logs))
    counts = counted(rep)
    record(
        "UTF-8 BOM before line 1",
        lines=10,
        lost=lost(counts, range(10)),
        doubled=doubled(counts),
        tracebacks=tracebacks(proc),
        problems=len((rep or {}).get("problems", [])),
    )
    shutil.rmtree(root, ignore_errors=True)


def _no_dac() -> list[str]:
    """Run a child without the capabilities that let root read a mode-000 file (so mode bits apply)."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return []
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]


def case_unreadable() -> None:
    root = scratch("unreadable")
    logs = root / "logs"
    logs.mkdir()
    (logs / "session.log.1").write_bytes(numbered(0, 5))
    (logs / "session.log").write_bytes(numbered(5, 15))
    os.chmod(logs / "session.log.1", 0)
    rep_proc = run([*_no_dac(), CLI, "report", str(logs), "--no-cache"])
    chk = run([*_no_dac(), CLI, "check", str(logs), "--no-cache"])
    rep = json.loads(rep_proc.stdout) if rep_proc.returncode == 0 else None
    counts = counted(rep)
    probs = [p["error"] for p in (rep or {}).get("problems", [])]
    record(
        "unreadable session.log.1 (mode 000)",
        lines=10,
        lost=lost(counts, range(5, 15)),
        doubled=0,
        report_rc=rep_proc.returncode,
        check_rc=chk.returncode,
        tracebacks=tracebacks(rep_proc, chk),
        problems=len(probs),
        silent=int(not any("unreadable" in p for p in probs)),
    )
    os.chmod(logs / "session.log.1", 0o644)
    shutil.rmtree(root, ignore_errors=True)


def case_alias(kind: str) -> None:
    root = scratch("alias")
    (root / "logs").mkdir()
    (root / "sessions" / "--x--").mkdir(parents=True)
    log = root / "logs" / "session.log"
    log.write_bytes(numbered(0, 10))
    alias = root / "sessions" / "--x--" / "current.jsonl"
    if kind == "symlink":
        alias.symlink_to("../../logs/session.log")
    else:
        os.link(log, alias)
    rep, proc = report(str(root))
    counts = counted(rep)
    record(
        f"{kind} to a tailed file",
        lines=10,
        lost=lost(counts, range(10)),
        doubled=doubled(counts),
        tracebacks=tracebacks(proc),
        problems=len((rep or {}).get("problems", [])),
    )
    shutil.rmtree(root, ignore_errors=True)


def _transcripts(root: Path, n: int, per_dir: int) -> None:
    for i in range(n):
        d = root / "sessions" / f"--p{i // per_dir}--"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"t{i:05d}.jsonl").write_bytes(
            b'{"type":"session","version":3,"id":"s%d","timestamp":"%s","cwd":"/x"}\n' % (i, T0.encode())
        )


def case_descriptors() -> None:
    root = scratch("fds")
    _transcripts(root, 3000, 100)
    proc = run(["bash", "-c", f"ulimit -n 1024 && exec {CLI} report {root} --no-cache"], timeout=600)
    rep = json.loads(proc.stdout) if proc.stdout else {}
    emfile = sum(1 for p in rep.get("problems", []) if "Too many open files" in p["error"])
    record(
        "3,000 files under ulimit -n 1024",
        files=3000,
        sessions=len(rep.get("sessions", [])),
        false_problems=emfile,
        tracebacks=tracebacks(proc),
        rc=proc.returncode,
    )
    shutil.rmtree(root, ignore_errors=True)


def case_cap() -> None:
    root = scratch("cap")
    _transcripts(root, 25_000, 500)
    rep, proc = report(str(root), timeout=900)
    md = run([CLI, "report", str(root), "--no-cache", "--format", "md"], timeout=900).stdout.decode()
    discovery = (rep or {}).get("discovery") or {}
    record(
        "25,000 files (discovery cap)",
        files=25_000,
        read=len((rep or {}).get("sources", [])),
        left_out=discovery.get("left_out"),
        in_markdown="left out" in md,
        silent=int(not discovery.get("left_out")),
        tracebacks=tracebacks(proc),
    )
    shutil.rmtree(root, ignore_errors=True)


def case_special() -> None:
    root = scratch("special")
    d = root / "sessions" / "--x--"
    d.mkdir(parents=True)
    (root / "logs").mkdir()
    (root / "logs" / "session.log").write_bytes(numbered(0, 10))
    os.mkfifo(d / "fifo.jsonl")
    (d / "zero.jsonl").symlink_to("/dev/zero")
    (d / "random.jsonl").symlink_to("/dev/urandom")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(d / "sock.jsonl"))
    start = time.monotonic()
    try:
        rep, proc = report(str(root), timeout=60)
        hung = 0
    except subprocess.TimeoutExpired:
        rep, proc, hung = None, None, 1
    finally:
        sock.close()
    counts = counted(rep)
    probs = (rep or {}).get("problems", [])
    record(
        "FIFO, /dev/zero, /dev/urandom, socket as *.jsonl",
        lines=10,
        lost=lost(counts, range(10)),
        hangs=hung,
        problems=len(probs),
        silent=max(0, 4 - len(probs)),
        seconds=round(time.monotonic() - start, 2),
        tracebacks=tracebacks(proc) if proc else 0,
    )
    shutil.rmtree(root, ignore_errors=True)


def case_giant() -> None:
    root = scratch("giant")
    d = root / "sessions" / "--x--"
    d.mkdir(parents=True)
    with open(d / "long.jsonl", "wb") as fh:
        fh.write(b'{"type":"session","version":3,"id":"a","timestamp":"%s","cwd":"/x"}\n' % T0.encode())
        fh.write(b"x" * (200 << 20))
    with open(d / "sparse.jsonl", "wb") as fh:
        fh.truncate(2 << 30)
    start = time.monotonic()
    rep, proc = report(str(root), timeout=600)
    probs = (rep or {}).get("problems", [])
    record(
        "200 MB line without newline, 2 GB sparse file",
        problems=len(probs),
        silent=max(0, 2 - len(probs)),
        seconds=round(time.monotonic() - start, 2),
        tracebacks=tracebacks(proc),
        rc=proc.returncode,
    )
    shutil.rmtree(root, ignore_errors=True)


def case_pipes() -> None:
    root = scratch("pipes")
    logs = root / "logs"
    logs.mkdir()
    (logs / "session.log").write_bytes(numbered(0, 20_000))
    cases = {
        "report | head -c 10": f"{CLI} report {logs} --no-cache --format json | head -c 10 >/dev/null",
        "check | head -0": f"{CLI} check {logs} --no-cache | head -0",
        "report >&-": f"{CLI} report {logs} --no-cache >&-",
        "report > /dev/full": f"{CLI} report {logs} --no-cache > /dev/full",
        "md | head -c 1": f"{CLI} report {logs} --no-cache --format md | head -c 1 >/dev/null",
    }
    procs, codes = [], {}
    for name, cmd in cases.items():
        p = run(["bash", "-c", cmd])
        procs.append(p)
        codes[name] = p.returncode
    full = root / "full"
    full.mkdir()
    left: list[str] | str = "(no tmpfs: not root)"
    if run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(full)]).returncode == 0:
        try:
            p = run([CLI, "report", str(logs), "--no-cache", "-o", str(full / "r.json")])
            procs.append(p)
            codes["-o onto a full disk"] = p.returncode
            left = [f.name for f in full.iterdir()]
        finally:
            run(["umount", str(full)])
    record(
        "closed pipes and full outputs",
        cases=len(codes),
        tracebacks=tracebacks(*procs),
        exit_codes=codes,
        left_on_full_disk=left,
    )
    shutil.rmtree(root, ignore_errors=True)


def case_secrets() -> None:
    """The 26 kinds (tests/secret_kinds.py) in every free-text field and in the session dir's name: JSON,
    Markdown and HTML reports with and without ``--include-text``, ``check``, an error line."""
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]
    from report_helpers import write_agent
    from secret_kinds import KINDS

    leaks, cells = [], 0
    for name, (text, core, _kind) in KINDS.items():
        root = scratch("secrets")
        agent = write_agent(root, extra=f" {text} ", secret=text)
        if "/" in text:
            (folder,) = (agent / "sessions").iterdir()
            folder.rename(folder.with_name("--home-dev-shop--"))
        outputs: dict[str, str] = {}
        for flag in ([], ["--include-text"]):
            out = root / ("o" + "".join(flag))
            run([CLI, "report", str(agent), "--no-cache", "--format", "json,md,html", "-o", str(out), *flag])
            for fmt in ("json", "md", "html"):
                path = out / f"continuity-report.{fmt}"
                outputs[fmt + "".join(flag)] = path.read_text(encoding="utf-8") if path.exists() else ""
        chk = run([CLI, "check", str(agent), "--no-cache"])
        outputs["check"] = (chk.stdout + chk.stderr).decode()
        outputs["error"] = run([CLI, "report", str(root / f"missing {text}")]).stderr.decode()
        for where, body in outputs.items():
            cells += 1
            if core in body or text in body:
                leaks.append(f"{name}:{where}")
        shutil.rmtree(root, ignore_errors=True)
    record("secrets: 26 kinds x every output", kinds=len(KINDS), cells=cells, leaked=len(leaks), leaks=leaks[:10])


def case_dashboard_secrets() -> None:
    """The 26 kinds on every screen of the dashboard (tests/test_tui_redaction.py drives it: every pane, every
    call's detail with its JSON and diff, the copy menu, the toasts, the problems, the export)."""
    import asyncio

    sys.path[:0] = [str(SOURCE), str(ROOT / "tests")]
    from test_tui_redaction import every_screen

    root = scratch("dash-secrets")
    seen = asyncio.run(every_screen(root))
    cells = sum(len(kinds) for kinds in seen.leaks.values())
    record(
        "secrets: 26 kinds x every dashboard screen",
        kinds=26,
        leaked=cells,
        screens_leaking=len(seen.leaks),
        details_opened=seen.opened,
    )
    shutil.rmtree(root, ignore_errors=True)


def case_invisible() -> None:
    """Zero-width and bidi characters (U+200B, U+200D, U+FEFF, U+202E, U+2066) in every free-text field and the
    session dir's name: how many reach the JSON, Markdown and HTML reports."""
    sys.path[:0] = [str(ROOT / "tests")]
    from report_helpers import write_agent

    invisible = "\u200b\u200d\ufeff\u202e\u2066"
    root = scratch("invisible")
    agent = write_agent(root, extra=f" zw{invisible}x ", secret=f"s{invisible}")
    out = root / "out"
    proc = run([CLI, "report", str(agent), "--no-cache", "--include-text", "--format", "json,md,html", "-o", str(out)])
    reached = {}
    for fmt in ("json", "md", "html"):
        path = out / f"continuity-report.{fmt}"
        body = path.read_text(encoding="utf-8") if path.exists() else ""
        if fmt == "json":
            body = json.dumps(json.loads(body or "{}"), ensure_ascii=False)  # \u escapes count too
        reached[fmt] = sum(body.count(ch) for ch in invisible)
    record(
        "zero-width and bidi characters in every field",
        injected=sum(reached.values()),
        by_format=reached,
        tracebacks=tracebacks(proc),
    )
    shutil.rmtree(root, ignore_errors=True)


def case_markdown() -> None:
    root = scratch("md")
    name = "www.evil.example @octocat :skull:"
    d = root / "sessions" / f"--{name}--"
    d.mkdir(parents=True)
    (d / f"{name}.jsonl").write_text('{"type":"session","version":3,"id":"x"}\n{broken\n')
    md = run([CLI, "report", str(root), "--no-cache", "--format", "md"]).stdout.decode()
    outside = _outside_code(md)
    live = [t for t in ("www.", "@octocat", ":skull:") if t in outside]
    record("Markdown live text in a file name", injected=len(live), live=live)
    shutil.rmtree(root, ignore_errors=True)


def _outside_code(md: str) -> str:
    """The Markdown's text outside code spans and blocks (where GitHub links, mentions and emoji come alive)."""
    out, in_block = [], False
    for row in md.splitlines():
        if row.startswith("```"):
            in_block = not in_block
            continue
        if not in_block:
            parts = row.split("`")
            out.append("".join(parts[::2]))
    return "\n".join(out)


def case_terminal() -> None:
    if shutil.which("tmux") is None:
        record("dashboard whose terminal goes away", skipped="no tmux")
        return
    out: dict[str, Any] = {}
    for how in ("kill-session", "kill-session + SIGTERM"):
        session = f"battery{os.getpid()}"
        subprocess.run(["tmux", "new", "-d", "-s", session, "-x", "120", "-y", "40", f"exec {CLI} --demo"], check=True)
        time.sleep(6)
        pane = subprocess.run(
            ["tmux", "list-panes", "-t", session, "-F", "#{pane_pid}"], capture_output=True, text=True, check=False
        )
        pid = int(pane.stdout.split()[0])
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)
        start = time.monotonic()
        if how.endswith("SIGTERM"):
            time.sleep(0.2)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        while time.monotonic() - start < 30 and _alive(pid):
            time.sleep(0.1)
        alive = _alive(pid)
        out[how] = round(time.monotonic() - start, 2)
        if alive:
            os.kill(pid, signal.SIGKILL)
            out[how] = "hang"
    record("dashboard whose terminal goes away", exited_in_s=out, hangs=sum(v == "hang" for v in out.values()))


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


CASES: dict[str, Callable[[], None]] = {
    "rotate10": lambda: live_case("live: rotation 10/s, 2,000 lines/s", 2000, 14, op_rotate, 0.1),
    "startup": lambda: live_case(
        "live: rotation 10/s, polls 0.35-0.6 s apart for 4 s", 2000, 8, op_rotate, 0.1, slow_for=4.0
    ),
    "copytruncate": lambda: live_case("live: copytruncate every 1.5 s", 500, 12, op_copytruncate, 1.5),
    "copytruncate-fast": lambda: live_case("live: copytruncate every 0.3 s", 800, 12, op_copytruncate, 0.3),
    "truncate": lambda: live_case("live: truncation every 1 s", 800, 10, op_truncate, 1.0),
    "replace": lambda: live_case("live: replacement every 1 s", 800, 10, op_replace, 1.0),
    "delete": lambda: live_case("live: deletion every 1 s", 800, 10, op_delete, 1.0),
    "partial": lambda: live_case("live: lines split across writes, rotation 2/s", 800, 10, op_rotate, 0.5, split=True),
    "mixed1": lambda: live_case("live: all operations mixed, seed 1", 800, 20, op_mixed(1), 1.0),
    "mixed2": lambda: live_case("live: all operations mixed, seed 2", 800, 20, op_mixed(2), 1.0),
    "load": lambda: live_case("live: 20,000 lines/s, rotation every 2.5 s", 20_000, 10, op_rotate, 2.5),
    "malformed": case_malformed,
    "bom": case_bom,
    "unreadable": case_unreadable,
    "symlink": lambda: case_alias("symlink"),
    "hardlink": lambda: case_alias("hard link"),
    "descriptors": case_descriptors,
    "cap": case_cap,
    "special": case_special,
    "giant": case_giant,
    "pipes": case_pipes,
    "secrets": case_secrets,
    "dashboard-secrets": case_dashboard_secrets,
    "invisible": case_invisible,
    "markdown": case_markdown,
    "terminal": case_terminal,
}

COLUMNS = ("lost", "doubled", "tracebacks", "hangs", "leaked", "injected", "silent", "false_problems", "problems")


def table(rows: list[dict[str, Any]]) -> str:
    """The Markdown table of BENCHMARKS.md: one row per case, the failure columns, and what else it measured."""
    head = "| case | lines | " + " | ".join(COLUMNS) + " | notes |"
    out = [head, "|" + "---|" * (len(COLUMNS) + 3)]
    for row in rows:
        cells = [str(row.get(c, "")) for c in COLUMNS]
        notes = {k: v for k, v in row.items() if k not in (*COLUMNS, "case", "lines", "first_lost", "leaks", "live")}
        note = ", ".join(f"{k} {json.dumps(v)}" for k, v in notes.items()).replace("|", "\\|")
        out.append(f"| {row['case']} | {row.get('lines', '')} | " + " | ".join(cells) + f" | {note} |")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    wanted = argv or list(CASES)
    unknown = [name for name in wanted if name not in CASES]
    if unknown:
        print(f"unknown case(s): {', '.join(unknown)}; cases: {', '.join(CASES)}", file=sys.stderr)
        return 2
    for name in wanted:
        try:
            CASES[name]()
        except Exception as exc:  # a battery bug or a missing tool, not a result of the tool: say so
            record(name, battery_error=f"{type(exc).__name__}: {exc}")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(RESULTS, indent=1))
    print()
    print(table(RESULTS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
