"""What the screen shows, copied out of the engine's state by the ingest worker.

The worker builds a `Snapshot` under `engine.lock` and posts it; the UI thread only ever reads snapshots,
so it never waits on the lock while a big backfill is being parsed, and a pane never sees half-applied
state. Copies are cheap by construction: scalars, small per-session summaries, the problems deque (bounded
by core) and a list of *references* to the rows (no message bodies; core keeps none).

Rows are turns (one per assistant message) in time order across sessions. When no transcript was found at
all (a bare `logs/` directory), the continuity log lines themselves become the rows, so a logs-only user
still gets a table. This module imports no Textual: it is plain data and runs in a thread.
"""

from __future__ import annotations

import bisect
import copy
import itertools
import operator
import time
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from itertools import compress, repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from core.agents import adapter_named, agent_of
from core.kernel.calls import resend_share
from core.kernel.directives import DirectiveLedger, sent_counts
from core.kernel.logcols import ContinuityRows
from core.kernel.pricing import BUNDLED, PriceTable
from core.kernel.stats import RATE_WINDOW_MS, Peak, Streak
from core.kernel.waste import WasteStats, call_waste
from core.logblock import NO_SESSION, NO_TIME
from core.model import ContinuityLine, Problem, Turn
from tui.logrows import LogRowView

if TYPE_CHECKING:
    from core.engine import PollResult
    from core.kernel.ports import Reread
    from core.state import SessionState, State


class EngineView(Protocol):
    """What the dashboard reads of and asks of the engine (`core.engine.Engine`; the tests' `FakeEngine`).

    Declared here so nothing in the TUI probes the engine with `getattr`: a fake that lacks one of these fails
    at once instead of silently taking another code path."""

    state: State
    lock: AbstractContextManager[Any]
    roots: Sequence[Path | str]
    paths: list[Path]
    stats: dict[str, Any]
    reread: Reread
    total_lines: int
    total_bytes: int

    @property
    def park_after(self) -> float | None: ...

    @property
    def files_generation(self) -> int: ...

    def poll(self, max_bytes: int | None = None) -> PollResult: ...

    def wait(self, timeout: float) -> bool: ...

    def wake(self) -> None: ...

    def finish_pending(self) -> None: ...

    def park_idle(self, min_idle_s: float, only: set[str] | None = None) -> int: ...

    def file_count(self) -> int: ...

    def pending_bytes(self) -> int: ...

    def pending_count(self) -> int: ...

    def pending_problems(self) -> list[Problem]: ...


Row = Turn | ContinuityLine
"""One line of the turn table: a transcript turn, or a log line in logs-only mode."""


# ---------------------------------------------------------------------------------------------- row access
def row_ms(row: Row) -> int | None:
    """When the call happened: the assistant's call start, else its diagnostic, else the log line."""
    if isinstance(row, Turn):
        if row.ts_ms is not None:
            return row.ts_ms
        return row.logged.ts_ms if row.logged is not None else None
    return row.ts_ms


def row_kind(row: Row) -> str | None:
    return row.kind


def row_reason(row: Row) -> str | None:
    if isinstance(row, Turn):
        if row.logged is not None:
            return row.logged.reason
        return row.recomputed.reason if row.recomputed is not None else None
    return row.reason


def row_count(row: Row) -> int | None:
    if isinstance(row, Turn):
        if row.logged is not None:
            return row.logged.count
        return row.recomputed.count if row.recomputed is not None else None
    return row.count


def row_session(row: Row) -> str | None:
    return row.session if isinstance(row, Turn) else (row.matched_session or row.session_id)


def payload_bytes(turn: Turn) -> int | None:
    """Bytes this call sent: the reconstructed prompt when analysis produced it, else what senpi logged
    (flatten and bootstrap diagnostics carry `payloadBytes`; deltas do not)."""
    if turn.payload_bytes is not None:
        return turn.payload_bytes
    return turn.logged.payload_bytes if turn.logged is not None else None


def prompt_tokens(turn: Turn) -> int | None:
    """Tokens the provider billed as prompt: input + cache read + cache write."""
    if not turn.tokens:
        return None
    total = sum(turn.tokens.get(k, 0) for k in ("input", "cache_read", "cache_write"))
    return total or None


def directive_copies(turn: Turn) -> int | None:
    """Directive blocks in the payload as sent (after the agent's own dedupe), the side of `payload_bytes`."""
    if not turn.directives:
        return None
    return sum(sent_counts(v)[0] for v in turn.directives.values())


def directive_bytes(turn: Turn, *, serialized: bool = False) -> int | None:
    """Bytes of the directive blocks in the payload as sent, or (`serialized`) as the agent serialized it."""
    if not turn.directives:
        return None
    if serialized:
        return sum(int(v.get("bytes", 0)) for v in turn.directives.values())
    return sum(sent_counts(v)[1] for v in turn.directives.values())


def is_rewritten(row: Row) -> bool:
    return isinstance(row, Turn) and row.rewritten


def is_avoidable(row: Row) -> bool:
    return isinstance(row, Turn) and bool(row.avoidable)


def is_disagreement(row: Row) -> bool:
    return isinstance(row, Turn) and row.agreement is False


