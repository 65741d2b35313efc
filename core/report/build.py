"""The engine's state -> the `continuity.report/1` document (`reference/report-schema.md`).

The build copies what it needs while holding the engine's lock (a live TUI keeps ingesting) and returns
plain JSON-ready values; the three renderings read only that dict. Sections whose producer found nothing
(no transcripts, no payload reconstruction) are `null`, never missing: scripts test for null, not for keys.

Selection: `--session` limits sessions, turns, directives and counterfactual; `continuity` always describes
every log line read (log lines carry no session id). `--since/--until` limit everything that has a time:
continuity lines, close lines and turns; a line or turn without a usable time is left out of a window.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from core import __version__
from core.agents import SESSION_EXTRAS, TURN_EXTRAS
from core.kernel.directives import sent_counts
from core.kernel.stats import LogStats
from core.model import KINDS, CommitInfo, Decision, Problem, Turn
from core.report import sections
from core.report.calls import (
    UNKNOWN,
    agent_of_file,
    calls_section,
    is_call,
    log_lines_by_session,
    log_sessions,
    named_rows,
    session_tokens,
)
from core.report.options import ReportOptions
from core.report.redact import already_redacted, holds_no_secret, redact_report, redact_text
from core.report.stream import TurnStream
from core.report.timeline import select_rows, timeline_rows
from core.report.values import body_value, iso, opt_text, plain_value, text
from core.report.waste import session_waste, turn_cost, waste_section, waste_stats
from core.sources.reread import reread_entry
from core.state import SessionState, State
from core.state.logview import LogView
from core.timeutil import iso_ms, now_ms, parse_iso_ms

SCHEMA = "continuity.report/1"
#: the continuity section's fields that read the pairing of log lines with calls, which every run makes anew
_PAIRED = ("attributed", "closes_paired")
MAX_PROBLEMS = 1000
#: field changes listed per turn; `diff_total` says how many there were
MAX_DIFF = 500
#: rewritten turns whose assistant message is re-read for a content summary (bounded file reads)
MAX_CONTENT_REREADS = 200
CONTENT_TEXT_LIMIT = 4000


class EngineLike(Protocol):
    """What a report needs from `core.engine.Engine` (the TUI passes its live engine, tests a drained one)."""

    state: State
    stats: dict[str, Any]
    paths: list[Path]
    lock: AbstractContextManager[Any]


def build_report(
    engine: EngineLike, options: ReportOptions | None = None, *, stream_turns: bool = False
) -> dict[str, Any]:
    """A snapshot of everything read so far, selected and redacted per `options`.

    With `stream_turns`, `turns` is a `TurnStream` made from the state as it is read (for `core.report.write`):
    only for an engine that nothing polls any more (the `report` command), since the turns are read after
    the lock is released; a stored log view's streaks are then the JSON that writer writes (`orjson.Fragment`)."""
    options = options or ReportOptions()
    with engine.lock:
        engine.state.settle()
        report = _Builder(engine, options, stream_turns=stream_turns).build()
    if options.redact:
        return redact_report(report, consume=True)
    report["redactions"] = {"enabled": False, "total": 0, "by_kind": {}}
    return report


