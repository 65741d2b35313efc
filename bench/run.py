"""One command, one table: how fast and how lean continuity-tui is, beside what users would use instead.

``python -m bench.run`` (100 MB and 1 GB corpora) or ``python -m bench.run --quick`` (100 MB only, a few
minutes) measures, in one go:

* issue 15's targets first (`bench.targets`; ``--targets-only`` for just these, ``--no-targets`` to skip them):
  each target beside the floor or peer it is measured against, commands interleaved round by round in the same
  minutes, the fastest round of each kept, the ratio and the load average printed per row;
* a cold ``continuity-tui report --format json`` over the whole corpus (agent dir + event recordings): wall,
  CPU, MB/s, lines/s, peak RSS of the child (``wait4`` rusage);
* the same over the transcripts alone (the ≥ 150 MB/s target);
* session.log alone (both generations), our report versus a ``jq`` pipeline counting continuity kinds and
  reasons and a plain Python ``json.loads`` loop, on the same files in the same run, with the ratios. Each is
  also run on a one-line log so its fixed start-up cost can be told apart from its per-byte speed; the three
  tools' counts are cross-checked;
* the dashboard (`bench.probe`): first paint, first frame showing the newest session, full backfill, a second
  start on the index the first one saved (whole history on screen), idle CPU
  over 30 s on the unchanged corpus, and live latency from write to screen while a writer appends;
* RSS at each corpus size.

Every child is a fresh process: cold interpreter, warm page cache (the corpus was just written or read; a
user's recent history is in the page cache too). Wall times on a shared machine are noisy, so each short
command runs several times and the fastest run is kept, and CPU time is shown beside wall time.

Nothing here asserts: tests stay correctness-only. Results also go to ``bench/out/results.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench import targets
from bench.corpus import MARKER, Corpus, ensure, human_size, parse_size
from core.model import CONTINUITY_EVENT

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "bench" / "out"
PY = sys.executable
#: Children run in a user's environment: this sandbox sets PYTHONDONTWRITEBYTECODE, which makes every start
#: recompile the project from source (+0.2 s of "start-up" no installed user pays); bytecode is cached as usual.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
#: the persistent index goes to the run's work directory (set in `main`), never to the user's ~/.cache
CACHE_ENV = "CONTINUITY_TUI_CACHE_DIR"
JQ_FILTER = f'fromjson? | select(.event == "{CONTINUITY_EVENT}") | "\\(.kind)\\t\\(.reason)"'
PY_LOOP = f"""
import json, sys, collections
counts = collections.Counter()
for path in sys.argv[1:]:
    with open(path, "rb") as fh:
        for line in fh:
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict) and obj.get("event") == "{CONTINUITY_EVENT}":
                counts[(obj.get("kind"), obj.get("reason"))] += 1
for (kind, reason), n in sorted(counts.items(), key=str):
    print(n, kind, reason, sep="\\t")
"""


# ---------------------------------------------------------------------------------------------- measuring
@dataclass(slots=True)
class Timed:
    """One child process: wall seconds, CPU seconds (user + sys, its waited-for children included), peak RSS."""

    wall: float
    cpu: float
    rss_mb: float
    rc: int
    stdout: bytes = b""


def timed(
    argv: list[str], *, capture: bool = False, cwd: Path | None = None, env: dict[str, str] | None = None
) -> Timed:
    """Run ``argv`` and take its rusage from ``wait4`` (so the numbers are the child's, not ours)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(
            argv, stdout=out if capture else subprocess.DEVNULL, stderr=err, cwd=cwd, env=env or CHILD_ENV
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            sys.stderr.write(f"bench: {' '.join(argv[:6])} … exited {proc.returncode}\n{err.read().decode()[-2000:]}")
        return Timed(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode, out.read())


def best_of(n: int, run: Callable[[], Timed]) -> Timed:
    """The fastest of ``n`` runs: on a shared machine noise only ever adds time."""
    return min((run() for _ in range(n)), key=lambda t: t.wall)


def report_cmd(paths: list[Path], out: Path, *, cache: bool = False) -> list[str]:
    """A cold report unless `cache`: the persistent index (`core.index`) would turn a rerun into a warm start."""
    argv = [PY, "-m", "tui.cli", "report", *map(str, paths), "--format", "json", "-o", str(out)]
    return argv if cache else [*argv, "--no-cache"]


def jq_cmd(files: list[Path]) -> list[str]:
    quoted = " ".join(f"'{f}'" for f in files)
    return ["bash", "-c", f"jq -R -r '{JQ_FILTER}' {quoted} | sort | uniq -c"]


def py_cmd(files: list[Path]) -> list[str]:
    return [PY, "-c", PY_LOOP, *map(str, files)]


def count_lines(files: list[Path]) -> int:
    total = 0
    for path in files:
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 24):
                total += chunk.count(b"\n")
    return total


def tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


# ---------------------------------------------------------------------------------------------- one corpus
@dataclass
class CorpusResult:
    corpus: dict[str, Any]
    report: dict[str, Any] = field(default_factory=dict)
    transcripts: dict[str, Any] = field(default_factory=dict)
    log: dict[str, Any] = field(default_factory=dict)
    app: dict[str, Any] = field(default_factory=dict)


def bench_report(corpus: Corpus, work: Path) -> dict[str, Any]:
    files = [p for p in corpus.path.rglob("*") if p.is_file() and p.name not in ("manifest.json", MARKER)]
    nbytes = sum(p.stat().st_size for p in files)
    lines = count_lines(files)
    t = timed(report_cmd(corpus.report_paths(), work / "report.json"))
    # the second start: a first cached run saves the index, the next one adopts it and reads nothing new
    timed(report_cmd(corpus.report_paths(), work / "report-index.json", cache=True))
    warm = timed(report_cmd(corpus.report_paths(), work / "report-warm.json", cache=True))
    return {
        "bytes": nbytes,
        "lines": lines,
        "wall": t.wall,
        "cpu": t.cpu,
        "rss_mb": t.rss_mb,
        "rc": t.rc,
        "mb_s": nbytes / 1e6 / t.wall,
        "lines_s": lines / t.wall,
        "warm_wall": warm.wall,
        "warm_rss_mb": warm.rss_mb,
        "warm_same": _same_report(work / "report.json", work / "report-warm.json"),
    }


def _same_report(a: Path, b: Path) -> bool:
    """A warm start must say exactly what a cold one says (`generated_at` aside)."""
    try:
        left, right = (json.loads(p.read_text(encoding="utf-8")) for p in (a, b))
    except (OSError, ValueError):
        return False
    left.pop("generated_at", None)
    right.pop("generated_at", None)
    return bool(left == right)


def bench_transcripts(corpus: Corpus, work: Path) -> dict[str, Any]:
    nbytes = tree_bytes(corpus.transcripts)
    t = timed(report_cmd([corpus.transcripts], work / "transcripts.json"))
    return {
        "bytes": nbytes,
        "wall": t.wall,
        "cpu": t.cpu,
        "rss_mb": t.rss_mb,
        "rc": t.rc,
        "mb_s": nbytes / 1e6 / t.wall,
        "mb_s_cpu": nbytes / 1e6 / t.cpu,
    }


def _one_line_log(work: Path) -> Path:
    """A log of one continuity line: what each tool costs before it reads a byte (interpreter, imports)."""
    path = work / "startup" / "logs" / "session.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {
                "ts": "2026-10-11T08:00:00.000Z",
                "level": "info",
                "event": CONTINUITY_EVENT,
                "kind": "delta",
                "reason": "prefix_matched",
                "count": 1,
            }
        )
        + "\n",
        encoding="utf-8",
    )
    return path


