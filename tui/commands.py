"""What each command does once its arguments are parsed. Errors a user can act on are one line + exit 2."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.agents import default_roots
from core.engine import READ_CHUNK, Engine
from core.sources.discover import SourceError
from tui.stdin import NoTerminal, replace_stdin, spool_all, spool_live, take_stdin_for_ui, wants_stdin

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def say(message: str) -> None:
    """One line on stderr, secrets replaced (a path or an error can hold one) and controls made inert. A closed
    or broken stderr loses the line, never the command."""
    from core.report.redact import shown

    if sys.stderr is None:
        return
    with contextlib.suppress(OSError, ValueError):
        print(f"continuity-tui: {shown(message, 2000)}", file=sys.stderr, flush=True)


def say_lines(lines: list[str]) -> None:
    """Several lines this tool composed (the places looked in when nothing is found), each redacted and inert as
    `say` makes one: a line break inside a value is never taken for one of these."""
    from core.report.redact import shown

    if sys.stderr is None:
        return
    text = "\n".join(shown(line, 2000) for line in lines)
    with contextlib.suppress(OSError, ValueError):
        print(f"continuity-tui: {text}", file=sys.stderr, flush=True)


def fail(message: str) -> int:
    say(message)
    return EXIT_USAGE


def resolve_paths(args: argparse.Namespace) -> list[Path]:
    """The PATHs given, else every agent's home that exists here (`core.agents.default_roots`); [] when none."""
    return list(args.paths) or default_roots()


def no_home() -> int:
    """No PATH and no agent's home here: every place looked in (each agent's homes, with the variable that moves
    it) and the way to see the tool work. It named one senpi path; a pi or Claude Code user then could not tell
    their dirs had been looked in too."""
    from core.agents import AGENTS  # every agent's package (a report of files imports only theirs)

    env, home = os.environ, Path.home()

    def short(path: Path) -> str:
        text, root = str(path), str(home)
        return "~" + text[len(root) :] if root != "/" and (text == root or text.startswith(root + os.sep)) else text

    rows = [
        (agent.name, short(path), " or ".join(f"${name}" for name in spec.env))
        for agent in AGENTS
        for spec in agent.homes
        for path in spec.candidates(env, home)
    ]
    width = max(len(path) for _agent, path, _env in rows)
    lines = ["no agent data found (no PATH given). Looked in:"]
    for agent, path, env_names in rows:
        lines.append(f"  {path:<{width}}  {agent}" + (f" ({env_names})" if env_names else ""))
    lines += [
        "Give a PATH (a logs/, sessions/ or projects/ dir, or files), set one of the variables above,",
        "or see it work on bundled data: continuity-tui --demo",
    ]
    say_lines(lines)
    return EXIT_USAGE


def open_engine(paths: list[Path], volatile: list[str], *, watch: bool = False, jobs: int | None = None) -> Engine:
    """Build the engine; raises SourceError naming the first path that does not exist."""
    for path in paths:
        if not path.exists():
            raise SourceError(path, "no such file or directory")
    if volatile:
        from core.kernel import volatility

        volatility.configure(volatile)
    from core.pool import default_jobs

    settle_apart = None
    if not watch:  # a drain may read the transcripts apart (`core.session_pool`), then put them in cold order
        from core.index.apart import settle as settle_apart
    # a live dashboard shows the newest sessions first
    return Engine(
        paths,
        watch=watch,
        newest_first=watch,
        jobs=default_jobs() if jobs is None else jobs,
        settle_apart=settle_apart,
    )


def _readable(engine: Engine) -> bool:
    return any(stat.lines for stat in engine.stats.values())


def notice(message: str) -> None:
    """A routine one-line notice on stderr (an ignored index file): informs, never changes the exit code."""
    say(message)


