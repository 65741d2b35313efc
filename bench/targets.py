"""Issue 15's targets, each measured against its floor or its peer in one interleaved run.

The machine is shared, so no number here is read on its own: every comparison runs its commands alternately,
round after round (``interleaved``), keeps each command's fastest round, and states the ratio of the two within
that run, with the load average before and after. Absolute seconds are context only.

- session.log (166 MB, 1.1M lines) report ≥ 5× the jq pipeline, peak ≤ 150 MB: against plain ``jq`` (no
  ``-R fromjson?``), with the msgspec validation floor and the counts-only msgspec loop beside it;
- the dashboard on that log, full count on screen ≤ 3 s, ≤ 200 MB: against the cold report of the same log;
- live load, 5,000 lines/s for 30 s, ≤ 50 bytes of RSS per line and every line counted: against the columns'
  24 bytes a decision line (their starting widths, `core.kernel.logcols`);
- the 100 MB senpi corpus, cold report ≤ 3× an orjson parse of every line: against ``orjson.loads`` of every
  line of the same files;
- a 100 MB Claude Code history (``bench.claude_corpus``) ≥ 1× ccusage with equal token totals: against ccusage
  20.0.24's native binary (``session --json --offline``), with the msgspec decode of the call fields beside it;
- ``report`` on a one-line log ≤ 50 ms over ``python -c pass``.

Nothing here asserts: tests check correctness only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import biglog, claude_corpus
from bench.corpus import DEFAULT_ROOT, Corpus, human_size
from core.model import CONTINUITY_EVENT

PY = sys.executable
REPO = Path(__file__).resolve().parent.parent
CCUSAGE = Path(os.environ.get("CCUSAGE", "/tmp/ccusage/node_modules/.bin/ccusage"))
LOG_DAYS = 8000  # 166 MB, 1,096,000 lines (`bench.biglog`)
JQ_PLAIN = f'select(.event=="{CONTINUITY_EVENT}") | "\\(.kind) \\(.reason)"'

#: msgspec, every line validated into a Struct that keeps nothing (what validating costs at all)
VALIDATE_FLOOR = """
import sys, msgspec
class Nothing(msgspec.Struct):
    pass
decode = msgspec.json.Decoder(Nothing).decode
bad = 0
for path in sys.argv[1:]:
    with open(path, "rb") as fh:
        for line in fh:
            try:
                decode(line)
            except msgspec.MsgspecError:
                bad += 1
print(bad)
"""
#: msgspec, jq's own work: validate every line, count continuity lines by kind and reason
COUNTS_FLOOR = f"""
import sys, collections, msgspec
class Line(msgspec.Struct):
    event: str | None = None
    kind: object = None
    reason: object = None
decode = msgspec.json.Decoder(Line).decode
counts = collections.Counter()
for path in sys.argv[1:]:
    with open(path, "rb") as fh:
        for line in fh:
            try:
                obj = decode(line)
            except msgspec.MsgspecError:
                continue
            if obj.event == "{CONTINUITY_EVENT}":
                counts[(obj.kind, obj.reason)] += 1
for (kind, reason), n in sorted(counts.items(), key=str):
    print(n, kind, reason)
"""
#: orjson.loads of every line of the files (the senpi corpus' parse floor)
ORJSON_FLOOR = """
import sys, orjson
bad = 0
for path in sys.argv[1:]:
    with open(path, "rb") as fh:
        for line in fh:
            try:
                orjson.loads(line)
            except orjson.JSONDecodeError:
                bad += 1
print(bad)
"""
#: the review's Claude Code decode floor: the fields a call needs, calls de-duplicated by (message.id, requestId)
CLAUDE_FLOOR = """
import sys, msgspec
class Usage(msgspec.Struct):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
class Message(msgspec.Struct):
    id: str | None = None
    model: str | None = None
    usage: Usage | None = None
class Line(msgspec.Struct):
    type: str | None = None
    sessionId: str | None = None
    requestId: str | None = None
    timestamp: str | None = None
    isSidechain: bool = False
    uuid: str | None = None
    parentUuid: str | None = None
    message: Message | msgspec.Raw | None = None