def bench_log(corpus: Corpus, work: Path, repeat: int) -> dict[str, Any]:
    files = corpus.log_files()
    nbytes = sum(p.stat().st_size for p in files)
    lines = count_lines(files)
    one = _one_line_log(work)
    out = work / "log-report.json"
    ours = best_of(repeat, lambda: timed(report_cmd([corpus.session_log], out)))
    ours0 = best_of(repeat, lambda: timed(report_cmd([one], work / "startup.json")))
    jq = best_of(repeat, lambda: timed(jq_cmd(files), capture=True))
    jq0 = best_of(repeat, lambda: timed(jq_cmd([one]), capture=True))
    py = best_of(repeat, lambda: timed(py_cmd(files), capture=True))
    py0 = best_of(repeat, lambda: timed(py_cmd([one]), capture=True))
    counts = {"ours": _our_counts(out), "jq": _jq_counts(jq.stdout), "python": _py_counts(py.stdout)}
    result: dict[str, Any] = {"bytes": nbytes, "lines": lines, "files": [p.name for p in files]}
    for name, full, empty in (("ours", ours, ours0), ("jq", jq, jq0), ("python", py, py0)):
        steady = max(full.wall - empty.wall, 1e-3)
        result[name] = {
            "wall": full.wall,
            "cpu": full.cpu,
            "rss_mb": full.rss_mb,
            "startup": empty.wall,
            "mb_s": nbytes / 1e6 / full.wall,
            "mb_s_steady": nbytes / 1e6 / steady,
        }
    result["counts_agree"] = counts["ours"] == counts["jq"] == counts["python"]
    result["continuity_lines"] = sum(counts["jq"].values())
    return result


def _our_counts(report: Path) -> dict[str, int]:
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    by_reason = data.get("continuity", {}).get("by_reason", {})
    return {f"{kind}\t{reason}": n for reason, kinds in by_reason.items() for kind, n in kinds.items() if n}


def _jq_counts(out: bytes) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in out.decode().splitlines():
        n, _, key = line.strip().partition(" ")
        if n.isdigit():
            counts[key] = int(n)
    return counts


def _py_counts(out: bytes) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in out.decode().splitlines():
        n, kind, reason = line.split("\t")
        counts[f"{kind}\t{reason}"] = int(n)
    return counts