def row_key(row: Row) -> tuple[str, int]:
    """A row's identity across snapshots: (session id, turn index) for a turn, (log path, offset) for a log line."""
    if isinstance(row, Turn):
        return (row.session, row.index)
    return ("log:" + row.where.path, row.where.offset)


def locate_problems(state: State, problems: tuple[Problem, ...]) -> tuple[tuple[str, int] | None, ...]:
    """For each problem, the row nearest before it in its file (`row_key`), or None: where `x` jumps to.

    A bad transcript line is placed after the turn written before it; a bad session.log line after the decision
    line before it, shown as the turn that line was matched to (or as the log line, in logs-only mode). Only the
    files that hold a problem are walked (worker thread, with the lock held; called when the problems change).
    """
    paths = {p.path for p in problems if p.offset is not None}
    if not paths:
        return tuple(None for _ in problems)
    marks: dict[str, list[tuple[int, tuple[str, int]]]] = {path: [] for path in paths}
    for session in state.sessions.values():
        for turn in session.turns:
            where = turn.where
            if where is not None and where.path in marks:
                marks[where.path].append((where.offset, (turn.session, turn.index)))
    logs_only = not state.sessions
    rows = state.log.continuity
    codes = {rows.files.codes[path]: path for path in paths if path in rows.files.codes}
    if logs_only:  # every decision line of a file that holds a problem (read from the columns)
        for code, path in codes.items():
            found = marks[path]
            in_file = map(code.__eq__, rows.file)
            found.extend((offset, ("log:" + path, offset)) for offset in compress(rows.offset, in_file))
    else:
        for row, (session_id, turn_index) in rows.matched.items():
            path = codes.get(rows.file[row])
            if path is not None:
                marks[path].append((rows.offset[row], (session_id, turn_index)))
    for found in marks.values():
        found.sort()
    out: list[tuple[str, int] | None] = []
    for problem in problems:
        found = marks.get(problem.path) or []
        at = bisect.bisect_left(found, (problem.offset or 0,)) - 1 if problem.offset is not None else -1
        out.append(found[at][1] if at >= 0 else (found[0][1] if found else None))
    return tuple(out)


# ---------------------------------------------------------------------------------------------- summaries
@dataclass(slots=True)
class TagTotals:
    """One directive tag summed over a set of turns, on both sides of the agent's own dedupe: `copies` and
    `bytes` as serialized (before it, the side of `payload_bytes_raw`), `copies_sent` and `bytes_sent` as sent
    (after it). senpi's keep-last dedupe of a flatten chain with one ulw copy per prompt serializes 2,485
    copies (62 MB) over 70 calls and sends 70 (1.7 MB)."""

    copies: int = 0
    bytes: int = 0
    turns: int = 0
    injections: int | None = None
    #: sent side: copies after the first inside one payload sent, what keep-first would still drop
    saved_bytes: int | None = None
    copies_sent: int = 0
    bytes_sent: int = 0


@dataclass(slots=True)
class SessionSummary:
    """What the sessions pane shows for one transcript; recomputed only when the session grew."""

    key: str
    session_id: str
    cwd: str | None
    agent: str = ""
    #: its agent's transcripts give byte-exact payloads (`Agent.payload_exact`); else the graph shows tokens
    payload_exact: bool = True
    turns: int = 0
    by_kind: Counter[str] = field(default_factory=Counter)
    rewritten: int = 0
    avoidable: int = 0
    disagreements: int = 0
    payload_total: int = 0
    first_ms: int | None = None
    last_ms: int | None = None
    tags: dict[str, TagTotals] = field(default_factory=dict)
    #: a session only senpi's log lines name (`sessionId`, newer builds): no transcript of it was read; `by_kind`
    #: counts those lines, `log_lines` how many
    log_only: bool = False
    log_lines: int = 0
    #: payload bytes of the calls whose payload was reconstructed (`payload_bytes_raw` set), as serialized and as
    #: sent: what a directive share divides by, each on its side (the report's `directives.payloads`)
    measured_raw: int = 0
    measured_sent: int = 0
    #: (bytes as serialized, turn index) of its call with the most bytes as serialized, of any kind
    largest_payload: tuple[int, int] | None = None
    #: prompt-cache waste of its calls (`core.kernel.waste`: excess tokens, dollars, causes)
    waste: WasteStats = field(default_factory=WasteStats)
    #: turns that are copies of another session's calls (they count there: not in `by_kind` or `waste`)
    copies: int = 0
    avoidable_bytes: int = 0  # payload bytes an avoidable re-send sent beyond what a stable fingerprint would

    @property
    def resend_share(self) -> float | None:
        """Share of this session's calls that re-sent history (fork, flatten, re-send) among the calls that
        reported usage (pi ffae836b showed 0 % beside 10 re-sends: only fork and flatten counted)."""
        return resend_share(self.by_kind, digits=None)


@dataclass(frozen=True, slots=True)
class LargestPayload:
    """The call with the most bytes as serialized, of any kind (the report's `directives.largest_payload`):
    its size and directive bytes on both sides of the agent's own dedupe, and the dedupes simulated on it."""

    session_id: str
    index: int
    bytes_raw: int  # as serialized
    bytes_sent: int  # after the agent's own dedupe
    directives_raw: int
    directives_sent: int
    keep_first: int | None  # this tool's proposal on the serialized payload; None when the agent has no rebuild
    senpi: int | None  # what senpi's own ultrawork rule leaves
    #: its agent's transcripts rebuild the whole prompt (senpi); else the bytes are the messages' only (pi, Claude
    #: Code, mux, Codex hold no system prompt or tools), and the pane names no payload size for them
    exact: bool = True

    @property
    def deduped(self) -> bool:
        return (self.bytes_raw, self.directives_raw) != (self.bytes_sent, self.directives_sent)


