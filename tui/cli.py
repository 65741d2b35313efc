"""The `continuity-tui` command: the dashboard, `report`, `check`, `metrics` and `index --path`.

Textual is imported only when the dashboard opens, so `report`, `check` and `metrics` start fast and run where
no terminal is attached (CI, a server).
"""

from __future__ import annotations

import argparse
import gc
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core import __version__
from core.demo.names import AGENTS as DEMO_AGENTS

EXIT_USAGE = 2


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, given the terminal's width as `shutil.get_terminal_size` finds it: left to find
    it itself, the formatter every `add_argument` builds imports shutil (and with it bz2 and lzma: ~5 ms of every
    command, a report that reads its index among them)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


def _columns() -> int:
    """`COLUMNS` when it is a positive number, else standard output's terminal width, else 80 (shutil's rule)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose help formatter is `_Formatter` (its subcommands' parsers are of this class too)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="logs/ dir, agent dir, sessions/ dir, or single files (default: every agent's home that exists)",
    )
    parser.add_argument(
        "--volatile",
        action="append",
        default=[],
        metavar="PATTERN",
        help="extra field to treat as volatile when fingerprinting (repeatable), e.g. .content[*].ts",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the persistent index (~/.cache/continuity-tui): read everything",
    )
    parser.add_argument(
        "--jobs",
        type=_jobs,
        default=None,
        metavar="N",
        help="worker processes for reading (default: the number of cores; 1: one process, the same output)",
    )
    parser.add_argument(
        "--prices",
        type=Path,
        metavar="FILE",
        help='JSON of list prices per model, USD per million tokens, on top of the bundled table: {"<model>": '
        '{"input": 3.0, "output": 15.0, "cache_write_5m": 3.75, "cache_write_1h": 6.0, "cache_read": 0.3}}',
    )


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of processes, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("expected at least 1")
    return value


COMMANDS = ("report", "check", "metrics", "index")
"""The subcommands, in the order `--help` lists them."""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; with `only` (a name of `COMMANDS`), the parser of that subcommand alone.

    `continuity-tui report …` needs only `report`'s arguments: each `add_argument` builds a help formatter and
    each parser looks its messages up in gettext, and building the other three subcommands' ~30 arguments was
    ~20 M of a one-line report's ~320 M instructions (callgrind). What that subcommand parses, prints
    (`report --help`) and refuses is the same either way; only `continuity-tui --help` (built with every
    subcommand) lists them all."""
    parser = _Parser(
        prog="continuity-tui",
        description="Live dashboard of coding-agent session continuity: delta / fork / flatten re-sends, "
        "payload sizes, directive copies and rewritten turns.",
    )
    parser.add_argument("--version", action="version", version=f"continuity-tui {__version__}")
    # the usage line an error of the top parser prints (`report --bogus`) names every subcommand either way
    sub = parser.add_subparsers(dest="command", metavar=None if only is None else "{" + ",".join(COMMANDS) + "}")
    for name in COMMANDS if only is None else (only,):
        _SUBCOMMANDS[name](sub)
    return parser


def _report_command(sub: Any) -> None:
    report = sub.add_parser("report", help="print a snapshot report (no UI)")
    _common(report)
    report.add_argument(
        "--format",
        default="json",
        help="json, md, html or openmetrics (Prometheus text, for node_exporter's textfile collector); "
        "several comma-separated with -o DIR",
    )
    report.add_argument("-o", "--output", type=Path, help="file (or directory for several formats); stdout if omitted")
    _selection(report)
    report.add_argument(
        "--per-session", action="store_true", help="openmetrics: label the series by session id (more series)"
    )


def _check_command(sub: Any) -> None:
    check = sub.add_parser("check", help="exit 1 when a continuity threshold is exceeded (for CI)")
    _common(check)
    _selection(check)
    check.add_argument("--max-resend-share", type=float)
    check.add_argument("--max-avoidable", type=int)
    check.add_argument("--max-directive-share", type=float)
    check.add_argument("--max-payload-bytes", type=int)
    check.add_argument(
        "--max-waste-usd", type=float, help="dollars (list prices) spent re-processing already-cached history"
    )
    check.add_argument("--max-waste-share", type=float, help="excess tokens / tokens not read from cache (waste.share)")


def _metrics_command(sub: Any) -> None:
    metrics = sub.add_parser(
        "metrics", help="serve live Prometheus/OpenMetrics on /metrics (headless, follows the files as they grow)"
    )
    _common(metrics)
    metrics.add_argument(
        "--listen",
        default=None,
        metavar="HOST:PORT",
        help=f"address to serve on (default {DEFAULT_LISTEN}: this host only); another interface is served only "
        "when named here, e.g. 0.0.0.0:9464, [::]:9464 or :9464 (all); port 0 picks a free one",
    )
    metrics.add_argument(
        "--per-session", action="store_true", help="label the series by session id (one more label: more series)"
    )
    metrics.add_argument("--no-redact", action="store_true", help="keep secrets found in label values")


def _index_command(sub: Any) -> None:
    index = sub.add_parser("index", help="the persistent index (a SQLite file you can query with sqlite3)")
    index.add_argument("--path", action="store_true", help="print where it is (it may not exist yet)")