decode = msgspec.json.Decoder(Line).decode
calls = {}
for path in sys.argv[1:]:
    with open(path, "rb") as fh:
        for line in fh:
            try:
                obj = decode(line)
            except msgspec.MsgspecError:
                continue
            msg = obj.message
            if obj.type == "assistant" and isinstance(msg, Message) and msg.id and msg.usage is not None:
                calls[(msg.id, obj.requestId)] = msg.usage
print(len(calls), sum(u.input_tokens + u.output_tokens for u in calls.values()))
"""


# ---------------------------------------------------------------------------------------------- measuring
@dataclass(slots=True)
class Run:
    """One command's fastest round: wall, CPU (user + sys, children included), peak RSS, its last stdout."""

    wall: float = float("inf")
    cpu: float = float("inf")
    rss_mb: float = 0.0
    rc: int = 0
    stdout: bytes = b""


def timed(argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None, limit: float = 900.0) -> Run:
    """Run ``argv`` and take its rusage from ``wait4`` (so the numbers are the child's, not ours); killed after
    ``limit`` seconds (an unattended run always ends, the row says the command failed)."""
    import tempfile
    import threading

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=cwd)
        killer = threading.Timer(limit, proc.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            killer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped: Popen must not wait for it again
        wall = time.perf_counter() - started
        rc = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if rc != 0:
            sys.stderr.write(f"bench: {' '.join(argv[:5])} … exited {rc}\n{err.read().decode()[-1500:]}\n")
        return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, rc, out.read())


def interleaved(commands: dict[str, Callable[[], Run]], rounds: int) -> dict[str, Run]:
    """Each command once per round, in turn; per command the fastest wall and the least CPU of all rounds."""
    best: dict[str, Run] = {name: Run() for name in commands}
    for _ in range(rounds):
        for name, run in commands.items():
            r = run()
            kept = best[name]
            if r.wall < kept.wall:
                kept.wall, kept.stdout, kept.rc = r.wall, r.stdout, r.rc
            kept.cpu = min(kept.cpu, r.cpu)
            kept.rss_mb = max(kept.rss_mb, r.rss_mb)
    return best


def load() -> float:
    return os.getloadavg()[0]


@dataclass
class Target:
    """One row of the targets table."""

    name: str
    measured: str
    against: str
    ratio: str
    goal: str
    met: bool | None
    load: str
    detail: dict[str, Any] = field(default_factory=dict)


def _loads(before: float) -> str:
    return f"{before:.1f} → {load():.1f}"


# ---------------------------------------------------------------------------------------------- inputs
def big_log(root: Path = DEFAULT_ROOT) -> Path:
    """The 166 MB session.log (written once, then reused)."""
    path = root / f"biglog-{LOG_DAYS}d" / "logs" / "session.log"
    marker = path.with_name("complete")
    if not marker.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        print(f"writing the {LOG_DAYS}-day session.log …", file=sys.stderr)
        biglog.write(path, LOG_DAYS)
        marker.write_text("ok\n")
    return path


def claude_home(size: int, root: Path = DEFAULT_ROOT) -> Path:
    """The generated Claude Code history (`bench.claude_corpus`), as a CLAUDE_CONFIG_DIR."""
    home = root / f"claude-{human_size(size).replace(' ', '')}"
    marker = home / "complete"
    if not marker.exists():
        shutil.rmtree(home, ignore_errors=True)
        print(f"writing a {human_size(size)} Claude Code history …", file=sys.stderr)
        shape = claude_corpus.generate(home, size)
        marker.write_text(json.dumps(shape) + "\n")
    return home


def report_argv(paths: list[Path], out: Path, *extra: str) -> list[str]:
    return [PY, "-m", "tui.cli", "report", *map(str, paths), "--no-cache", "--format", "json", "-o", str(out), *extra]