@dataclass(frozen=True, slots=True)
class Status:
    """The status line: how much was read, how fast, and whether anything is there at all."""

    files: int
    bytes: int
    lines: int
    lines_per_s: float | None
    problems_total: int
    pending_bytes: int
    roots: tuple[str, ...]
    waiting: bool  # no file found yet under an existing directory
    pending: int = 0
    """Lines a snapshot report would count as problems that the live tail still holds back (an unterminated last
    line: a write in progress; lines of a file no format recognised yet): `Engine.pending_problems`."""
    left_out: int = 0  # files discovery found past its cap and never reads (`Sources.discovery`)
    file_cap: int = 0


@dataclass(frozen=True, slots=True)
class Rates:
    """The log-derived counters of the rates pane."""

    events: int
    kinds: dict[str, int]
    per_minute: dict[str, float]
    resend_share: float | None
    run: Streak | None
    peak: Peak | None
    window_end_ms: int
    closes: dict[str, int]
    unit: str = "log lines"
    """What `events` counts: the log's decision lines, or calls (`tui.scope`)."""
    scope: str | None = None
    """The session these rates are limited to; None: every call (or line) read."""
    judged: int | None = None
    """What the re-send share is taken of: the calls that reported usage (aborted ones left out), or the lines."""
    log_events: int = 0
    """Counting calls, the log's decision lines read beside them (senpi writes both), and their re-send share:
    the pane names both units when both were read."""
    log_share: float | None = None


@dataclass(frozen=True, slots=True)
class WasteTotals:
    """The waste pane's all-time figures: every session's waste summed, and where the prices come from."""

    stats: WasteStats
    as_of: str | None
    source: str
    avoidable: int = 0  # senpi: re-sends a stable fingerprint avoids, and their bytes
    avoidable_bytes: int = 0
    resends: int = 0


@dataclass(frozen=True)
class Snapshot:
    """Everything the screen shows, as of one engine version."""

    version: int
    wall_ms: int
    status: Status
    rates: Rates
    sessions: tuple[SessionSummary, ...]
    rows: Sequence[Row]
    rows_generation: int  # bumps when rows were rebuilt or reordered (not on plain appends)
    logs_only: bool
    problems: tuple[Problem, ...]  # newest first
    largest: LargestPayload | None = None
    pending: tuple[Problem, ...] = ()  # what `Status.pending` counts (the first `MAX_PENDING_SHOWN`)
    problem_rows: tuple[tuple[str, int] | None, ...] = ()  # per problem, the row it sits after (`locate_problems`)
    waste: WasteTotals | None = None

    @staticmethod
    def empty(wall_ms: int = 0) -> Snapshot:
        """The first frame, before the worker reported anything."""
        return Snapshot(
            version=-1,
            wall_ms=wall_ms,
            status=Status(0, 0, 0, None, 0, 0, (), False),
            rates=Rates(0, {}, {}, None, None, None, wall_ms, {}),
            sessions=(),
            rows=[],
            rows_generation=0,
            logs_only=False,
            problems=(),
        )


