"""`continuity-tui metrics PATH... --listen HOST:PORT`: the dashboard's figures for Prometheus, headless.

The same engine, discovery, tailing and persistent index as the dashboard (`open_engine(watch=True)`, newest
files first, `Index` mode `live`, restored in the first poll and written after each poll), without a screen: one
thread reads (`engine.poll` while there is backlog, else `engine.wait`, which a filesystem event or the 1 s
heartbeat ends), one serves HTTP, and the main thread waits for SIGTERM, SIGINT or SIGHUP, then stops both and
exits 0 (the index already holds what the polls finished).

- `/metrics`: `core.report.openmetrics.Exposition` through prometheus-client's WSGI app, which negotiates the
  format as every Python exporter does (OpenMetrics 1.0 when the `Accept` header asks for
  `application/openmetrics-text`, as Prometheus does, else the text format 0.0.4), gzips when asked, and
  honours `?name[]=` filters; plus the standard `process_*` and `python_info` families.
- `/`: a line saying where the metrics are; anything else is 404.
- Before the first backfill is read the continuity families are left out (see `Exposition.ready`):
  `continuity_unread_bytes` says how much is left.
- The default address is loopback (`127.0.0.1:9464`): the figures name models, tags and (with
  `--per-session`) sessions, so another interface is served only when `--listen` names it, and the line on
  stderr then says who can read them. Port 0 takes a free port; that line names the one bound.

Imports no Textual (a server has no terminal; `tests/test_exporter.py` checks the modules loaded).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import ipaddress
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from types import FrameType
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from core.sources.discover import SourceError
from tui.commands import EXIT_FAIL, EXIT_OK, fail, no_home, notice, open_engine, resolve_paths, say
from tui.stdin import wants_stdin

#: bytes per poll: the engine's lock is held while a poll's lines are applied, and a scrape waits for it
POLL_BYTES = 4 * 1024 * 1024
#: longest wait for a filesystem event before looking at the files anyway
HEARTBEAT_S = 1.0
#: a stop waits this long for a poll in progress and the HTTP threads
STOP_TIMEOUT_S = 10.0

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class ListenError(ValueError):
    """A `--listen` value that names no address."""


def parse_listen(value: str) -> tuple[str, int]:
    """`HOST:PORT`, `[IPv6]:PORT` or `:PORT` (every interface, as Go exporters read it) -> (host, port)."""
    host, sep, port_text = value.rpartition(":")
    if not sep:
        raise ListenError(f"--listen {value!r}: expected HOST:PORT (e.g. 127.0.0.1:9464, [::1]:9464, :9464)")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ListenError(f"--listen {value!r}: an IPv6 address goes in brackets, e.g. [::1]:9464")
    try:
        port = int(port_text)
    except ValueError:
        raise ListenError(f"--listen {value!r}: the port {port_text!r} is not a number") from None
    if not 0 <= port <= 65535:
        raise ListenError(f"--listen {value!r}: the port must be 0-65535")
    return host or "0.0.0.0", port


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _Server(ThreadingMixIn, WSGIServer):
    """One thread per request (a slow scrape never holds up the next), daemon threads, reusable address."""

    daemon_threads = True
    allow_reuse_address = True


class _QuietHandler(WSGIRequestHandler):
    """No access log on stderr: a scrape every 15 s is not news."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _server_class(host: str) -> type[_Server]:
    """The server class for `host`'s address family (an IPv6 host needs an AF_INET6 socket)."""
    infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    family = infos[0][0] if infos else socket.AF_INET

    class Server(_Server):
        address_family = family

    return Server