class _Builder:
    def __init__(self, engine: EngineLike, options: ReportOptions, *, stream_turns: bool = False) -> None:
        self.stream_turns = stream_turns
        self.engine = engine
        self.state = engine.state
        self.options = options
        self.base = _base_dir(engine.paths)
        #: file path -> its report text: every call of a file names the same path, and `_relative` (abspath,
        #: commonpath, relpath) cost ~170 µs a call, 1.4 s of a 7,900-call Claude Code report
        self.paths: dict[str, str] = {}

    def build(self) -> dict[str, Any]:
        selected = self._sessions()
        turns = [turn for _, session_turns in selected for turn in session_turns]
        problems = [*self.state.problems, *self.options.pending][-MAX_PROBLEMS:]
        log = self.state.log
        rows = log.continuity
        in_window = self.options.in_window
        self.keep = [in_window(rows.ms(row)) for row in range(len(rows))] if self.options.windowed else None
        # the whole log's aggregates as stored with its rows, when these are exactly those rows
        view = log.view
        self.view = (
            view if self.keep is None and view is not None and view.fits(len(rows), len(log.closes), log.stats.events)
            else None
        )  # fmt: skip
        self.named = self.view.named if self.view is not None else named_rows(rows, self.keep)
        self.log_lines = log_lines_by_session(rows, self.keep, self.named)
        self.prices = self.options.price_table
        self.figures: dict[int, Any] = {}  # id(turn) -> its waste figures (`waste_stats` keeps them)
        waste, self.session_waste = waste_stats(selected, self.prices, self.figures)
        sessions = [self._session(session, session_turns) for session, session_turns in selected]
        if not self.options.filtered:  # (a turn filter selects turns: a session of log lines has none)
            known = {session.session_id for session in self.state.sessions.values()}
            logged = log_sessions(rows, self.keep, known, self.options.session, self._agent_of_path, self.named)
            if self.options.redact and logged and holds_no_secret(logged):
                logged = [already_redacted(session) for session in logged]  # (the walk would change nothing)
            sessions += logged
        counterfactual = sections.counterfactual(
            turns, None if self.options.windowed or self.options.filtered else selected
        )
        return {
            "schema": SCHEMA,
            "generated_at": iso(self.options.now_ms if self.options.now_ms is not None else now_ms()),
            "tool_version": __version__,
            "selection": self._selection(selected, len(sessions)),
            "sources": [self._source(stat) for stat in self.engine.stats.values()],
            "discovery": self._discovery(),
            "continuity": self._continuity(),
            "calls": calls_section(selected),
            "sessions": sessions,
            "turns": self._turns(selected),
            "directives": sections.directives(selected),
            "counterfactual": counterfactual,
            # how much re-writing already-cached history cost, and why (issue 14): excess tokens, share, causes,
            # dollars at list prices, the calls it adds up
            "waste": waste_section(waste, self.prices, counterfactual),
            "problems": [self._problem(p) for p in problems],
            "problems_total": max(self.state.problems_total + len(self.options.pending), len(problems)),
        }

    def _discovery(self) -> dict[str, Any] | None:
        """Files found against the discovery cap (`Sources.discovery`): what a cap left out is said, never silent."""
        discovery = getattr(getattr(self.engine, "sources", None), "discovery", None)
        return discovery() if callable(discovery) else None

    # ------------------------------------------------------------------ selection
    def _sessions(self) -> list[tuple[SessionState, list[Turn]]]:
        """The sessions the options select, each with its turns inside the time window."""
        wanted = self.options.session
        sessions = list(self.state.sessions.values())
        if wanted is not None:
            exact = [s for s in sessions if wanted in (s.session_id, s.key)]
            sessions = exact or [s for s in sessions if s.session_id.startswith(wanted)]
        sessions.sort(key=_started)
        out: list[tuple[SessionState, list[Turn]]] = []
        narrowed = self.options.windowed or self.options.filtered
        for session in sessions:
            turns = [t for t in session.turns if self.options.keeps(t)]
            if turns or not narrowed:
                out.append((session, turns))
        return out

    def _selection(self, selected: list[tuple[SessionState, list[Turn]]], matched: int) -> dict[str, Any]:
        return {
            "session": opt_text(self.options.session),
            "since": iso(self.options.since_ms),
            "until": iso(self.options.until_ms),
            "sessions_matched": matched,
            "include_text": self.options.include_text,
            "filter": opt_text(self.options.filter_text),
        }

    # ------------------------------------------------------------------ sources, problems
    def _path(self, path: str) -> str:
        shown = self.paths.get(path)
        if shown is None:
            shown = self.paths[path] = text(_relative(path, self.base))
        return shown

    def _agent_of_path(self, path: str) -> str | None:
        """The agent whose format a file was read as (the log lines of a session without a transcript)."""
        name = agent_of_file(self.engine.stats, path)
        return text(name) if name is not None else None

    def _source(self, stat: Any) -> dict[str, Any]:
        return {
            "path": self._path(stat.path),
            "format": opt_text(stat.format),
            "bytes": stat.bytes,
            "lines": stat.lines,
            "bad_lines": stat.bad_lines,
        }

    def _problem(self, problem: Problem) -> dict[str, Any]:
        return {
            "path": self._path(problem.path),
            "line": problem.line,
            "offset": problem.offset,
            "error": text(problem.error),
        }

    # ------------------------------------------------------------------ continuity (the logs)
    def _continuity(self) -> dict[str, Any]:
        log = self.state.log
        rows = log.continuity
        keep = self.keep
        if self.view is not None:
            return self._stored_continuity(self.view)
        if keep is not None:
            stats = LogStats()
            stats.add_block(select_rows(rows, keep))
            closes = log.closes
            in_window = self.options.in_window
            stats.add_closes(closes.reason_of(row) for row in range(len(closes)) if in_window(closes.ms(row)))
            attributed = sum(1 for row in rows.matched if keep[row])
            closes_paired = sum(1 for row in closes.matched if in_window(closes.ms(row)))
            series = timeline_rows(rows, keep)
        else:
            stats = log.stats
            attributed = len(rows.matched)
            closes_paired = len(log.closes.matched)
            series = timeline_rows(rows)
        peak = stats.peak
        names: dict[str, str] = {}  # kinds and reasons repeat on every streak: made inert once each

        def name(value: str) -> str:
            out = names.get(value)
            if out is None:
                out = names[value] = text(value)
            return out

        if series is not None:
            series["kinds"] = [name(kind) for kind in series["kinds"]]
        section = self._continuity_section(stats, peak, name, attributed, closes_paired, series)
        clean = not any(redact_text(value)[1] for value in names.values())
        if keep is None and clean and log.view_sink is not None:
            # the whole log's aggregates, for the index to keep with the rows (`core.state.logview`)
            kept = {key: value for key, value in section.items() if key not in _PAIRED}
            log.view_sink(LogView(len(rows), len(log.closes), stats.events, self.named, lambda: kept))
        if self.options.redact and clean:
            # every string of the section is a kind or reason checked here, a time or a fixed key: the
            # report's redaction walk can take it as it is (a secret-shaped reason: it walks it, exactly)
            return already_redacted(section)  # type: ignore[no-any-return]
        return section

    def _stored_continuity(self, view: LogView) -> dict[str, Any]:
        """The section of a view stored with these very rows (its strings were checked when it was made),
        with the pairing of lines and calls as this run made it."""
        log = self.state.log
        paired = {"attributed": len(log.continuity.matched), "closes_paired": len(log.closes.matched)}
        # a report for the JSON writer alone takes the stored streaks as their checked JSON (`LogView.json_section`)
        stored = view.json_section if self.stream_turns and view.json_section is not None else view.section
        section = {}
        for key, value in stored().items():
            if key == "timeline":
                section.update(paired)
            section[key] = value
        self.view = None  # a report consumes its sections: the view serves one build
        log.view = None
        return already_redacted(section) if self.options.redact else section  # type: ignore[no-any-return]

    def _continuity_section(
        self, stats: LogStats, peak: Any, name: Any, attributed: int, closes_paired: int, series: dict[str, Any] | None
    ) -> dict[str, Any]:
        return {
            "events": stats.events,
            "by_kind": {name(kind): n for kind, n in stats.kinds().items()},
            "by_reason": _by_reason(stats, name),
            "resend_share": stats.resend_share(),
            "streaks": [
                {
                    "kind": name(kind),
                    "reason": name(reason),
                    "length": length,
                    # the text is read only when the time is not usable: it is then kept as written
                    "start": iso_ms(start_ms) if start_ms is not None else iso(None, start),
                    "end": iso_ms(end_ms) if end_ms is not None else iso(None, end),
                    "count_first": count_first,
                    "count_last": count_last,
                }
                for kind, reason, length, start_ms, end_ms, start, end, count_first, count_last in stats.streak_table()
            ],
            "peak_count": None
            if peak is None
            else {"value": peak.value, "at": iso(peak.at_ms, peak.at), "kind": name(peak.kind)},
            "closes": {name(reason): n for reason, n in stats.closes.most_common()},
            "attributed": attributed,
            "closes_paired": closes_paired,
            "timeline": series,
        }

    # ------------------------------------------------------------------ sessions and turns
    def _session(self, session: SessionState, turns: list[Turn]) -> dict[str, Any]:
        kinds = _kinds(Counter(t.kind for t in turns if t.kind is not None))
        committed = [t for t in turns if t.commit is not None]
        payloads = [t.payload_bytes for t in turns if t.payload_bytes is not None]
        header = session.header
        return {
            "id": text(session.session_id),
            "path": self._path(session.key),
            "cwd": opt_text(session.cwd),
            "turns": len(turns),
            "by_kind": kinds,
            "rewritten": sum(1 for t in committed if t.rewritten) if committed else None,
            "payload_bytes_total": sum(payloads) if payloads else None,
            "started_at": iso(None, header.timestamp) if header is not None else None,
            "models": sorted({text(t.model) for t in turns if t.model}),
            "profile": _profile(session),
            # the session's calls (schema "Additions"): its tokens over its own calls, and the decision log lines
            # that name it (`sessionId`, newer senpi builds) or were matched to one of its calls
            "tokens": session_tokens(turns),
            "log_lines": self.log_lines.get(session.session_id, 0),
            "waste": session_waste(self.session_waste[session.key]) if session.key in self.session_waste else None,
            # what the session's agent adds (`Agent.session_extras`): whose session it is (senpi, pi, claude-code,
            # mux), senpi's restart-sidecar verdict, mux's thinking-replay flags per kind; null for other agents
            **_extras(SESSION_EXTRAS, session.agent.session_extras, session),
        }

    def _turns(self, selected: list[tuple[SessionState, list[Turn]]]) -> list[dict[str, Any]] | TurnStream:
        items = self._turn_items(selected)
        return TurnStream(items) if self.stream_turns else list(items)

    def _turn_items(self, selected: list[tuple[SessionState, list[Turn]]]) -> Iterator[dict[str, Any]]:
        rereads = MAX_CONTENT_REREADS
        for session, session_turns in selected:
            agent, extras = text(session.agent.name), session.agent.turn_extras
            for turn in session_turns:
                item = _turn(turn, self.state, include_text=self.options.include_text)
                # the call (schema "Additions"): whose it is, the file it was read from, its conversation thread,
                # and its kind, reason and the evidence they rest on (null for a copy of another session's call)
                item["agent"], item["path"], item["thread"] = agent, self._path(turn.where.path), text(turn.thread)
                item["call"] = _call(turn)
                item["cost_usd"] = turn_cost(turn, self.prices, self.figures.get(id(turn), ...))
                item.update(_extras(TURN_EXTRAS, extras, turn))
                if turn.rewritten and rereads > 0:
                    rereads -= 1
                    item["content"] = _content(turn, include_text=self.options.include_text)
                yield item