# ---------------------------------------------------------------------------------------------- the builder
class RowIndex:
    """All rows in time order, maintained incrementally (worker thread only).

    New rows are appended; when they are older than the newest row (a backfill reading one session after
    another) the list is re-sorted, which timsort does in O(n) for two sorted runs, and the generation bumps
    so the UI re-filters. A session that shrank or vanished (truncated, replaced) forces a rebuild.
    """

    def __init__(self) -> None:
        self._rows: list[tuple[int, int, Row]] = []
        self._plain: list[Row] = []  # the same rows without their sort keys (copied per snapshot, cheaply)
        self._published: Sequence[Row] | None = None
        # logs-only mode: the rows are a view over the log's columns (`tui.logrows`)
        self._log_order: array[int] | None = None  # None: reading order is time order
        self._log_last = 0  # the newest time among the log rows taken
        self._log_cache: dict[int, ContinuityLine] = {}
        self._log_rows: ContinuityRows | None = None
        #: session key -> (id(session), turns taken, the last turn taken: still there when only appends happened)
        self._seen: dict[str, tuple[int, int, Turn | None]] = {}
        self._log_seen = 0
        self._logs_only = False
        self._seq = 0
        self._last_ms = 0
        self.generation = 0

    @property
    def logs_only(self) -> bool:
        return self._logs_only

    def rows(self) -> Sequence[Row]:
        """The rows for one snapshot: a new list only when something changed (the UI keeps the old one)."""
        if self._published is None:
            if self._logs_only and self._log_rows is not None:
                self._published = LogRowView(self._log_rows, self._log_seen, self._log_order, self._log_cache)
            else:
                self._published = list(self._plain)
        return self._published

    def __len__(self) -> int:
        return self._log_seen if self._logs_only else len(self._rows)

    def update(self, state: State) -> bool:
        """Take what is new in `state`; True when the row list changed."""
        logs_only = not state.sessions
        if logs_only != self._logs_only or (logs_only and len(state.log.continuity) < self._log_seen):
            self._rebuild(state, logs_only)
            return True
        new: list[tuple[int, int, Row]] = []
        if logs_only:
            return self._take_log_rows(state)
        else:
            # One pass that both takes new turns and notices a session that was replaced, shrank or went (then
            # everything is rebuilt): an unchanged session costs a lookup, which matters at thousands of them.
            seen = self._seen
            for key, session in state.sessions.items():
                turns = session.turns
                entry = seen.get(key)
                taken = 0
                if entry is not None:
                    ident, taken, last = entry
                    if ident != id(session) or len(turns) < taken:
                        self._rebuild(state, logs_only)
                        return True
                    if len(turns) == taken:
                        continue
                    if taken and turns[taken - 1] is not last:
                        # a call was inserted among those taken (Claude Code files a sub-agent's calls in time
                        # order): the tail past `taken` is not what is new; rows were doubled and lost (spotter:
                        # 19 bootstraps on screen for 14)
                        self._rebuild(state, logs_only)
                        return True
                for turn in turns[taken:]:
                    new.append(self._keyed(turn))
                seen[key] = (id(session), len(turns), turns[-1] if turns else None)
            if len(seen) != len(state.sessions):  # every session is in `seen` now: the extra ones are gone
                self._rebuild(state, logs_only)
                return True
        if not new:
            return False
        in_order = all(a[:2] <= b[:2] for a, b in itertools.pairwise(new))
        self._published = None
        if in_order and (not self._rows or new[0][:2] >= self._rows[-1][:2]):
            self._rows.extend(new)
            self._plain.extend(r[2] for r in new)
        else:
            self._rows.extend(new)
            self._rows.sort(key=_sort_key)
            self._plain = [r[2] for r in self._rows]
            self.generation += 1
        return True

    def _take_log_rows(self, state: State) -> bool:
        """Logs-only: take the new log rows (columns: nothing is made per line); True when the rows changed."""
        rows = state.log.continuity
        if self._log_rows is not None and self._log_rows is not rows:  # another state (an index restored)
            self._rebuild(state, True)
            return True
        n = len(rows)
        if n == self._log_seen and self._log_rows is rows:
            return False
        self._log_rows = rows
        seen = self._log_seen
        dated = array("q", filter(NO_TIME.__ne__, rows.ts[seen:n]))
        in_order = not dated or (dated[0] >= self._log_last and _ascending(dated))
        self._log_last = max(self._log_last, max(dated, default=self._log_last))
        self._log_seen = n
        self._published = None
        # rows no older than every row taken go last in reading order, where the sort below puts them too: the
        # order covers the rows before them and the view reads every later position as itself (`LogRowView`;
        # extending it with their indices cost a live log 8 B of RSS a line, and re-sorting per poll far more)
        if not in_order:
            # rows older than rows already taken (a second log read after the first): the table's time order,
            # undated rows staying where they were read, ties in reading order (as `_keyed` sorts turns)
            eff, last = array("q"), 0
            for ms in rows.ts[:n]:
                if ms != NO_TIME:
                    last = max(last, ms)
                eff.append(last if ms == NO_TIME else ms)
            self._log_order = array("q", sorted(range(n), key=eff.__getitem__))
            self._log_cache.clear()
            self.generation += 1
        return True

    def _rebuild(self, state: State, logs_only: bool) -> None:
        self._log_rows = None
        self._log_order = None
        self._log_last = 0
        self._log_cache = {}
        self._rows = []
        self._plain = []
        self._published = None
        self._seen = {}
        self._log_seen = 0
        self._logs_only = logs_only
        self._seq = 0
        self._last_ms = 0
        self.generation += 1
        self.update(state)

    def _keyed(self, row: Row) -> tuple[int, int, Row]:
        ms = row_ms(row)
        if ms is None:
            ms = self._last_ms  # undated rows stay where they were read
        else:
            self._last_ms = max(self._last_ms, ms)
        self._seq += 1
        return (ms, self._seq, row)


def _ascending(values: array[int]) -> bool:
    """Whether `values` never decrease (C-speed: timsort of sorted input is one pass)."""
    return values == array("q", sorted(values))


def _sort_key(item: tuple[int, int, Row]) -> tuple[int, int]:
    return (item[0], item[1])


TAIL = 256
"""Turns near the end of a session may still change (a commit outcome is decided by the next turn, a
recording can arrive later), so they are recounted each time; older ones are accumulated once."""


def summarize(
    session: SessionState, prefix: _Prefix | None = None, prices: PriceTable = BUNDLED
) -> tuple[SessionSummary, _Prefix]:
    """Count one session's turns: the stable prefix incrementally (kept in `prefix`), the tail afresh."""
    turns = session.turns
    # moved: a call was filed among the counted ones (Claude Code files a sub-agent's calls in time order)
    moved = (
        prefix is not None
        and prefix.upto > 0
        and (prefix.upto > len(turns) or turns[prefix.upto - 1] is not prefix.last)
    )
    if prefix is None or prefix.ident != id(turns) or moved:
        agent = session.agent
        prefix = _Prefix(id(turns), 0, SessionSummary(session.key, session.session_id, session.cwd, agent.name,
                                                      agent.payload_exact))  # fmt: skip
    stable = max(prefix.upto, len(turns) - TAIL)
    for turn in turns[prefix.upto : stable]:
        _count(prefix.summary, turn, prices)
    prefix.upto = stable
    prefix.last = turns[stable - 1] if stable else None
    out = _copy(prefix.summary)
    out.session_id, out.cwd = session.session_id, session.cwd
    for turn in turns[stable:]:
        _count(out, turn, prices)
    _ledger(session, out)
    return out, prefix