def bench_app(corpus: Corpus, idle: float, live_seconds: float) -> dict[str, Any]:
    """The dashboard probe in a fresh interpreter (see `bench.probe`)."""
    transcripts = sorted(corpus.transcripts.rglob("*.jsonl"), key=lambda p: p.stat().st_mtime_ns)
    newest = transcripts[-1]
    newest_turns = sum(1 for line in newest.read_bytes().splitlines() if _assistant(line))
    # replay a mid-sized transcript: enough assistant messages for a steady write rate
    source = sorted(transcripts, key=lambda p: p.stat().st_size)[len(transcripts) // 2]
    live_dir = corpus.transcripts / "--bench-live--"
    shutil.rmtree(live_dir, ignore_errors=True)
    live = live_dir / "2026-12-01T00-00-00-000Z_bench-live.jsonl"
    argv = [
        PY,
        "-m",
        "bench.probe",
        "app",
        *map(str, corpus.report_paths()),
        "--newest",
        str(newest),
        "--newest-turns",
        str(newest_turns),
        "--idle",
        str(idle),
        "--live-src",
        str(source),
        "--live-dst",
        str(live),
        "--live-seconds",
        str(live_seconds),
    ]
    index = tempfile.mkdtemp(prefix="continuity-bench-app-index-")
    try:
        # a first start (an empty index directory, whatever the report runs saved), which saves the index once
        # the backfill settled; then a second start on it, measured up to the whole history on screen
        t = timed([*argv, "--index", index, "--save-index", "--t0", repr(time.time())], capture=True, cwd=REPO)
        shutil.rmtree(live_dir, ignore_errors=True)
        second = [*argv[: argv.index("--idle")], "--idle", "0", "--index", index]
        w = timed([*second, "--t0", repr(time.time())], capture=True, cwd=REPO)
    finally:
        shutil.rmtree(live_dir, ignore_errors=True)
        shutil.rmtree(index, ignore_errors=True)
    try:
        result: dict[str, Any] = json.loads(t.stdout.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": f"probe exited {t.rc}"}
    result["newest_turns"] = newest_turns
    try:
        warm = json.loads(w.stdout.decode().strip().splitlines()[-1])
        result["warm"] = {k: warm.get(k) for k in ("first_paint_s", "first_data_s", "loaded_s", "rss_mb", "turns")}
        result["warm"]["status"] = warm.get("index_status")
    except (ValueError, IndexError):
        result["warm"] = {"error": f"probe exited {w.rc}"}
    return result


def _assistant(line: bytes) -> bool:
    from bench.probe import is_assistant_line

    return is_assistant_line(line)


# ---------------------------------------------------------------------------------------------- the table
@dataclass(frozen=True, slots=True)
class Target:
    label: str
    check: Callable[[float], bool]
    columns: str = "all"  # "all" | "largest" | "1GB"


def _num(value: float | None, fmt: str, unit: str = "") -> str:
    return "—" if value is None else f"{value:{fmt}}{unit}"


def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kb / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    jq = (
        subprocess.run(["jq", "--version"], capture_output=True, text=True).stdout.strip() if shutil.which("jq") else ""
    )
    commit = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "memory": mem,
        "python": platform.python_version(),
        "os": platform.platform(terse=True),
        "jq": jq,
        "commit": commit,
        "load_before": os.getloadavg(),
    }


def render(results: list[CorpusResult], info: dict[str, Any]) -> str:
    cols = [human_size(r.corpus["target_bytes"]) for r in results]
    rows: list[tuple[str, list[str], str, str]] = []

    def row(label: str, values: list[str], target: str = "", verdict: str = "") -> None:
        rows.append((label, values, target, verdict))

    def judge(values: list[float | None], ok: Callable[[float], bool], which: str = "all") -> str:
        picked = values
        if which == "1GB":
            picked = [v for v, r in zip(values, results, strict=True) if r.corpus["target_bytes"] >= 10**9]
            if not picked:
                return "n/a (no 1 GB run)"
        if not picked or any(v is None for v in picked):
            return "n/a"
        return "met" if all(ok(v) for v in picked if v is not None) else "MISSED"

    get = lambda section, key: [getattr(r, section).get(key) for r in results]  # noqa: E731
    row("corpus: sessions / turns", [f"{r.corpus['sessions']:,} / {r.corpus['turns']:,}" for r in results])
    row("corpus: files, bytes", [f"{r.corpus['files']:,} · {human_size(r.corpus['bytes'])}" for r in results])
    row(
        "report --format json, whole corpus: wall (CPU)",
        [f"{r.report['wall']:.1f} s ({r.report['cpu']:.1f} s)" for r in results],
    )
    row("  throughput", [f"{r.report['mb_s']:.0f} MB/s · {r.report['lines_s'] / 1000:.0f}k lines/s" for r in results])
    row(
        "report, second start (persistent index): wall, RSS",
        [
            f"{_num(r.report.get('warm_wall'), '.2f', ' s')} · {_num(r.report.get('warm_rss_mb'), '.0f', ' MB')}"
            + ("" if r.report.get("warm_same") else " (DIFFERS)")
            for r in results
        ],
    )
    rss = get("report", "rss_mb")
    row("  peak RSS", [_num(v, ".0f", " MB") for v in rss], "≤ 400 MB at 1 GB", judge(rss, lambda v: v <= 400, "1GB"))
    tr = get("transcripts", "mb_s")
    row(
        "report, transcripts only: MB/s (per CPU-s)",
        [f"{r.transcripts['mb_s']:.0f} ({r.transcripts['mb_s_cpu']:.0f})" for r in results],
        "≥ 150 MB/s",
        judge(tr, lambda v: v >= 150),
    )
    row(
        "session.log (both generations): size, lines",
        [f"{human_size(r.log['bytes'])} · {r.log['lines']:,}" for r in results],
    )
    for name, label in (
        ("ours", "continuity-tui report"),
        ("jq", "jq -R fromjson? | sort | uniq -c"),
        ("python", "python json.loads loop"),
    ):
        row(
            f"  {label}: wall (start-up)",
            [f"{r.log[name]['wall'] * 1000:.0f} ms ({r.log[name]['startup'] * 1000:.0f} ms)" for r in results],
        )
    e2e = [r.log["jq"]["wall"] / r.log["ours"]["wall"] for r in results]
    steady = [r.log["ours"]["mb_s_steady"] / r.log["jq"]["mb_s_steady"] for r in results]
    row("  speed vs jq, end to end", [f"{v:.2f}×" for v in e2e])
    row(
        "  speed vs jq, per byte (start-up excluded)",
        [
            f"{v:.1f}× ({r.log['ours']['mb_s_steady']:.0f} vs {r.log['jq']['mb_s_steady']:.0f} MB/s)"
            for v, r in zip(steady, results, strict=True)
        ],
        "≥ 5× jq",
        judge(list(steady), lambda v: v >= 5),
    )
    row(
        "  speed vs json.loads loop, end to end / per byte",
        [
            f"{r.log['python']['wall'] / r.log['ours']['wall']:.2f}× / "
            f"{r.log['ours']['mb_s_steady'] / r.log['python']['mb_s_steady']:.1f}×"
            for r in results
        ],
    )
    row("  counts agree (ours = jq = python)", ["yes" if r.log["counts_agree"] else "NO" for r in results])
    if any(r.app for r in results):
        first = get("app", "first_data_s")
        row("dashboard: first paint", [_num(r.app.get("first_paint_s"), ".2f", " s") for r in results])
        row(
            "dashboard: newest session on screen",
            [_num(v, ".2f", " s") for v in first],
            "≤ 1.5 s",
            judge(first, lambda v: v <= 1.5),
        )
        row("dashboard: full backfill", [_num(r.app.get("loaded_s"), ".1f", " s") for r in results])
        warm = [r.app.get("warm") or {} for r in results]
        row(
            "dashboard, second start (index): whole history",
            [
                _num(w.get("loaded_s"), ".1f", " s") + ("" if w.get("status") == "warm" else f" ({w.get('status')})")
                for w in warm
            ],
        )
        lives = [r.app.get("live") or {} for r in results]
        p95 = [lv.get("p95_ms") for lv in lives]
        row(
            "live latency p50 / p95 / max",
            [
                " / ".join(_num(lv.get(k), ".0f") for k in ("p50_ms", "p95_ms", "max_ms"))
                + f" ms (n={lv.get('seen', 0)})"
                for lv in lives
            ],
            "p95 ≤ 250 ms",
            judge(p95, lambda v: v <= 250),
        )
        idle = get("app", "idle_cpu_pct")
        row(
            f"idle CPU, {results[0].app.get('idle_s', 0):.0f} s unchanged corpus",
            [_num(v, ".2f", " %") for v in idle],
            "≤ 2 %",
            judge(idle, lambda v: v <= 2),
        )
        row(
            "dashboard peak RSS: backfill / with the index save",
            [
                f"{_num(r.app.get('rss_before_save_mb'), '.0f', ' MB')} / {_num(r.app.get('rss_mb'), '.0f', ' MB')}"
                for r in results
            ],
        )

    widths = [max(len(r[0]) for r in rows), *(max(len(c), *(len(r[1][i]) for r in rows)) for i, c in enumerate(cols))]
    tw = max(len("target"), *(len(r[2]) for r in rows))
    lines = [
        f"continuity-tui benchmark · {info['cpu']} · {info['cores']} cores · {info['memory']} · Python {info['python']}"
        f" · {info['jq']} · commit {info['commit']} · load {info['load_before'][0]:.1f} → {info['load_after'][0]:.1f}",
        "",
        "  ".join(
            [
                "measure".ljust(widths[0]),
                *(c.rjust(w) for c, w in zip(cols, widths[1:], strict=True)),
                "target".ljust(tw),
                "result",
            ]
        ),
    ]
    lines.append("-" * len(lines[-1]))
    for label, values, target, verdict in rows:
        cells = [label.ljust(widths[0]), *(v.rjust(w) for v, w in zip(values, widths[1:], strict=True))]
        lines.append("  ".join([*cells, target.ljust(tw), verdict]).rstrip())
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark continuity-tui; prints one table.")
    parser.add_argument("--size", action="append", help="corpus size (repeatable); default 100MB and 1GB")
    parser.add_argument("--quick", action="store_true", help="100 MB only, fewer repetitions")
    parser.add_argument("--idle", type=float, default=30.0, help="seconds of idle CPU measurement (default 30)")
    parser.add_argument("--live", type=float, default=15.0, help="seconds the live writer runs (default 15)")
    parser.add_argument("--repeat", type=int, default=None, help="runs per session.log command (best kept)")
    parser.add_argument("--no-app", action="store_true", help="skip the dashboard measurements")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-targets", action="store_true", help="skip issue 15's targets table (bench.targets)")
    parser.add_argument("--targets-only", action="store_true", help="only issue 15's targets table")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds per target (default 3, quick 2)")
    parser.add_argument(
        "--only",
        default=None,
        help=f"comma-separated target rows ({', '.join(targets.ROWS)}); implies --targets-only",
    )
    args = parser.parse_args(argv)
    if not shutil.which("jq"):
        parser.error("jq is not installed (apt-get install -y jq): the comparison needs it")
    only = None if args.only is None else {row.strip() for row in args.only.split(",") if row.strip()}
    if only is not None:
        if unknown := only - set(targets.ROWS):
            parser.error(f"--only: unknown rows {', '.join(sorted(unknown))} (rows: {', '.join(targets.ROWS)})")
        args.targets_only = True
    sizes = [parse_size(s) for s in (args.size or (["100MB"] if args.quick else ["100MB", "1GB"]))]
    repeat = args.repeat or (3 if args.quick else 5)
    info = machine()
    results: list[CorpusResult] = []
    target_rows: list[targets.Target] = []
    with tempfile.TemporaryDirectory(prefix="continuity-bench-") as tmp:
        work = Path(tmp)
        CHILD_ENV[CACHE_ENV] = str(work / "index")
        if not args.no_targets:
            corpus = ensure(sizes[0], seed=args.seed)
            rounds = args.rounds or (2 if args.quick else 3)
            target_rows = targets.measure(corpus, CHILD_ENV, work, rounds=rounds,
                                          live_seconds=30.0, only=only)  # fmt: skip
        for size in [] if args.targets_only else sizes:
            corpus = ensure(size, seed=args.seed)
            shape = {k: v for k, v in asdict(corpus).items() if k != "path"}
            result = CorpusResult({**shape, "path": str(corpus.path)})
            step = f"[{human_size(size)}]"
            print(f"{step} report over the whole corpus …", file=sys.stderr)
            result.report = bench_report(corpus, work)
            print(f"{step} report over the transcripts …", file=sys.stderr)
            result.transcripts = bench_transcripts(corpus, work)
            print(f"{step} session.log: ours, jq, json.loads ×{repeat} …", file=sys.stderr)
            result.log = bench_log(corpus, work, repeat)
            if not args.no_app:
                print(
                    f"{step} dashboard: first frame, idle {args.idle:.0f} s, live {args.live:.0f} s …", file=sys.stderr
                )
                result.app = bench_app(corpus, args.idle, args.live)
            results.append(result)
    info["load_after"] = os.getloadavg()
    table = render(results, info) if results else ""
    if target_rows:
        head = (
            f"continuity-tui targets (issue 15) · {info['cpu']} · {info['cores']} cores · Python {info['python']}"
            f" · {info['jq']} · commit {info['commit']} · ratios within one interleaved run, min of rounds"
        )
        table = f"{head}\n\n{targets.render(target_rows)}" + (f"\n\n{table}" if table else "")
    print(table)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(
        json.dumps(
            {
                "machine": info,
                "results": [asdict(r) for r in results],
                "targets": [asdict(t) for t in target_rows],
                "table": table,
            },
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