# ---------------------------------------------------------------------------------------------- the targets
def session_log(env: dict[str, str], work: Path, rounds: int) -> list[Target]:
    log = big_log()
    nbytes = log.stat().st_size
    out = work / "biglog.json"
    before = load()
    runs = interleaved(
        {
            "ours": lambda: timed(report_argv([log], out), env, REPO),
            "jq": lambda: timed(["bash", "-c", f"jq -r '{JQ_PLAIN}' '{log}' | sort | uniq -c"], env),
            "validate": lambda: timed([PY, "-c", VALIDATE_FLOOR, str(log)], env),
            "counts": lambda: timed([PY, "-c", COUNTS_FLOOR, str(log)], env),
        },
        rounds,
    )
    loads = _loads(before)
    ours, jq = runs["ours"], runs["jq"]
    agree = _report_counts(out) == _jq_counts(jq.stdout) == _jq_counts(runs["counts"].stdout)
    ratio = jq.wall / ours.wall
    size = f"{human_size(nbytes)}, {_count_lines(log):,} lines"
    return [
        Target(
            "session.log report vs jq",
            f"{ours.wall:.2f} s wall ({ours.cpu:.2f} s CPU), {ours.rss_mb:.0f} MB",
            f"jq {jq.wall:.2f} s ({jq.cpu:.2f} s CPU); {size}",
            f"{ratio:.2f}× jq (CPU {jq.cpu / ours.cpu:.2f}×)" + ("" if agree else "; COUNTS DIFFER"),
            "≥ 5× jq, ≤ 150 MB",
            ratio >= 5 and ours.rss_mb <= 150 and agree,
            loads,
        ),
        Target(
            "  floors: msgspec validate / counts-only",
            f"{runs['validate'].wall:.2f} s / {runs['counts'].wall:.2f} s",
            "jq, same run",
            f"{jq.wall / runs['validate'].wall:.1f}× / {jq.wall / runs['counts'].wall:.1f}× jq",
            "(bounds)",
            None,
            loads,
        ),
    ]


def dashboard(env: dict[str, str], work: Path, rounds: int) -> list[Target]:
    log = big_log()
    counted = work / "biglog.json"  # the session.log row's report, when it ran first
    if not _report_events(counted):  # `--only dashboard`: without a count to wait for the app showed "—"
        timed(report_argv([log], counted), env, REPO)
    expect = _report_events(counted)
    before = load()
    runs = interleaved(
        {
            "app": lambda: _probe([str(log.parent), "--expect", str(expect), "--timeout", "180"], env),
            "report": lambda: timed(report_argv([log], work / "biglog-2.json"), env, REPO),
        },
        max(1, rounds - 1),
    )
    loads = _loads(before)
    app = _probe_result(runs["app"])
    full = app.get("full_count_s")
    rss = app.get("full_rss_mb")
    report = runs["report"].wall
    return [
        Target(
            "dashboard, 166 MB log: full count on screen",
            f"{_fmt(full, '.2f', ' s')}, {_fmt(rss, '.0f', ' MB')}",
            f"cold report {report:.2f} s",
            f"{full / report:.2f}× the report" if full else "—",
            "≤ 3 s, ≤ 200 MB",
            None if full is None or rss is None else full <= 3 and rss <= 200,
            loads,
            app,
        )
    ]


def _index_runs(source: Path, name: str, env: dict[str, str], work: Path, rounds: int) -> tuple[Run, Run, Run, str]:
    """Issue 16's three runs of one input, interleaved: the cold (``--no-cache``) report, a first report that
    writes the index (from an empty cache each round) and a second that reads it (`work/<name>-index.json`,
    `work/<name>-cold.json`); and the load while they ran."""
    cache = work / f"index-{name}"
    env = {**env, "CONTINUITY_TUI_CACHE_DIR": str(cache)}
    argv = [PY, "-m", "tui.cli", "report", str(source), "--format", "json", "-o", str(work / f"{name}-index.json")]

    def first() -> Run:
        shutil.rmtree(cache, ignore_errors=True)
        return timed(argv, env, REPO)

    before = load()
    runs = interleaved(
        {
            "cold": lambda: timed(report_argv([source], work / f"{name}-cold.json"), env, REPO),
            "first": first,
            "second": lambda: timed(argv, env, REPO),
        },
        rounds,
    )
    return runs["cold"], runs["first"], runs["second"], _loads(before)


