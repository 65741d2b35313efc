"""The report's figures as Prometheus metrics: `continuity-tui metrics` (live) and `report --format openmetrics`.

One `Exposition` per process reads the engine's state (under its lock) and hands prometheus-client metric
families: counters of calls, log decisions, payload bytes, tokens, cache excess and waste, directive copies,
problems and source resets; gauges of sessions, the newest call, unread bytes and files; the build info
(`FAMILIES`). prometheus-client writes them in the Prometheus text format 0.0.4 or OpenMetrics 1.0, whichever a
scraper asks for (`tui.exporter`), and in the 0.0.4 text format for a snapshot (what node_exporter's textfile
collector and `promtool check metrics` parse: OpenMetrics' `info` type and `# EOF` are rejected by both).

Why it reads the state, not the report dict the other renderings read: a scrape comes every 15 s and has
10 s by default to finish. Building the whole report of the 100 MB bench corpus (fingerprints, diffs, every
turn's dict, redaction over all of it) took 22x what these figures take (7.0 s vs 0.32 s, one run on a busy
machine), and a 1 GB history's report ten times that; a scrape here also skips the parked sessions it has
already seen (most of a long history). It reads the same per-call figures the report's turns carry and never
computes one again: a call's kind and reason as `calls` counts them (`core.report.calls.verdict`), its
tokens, `payload_bytes` (sent, after the agent's own dedupe; only for agents whose prompts are rebuilt byte
for byte, `Agent.payload_exact`, as `calls.by_agent[].payload` says), its directive copies, `cache.excess`
(the prompt-cache rule); it only sums them by label. `tests/test_openmetrics.py` checks every total against
the JSON report on every real data set, and the Prometheus integration test against `report` as a process.

Counters never go down within a process. Each session's series are kept at their highest value seen (a
revised call can move between kinds; its old kind keeps the count until new calls pass it), and a session
whose file is truncated, replaced or recreated (`Engine.reset_listeners`, called before the state forgets
it) has what it counted kept as retired: its new lines count from there, and `continuity_source_resets_total`
says it happened. Prometheus itself sees a counter reset only when the process restarts.

Cardinality is bounded: no session id unless `per_session`, and every label whose values come from the data
(kind and reason from logs, model, tag, format, session) keeps its first `LABEL_LIMIT` values (`SESSION_LIMIT`
for sessions), the rest as `_other`: a file with 10,000 invented tag names costs one series, not 10,000. Label
values are made inert (`core.report.values.text`) and redacted (`redact_text`) like every other output.
"""

from __future__ import annotations

import platform
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from msgspec import Struct
from prometheus_client.core import (
    CollectorRegistry,
    CounterMetricFamily,
    GaugeMetricFamily,
    InfoMetricFamily,
    Metric,
)
from prometheus_client.exposition import generate_latest

from core import __version__
from core.kernel.pricing import BUNDLED, PriceTable
from core.kernel.waste import call_waste, waste_cause
from core.logblock import NO_SESSION
from core.report.calls import agent_of_file, verdict
from core.report.redact import redact_text
from core.report.values import text
from core.state import SessionState, State

__all__ = [
    "FAMILIES",
    "LABEL_LIMIT",
    "OTHER",
    "SESSION_LIMIT",
    "Exposition",
    "Family",
    "render_snapshot",
]

#: distinct values kept per data-derived label; later ones are folded into `OTHER`
LABEL_LIMIT = 100
#: distinct session ids kept with `per_session`
SESSION_LIMIT = 2000
OTHER = "_other"
#: the value of a label the data does not give (a call with no model)
UNKNOWN = "unknown"
TOKEN_TYPES = ("input", "output", "cache_read", "cache_write")


class Family(Struct, frozen=True):
    """One metric family: its name (as exposed, without `_total`), type, help, labels, unit."""

    name: str
    type: str  # "counter" | "gauge"
    help: str
    labels: tuple[str, ...]
    unit: str = ""
    #: gets a `session` label with `per_session`
    per_session: bool = False