def _load(args: argparse.Namespace) -> tuple[Engine, Callable[[], None]] | int:
    """Open, load the persistent index when there is one (`core.index`), read everything (the index takes what
    each poll finished, as it goes). Returns the engine and the function that closes the index: call it when
    the output is written.

    A run resumed from the index met the files in another order than a cold read; `Index.settle` puts what
    depends on that order as a cold read has it, or says it cannot, and then everything is read cold."""
    paths = resolve_paths(args)
    if not paths:
        return no_home()
    spool = None
    if wants_stdin(paths):  # `report -`: stdin spooled to a temp file, removed once the output is written
        if sys.stdin is None or sys.stdin.isatty():
            return fail("-: stdin is a terminal, not a pipe (… | continuity-tui report -)")
        spool = spool_all(sys.stdin.fileno())
        paths = replace_stdin(paths, spool)
    try:
        engine = open_engine(paths, args.volatile, jobs=args.jobs)
    except SourceError as err:
        if spool is not None:
            spool.cleanup()
        return fail(f"{err.path}: {err.message}")
    index = None
    if not getattr(args, "no_cache", False) and spool is None:  # (a temp file's index would never be read)
        from core.index import Index

        index = Index.for_engine(engine, volatile=args.volatile, mode="report")
        index.restore(engine)
    engine.read_all(READ_CHUNK)
    if index is not None:
        if not index.settle(engine, READ_CHUNK):
            engine.close()  # what was read would not give what a cold read gives: read it all
            engine = open_engine(paths, args.volatile, jobs=args.jobs)
            index.start_over(engine)
            engine.read_all(READ_CHUNK)
        index.commit(engine)  # what the last poll finished (the drain parks after its polls)
        index.store_assembled(engine)  # Claude Code and mux sessions: once the drain is known to be exact
    engine.finish_pending()
    engine.report_partials()

    def finish() -> None:
        if spool is not None:
            spool.cleanup()
        if index is None:
            return
        index.close()
        for line in index.notices:
            notice(line)

    if not _readable(engine):
        engine.close()
        finish()
        names = ", ".join("-" if spool is not None and p == spool.path else str(p) for p in paths)
        return fail(f"{names}: nothing readable (no senpi logs, transcripts or event recordings found)")
    return engine, finish


def unknown_session(args: argparse.Namespace, report: dict) -> bool:
    """A --session that matches nothing is a usage error (exit 2), not an empty, passing report."""
    selection = report.get("selection") or {}
    return bool(args.session) and selection.get("sessions_matched") == 0


def _prices_ok(args: argparse.Namespace) -> str | None:
    """A `--prices` file that cannot be used, said before anything is read (a big history takes a while)."""
    from core.report.options import prices_from_args

    try:
        prices_from_args(args)
    except ValueError as err:
        return str(err)
    return None


def run_report(args: argparse.Namespace) -> int:
    bad_prices = _prices_ok(args)
    if bad_prices is not None:
        return fail(bad_prices)
    loaded = _load(args)
    if isinstance(loaded, int):
        return loaded
    held, finish = [loaded[0]], loaded[1]
    del loaded  # `_report` frees the state before a non-JSON rendering: no other reference may keep it
    try:
        return _report(args, held)
    finally:
        finish()  # the index is saved once the report is out (the user has it; only the exit waits)


def _report(args: argparse.Namespace, held: list[Engine]) -> int:
    """`held` is the caller's only reference to the engine, handed over so the state can be freed here."""
    from core.report import ReportOptions, build_report

    engine = held.pop()
    try:
        options = ReportOptions.from_args(args)
    except ValueError as err:
        engine.close()
        return fail(str(err))
    formats = [f.strip() for f in args.format.split(",") if f.strip()]
    bad = [f for f in formats if f not in REPORT_FORMATS]
    if bad or not formats:
        engine.close()
        return fail(f"--format: expected json, md, html or openmetrics, got {args.format!r}")
    if args.output is None and len(formats) > 1:
        engine.close()
        return fail("several formats need -o DIR")
    metrics: bytes | None = None
    if "openmetrics" in formats:  # counters of everything read, from the state (`core.report.openmetrics`)
        if options.session is not None or options.windowed:
            engine.close()
            return fail("--format openmetrics counts everything read: --session, --since and --until do not apply")
        from core.report.openmetrics import render_snapshot

        metrics = render_snapshot(
            engine, per_session=args.per_session, redact=options.redact, prices=options.price_table
        )
        formats = [f for f in formats if f != "openmetrics"]
        if not formats:
            engine.close()
            return _emit(lambda: _write_report(args, None, ["openmetrics"], metrics))
    # One JSON document (the common case, and the big one): its turns are made, redacted and written one at a
    # time from the state (`TurnStream`), so a 46,000-turn report never holds them all; other renderings
    # need the whole list, and the state is freed before they render.
    stream = formats == ["json"]
    report = build_report(engine, options, stream_turns=stream)
    if not stream:
        engine.close()
        del engine
    try:
        if unknown_session(args, report):
            return fail(f"--session {args.session}: no session matches")
        return _emit(lambda: _write_report(args, report, formats, metrics))
    finally:
        if stream:
            engine.close()


#: what `report --format` takes; `openmetrics` is written as `continuity-report.prom` into a directory (the
#: suffix node_exporter's textfile collector reads)
REPORT_FORMATS = ("json", "md", "html", "openmetrics")