def index_log(env: dict[str, str], work: Path, rounds: int) -> list[Target]:
    """Issue 16 (persistent index) on the 166 MB log: a first report that writes the index (from an empty
    cache each round) and a second that reads it, against the cold (``--no-cache``) report of the same build."""
    log = big_log()
    cold, one, two, loads = _index_runs(log, "biglog", env, work, rounds)
    share = two.wall / cold.wall
    return [
        Target(
            "index, 166 MB log: first / second report",
            f"{one.wall:.2f} s, {one.rss_mb:.0f} MB / {two.wall:.2f} s, {two.rss_mb:.0f} MB",
            f"cold report {cold.wall:.2f} s ({cold.cpu:.2f} s CPU), {cold.rss_mb:.0f} MB",
            f"second {share:.0%} of cold (CPU {two.cpu / cold.cpu:.0%})",
            "each ≤ 200 MB, second ≤ 20 % of cold",
            one.rss_mb <= 200 and two.rss_mb <= 200 and share <= 0.2,
            loads,
        )
    ]


def dashboard_quit(env: dict[str, str], work: Path, rounds: int) -> list[Target]:
    """Issue 16: the dashboard on the 166 MB log in a pty (160×45), started with an empty cache directory (a
    first start: it writes the index as it reads), its backfill read, then ``q``: the time from the key to the
    process's exit; a second start from that index beside it (how soon its full count is on screen, and its
    quit). A round is about 15 s (the backfill), two rounds at most."""
    log = big_log()
    cache = work / "quit-index"
    env = {**env, "CONTINUITY_TUI_CACHE_DIR": str(cache)}
    argv = [PY, "-m", "tui.cli", str(log.parent)]
    count = f"{_count_lines(log):,} lines".encode()  # every line read, as the status line prints it

    def first() -> Run:
        shutil.rmtree(cache, ignore_errors=True)
        return _quit_run(argv, env, count)

    before = load()
    runs = interleaved({"first": first, "second": lambda: _quit_run(argv, env, count)}, max(1, min(2, rounds - 1)))
    loads = _loads(before)
    one, two = runs["first"], runs["second"]
    shown = json.loads(two.stdout or b"{}").get("full_count_s")
    return [
        Target(
            "dashboard quit, 166 MB log, first start",
            f"{one.wall:.2f} s from q to exit (loaded wall)",
            f"second start: quit {two.wall:.2f} s, full count on screen {_fmt(shown, '.2f', ' s')}",
            "—",
            "≤ 0.5 s",
            one.wall <= 0.5,
            loads,
        )
    ]


def index_claude(env: dict[str, str], work: Path, rounds: int, size: int = 100_000_000) -> list[Target]:
    """Issue 16 on the 100 MB Claude Code history (its sessions are assembled across files and stored in groups,
    `core.index.assembled`): a first report that writes the index (from an empty cache each round) and a second
    that reads it, against the cold (``--no-cache``) report of the same build; each ≤ 200 MB."""
    projects = claude_home(size) / "projects"
    cold, one, two, loads = _index_runs(projects, "claude", env, work, rounds)
    same = _our_tokens(work / "claude-index.json") == _our_tokens(work / "claude-cold.json")
    return [
        Target(
            "index, 100 MB Claude Code: first / second report",
            f"{one.wall:.2f} s ({one.cpu:.2f} s CPU), {one.rss_mb:.0f} MB / {two.wall:.2f} s ({two.cpu:.2f} s CPU), "
            f"{two.rss_mb:.0f} MB",
            f"cold report {cold.wall:.2f} s ({cold.cpu:.2f} s CPU), {cold.rss_mb:.0f} MB",
            f"second {two.wall / cold.wall:.0%} of cold (CPU {two.cpu / cold.cpu:.0%})"
            + ("" if same else "; TOKENS DIFFER"),
            "each ≤ 200 MB",
            one.rss_mb <= 200 and two.rss_mb <= 200 and same,
            loads,
        )
    ]