CALLS = Family(
    "continuity_calls",
    "counter",
    "Provider calls of every agent, one per call, by the verdict on it: kind (delta, re-send, fork, flatten, "
    "bootstrap, compaction, aborted, ...) and reason.",
    ("agent", "kind", "reason", "model"),
    per_session=True,
)
LOG_DECISIONS = Family(
    "continuity_log_decisions",
    "counter",
    "senpi continuity decision lines of session.log, by kind and reason (evidence joined to calls, counted apart).",
    ("kind", "reason"),
)
PAYLOAD = Family(
    "continuity_payload_bytes",
    "counter",
    "Bytes of the prompt text sent, summed over the calls whose payload is reconstructed byte-exact "
    "(after the agent's own dedupe), by the call's kind.",
    ("agent", "kind", "model"),
    unit="bytes",
    per_session=True,
)
TOKENS = Family(
    "continuity_tokens",
    "counter",
    "Tokens the provider reported per call, by type: input (uncached), output, cache_read, cache_write.",
    ("agent", "model", "type"),
    per_session=True,
)
EXCESS = Family(
    "continuity_cache_excess_write_tokens",
    "counter",
    "Tokens processed again that a warm prompt cache would have read back (the cache rule's excess), by cause.",
    ("agent", "model", "cause"),
    per_session=True,
)
WASTE = Family(
    "continuity_waste_usd",
    "counter",
    "US dollars the excess cost over a cache read at list prices, by cause; models without a price add nothing.",
    ("agent", "model", "cause"),
    unit="usd",
    per_session=True,
)
DIRECTIVES = Family(
    "continuity_directive_copies",
    "counter",
    "Copies of injected directive blocks (<ultrawork-mode>, <system-reminder>, ...) in the payloads as "
    "serialized, by tag.",
    ("agent", "tag"),
    per_session=True,
)
PROBLEMS = Family(
    "continuity_problems",
    "counter",
    "Bad input met while reading (malformed lines, unreadable files, truncations), by the file's format.",
    ("format",),
)
RESETS = Family(
    "continuity_source_resets",
    "counter",
    "Files read again from their first byte (truncated, replaced, recreated); what they counted before is kept.",
    ("format", "event"),
)
READ_BYTES = Family("continuity_read_bytes", "counter", "Bytes read from the agents' files.", (), unit="bytes")
SESSIONS = Family("continuity_sessions", "gauge", "Sessions read, by agent.", ("agent",))
LAST_CALL = Family(
    "continuity_last_call_timestamp_seconds",
    "gauge",
    "Unix time of the newest provider call read.",
    ("agent",),
    unit="seconds",
    per_session=True,
)
UNREAD = Family(
    "continuity_unread_bytes",
    "gauge",
    "Bytes on disk not read yet: the backfill left, or how far the exporter is behind its files.",
    (),
    unit="bytes",
)
PENDING = Family(
    "continuity_pending_problems",
    "gauge",
    "Lines held back, not problems yet: an incomplete last line (a write in progress) or lines of a file whose "
    "format is not known yet; a snapshot (`report`) counts them among the problems.",
    (),
)
FILES = Family("continuity_source_files", "gauge", "Files being read.", ())
BUILD = "continuity_build"

#: every family, in exposition order (the build info comes last)
FAMILIES: tuple[Family, ...] = (
    CALLS,
    LOG_DECISIONS,
    PAYLOAD,
    TOKENS,
    EXCESS,
    WASTE,
    DIRECTIVES,
    PROBLEMS,
    RESETS,
    READ_BYTES,
    SESSIONS,
    LAST_CALL,
    UNREAD,
    PENDING,
    FILES,
)

#: data-derived labels and how many distinct values each keeps
_LIMITS = {"kind": LABEL_LIMIT, "reason": LABEL_LIMIT, "cause": LABEL_LIMIT, "model": LABEL_LIMIT,
           "tag": LABEL_LIMIT, "format": LABEL_LIMIT, "event": LABEL_LIMIT, "agent": LABEL_LIMIT,
           "session": SESSION_LIMIT}  # fmt: skip

Series = tuple[str, tuple[str, ...]]
"""(family name, label values in the family's order)."""