def _started(session: SessionState) -> tuple[int, str]:
    """Sessions are listed oldest first: by header time, else first call, then id (a stable order)."""
    header_ms = parse_iso_ms(session.header.timestamp) if session.header is not None else None
    first = next((t.ts_ms for t in session.turns if t.ts_ms is not None), None)
    started = header_ms if header_ms is not None else first
    return (started if started is not None else 2**62, session.session_id)


def _profile(session: SessionState) -> Any:
    """The rule set the session's verdicts come from, and why: its detected build profile, or its agent's rules."""
    session.refresh()  # an analyzer that decides lazily (the build profile) settles its choice now
    return plain_value(session.profile)


def _extras(names: tuple[str, ...], own: tuple[tuple[str, Any], ...], item: Any) -> dict[str, Any]:
    """Every agent's extra fields by name (`core.agents.TURN_EXTRAS` / `SESSION_EXTRAS`): this item's agent's
    values, null for the names other agents add."""
    values = {name: value(item) for name, value in own}
    return {name: plain_value(values.get(name)) for name in names}


def _turn(turn: Turn, state: State, *, include_text: bool) -> dict[str, Any]:
    logged = turn.logged
    logged_out: dict[str, Any] | None = None
    if logged is not None:
        logged_out = {
            "kind": text(logged.kind),
            "reason": text(logged.reason),
            "count": logged.count,
            "payload_bytes": logged.payload_bytes,
            "collapsed_directives": logged.collapsed_directives,
            "source": text(logged.source),
        }
    elif turn.log_line is not None and turn.log_line < len(state.log.continuity):
        rows, row = state.log.continuity, turn.log_line
        logged_out = {
            "kind": text(rows.kind_of(row)),
            "reason": text(rows.reason_of(row)),
            "count": rows.count_of(row),
            "payload_bytes": None,
            "collapsed_directives": None,
            "source": "log",
        }
    if logged_out is not None:
        logged_out["matched_log_line"] = turn.log_line is not None
    recomputed = turn.recomputed
    return {
        "session": text(turn.session),
        "index": turn.index,
        "entry_id": opt_text(turn.entry_id),
        "ts": iso(turn.ts_ms, turn.ts),
        "logged": logged_out,
        "recomputed": _decision(recomputed),
        "payload_bytes": turn.payload_bytes,
        "payload_bytes_raw": turn.payload_bytes_raw,
        "directives": None if turn.directives is None else _directives(turn.directives),
        "tokens": _tokens(turn.tokens),
        "commit": _commit(turn.commit, include_text=include_text),
        "fingerprints": _fingerprints(turn.fingerprints),
        "model": opt_text(turn.model),
        "stop_reason": opt_text(turn.stop_reason),
        "agreement": turn.agreement,
        "disagreement": opt_text(turn.disagreement),
        "contradiction": opt_text(turn.contradiction),
        "why": opt_text(turn.why),
        "logged_only": turn.logged_only,
        "counterfactual": _decision(turn.counterfactual),
        "avoidable": turn.avoidable,
        "payload_bytes_if_stable": turn.payload_bytes_if_stable,
        # then what the turn's agent adds (`Agent.turn_extras`): the cache figures a cache-judged verdict rests on
        # (previous and current prompt, read, write, gap, lifetime), Claude Code's conversation thread (main or a
        # sub-agent), mux's thinking-replay audit
    }