@dataclass(slots=True)
class _Prefix:
    ident: int  # id() of the session's turn list: a reset session gets a new list
    upto: int
    summary: SessionSummary
    last: Turn | None = None  # the last turn counted: still at `upto - 1` when only appends happened


def _copy(summary: SessionSummary) -> SessionSummary:
    out = replace(summary, by_kind=Counter(summary.by_kind), waste=summary.waste.copy())
    out.tags = {tag: replace(t) for tag, t in summary.tags.items()}
    return out


def _count(out: SessionSummary, turn: Turn, prices: PriceTable = BUNDLED) -> None:
    out.turns += 1
    kind = turn.kind
    if turn.copied_from is not None:
        out.copies += 1  # a copy of another session's call: counted there (as the report's `calls` has it)
    elif kind is not None:
        out.by_kind[kind] += 1
    out.waste.add(turn, call_waste(turn, prices), out.agent, out.session_id)
    if turn.avoidable and turn.payload_bytes_if_stable is not None:
        out.avoidable_bytes += max(0, (payload_bytes(turn) or 0) - turn.payload_bytes_if_stable)
    if turn.rewritten:
        out.rewritten += 1
    if turn.avoidable:
        out.avoidable += 1
    if turn.agreement is False:
        out.disagreements += 1
    size = payload_bytes(turn)
    if size is not None:
        out.payload_total += size
    ms = row_ms(turn)
    if ms is not None:
        out.first_ms = ms if out.first_ms is None else min(out.first_ms, ms)
        out.last_ms = ms if out.last_ms is None else max(out.last_ms, ms)
    raw = turn.payload_bytes_raw
    if raw is not None:  # reconstructed, hence scanned: as the report's `directives.payloads` counts
        out.measured_raw += raw
        out.measured_sent += turn.payload_bytes if turn.payload_bytes is not None else raw
    if turn.directives:
        for tag, values in turn.directives.items():
            totals = out.tags.get(tag)
            if totals is None:
                totals = out.tags[tag] = TagTotals()
            copies_sent, bytes_sent = sent_counts(values)
            totals.copies += int(values.get("copies", 0))
            totals.bytes += int(values.get("bytes", 0))
            totals.copies_sent += copies_sent
            totals.bytes_sent += bytes_sent
            totals.turns += 1
            if copies_sent > 1:  # every copy after the first in one payload sent: what keep-first would drop
                totals.saved_bytes = (totals.saved_bytes or 0) + bytes_sent * (copies_sent - 1) // copies_sent
    if raw is not None and (out.largest_payload is None or raw > out.largest_payload[0]):
        out.largest_payload = (raw, turn.index)


def _ledger(session: SessionState, out: SessionSummary) -> None:
    """Injections per tag come from the session's directive ledger (every agent lists one)."""
    ledger = session.analyzer(DirectiveLedger)
    if ledger is None:
        return
    for tag, n in ledger.injections.items():
        out.tags.setdefault(tag, TagTotals()).injections = n


@dataclass(slots=True)
class _Cached:
    mark: tuple[int, int, int]  # entries, turns, id() of the turn list (a rebuilt session has a new one)
    version: int
    at: float
    summary: SessionSummary
    prefix: _Prefix
    full_at: float  # when the prefix was last counted from scratch


RECOUNT_TURNS_PER_SNAPSHOT = 1_000
"""Turns of unchanged sessions recounted per snapshot (see `SnapshotBuilder._session_summaries`): ~3 ms of the
snapshot a live write waits for (4,000 cost ~12 ms), and still 10,000 turns a second at the live rate."""

RECOUNT_S = 1.0
"""An unchanged session that is not parked is recounted at most this often (a late analysis may touch it)."""

PARKED_RECOUNT_S = 30.0
"""An unchanged parked session (`State.park`) is recounted only this often: parked, it sees no entry and no
analysis (its machinery is dropped; a recording for one of its turns rebuilds it first, which gives it a new
turn list and so a new mark). The full-recount period of old turns (`_recount`) is the same 30 s. Recounting
the parked history every second cost ~12 % of a core while one live session was being written on a 1 GB
history (2,000 sessions, 46,000 turns: py-spy, `summarize` under `_session_summaries`)."""


MAX_PENDING_SHOWN = 200
"""Held-back lines listed on the problems screen (the status line counts them all)."""