_SUBCOMMANDS: dict[str, Callable[[Any], None]] = {
    "report": _report_command,
    "check": _check_command,
    "metrics": _metrics_command,
    "index": _index_command,
}


DEFAULT_LISTEN = "127.0.0.1:9464"


def _selection(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--session", metavar="ID", help="limit sessions, turns and directives to one session")
    parser.add_argument("--since", help="ISO time or relative (e.g. 2h, 30m, 1d)")
    parser.add_argument("--until", help="ISO time or relative")
    parser.add_argument("--no-redact", action="store_true", help="keep secrets found in the data (redaction is on)")
    parser.add_argument("--include-text", action="store_true", help="include message text instead of summaries")


def dashboard_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="continuity-tui",
        parents=[],
        add_help=True,
        epilog="Subcommands: report, check, metrics (continuity-tui report --help).",
    )
    _common(parser)
    parser.add_argument(
        "--demo", action="store_true", help="open on a demo agent dir that a background writer fills live"
    )
    parser.add_argument(
        "--demo-dir",
        type=Path,
        metavar="DIR",
        help="with --demo (implies it): replay into DIR and keep it on exit (default: a temp dir, removed on exit)",
    )
    parser.add_argument(
        "--demo-agent",
        action="append",
        choices=DEMO_AGENTS,
        metavar="NAME",
        help=f"with --demo (implies it; repeatable): play only these agents ({', '.join(DEMO_AGENTS)}; default: all)",
    )
    parser.add_argument("--version", action="version", version=f"continuity-tui {__version__}")
    return parser


def tune_gc() -> None:
    """The analysis state is a large heap of long-lived small objects (turn summaries, ledgers, offsets) that
    never forms cycles worth collecting; CPython's default thresholds re-walk it again and again during a
    backfill (~15 % of a 100 MB report). Objects alive after start-up are frozen out of collection, and
    collections run a hundred times less often; cycles are still collected, only later."""
    gc.freeze()
    gc.set_threshold(70_000, 20, 20)


def tune_malloc() -> None:
    """Keep glibc's mmap threshold at its 128 KiB default instead of letting it grow: reading a log frees one
    ~1 MiB block after another, and once the threshold has risen past their size they come from the heap, whose
    freed pages are not returned (the 166 MB log's report peaked at 167 MB with a risen threshold, 150 MB
    without). A no-op where the C library is not glibc."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    m_mmap_threshold = -3  # glibc <malloc.h>
    mallopt(m_mmap_threshold, 128 * 1024)


SMALL_INPUT = 1 << 20
"""PATHs that are regular files of at most this many bytes in all: nothing read from them frees a block big enough
to raise glibc's mmap threshold, so `tune_malloc` (ctypes, ~3 ms of a one-line report's start-up) is skipped."""


def small_input(paths: list[Path]) -> bool:
    """Every PATH a regular file, together at most `SMALL_INPUT` bytes (a directory, `-` or a big file: False)."""
    total = 0
    for path in paths:
        try:
            info = path.stat()
        except OSError:
            return False
        if not stat.S_ISREG(info.st_mode):
            return False
        total += info.st_size
    return bool(paths) and total <= SMALL_INPUT


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:  # e.g. `--help | head -0`: the reader left; end as a SIGPIPE'd tool does
        from core.report.output import EXIT_CLOSED_PIPE, quiet_stdout

        quiet_stdout()
        return EXIT_CLOSED_PIPE


def _main(argv: list[str] | None) -> int:
    from_command_line = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    tune_gc()
    if argv and argv[0] == "index":
        args = build_parser("index").parse_args(argv)
        from core.index import index_path  # no analysis import: only where the file is

        print(index_path())
        return 0
    if argv and argv[0] in ("report", "check", "metrics"):
        args = build_parser(argv[0]).parse_args(argv)
        if args.command == "metrics" or not small_input(args.paths):
            tune_malloc()
        if args.command == "metrics":
            from tui.exporter import run_metrics  # headless: no textual import on this path

            return run_metrics(args, DEFAULT_LISTEN)
        from tui.commands import run_check, run_report  # no textual import on this path

        code = run_report(args) if args.command == "report" else run_check(args)
        if from_command_line:  # the shutdown's collections were ~17 M of a one-line report's ~300 M instructions
            exit_without_a_last_collection()
        return code
    args = dashboard_parser().parse_args(argv)
    tune_malloc()
    from tui.commands import run_dashboard

    code = run_dashboard(args)
    if from_command_line:
        exit_without_a_last_collection()
    return code


def exit_without_a_last_collection() -> None:
    """The process ends now, and everything the dashboard read is garbage: the interpreter's shutdown would walk
    all of it once more in a last full collection, ~0.2 s of a quit on the 166 MB log after a warm start (from
    `q` to exit 0.41-0.46 -> 0.19-0.28 s, loaded), whose objects the ingest worker had not frozen (`gc.freeze`,
    `tui.app`). A report or check ends the same way: its shutdown's collections walked every module, function
    and class it imported (~17 M instructions of a one-line report, callgrind). Frozen, they are freed by their
    reference counts alone (as every file and socket already is). Only for a process started from the command
    line: a caller that goes on (a test) keeps its collector."""
    import gc

    gc.freeze()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