def routes(metrics: WSGIApp) -> WSGIApp:
    """`/metrics` -> the metrics app; `/` -> where they are; anything else 404."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO") or "/"
        if path == "/metrics":
            return metrics(environ, start_response)
        if path == "/":
            body = b"continuity-tui exporter: metrics at /metrics\n"
            start_response(
                "200 OK", [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))]
            )
            return [body]
        body = b"not found: metrics are at /metrics\n"
        start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
        return [body]

    return app


def _plain(body: bytes) -> list[tuple[str, str]]:
    return [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body)))]


class Exporter:
    """The reading thread, the HTTP server and the stop: one per `continuity-tui metrics` process."""

    def __init__(self, engine: Any, exposition: Any, server: WSGIServer, stop: threading.Event) -> None:
        self.engine = engine
        self.exposition = exposition
        self.server = server
        self.stop = stop
        self.failed: str | None = None
        self._reader = threading.Thread(target=self._read, name="continuity-read", daemon=True)
        self._http = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)

    def start(self) -> None:
        self._reader.start()
        self._http.start()

    def _read(self) -> None:
        engine = self.engine
        last_freeze = 0.0
        try:
            while not self.stop.is_set():
                result = engine.poll(POLL_BYTES)
                if result.lines and time.monotonic() - last_freeze >= 0.5 and gc.isenabled():
                    gc.freeze()  # what was read is long-lived: keep full collections from walking it again
                    last_freeze = time.monotonic()
                if result.lines or result.changed:
                    continue
                if not self.exposition.ready:
                    if engine.park_after is not None:
                        engine.park_idle(engine.park_after)
                    self.exposition.ready = True
                engine.wait(HEARTBEAT_S)
        except Exception as err:  # reading must never die silently behind a server that still answers
            self.failed = f"reading stopped: {type(err).__name__}: {err}"
            self.stop.set()

    def shutdown(self) -> None:
        self.stop.set()
        self.server.shutdown()  # returns once serve_forever has stopped
        self.server.server_close()
        self._http.join(STOP_TIMEOUT_S)
        self._reader.join(STOP_TIMEOUT_S)


def run_metrics(args: argparse.Namespace, default_listen: str) -> int:
    stop = threading.Event()
    previous = _on_signals(lambda _sig, _frame: stop.set())  # first: a SIGTERM during start-up stops it too
    try:
        return _run(args, default_listen, stop)
    finally:
        _restore_signals(previous)


def _run(args: argparse.Namespace, default_listen: str, stop: threading.Event) -> int:
    try:
        host, port = parse_listen(args.listen or default_listen)
    except ListenError as err:
        return fail(str(err))
    from core.kernel.pricing import BUNDLED
    from core.report.options import prices_from_args

    try:  # a bad --prices file is said before anything is read, as `report` says it
        prices = prices_from_args(args) or BUNDLED
    except ValueError as err:
        return fail(str(err))
    paths = resolve_paths(args)
    if not paths:
        return no_home()
    if wants_stdin(paths):
        return fail(
            "-: metrics follows files as they grow; give PATHs (a pipe: continuity-tui report - --format openmetrics)"
        )
    try:
        engine = open_engine(paths, args.volatile, watch=True)
    except SourceError as err:
        return fail(f"{err.path}: {err.message}")
    from prometheus_client import CollectorRegistry, PlatformCollector, ProcessCollector, make_wsgi_app

    from core.report.openmetrics import Exposition

    exposition = Exposition(engine, per_session=args.per_session, redact=not args.no_redact, ready=False, prices=prices)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(exposition)
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    try:
        server = make_server(
            host, port, routes(make_wsgi_app(registry)), server_class=_server_class(host), handler_class=_QuietHandler
        )
    except (OSError, socket.gaierror) as err:
        engine.close()
        return fail(f"--listen {host}:{port}: {getattr(err, 'strerror', None) or err}")
    index = None
    if not args.no_cache:
        from core.index import Index

        index = Index.for_engine(engine, volatile=args.volatile, mode="live")  # the dashboard's index
        restore = index.restore
        engine.before_first_poll(lambda: restore(engine))
    exporter = Exporter(engine, exposition, server, stop)
    bound_host, bound_port = server.server_address[:2]
    shown = f"[{bound_host}]" if ":" in str(bound_host) else bound_host
    where = "" if is_loopback(str(bound_host)) else " (every host that can reach this one can read them)"
    say(f"serving http://{shown}:{bound_port}/metrics{where}; reading {', '.join(map(str, paths))}")
    try:
        exporter.start()
        while not stop.wait(1.0):
            pass
    finally:
        exporter.shutdown()
    code = EXIT_OK
    if exporter.failed is not None:
        say(exporter.failed)
        code = EXIT_FAIL
    elif index is not None:
        for line in index.notices:
            notice(line)
    engine.close()
    if index is not None:
        index.close()  # every poll already wrote what it finished: stopping writes nothing
    return code


_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _on_signals(handler: Callable[[int, FrameType | None], None]) -> dict[int, Any]:
    previous = {}
    for sig in _SIGNALS:
        with contextlib.suppress(ValueError, OSError):  # (not the main thread: tests calling run_metrics)
            previous[sig] = signal.signal(sig, handler)
    return previous


def _restore_signals(previous: dict[int, Any]) -> None:
    for sig, handler in previous.items():
        with contextlib.suppress(ValueError, OSError, TypeError):
            signal.signal(sig, handler)