class LogSessions:
    """The sessions only senpi's log names (newer builds write `sessionId` on each line): listed with the kinds of
    their lines even when no transcript of them is on disk. Incremental: each snapshot reads the lines appended
    since the last; a summary is a new object when its session got a line (the sessions pane counts by identity)."""

    def __init__(self) -> None:
        self._read = 0
        self._lines: ContinuityRows | None = None
        self._by: dict[str, SessionSummary] = {}

    def update(self, lines: ContinuityRows, known: set[str],
               agent_of: Callable[[str], str]) -> tuple[SessionSummary, ...]:  # fmt: skip
        """Read from the log's columns (`core.kernel.logcols`): only the rows that name a session are looked at,
        and no `ContinuityLine` is made for them."""
        if lines is not self._lines or len(lines) < self._read:  # a log replaced or truncated: read it again
            self._lines, self._read, self._by = lines, 0, {}
        n = len(lines)
        start = self._read
        codes = lines.session[start:n]
        named = bytes(map(operator.ne, codes, repeat(NO_SESSION)))
        if not named.count(1):
            self._read = n
            return tuple(summary for sid, summary in self._by.items() if sid not in known)
        # the new rows that name a session, as columns; then one new summary per session they name (a summary
        # copied per row took ~1 s of the 166 MB log's backfill: 130,000 named rows, ~1,000 sessions)
        rows = list(compress(range(start, n), named))
        codes = array("i", compress(codes, named))
        kinds = list(compress(lines.kind[start:n], named))
        times = list(compress(lines.ts[start:n], named))
        spans: dict[int, list[int]] = {}  # code -> [first row, lowest ms, highest ms, lines]
        for code, row, ms in zip(codes, rows, times, strict=True):
            span = spans.get(code)
            if span is None:
                spans[code] = [row, ms, ms, 1]
                continue
            span[3] += 1
            if ms != NO_TIME:
                if span[1] == NO_TIME or ms < span[1]:
                    span[1] = ms
                if ms > span[2]:
                    span[2] = ms
        by_code: dict[int, SessionSummary] = {}
        names = lines.sessions.values
        for code, (row, low, high, count) in spans.items():
            sid = names[code]
            found = self._by.get(sid)
            if found is None:
                summary = SessionSummary(f"log:{sid}", sid, None, agent_of(lines.where(row).path), log_only=True)
            else:
                summary = replace(found, by_kind=Counter(found.by_kind))
            summary.log_lines += count
            if low != NO_TIME:
                summary.first_ms = low if summary.first_ms is None else min(summary.first_ms, low)
                summary.last_ms = high if summary.last_ms is None else max(summary.last_ms, high)
            by_code[code] = self._by[sid] = summary
        kind_names = lines.kinds.values
        for (code, kind), count in Counter(zip(codes, kinds, strict=True)).items():
            by_code[code].by_kind[kind_names[kind]] += count
        self._read = n
        return tuple(summary for sid, summary in self._by.items() if sid not in known)