def _call(turn: Turn) -> dict[str, Any] | None:
    """`{kind, reason, evidence}` of a call of this session; null for a copy of another session's call."""
    if not is_call(turn):
        return None
    kind, reason = (turn.kind, turn.reason) if turn.kind is not None else UNKNOWN
    return {"kind": text(kind), "reason": opt_text(reason), "evidence": opt_text(turn.evidence)}


def _decision(decision: Decision | None) -> dict[str, Any] | None:
    if decision is None:
        return None
    return {"kind": text(decision.kind), "reason": text(decision.reason), "count": decision.count}


def _directives(directives: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """Per tag: `copies`/`bytes` in the payload as serialized (before the agent's own dedupe: the side of
    `payload_bytes_raw`), `copies_sent`/`bytes_sent` in the payload as sent (the side of `payload_bytes`)."""
    out: dict[str, dict[str, int]] = {}
    for tag, d in directives.items():
        copies_sent, bytes_sent = sent_counts(d)
        out[text(tag)] = {"copies": int(d.get("copies", 0)), "bytes": int(d.get("bytes", 0)),
                          "copies_sent": copies_sent, "bytes_sent": bytes_sent}  # fmt: skip
    return out


def _tokens(tokens: dict[str, int] | None) -> dict[str, int | None] | None:
    if tokens is None:
        return None
    out: dict[str, int | None] = {key: tokens.get(key) for key in ("input", "cache_read", "cache_write", "output")}
    out.update({text(k): v for k, v in tokens.items() if k not in out})
    return out


def _commit(commit: CommitInfo | None, *, include_text: bool) -> dict[str, Any] | None:
    if commit is None:
        return None
    rewritten = commit.outcome == "rewritten"
    diff = [
        {
            "path": text(change.path),
            "change": text(change.change),
            "volatile": bool(change.volatile),
            "capture": body_value(change.capture, include_text=include_text),
            "commit": body_value(change.commit, include_text=include_text),
        }
        for change in commit.diff[:MAX_DIFF]
    ]
    return {
        "outcome": text(commit.outcome),
        "source": text(commit.source),
        "class": opt_text(commit.klass) if rewritten and commit.diff else None,  # contract: null without a diff
        "diff": diff,
        "diff_total": len(commit.diff),
        "variant": opt_text(commit.variant),
    }


FINGERPRINT_KEYS = ("senpi_sha256", "senpi_sha256_verbatim", "stable_xxh3")


def _fingerprints(prints: dict[str, str] | None) -> dict[str, str | None] | None:
    if prints is None:
        return None
    out: dict[str, str | None] = {key: opt_text(prints.get(key)) for key in FINGERPRINT_KEYS}
    out.update({text(k): opt_text(v) for k, v in prints.items() if k not in out})
    return out


def _content(turn: Turn, *, include_text: bool) -> dict[str, Any] | None:
    """What the rewritten assistant message held: block counts and size; its text only with --include-text."""
    entry = reread_entry(turn.where)
    msg = entry.message if entry is not None else None
    content = msg.get("content") if msg else None
    if not isinstance(content, list):
        return None
    blocks: Counter[str] = Counter()
    chars = 0
    texts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        blocks[text(kind, 60) if isinstance(kind, str) else "unknown"] += 1
        for key in ("text", "thinking"):
            value = block.get(key)
            if isinstance(value, str):
                chars += len(value)
                if key == "text":
                    texts.append(value)
    out: dict[str, Any] = {"blocks": dict(blocks), "chars": chars}
    if include_text:
        out["text"] = body_value("\n\n".join(texts)[:CONTENT_TEXT_LIMIT], include_text=True)
    return out


# ---------------------------------------------------------------------- aggregates over selected turns
def _kinds(counter: Counter[str]) -> dict[str, int]:
    """All five kinds always, then any other kind seen (the contract's rule for every by_kind)."""
    out = {kind: counter.get(kind, 0) for kind in KINDS}
    for kind, n in counter.items():
        out.setdefault(text(kind), n)
    return out


def _by_reason(stats: LogStats, name: Any = text) -> dict[str, dict[str, int]]:
    """reason -> kind -> lines, most frequent reason first; kinds in display order."""
    order = {kind: i for i, kind in enumerate(KINDS)}
    rows = sorted(stats.by_reason.items(), key=lambda item: (-sum(item[1].values()), item[0]))
    return {
        name(reason): {name(kind): n for kind, n in sorted(kinds.items(), key=lambda kv: (order.get(kv[0], 99), kv[0]))}
        for reason, kinds in rows
    }


# ---------------------------------------------------------------------- paths
def _base_dir(paths: list[Path]) -> str | None:
    """The first PATH argument as a directory: a file argument stands for the directory holding it."""
    if not paths:
        return None
    first = os.path.abspath(os.path.expanduser(os.fspath(paths[0])))
    return first if os.path.isdir(first) else os.path.dirname(first)


def _relative(path: str, base: str | None) -> str:
    """Relative to the first PATH when inside it (or beside it: a `logs/` argument pulls in `../sessions`)."""
    if base is None:
        return path
    absolute = os.path.abspath(path)
    roots = [base]
    if os.path.basename(base) == "logs":
        roots.append(os.path.dirname(base))
    for root in roots:
        try:
            inside = os.path.commonpath([absolute, root]) == root
        except ValueError:  # another drive (Windows)
            inside = False
        if inside and root != os.path.dirname(root):  # never relative to the filesystem root
            return Path(os.path.relpath(absolute, base)).as_posix()
    return path