class EngineLike(Protocol):
    """What the exposition reads of `core.engine.Engine`."""

    state: State
    stats: dict[str, Any]
    lock: Any
    source_resets: Counter[tuple[str, str]]
    reset_listeners: list[Any]
    total_bytes: int

    def pending_bytes(self) -> int: ...

    def pending_count(self) -> int: ...

    def file_count(self) -> int: ...


class Labels:
    """Label values from the data: inert, redacted, and at most `_LIMITS[label]` distinct ones per label, first
    come first kept (a value never moves to `OTHER` once it has its own series, so counters stay monotonic)."""

    def __init__(self, *, redact: bool) -> None:
        self.redact = redact
        self._kept: dict[str, dict[str, str]] = defaultdict(dict)
        self.folded: Counter[str] = Counter()  # values sent to OTHER, by label (how much was folded)

    def __call__(self, label: str, raw: object) -> str:
        key = raw if isinstance(raw, str) else str(raw)
        kept = self._kept[label]
        value = kept.get(key)
        if value is not None:
            return value
        if len(kept) >= _LIMITS.get(label, LABEL_LIMIT):
            self.folded[label] += 1
            return OTHER
        clean = text(key, 200)
        if self.redact:
            clean = redact_text(clean)[0]
        kept[key] = clean
        return clean


class Monotonic:
    """Counter totals that never go down: per source (a session, the log), each series at the highest value
    seen; a source that starts over (`retire`) adds what it had counted to the retired totals."""

    def __init__(self) -> None:
        self.high: dict[str, dict[Series, float]] = {}
        self.retired: Counter[Series] = Counter()

    def observe(self, source: str, figures: dict[Series, float]) -> None:
        high = self.high.get(source)
        if high is None:
            self.high[source] = dict(figures)
            return
        for series, value in figures.items():
            if value > high.get(series, 0):
                high[series] = value

    def retire(self, source: str) -> None:
        for series, value in self.high.pop(source, {}).items():
            self.retired[series] += value

    def totals(self) -> dict[Series, float]:
        out: dict[Series, float] = dict(self.retired)
        for high in self.high.values():
            for series, value in high.items():
                out[series] = out.get(series, 0) + value
        return out