class SnapshotBuilder:
    """Turns engine state into `Snapshot`s (worker thread only; call `build` with the engine lock held)."""

    def __init__(
        self, engine: EngineView, clock: Callable[[], float] = time.time, prices: PriceTable | None = None
    ) -> None:
        self.engine = engine
        self.clock = clock
        self.prices = prices if prices is not None else BUNDLED
        self._waste: WasteTotals | None = None
        self._waste_of: tuple[int, ...] = ()  # id() of the summaries the totals were summed from
        self.rows = RowIndex()
        self._summaries: dict[str, _Cached] = {}
        self._rate_samples: list[tuple[float, int]] = []
        self._dedupe: LargestPayload | None = None
        self._dedupe_key: tuple[str, int, int] | None = None  # the largest payload last simulated
        self._figures_key: tuple[str, int, int] | None = None  # the largest payload `_dedupe` describes
        self._dedupe_at = float("-inf")
        self._last: Snapshot | None = None
        self._last_mark: tuple[object, ...] | None = None
        self._dedupe_waiting = True  # the largest payload is not simulated yet (gated by backfill or 3 s)
        self._recount_behind = False  # unchanged sessions left over the last snapshot's recount budget
        self._held_at = float("-inf")
        self._located_mark: tuple[int, int, int] | None = None
        self._located: tuple[tuple[str, int] | None, ...] = ()
        self._located_version = -1
        self._located_at = float("-inf")
        self._log_sessions = LogSessions()

    def build(self) -> Snapshot:
        engine = self.engine
        state = engine.state
        now = self.clock()
        wall_ms = int(now * 1000)
        mark = (state.version, engine.total_lines, engine.files_generation, state.problems_total)
        last = self._last
        if last is not None and mark == self._last_mark and not self._recount_behind:
            # Nothing was read or analysed since the last snapshot; only the clock moved (per-minute rates,
            # lines/s). The once-a-second idle repaint must not walk every session again: cheap while caches
            # are warm, it measured 20-60 ms of CPU after each idle second on a 100 MB history (bench/).
            stats = state.log.stats
            settled = last.status.lines_per_s in (0.0, None) and not self._dedupe_waiting
            if settled and (stats.last_ms is None or wall_ms - stats.last_ms > RATE_WINDOW_MS):
                return last  # a history with no line in the rate window: its rates cannot move with the clock
            rates = self._rates(state, wall_ms)
            lines_per_s = self._lines_per_s(now, engine.total_lines)
            pending = last.status.pending_bytes
            dedupe = self._simulate(state, last.sessions, now, pending) if self._dedupe_waiting else last.largest
            same_rates = replace(rates, window_end_ms=last.rates.window_end_ms) == last.rates  # (not shown)
            # a partial line appended moves no mark (it is not a line yet): the held-back count is asked here
            held = self._held() if now - self._held_at >= 1.0 else (last.status.pending, last.pending)
            if (
                same_rates
                and lines_per_s == last.status.lines_per_s
                and dedupe is last.largest
                and held[0] == last.status.pending
            ):
                return last  # the very same snapshot: the caller has nothing to repaint
            snapshot = replace(
                last,
                wall_ms=wall_ms,
                rates=rates,
                status=replace(last.status, lines_per_s=lines_per_s, pending=held[0]),
                largest=dedupe,
                pending=held[1],
            )
            self._last = snapshot
            return snapshot
        snapshot = self._build(state, now, wall_ms)
        self._last, self._last_mark = snapshot, mark
        return snapshot

    def _rates(self, state: State, wall_ms: int) -> Rates:
        stats = state.log.stats
        window_end = stats.window_end(wall_ms)
        return Rates(
            events=stats.events,
            kinds=stats.kinds(),
            per_minute=stats.rates_per_minute(window_end),
            resend_share=stats.resend_share(digits=None),
            run=copy.copy(stats.run) if stats.run is not None else None,  # (msgspec Structs: no dataclass replace)
            peak=copy.copy(stats.peak) if stats.peak is not None else None,
            window_end_ms=window_end,
            closes=dict(stats.closes),
            judged=stats.events,
        )

    def _build(self, state: State, now: float, wall_ms: int) -> Snapshot:
        engine = self.engine
        state.settle()  # (which session made a call a resumed session copied: decided when read)
        self.rows.update(state)
        rates = self._rates(state, wall_ms)
        sessions = tuple(self._session_summaries(state, now))
        files = self._files()
        held, held_list = self._held()
        problems = tuple(reversed(state.problems))
        status = Status(
            files=files,
            bytes=engine.total_bytes,
            lines=engine.total_lines,
            lines_per_s=self._lines_per_s(now, engine.total_lines),
            problems_total=state.problems_total,
            pending_bytes=self._pending(),
            roots=tuple(str(r) for r in engine.roots),
            waiting=files == 0,
            pending=held,
            **self._left_out(),
        )
        sessions += self._log_sessions.update(state.log.continuity, {s.session_id for s in sessions},
                                              self._agent_of_path)  # fmt: skip
        return Snapshot(
            version=state.version,
            wall_ms=wall_ms,
            status=status,
            rates=rates,
            sessions=sessions,
            rows=self.rows.rows(),
            rows_generation=self.rows.generation,
            logs_only=self.rows.logs_only,
            problems=problems,
            problem_rows=self._locate(state, problems),
            largest=self._simulate(state, sessions, now, status.pending_bytes),
            pending=held_list,
            waste=self._waste_totals(sessions),
        )

    def _waste_totals(self, sessions: tuple[SessionSummary, ...]) -> WasteTotals | None:
        """Every session's waste summed: again only when a summary changed (a live tail replaces one or two)."""
        ident = tuple(id(s) for s in sessions)
        if ident == self._waste_of and self._waste is not None:
            return self._waste
        total = WasteStats()
        avoidable = avoidable_bytes = resends = 0
        for summary in sessions:
            if summary.log_only:
                continue
            total.merge(summary.waste)
            avoidable += summary.avoidable
            avoidable_bytes += summary.avoidable_bytes
            resends += summary.by_kind.get("fork", 0) + summary.by_kind.get("flatten", 0)
        prices = self.prices
        self._waste = WasteTotals(total, prices.as_of, prices.source, avoidable, avoidable_bytes, resends)
        self._waste_of = ident
        return self._waste

    def _session_summaries(self, state: State, now: float) -> list[SessionSummary]:
        """Per-session summaries: recounted when a session changed, incrementally (see `summarize`).

        Old turns are accumulated once, so a live tail costs O(new turns + TAIL) per session; every 30 s a
        session is recounted from scratch, in case an analysis updated a turn older than the tail. A parked
        session that got nothing is recounted only every `PARKED_RECOUNT_S` (it cannot change while parked).
        """
        out: list[SessionSummary] = []
        self._recount_behind = False
        unchanged: list[tuple[float, str]] = []  # (counted at, key): same entries, but the state moved since
        for key, session in state.sessions.items():
            parked = session.parked
            # (parking itself is not in the mark: it changes no count, and thousands of sessions parked at once
            # would all be recounted in the next snapshot, the one a live write waits for)
            mark = (session.entries, len(session.turns), id(session.turns))
            cached = self._summaries.get(key)
            if cached is None or cached.mark != mark:
                cached = self._recount(key, session, mark, cached, state.version, now)
            elif cached.version != state.version and now - cached.at >= (
                RECOUNT_S if parked is None else PARKED_RECOUNT_S
            ):
                unchanged.append((cached.at, key))
            out.append(cached.summary)
        if unchanged:
            # Sessions that got no entry are recounted only in case a late analysis updated an old turn: the
            # longest-waiting first, within a turn budget per snapshot. Recounting them all each second cost
            # ~0.6 s per snapshot on a 1 GB history (2,000 sessions) while one live session was being written.
            budget = RECOUNT_TURNS_PER_SNAPSHOT
            index = {key: i for i, key in enumerate(state.sessions)}
            unchanged.sort()
            self._recount_behind = False
            for _at, key in unchanged:
                if budget <= 0:
                    self._recount_behind = True  # the rest wait for the next snapshot, even an idle one
                    break
                session = state.sessions[key]
                budget -= max(1, len(session.turns))
                cached = self._summaries[key]
                out[index[key]] = self._recount(key, session, cached.mark, cached, state.version, now).summary
        for key in set(self._summaries) - set(state.sessions):
            del self._summaries[key]
        return out

    def _recount(
        self,
        key: str,
        session: SessionState,
        mark: tuple[int, int, int],
        cached: _Cached | None,
        version: int,
        now: float,
    ) -> _Cached:
        prefix = cached.prefix if cached is not None and now - cached.full_at < 30.0 else None
        summary, prefix = summarize(session, prefix, self.prices)
        full_at = now if cached is None or prefix.upto == 0 or cached.prefix is not prefix else cached.full_at
        cached = _Cached(mark, version, now, summary, prefix, full_at)
        self._summaries[key] = cached
        return cached

    def _simulate(
        self, state: State, sessions: tuple[SessionSummary, ...], now: float, pending: int
    ) -> LargestPayload | None:
        """The largest payload's figures, current as soon as it changes (a few fields of one turn), and the
        dedupes on it, re-simulated only when it changed, at most every 3 s and not during a backfill: that
        rebuilds the prompt from disk (`SessionState.dedupe`). Until then the simulation is unknown, not the
        previous payload's."""
        best = max(
            ((s.largest_payload, s.key) for s in sessions if s.largest_payload is not None),
            default=None,
            key=lambda item: item[0][0] if item[0] else 0,
        )
        if best is None or best[0] is None:
            self._dedupe_waiting = False
            return self._dedupe
        (raw, index), key = best
        mark = (key, index, raw)
        session = state.sessions.get(key)
        turn = session.turns[index] if session is not None and 0 <= index < len(session.turns) else None
        if session is None or turn is None or turn.payload_bytes_raw is None:
            return self._dedupe
        current = self._dedupe
        if current is None or mark != self._figures_key:
            values = list((turn.directives or {}).values())
            current = LargestPayload(
                session.session_id,
                index,
                turn.payload_bytes_raw,
                turn.payload_bytes if turn.payload_bytes is not None else turn.payload_bytes_raw,
                sum(int(v.get("bytes", 0)) for v in values),
                sum(sent_counts(v)[1] for v in values),
                None,
                None,
                session.agent.payload_exact,
            )
            self._figures_key = mark
        self._dedupe_waiting = mark != self._dedupe_key
        if mark != self._dedupe_key and pending == 0 and now - self._dedupe_at >= 3.0:
            self._dedupe_key, self._dedupe_at = mark, now
            self._dedupe_waiting = False
            sims = session.dedupe(index) or {}  # None for an agent without a payload rebuild
            first = sims.get("keep_first_identical_all_tags")
            senpi = sims.get("keep_identical_previous_ultrawork") or sims.get("keep_last_ultrawork")
            current = replace(
                current,
                keep_first=first.bytes_after if first is not None else None,
                senpi=senpi.bytes_after if senpi is not None else None,
            )
        self._dedupe = current
        return current

    def _locate(self, state: State, problems: tuple[Problem, ...]) -> tuple[tuple[str, int] | None, ...]:
        """`locate_problems`, again only when the problems changed (a new one, or one fewer kept)."""
        mark = (state.problems_total, len(problems), len(state.sessions))
        now = self.clock()
        # attribution can still pair a log line with its turn later: refreshed every few seconds while data moves
        if mark != self._located_mark or (state.version != self._located_version and now - self._located_at >= 5.0):
            self._located_mark, self._located = mark, locate_problems(state, problems)
            self._located_version, self._located_at = state.version, now
        return self._located

    def _agent_of_path(self, path: str) -> str:
        """The agent whose format a file was read as (a log line's, for a session only the log names)."""
        stat = self.engine.stats.get(path)
        adapter = adapter_named(stat.format) if stat is not None and stat.format else None
        return agent_of(adapter).name if adapter is not None else ""

    def _held(self) -> tuple[int, tuple[Problem, ...]]:
        """How many lines the tail holds back that a report would count as problems, and the first of them."""
        self._held_at = self.clock()
        count = self.engine.pending_count()
        if not count:
            return 0, ()
        return count, tuple(self.engine.pending_problems()[:MAX_PENDING_SHOWN])

    def _files(self) -> int:
        return self.engine.file_count()  # without building the whole file list

    def _left_out(self) -> dict[str, int]:
        discovery = getattr(getattr(self.engine, "sources", None), "discovery", None)
        found = discovery() if callable(discovery) else None
        if not isinstance(found, dict) or not found.get("left_out"):
            return {}
        return {"left_out": int(found["left_out"]), "file_cap": int(found.get("cap") or 0)}

    def _pending(self) -> int:
        return self.engine.pending_bytes()

    def _lines_per_s(self, now: float, lines: int) -> float | None:
        """Lines per second over the last ~5 s of samples (None until two distinct instants exist)."""
        samples = self._rate_samples
        samples.append((now, lines))
        while len(samples) > 2 and now - samples[0][0] > 5.0:
            samples.pop(0)
        first_t, first_n = samples[0]
        if now - first_t <= 0:
            return None
        return max(0.0, (lines - first_n) / (now - first_t))