def _quit_run(argv: list[str], env: dict[str, str], count: bytes, limit: float = 180.0) -> Run:
    """The dashboard in a pty until its backfill is read (the full count on screen, then its process tree idle
    for 1.5 s), then ``q``: `Run.wall` is from the key to the exit, `Run.cpu` the whole run's (with the children
    it reaped); stdout is JSON with when the full count was first on screen."""
    import fcntl
    import pty
    import select
    import struct
    import termios

    pid, fd = pty.fork()
    if pid == 0:  # the child: the dashboard on the pty
        os.chdir(REPO)
        os.execve(argv[0], argv, {**env, "TERM": "xterm-256color"})
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 45, 160, 0, 0))
    started = time.perf_counter()
    seen: float | None = None
    tail = b""
    history: list[tuple[float, float]] = []

    def drain(timeout: float) -> None:
        nonlocal tail, seen
        ready, _, _ = select.select([fd], [], [], timeout)
        if ready:
            try:
                data = os.read(fd, 1 << 16)
            except OSError:
                return
            if seen is None and count in tail[-64:] + data:
                seen = time.perf_counter() - started
            tail = (tail + data)[-4096:]

    try:
        while time.perf_counter() - started < limit:
            drain(0.1)
            now = time.perf_counter()
            history.append((now, _tree_cpu(pid)))
            old = [cpu for at, cpu in history if at <= now - 1.5]
            if seen is not None and old and history[-1][1] - old[-1] < 0.05:
                break
        os.write(fd, b"q")
        pressed = time.perf_counter()
        while True:
            drain(0.01)
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                break
            if time.perf_counter() - pressed > 30:
                os.kill(pid, 9)
        wall = time.perf_counter() - pressed
    finally:
        os.close(fd)
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status),
               json.dumps({"full_count_s": seen}).encode())  # fmt: skip