def _write_report(args: argparse.Namespace, report: dict | None, formats: list[str], metrics: bytes | None) -> None:
    from core.report import write
    from core.report.output import write_file, write_stdout

    def writer(fmt: str) -> Callable[[Any], None]:
        if fmt == "openmetrics":
            assert metrics is not None
            return lambda fh: fh.write(metrics)
        assert report is not None
        return lambda fh: write(report, fmt, fh)

    every = [*formats, "openmetrics"] if metrics is not None and "openmetrics" not in formats else formats
    if args.output is None:
        write_stdout(writer(every[0]))
        return
    out: Path = args.output
    if len(every) > 1 or out.is_dir():
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            from core.report.output import OutputError

            raise OutputError(f"cannot make {out}: {err.strerror or err}") from None
        for fmt in every:
            suffix = "prom" if fmt == "openmetrics" else fmt
            write_file(out / f"continuity-report.{suffix}", writer(fmt))
        return
    write_file(out, writer(every[0]))


def _emit(write: Callable[[], None]) -> int:
    """Run an output step: a closed pipe ends quietly (141, as a tool SIGPIPE stopped), any other write error
    is one line on stderr and exit 1 (`core.report.output`)."""
    from core.report.output import EXIT_CLOSED_PIPE, ClosedPipe, OutputError, quiet_stdout

    try:
        write()
    except ClosedPipe:
        quiet_stdout()
        return EXIT_CLOSED_PIPE
    except OutputError as err:
        say(str(err))
        return EXIT_FAIL
    return EXIT_OK


def run_check(args: argparse.Namespace) -> int:
    from core.report import ReportOptions, build_report
    from core.report.check import Thresholds, evaluate

    bad_prices = _prices_ok(args)
    if bad_prices is not None:
        return fail(bad_prices)
    loaded = _load(args)
    if isinstance(loaded, int):
        return loaded
    engine, finish = loaded
    try:
        try:
            options = ReportOptions.from_args(args)
        except ValueError as err:
            engine.close()
            return fail(str(err))
        report = build_report(engine, options)
        engine.close()
        if unknown_session(args, report):
            return fail(f"--session {args.session}: no session matches")
        results = evaluate(report, Thresholds.from_args(args))
        verdict = EXIT_FAIL if any(not r.ok for r in results) else EXIT_OK
        from core.report.output import print_lines

        written = _emit(lambda: print_lines([result.line() for result in results]))
        return verdict if written == EXIT_OK else written
    finally:
        finish()


def run_dashboard(args: argparse.Namespace) -> int:
    from core.report.options import prices_from_args

    try:
        prices = prices_from_args(args)
    except ValueError as err:
        return fail(str(err))
    writer = None
    demo = None
    if args.demo or args.demo_dir is not None or args.demo_agent:
        from core.demo.live import LiveDemo, plans
        from tui.demo_dir import DemoDirError, prepare

        if args.paths:
            return fail("--demo replays the bundled data: give no PATH with it")
        try:
            demo = prepare(args.demo_dir)
        except (DemoDirError, OSError) as err:
            return fail(str(err))
        writer = LiveDemo(demo.path, plans(args.demo_agent))
        paths = [demo.path]
    else:
        paths = resolve_paths(args)
        if not paths:
            return no_home()
    spool = None
    if wants_stdin(paths):  # `… | continuity-tui -`: stdin copied to a temp file while the UI runs on the terminal
        if sys.stdin is None or sys.stdin.isatty():
            return fail("-: stdin is a terminal, not a pipe (… | continuity-tui -)")
        try:
            pipe = take_stdin_for_ui()
        except NoTerminal as err:
            return fail(f"-: a pipe on stdin and no terminal for the dashboard ({err}); use continuity-tui report -")
        spool = spool_live(pipe)
        paths = replace_stdin(paths, spool)
    try:
        engine = open_engine(paths, args.volatile, watch=True, jobs=args.jobs)
    except SourceError as err:
        if demo is not None:
            demo.cleanup()
        if spool is not None:
            spool.cleanup()
        return fail(f"{err.path}: {err.message}")
    index = None
    if writer is None and spool is None and not args.no_cache:  # a demo dir or stdin: a new file each time
        from core.index import Index

        index = Index.for_engine(engine, volatile=args.volatile, mode="live")
        restore = index.restore
        engine.before_first_poll(lambda: restore(engine))  # in the ingest worker: the first frame is not delayed
    from tui.app import ContinuityApp
    from tui.config import config_path, load

    app = ContinuityApp(engine, demo_writer=writer, demo_dir=demo, stdin_spool=spool, config=load(config_path()),
                       prices=prices)  # fmt: skip
    try:
        app.run()
    finally:
        if writer is not None:
            writer.stop()
        engine.close()
        if index is not None:
            index.close()  # every poll already wrote what it finished: quitting writes nothing
            for line in index.notices:
                notice(line)
        if spool is not None:
            spool.cleanup()
        if demo is not None:
            demo.cleanup()  # a temp dir goes; a --demo-dir stays (named on exit so it can be found again)
            if demo.kept:
                notice(f"the demo data is kept in {demo.path}")
    return EXIT_OK
