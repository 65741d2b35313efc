"""The report's `calls` section and what each session and turn adds about its calls (schema "Additions").

Every provider call of every agent is one call with a kind, a reason and the evidence it rests on; the section
counts them over the selection (`--session`, `--since/--until`, a filter narrow it like the turns), so the
summaries, the dashboard and `check` read one model whatever the agent. `continuity` stays the section of
senpi's log lines; a call and a log line are never added together.

A turn copied from another session (pi's branched-session export repeats the parent's calls with their ids) is
not a call of the session that holds the copy: it counts once, in the session that made it.

Newer senpi builds put `sessionId` on their log lines: a session named there that has no transcript on disk is
listed among `sessions` too (`log_sessions`), with its kinds from those lines and no turns.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable
from itertools import compress
from typing import Any

from core.agents import adapter_named, agent_of
from core.agents.base import Agent
from core.kernel.calls import CallStats, kinds_of, resend_share
from core.kernel.logcols import ContinuityRows, named_mask
from core.kernel.stats import Streak
from core.logblock import NO_SESSION
from core.model import CALL_KINDS, KINDS, Turn
from core.report.values import iso, text
from core.state import SessionState

Selected = list[tuple[SessionState, list[Turn]]]

#: a call nothing judged (must not happen: every agent gives each call a kind; `tests/test_realdata_calls.py`)
UNKNOWN = ("unknown", "not_judged")


def is_call(turn: Turn) -> bool:
    """A call of the session that holds it (not a copy of another session's call)."""
    return turn.copied_from is None


def verdict(turn: Turn) -> tuple[str, str] | None:
    """(kind, reason) of a call of the session that holds it, as `calls` counts it (`UNKNOWN` when nothing
    judged it); None for a copy of another session's call. The metrics (`core.report.openmetrics`) count these."""
    if not is_call(turn):
        return None
    kind, reason = turn.kind, turn.reason
    if kind is None or reason is None:
        return UNKNOWN
    return kind, reason


def call_stats(selected: Selected) -> CallStats:
    """Every call of the selection, session by session in time order."""
    stats = CallStats()
    for session, turns in selected:
        agent = session.agent.name
        for turn in turns:
            judged = verdict(turn)
            if judged is None:
                continue
            kind, reason = judged
            stats.add(kind, reason, agent=agent, evidence=turn.evidence, ts=turn.ts, ts_ms=turn.ts_ms,
                      count=turn.logged.count if turn.logged is not None else None, tokens=turn.tokens,
                      payload_raw=turn.payload_bytes_raw, session=session.session_id, index=turn.index)  # fmt: skip
        stats.end_thread()
    return stats


def calls_section(selected: Selected) -> dict[str, Any]:
    """`calls`: total, by_kind (every kind), by_reason, resend_share, by_agent, streaks, peak (+ by_evidence,
    tokens: what the calls rest on, and their de-duplicated token totals)."""
    stats = call_stats(selected)
    agents: dict[str, Agent] = {session.agent.name: session.agent for session, _ in selected}
    peak = stats.peak
    return {
        "total": stats.total,
        "by_kind": {text(kind): n for kind, n in stats.kinds().items()},
        "by_reason": by_reason(stats.by_reason),
        "resend_share": stats.resend_share(),
        "by_agent": {
            text(name): {
                "total": sum(kinds.values()),
                "resend_share": resend_share(kinds),
                "by_kind": {text(kind): n for kind, n in kinds_of(kinds).items() if n},
                # what the payload graph and the summaries measure this agent's calls in (see `Agent.payload_exact`)
                "payload": "bytes" if name in agents and agents[name].payload_exact else "tokens",
            }
            for name, kinds in sorted(stats.by_agent.items())
        },
        "by_evidence": {text(source): n for source, n in stats.by_evidence.most_common()},
        "tokens": {key: stats.tokens.get(key, 0) for key in ("input", "cache_read", "cache_write", "output")}
        if stats.tokens
        else None,
        "streaks": [streak(s) for s in stats.all_streaks()],
        "peak": None if peak is None else {"session": text(peak.session), "index": peak.index, "bytes": peak.bytes},
    }


def by_reason(reasons: dict[str, Counter[str]], order: tuple[str, ...] = CALL_KINDS) -> dict[str, dict[str, int]]:
    """reason -> kind -> count, most frequent reason first (then by name); kinds in display order."""
    rank = {kind: i for i, kind in enumerate(order)}
    rows = sorted(reasons.items(), key=lambda item: (-sum(item[1].values()), item[0]))
    return {
        text(reason): {text(k): n for k, n in sorted(kinds.items(), key=lambda kv: (rank.get(kv[0], 99), kv[0]))}
        for reason, kinds in rows
    }


def streak(s: Streak) -> dict[str, Any]:
    return {
        "kind": text(s.kind),
        "reason": text(s.reason),
        "length": s.length,
        "start": iso(s.start_ms, s.start or None),
        "end": iso(s.end_ms, s.end or None),
        "count_first": s.count_first,
        "count_last": s.count_last,
    }


def session_tokens(turns: Iterable[Turn]) -> dict[str, int] | None:
    """A session's tokens over its own calls (copies of another session's calls left out); None when no call
    reported usage. The calls are already de-duplicated over streamed lines, sub-agent files and progress copies
    (each agent's analysis counts a call once)."""
    totals: Counter[str] = Counter()
    seen = False
    for turn in turns:
        if turn.tokens is None or not is_call(turn):
            continue
        seen = True
        for key in ("input", "cache_read", "cache_write", "output"):
            totals[key] += turn.tokens.get(key) or 0
    return {key: totals.get(key, 0) for key in ("input", "cache_read", "cache_write", "output")} if seen else None


def named_rows(rows: ContinuityRows, keep: list[bool] | None = None) -> dict[str, tuple[int, dict[str, int]]]:
    """Per session id the decision log lines name (`sessionId`, newer senpi builds), over the rows `keep`
    selects (all when None): its first such row and its lines by kind, in the order a line first named each.
    What `log_lines_by_session` and `log_sessions` read, counted once on the columns (or stored with the log:
    `core.state.logview`)."""
    names, kind_names = rows.sessions.values, rows.kinds.values
    n = len(rows)
    index: range | list[int] = range(n) if keep is None else list(compress(range(n), keep))
    codes = rows.session if keep is None else array("i", compress(rows.session, keep))
    kinds = rows.kind if keep is None else array(rows.kind.typecode, compress(rows.kind, keep))
    named = named_mask(codes)
    if named is not None:  # only the rows that name a session (12 % of the bench log's): the rest count nothing
        index = list(compress(index, named))
        codes, kinds = array("i", compress(codes, named)), array(kinds.typecode, compress(kinds, named))
    first = dict(zip(reversed(codes), reversed(index), strict=True))  # code -> its first row (later rows overwrite)
    first.pop(NO_SESSION, None)
    found: dict[int, dict[str, int]] = {code: {} for code in sorted(first, key=first.__getitem__)}
    for (code, kind), count in Counter(zip(codes, kinds, strict=True)).items():
        if code != NO_SESSION:
            by_kind = found[code]
            by_kind[kind_names[kind]] = by_kind.get(kind_names[kind], 0) + count
    return {names[code]: (first[code], by_kind) for code, by_kind in found.items()}


def log_lines_by_session(
    rows: ContinuityRows, keep: list[bool] | None = None, named: dict[str, tuple[int, dict[str, int]]] | None = None
) -> Counter[str]:
    """Decision log lines per session they name (`sessionId`, newer senpi builds) or were matched to, over the
    rows `keep` selects (all when None), counted on the columns (`named`: `named_rows` of the same rows)."""
    if named is None:
        named = named_rows(rows, keep)
    out: Counter[str] = Counter({sid: sum(by_kind.values()) for sid, (_, by_kind) in named.items()})
    for row, (matched, _turn) in rows.matched.items():
        if rows.session[row] == NO_SESSION and (keep is None or keep[row]):
            out[matched] += 1
    return out


def agent_of_file(stats: dict[str, Any], path: str) -> str | None:
    """The name of the agent whose format a file was read as (`Engine.stats`); None for a file not recognised."""
    stat = stats.get(path)
    adapter = adapter_named(stat.format) if stat is not None and stat.format else None
    return agent_of(adapter).name if adapter is not None else None


def log_sessions(
    rows: ContinuityRows,
    keep: list[bool] | None,
    known: set[str],
    wanted: str | None,
    agent_of_path: Callable[[str], str | None],
    named: dict[str, tuple[int, dict[str, int]]] | None = None,
) -> list[dict[str, Any]]:
    """The sessions only the log names (`sessionId` on lines of newer senpi builds; no transcript read), oldest
    first, each with its kinds from those lines. `wanted` is `--session` (an id or a prefix of one); `named` is
    `named_rows` of the same rows."""
    if named is None:
        named = named_rows(rows, keep)
    found = {sid: {"kinds": Counter(by_kind), "first": first} for sid, (first, by_kind) in named.items()
             if sid not in known}  # fmt: skip
    if not found:
        return []
    if wanted is not None:
        exact = [sid for sid in found if sid == wanted]
        chosen = exact or [sid for sid in found if sid.startswith(wanted)]
        found = {sid: found[sid] for sid in chosen}
    out = []
    for sid, entry in sorted(found.items(), key=lambda item: (rows.ms(item[1]["first"]) or 2**62, item[0])):
        session_kinds: Counter[str] = entry["kinds"]
        by_kind = {kind: session_kinds.get(kind, 0) for kind in KINDS}
        by_kind.update({text(k): v for k, v in sorted(session_kinds.items()) if k not in by_kind})
        row = entry["first"]
        ms = rows.ms(row)
        out.append(
            {
                "id": text(sid),
                "path": None,
                "cwd": None,
                "turns": 0,
                "by_kind": by_kind,
                "rewritten": None,
                "payload_bytes_total": None,
                "started_at": iso(ms, rows.text(row) if ms is None else None),  # (its text only if no time)
                "models": [],
                "profile": None,
                "agent": agent_of_path(rows.where(row).path),
                "tokens": None,
                "log_lines": sum(session_kinds.values()),
            }
        )
    return out


__all__ = [
    "call_stats",
    "calls_section",
    "is_call",
    "log_lines_by_session",
    "log_sessions",
    "named_rows",
    "session_tokens",
]