class Exposition:
    """The figures of one engine as metric families, for prometheus-client (`collect`) or a snapshot (`render`).

    ``ready``: the continuity families are exposed only once the first backfill is read (a live exporter sets
    it; a snapshot is ready at once). A scrape during the backfill sees the build info, the unread bytes and
    the files, then the counters appear at their full history: Prometheus takes a new series' first sample as
    its start, so months of history read in the first minute are never shown as a burst of calls.
    """

    def __init__(
        self,
        engine: EngineLike,
        *,
        per_session: bool = False,
        redact: bool = True,
        ready: bool = True,
        prices: PriceTable = BUNDLED,
    ):
        self.engine = engine
        self.prices = prices
        self.per_session = per_session
        self.labels = Labels(redact=redact)
        self.ready = ready
        self.counters = Monotonic()
        self._seen: tuple[int, int, int] | None = None
        self._totals: dict[Series, float] = {}
        self._last_call: dict[tuple[str, ...], float] = {}
        self._problem_format: dict[str, str] = {}
        #: parked sessions already observed, by key: (the session object, the offset it was parked at, its calls);
        #: most of a long history is parked, and a scrape then reads only the sessions that can still move
        self._parked: dict[str, tuple[int, int, int]] = {}
        self._log_scan: tuple[int, int] = (0, 0)  # (id of the state, continuity lines looked at)
        self._log_ids: dict[str, str] = {}  # session id named by a log line -> the log's agent
        engine.reset_listeners.append(self._reset)

    # ------------------------------------------------------------------ prometheus-client's collector protocol
    def describe(self) -> Iterator[Metric]:
        """The families without samples (registering must not read the state)."""
        yield from self._families({}, {}, {}, (0, 0, 0))

    def collect(self) -> Iterator[Metric]:
        with self.engine.lock:
            engine = self.engine
            progress = (engine.pending_bytes(), engine.pending_count(), engine.file_count())
            if not self.ready:
                totals: dict[Series, float] = {}
                sessions: dict[str, int] = {}
            else:
                engine.state.settle()  # (which session made the calls a resumed session copied)
                totals = self._refresh()
                sessions = self._sessions()
            last = dict(self._last_call)
        yield from self._families(totals, sessions, last, progress)

    def render(self) -> bytes:
        """One snapshot in the Prometheus text format 0.0.4 (node_exporter's textfile collector, promtool)."""
        registry = CollectorRegistry(auto_describe=False)
        registry.register(self)
        return generate_latest(registry)

    # ------------------------------------------------------------------ reading the state
    def _refresh(self) -> dict[Series, float]:
        """Observe every source's figures when anything moved since the last look (call with the lock)."""
        engine, state = self.engine, self.engine.state
        mark = (id(state), state.version, sum(engine.source_resets.values()))
        if mark == self._seen:
            return self._totals
        counters, parked = self.counters, self._parked
        for key, session in state.sessions.items():
            if session.parked is not None:  # a parked session is not extended: its figures were seen once
                seen = (id(session), session.parked, len(session.turns))
                if parked.get(key) == seen:
                    continue
                parked[key] = seen
            counters.observe(key, self._session_figures(session))
        counters.observe("\0log", self._log_figures(state))
        counters.observe("\0problems", self._problem_figures(state))
        totals = counters.totals()
        for (fmt, event), n in engine.source_resets.items():
            totals[(RESETS.name, (self.labels("format", fmt), self.labels("event", event)))] = n
        totals[(READ_BYTES.name, ())] = engine.total_bytes
        self._seen, self._totals = mark, totals
        return totals

    def _reset(self, logical: str) -> None:
        """`Engine.reset_listeners`: a session's file starts over; keep what it counted (under the engine lock)."""
        session = self.engine.state.sessions.get(logical)
        if session is not None:
            self.counters.observe(logical, self._session_figures(session))
        self.counters.retire(logical)
        self._parked.pop(logical, None)
        self._seen = None

    def _session_figures(self, session: SessionState) -> dict[Series, float]:
        label = self.labels
        agent = label("agent", session.agent.name)
        tail: tuple[str, ...] = (label("session", session.session_id),) if self.per_session else ()
        exact = session.agent.payload_exact  # bytes only where the prompt is rebuilt byte for byte (senpi)
        out: dict[Series, float] = defaultdict(float)
        newest: int | None = None
        for turn in session.turns:
            judged = verdict(turn)
            if judged is None:
                continue
            kind, reason = label("kind", judged[0]), label("reason", judged[1])
            model = label("model", turn.model or UNKNOWN)
            out[(CALLS.name, (agent, kind, reason, model, *tail))] += 1
            if exact and turn.payload_bytes is not None:
                out[(PAYLOAD.name, (agent, kind, model, *tail))] += turn.payload_bytes
            tokens = turn.tokens
            if tokens:
                for kind_of_token in TOKEN_TYPES:
                    out[(TOKENS.name, (agent, model, kind_of_token, *tail))] += tokens.get(kind_of_token) or 0
            cache = turn.cache
            if cache:
                excess = cache.get("excess")
                if excess:
                    cause = label("cause", waste_cause(judged[1], cache))  # the `waste` section's causes
                    out[(EXCESS.name, (agent, model, cause, *tail))] += excess
                    # what that excess cost beyond cache hits (`core.kernel.waste`, the report's `waste` figures)
                    cost = call_waste(turn, self.prices)
                    if cost is not None and cost.excess_usd:
                        out[(WASTE.name, (agent, model, cause, *tail))] += cost.excess_usd
            directives = turn.directives
            if directives:
                for tag, figures in directives.items():
                    copies = figures.get("copies")
                    if copies:
                        out[(DIRECTIVES.name, (agent, label("tag", tag), *tail))] += copies
            if turn.ts_ms is not None and (newest is None or turn.ts_ms > newest):
                newest = turn.ts_ms
        if newest is not None:
            key = (agent, *tail)
            seconds = newest / 1000
            if seconds > self._last_call.get(key, 0):
                self._last_call[key] = seconds
        return out

    def _log_figures(self, state: State) -> dict[Series, float]:
        label = self.labels
        out: dict[Series, float] = {}
        for reason, kinds in state.log.stats.by_reason.items():
            for kind, n in kinds.items():
                series = (LOG_DECISIONS.name, (label("kind", kind), label("reason", reason)))
                out[series] = out.get(series, 0) + n
        return out

    def _problem_figures(self, state: State) -> dict[Series, float]:
        """Problems by the format of the file they name, the format fixed when the file's first problem is
        counted (a file whose format becomes known later keeps its earlier problems under that label)."""
        out: dict[Series, float] = {}
        stats = self.engine.stats
        for path, n in state.problems_by_path.items():
            fmt = self._problem_format.get(path)
            if fmt is None:
                stat = stats.get(path)
                fmt = self._problem_format[path] = self.labels("format", (stat.format if stat else None) or UNKNOWN)
            series = (PROBLEMS.name, (fmt,))
            out[series] = out.get(series, 0) + n
        return out

    def _sessions(self) -> dict[str, int]:
        """Sessions by agent, as the report lists them: every session read, and those only the log names
        (`sessionId` on newer senpi builds' lines, no transcript on disk), found by reading new lines only."""
        state = self.engine.state
        if self._log_scan[0] != id(state):
            self._log_scan, self._log_ids = (id(state), 0), {}
        rows = state.log.continuity  # columns (`core.kernel.logcols`): only rows naming a session are looked at
        stats = self.engine.stats
        sessions = rows.session
        for row in range(self._log_scan[1], len(rows)):
            if sessions[row] == NO_SESSION:
                continue
            sid = rows.session_id(row)
            if sid is not None and sid not in self._log_ids:
                self._log_ids[sid] = agent_of_file(stats, rows.where(row).path) or UNKNOWN
        self._log_scan = (id(state), len(rows))
        by_agent: Counter[str] = Counter()
        known = set()
        for session in state.sessions.values():
            known.add(session.session_id)
            by_agent[self.labels("agent", session.agent.name)] += 1
        for sid, agent in self._log_ids.items():
            if sid not in known:
                by_agent[self.labels("agent", agent)] += 1
        return dict(by_agent)

    # ------------------------------------------------------------------ families
    def _families(
        self,
        totals: dict[Series, float],
        sessions: dict[str, int],
        last: dict[tuple[str, ...], float],
        progress: tuple[int, int, int],
    ) -> Iterator[Metric]:
        unread, pending, files = progress
        by_family: dict[str, list[tuple[tuple[str, ...], float]]] = defaultdict(list)
        for (name, values), value in totals.items():
            by_family[name].append((values, value))
        by_family[SESSIONS.name] = [((agent,), n) for agent, n in sessions.items()]
        by_family[LAST_CALL.name] = list(last.items())
        by_family[UNREAD.name] = [((), unread)]
        by_family[PENDING.name] = [((), pending)]
        by_family[FILES.name] = [((), files)]
        for family in FAMILIES:
            labels = [*family.labels, "session"] if family.per_session and self.per_session else list(family.labels)
            cls = CounterMetricFamily if family.type == "counter" else GaugeMetricFamily
            metric = cls(family.name, family.help, labels=labels, unit=family.unit)
            for values, value in sorted(by_family.get(family.name, ())):
                metric.add_metric(list(values), value)
            yield metric
        yield InfoMetricFamily(
            BUILD,
            "continuity-tui build: its version and the Python running it.",
            value={"version": __version__, "python": platform.python_version()},
        )


def render_snapshot(
    engine: EngineLike, *, per_session: bool = False, redact: bool = True, prices: PriceTable = BUNDLED
) -> bytes:
    """`report --format openmetrics`: everything read, once, in the Prometheus text format 0.0.4."""
    return Exposition(engine, per_session=per_session, redact=redact, prices=prices).render()


def samples(exposition: Iterable[Metric]) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """(sample name, sorted labels) -> value of collected families (tests and the report-vs-metrics check)."""
    out: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for metric in exposition:
        for sample in metric.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out