def _tree_cpu(pid: int) -> float:
    """CPU seconds (user + sys) of a process and its live descendants, from /proc."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    stack = [pid]
    while stack:
        p = stack.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            for task in os.listdir(f"/proc/{p}/task"):
                stack.extend(int(c) for c in Path(f"/proc/{p}/task/{task}/children").read_text().split())
        except (OSError, ValueError, IndexError):
            continue
    return total


def live_load(env: dict[str, str], work: Path, seconds: float, rate: int = 5000) -> list[Target]:
    logs = work / "live" / "logs"
    shutil.rmtree(logs.parent, ignore_errors=True)
    logs.mkdir(parents=True)
    (logs / "session.log").write_bytes(biglog.day_bytes(0))
    before = load()
    run = _probe([str(logs), "--live-log", str(logs / "session.log"), "--live-rate", str(rate),
                  "--live-seconds", str(seconds)], env)  # fmt: skip
    loads = _loads(before)
    app = _probe_result(run)
    per_line = app.get("live_bytes_per_line")
    exact = app.get("live_exact")
    return [
        Target(
            f"live load, {rate:,} lines/s for {seconds:.0f} s",
            f"{_fmt(per_line, '.1f', ' B/line')} ({app.get('live_lines', 0):,} lines"
            + (", all counted)" if exact else ", COUNT DIFFERS)"),
            "the columns: 24 B a line",
            f"{per_line / 24:.2f}× the columns" if per_line is not None else "—",
            "≤ 50 B/line, exact",
            None if per_line is None else per_line <= 50 and bool(exact),
            loads,
            app,
        )
    ]


def senpi_corpus(corpus: Corpus, env: dict[str, str], work: Path, rounds: int) -> list[Target]:
    files = [p for p in corpus.path.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".log", ".json", ".1")]
    files = [p for p in files if p.name not in ("manifest.json", "bench-corpus.json")]
    before = load()
    runs = interleaved(
        {
            "ours": lambda: timed(report_argv(corpus.report_paths(), work / "corpus.json"), env, REPO),
            "orjson": lambda: timed([PY, "-c", ORJSON_FLOOR, *map(str, files)], env),
        },
        rounds,
    )
    loads = _loads(before)
    ours, floor = runs["ours"], runs["orjson"]
    ratio = ours.wall / floor.wall
    nbytes = sum(p.stat().st_size for p in files)
    return [
        Target(
            f"senpi corpus ({human_size(nbytes)}) cold report",
            f"{ours.wall:.2f} s ({nbytes / 1e6 / ours.wall:.0f} MB/s), {ours.rss_mb:.0f} MB",
            f"orjson parse {floor.wall:.2f} s",
            f"{ratio:.2f}× the parse (CPU {ours.cpu / floor.cpu:.2f}×)",
            "≤ 3× the parse",
            ratio <= 3,
            loads,
        )
    ]


def claude_code(env: dict[str, str], work: Path, rounds: int, size: int = 100_000_000) -> list[Target]:
    home = claude_home(size)
    if not CCUSAGE.exists():
        return [Target("Claude Code vs ccusage", "—", f"ccusage not found at {CCUSAGE}", "—", "≥ 1×", None, "")]
    files = sorted(str(p) for p in (home / "projects").rglob("*.jsonl"))
    cc_env = {**env, "CLAUDE_CONFIG_DIR": str(home)}
    before = load()
    runs = interleaved(
        {
            "ours": lambda: timed(report_argv([home / "projects"], work / "claude.json"), env, REPO),
            "ccusage": lambda: timed([str(CCUSAGE), "session", "--json", "--offline", "-z", "UTC"], cc_env),
            "floor": lambda: timed([PY, "-c", CLAUDE_FLOOR, *files], env),
        },
        rounds,
    )
    loads = _loads(before)
    ours, peer = runs["ours"], runs["ccusage"]
    totals_ours = _our_tokens(work / "claude.json")
    totals_cc = _ccusage_tokens(peer.stdout)
    same = totals_ours == totals_cc and bool(totals_ours)
    ratio = peer.wall / ours.wall
    return [
        Target(
            "Claude Code 100 MB vs ccusage",
            f"{ours.wall:.2f} s ({ours.cpu:.2f} s CPU), {ours.rss_mb:.0f} MB",
            f"ccusage {peer.wall:.2f} s; msgspec call decode {runs['floor'].wall:.2f} s",
            f"{ratio:.2f}× ccusage" + ("; tokens equal" if same else "; TOKENS DIFFER"),
            "≥ 1× ccusage, equal tokens",
            ratio >= 1 and same,
            loads,
            {"ours": totals_ours, "ccusage": totals_cc},
        )
    ]


def startup(env: dict[str, str], work: Path, rounds: int) -> list[Target]:
    one = work / "one" / "logs" / "session.log"
    one.parent.mkdir(parents=True, exist_ok=True)
    one.write_bytes(biglog.day_bytes(0).split(b"\n", 1)[0] + b"\n")
    before = load()
    runs = interleaved(
        {
            "ours": lambda: timed(report_argv([one], work / "one.json"), env, REPO),
            "pass": lambda: timed([PY, "-c", "pass"], env),
        },
        rounds * 4,
    )
    loads = _loads(before)
    over = (runs["ours"].wall - runs["pass"].wall) * 1000
    return [
        Target(
            "report on a one-line log",
            f"{runs['ours'].wall * 1000:.0f} ms ({over:.0f} ms over python -c pass)",
            f"python -c pass {runs['pass'].wall * 1000:.0f} ms",
            f"{runs['ours'].wall / runs['pass'].wall:.1f}× python -c pass",
            "≤ 50 ms over",
            over <= 50,
            loads,
        )
    ]


#: the rows `--only` can name, in the order the table prints them
ROWS = ("log", "dashboard", "index", "quit", "ccindex", "live", "senpi", "claude", "startup")


def measure(
    corpus: Corpus, env: dict[str, str], work: Path, *, rounds: int, live_seconds: float, only: set[str] | None = None
) -> list[Target]:
    """Every target row, or only those named (`--only log,claude`: an engineer measuring one stage)."""
    out: list[Target] = []
    for key, step, fn in (
        ("log", "session.log vs jq", lambda: session_log(env, work, rounds)),
        ("dashboard", "dashboard on the 166 MB log", lambda: dashboard(env, work, rounds)),
        ("index", "index on the 166 MB log", lambda: index_log(env, work, rounds)),
        ("quit", "dashboard quit on the 166 MB log", lambda: dashboard_quit(env, work, rounds)),
        ("ccindex", "index on the 100 MB Claude Code history", lambda: index_claude(env, work, rounds)),
        ("live", "live load", lambda: live_load(env, work, live_seconds)),
        ("senpi", "senpi corpus vs orjson", lambda: senpi_corpus(corpus, env, work, rounds)),
        ("claude", "Claude Code vs ccusage", lambda: claude_code(env, work, rounds)),
        ("startup", "start-up", lambda: startup(env, work, rounds)),
    ):
        if only is not None and key not in only:
            continue
        print(f"[targets] {step} …", file=sys.stderr)
        out.extend(fn())
    return out


def render(targets: list[Target]) -> str:
    head = ("target", "measured", "floor / peer (same run)", "ratio", "goal", "result", "load")
    rows = [
        (t.name, t.measured, t.against, t.ratio, t.goal, "—" if t.met is None else ("met" if t.met else "MISSED"),
         t.load)
        for t in targets
    ]  # fmt: skip
    widths = [max(len(head[i]), *(len(r[i]) for r in rows)) for i in range(len(head))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)).rstrip()]
    lines.append("-" * len(lines[0]))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- helpers
def _probe(args: list[str], env: dict[str, str]) -> Run:
    return timed([PY, "-m", "bench.probe", "logapp", *args, "--t0", repr(time.time())], env, REPO)


def _probe_result(run: Run) -> dict[str, Any]:
    try:
        return dict(json.loads(run.stdout.decode().strip().splitlines()[-1]))
    except (ValueError, IndexError):
        return {"error": f"probe exited {run.rc}"}


def _fmt(value: float | None, spec: str, unit: str) -> str:
    return "—" if value is None else f"{value:{spec}}{unit}"


def _count_lines(path: Path) -> int:
    total = 0
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 24):
            total += chunk.count(b"\n")
    return total


def _report_counts(path: Path) -> dict[str, int]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    by_reason = data.get("continuity", {}).get("by_reason", {})
    return {f"{k} {r}": n for r, kinds in by_reason.items() for k, n in kinds.items() if n}


def _report_events(path: Path) -> int:
    try:
        return int(json.loads(path.read_text(encoding="utf-8"))["continuity"]["events"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def _jq_counts(out: bytes) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in out.decode().splitlines():
        n, _, key = line.strip().partition(" ")
        if n.isdigit():
            counts[key] = counts.get(key, 0) + int(n)
    return counts


def _our_tokens(path: Path) -> dict[str, int]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    totals = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    for turn in data.get("turns") or []:
        for key in totals:
            totals[key] += (turn.get("tokens") or {}).get(key) or 0
    return totals


def _ccusage_tokens(out: bytes) -> dict[str, int]:
    """ccusage 20's `totals` (its `session` list has one entry per session with the same four counts)."""
    try:
        data = json.loads(out)
    except ValueError:
        return {}
    totals = data.get("totals") if isinstance(data, dict) else None
    if not isinstance(totals, dict):
        return {}
    names = {"input": "inputTokens", "output": "outputTokens", "cache_read": "cacheReadTokens",
             "cache_write": "cacheCreationTokens"}  # fmt: skip
    return {key: int(totals.get(name) or 0) for key, name in names.items()}
