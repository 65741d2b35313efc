"""A built report as Markdown that pastes cleanly into an issue tracker: tables and short lists, no HTML.

Data strings are either code spans (ids, kinds, reasons, paths, tags: literal in every renderer, readable
raw) or escaped text; a `|` inside a table cell is escaped, and fenced blocks use a fence longer than any
backtick run they contain, so no value can close a span, a cell or a block early. Long sections are capped
(the JSON has everything); each cap says how much was left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from core.model import KINDS
from core.report.common import (
    Payload,
    agreement,
    copies,
    decision_text,
    diff_total,
    directive_share,
    disagreements,
    is_rewritten,
    kinds_of,
    largest_payloads,
    profile_of,
    same_call,
    turn_kind,
    turn_payload,
    turn_reason,
    value_text,
)
from core.sanitize import display

MAX_STREAKS = 10
MAX_REASONS = 40
MAX_SESSIONS = 50
MAX_TURN_ROWS = 300
MAX_REWRITTEN = 40
MAX_DIFF_LINES = 40
MAX_TEXT_LINES = 40
MAX_AVOIDABLE = 50
MAX_PROBLEMS = 50
MAX_SOURCES = 60

#: characters Markdown may act on mid-line; `_` between two word characters never starts emphasis in GFM,
#: and `>` is inert once every `<` is escaped, so both stay as they are (paths and reasons stay readable)
_SPECIAL = re.compile(r"([\\`*\[\]<|~&#!]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")


# ---------------------------------------------------------------------- inline formatting
#: what a tracker acts on after the Markdown is parsed, where a backslash no longer counts: GitHub links
#: `www.` and `scheme://` (autolinks), `@name` (a mention that notifies), `:name:` (emoji), `#12` and `GH-12`
#: (issue references) and hex runs (commit links). Text holding one of them goes into a code span instead,
#: which every tracker leaves alone.
_LIVE = re.compile(
    r"(?i)www\.|://|@|:(?=[a-z0-9_+-]*[a-z])[a-z0-9_+-]+:|:(?:[+-]1|100|1234):|#\d|\bgh-\d|\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"
)


def esc(value: object, limit: int = 500) -> str:
    """Free text: inert, one line, every Markdown-active character backslash-escaped; a code span when it holds
    something a tracker acts on after parsing (`_LIVE`)."""
    text = display(value, limit)
    if _LIVE.search(text):
        return code(text, limit)
    return _SPECIAL.sub(r"\\\1", text)


def code(value: object, limit: int = 200) -> str:
    """A code span (literal in every renderer); `|` escaped, which GFM honours inside table cells."""
    text = display(value, limit).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def num(value: object) -> str:
    if isinstance(value, bool) or value is None:
        return "–"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.4f}"
    return esc(value)


def plain(value: object) -> str:
    """An int without separators (line numbers, byte offsets: values a reader types into an editor)."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else "–"


def pct(share: float | None) -> str:
    return "–" if share is None else f"{share * 100:.1f} %"


def when(value: object) -> str:
    return "–" if value is None else esc(value)


def kind_header(kind: str) -> str:
    """A column named after a kind: the five as words, any other kind (data) as a code span."""
    return kind if kind in KINDS else code(kind)


def table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """A GFM table; cells are already formatted (escaped or code spans)."""
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out.extend("| " + " | ".join(cell.replace("\n", " ") for cell in row) + " |" for row in rows)
    return out


def fenced(lines: Sequence[str], info: str = "text") -> list[str]:
    body = [display(line, 1000) for line in lines]
    longest = max((len(run) for line in body for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, *body, fence]


def more(shown: int, total: int, what: str) -> list[str]:
    return [f"_… {total - shown} more {what} in the JSON report._", ""] if total > shown else []


def copies_per_tag(turn: dict[str, Any]) -> str:
    found = copies(turn)
    if found is None:
        return "–"
    return ", ".join(f"{code(tag)} ×{count}" for tag, count in found) or "none"


def diff_lines(commit: dict[str, Any]) -> list[str]:
    """One line per changed field: path, change, volatile flag, both sides."""
    lines = []
    for change in (commit.get("diff") or [])[:MAX_DIFF_LINES]:
        flag = "volatile" if change.get("volatile") else "semantic"
        lines.append(
            f"{display(change.get('path'), 200)}  {display(change.get('change'), 40)}  {flag}  "
            f"capture={value_text(change.get('capture'))}  commit={value_text(change.get('commit'))}"
        )
    total = diff_total(commit)
    if total > len(lines):
        lines.append(f"… {total - len(lines)} more changed fields")
    return lines


# ---------------------------------------------------------------------- sections
def render_markdown(report: dict[str, Any]) -> str:
    """The whole report as one Markdown document."""
    out: list[str] = []
    for section in (
        _header,
        _summary,
        _kinds,
        _reasons,
        _streaks,
        _peak_closes,
        _sessions,
        _turns,
        _directives,
        _avoidable,
        _disagreements,
        _rewritten,
        _problems,
        _sources,
    ):
        out.extend(section(report))
    return "\n".join(out).rstrip("\n") + "\n"


def _header(report: dict[str, Any]) -> list[str]:
    sel = report.get("selection") or {}
    parts = [f"session {code(sel['session'])}" if sel.get("session") else "all sessions"]
    if sel.get("since") or sel.get("until"):
        parts.append(f"from {when(sel.get('since'))} to {when(sel.get('until'))}")
    else:
        parts.append("all time")
    red = report.get("redactions") or {}
    if red.get("enabled"):
        kinds = ", ".join(f"{esc(k)} {v}" for k, v in (red.get("by_kind") or {}).items())
        redaction = f"on, {red.get('total', 0)} replaced" + (f" ({kinds})" if kinds else "")
    else:
        redaction = "**off** (`--no-redact`)"
    return [
        "# Continuity report",
        "",
        f"Generated {when(report.get('generated_at'))} by continuity-tui {esc(report.get('tool_version'))} "
        f"(schema {code(report.get('schema'))}).",
        "",
        f"- Selection: {', '.join(parts)}",
        f"- Redaction: {redaction}",
        "",
    ]


def _summary(report: dict[str, Any]) -> list[str]:
    cont = report.get("continuity") or {}
    turns = report.get("turns") or []
    rewritten = sum(1 for t in turns if is_rewritten(t))
    cf = report.get("counterfactual")
    peak = cont.get("peak_count")
    rows = [
        ["continuity decisions (log lines)", num(cont.get("events"))],
        ["re-send share (fork + flatten)", pct(cont.get("resend_share"))],
        ["sessions / turns", f"{num(len(report.get('sessions') or []))} / {num(len(turns))}"],
        ["rewritten turns", num(rewritten) if any(t.get("commit") for t in turns) else "not known"],
        [
            "avoidable re-sends",
            f"{num(cf.get('resends_avoidable'))} of {num(cf.get('resends_logged'))}" if cf else "not computed",
        ],
        *_largest_rows(report),
        [
            "peak count",
            f"{num(peak.get('value'))} ({code(peak.get('kind'))}) at {when(peak.get('at'))}" if peak else "–",
        ],
        ["replay agrees with the logged decision", _agreement_text(report)],
        ["problems", num(report.get("problems_total"))],
    ]
    return ["## Summary", "", *table(["measure", "value"], rows), ""]


def _largest_rows(report: dict[str, Any]) -> list[list[str]]:
    """The largest payload sent and the largest before dedupe, each labelled (one row when it is one call)."""
    sent, raw = largest_payloads(report)
    if sent is None and raw is None:
        return [["largest payload", "not reconstructed"]]

    def where(p: Payload) -> str:
        kind = f", {code(p.kind)}" if p.kind else ""
        return f"{code(p.session)} turn {num(p.index)}{kind}"

    if sent is not None and (raw is None or same_call(sent, raw)):
        before = raw.raw if raw is not None else sent.raw
        extra = f"; {num(before)} before dedupe" if before is not None and before != sent.sent else ""
        return [["largest payload sent (after dedupe)", f"{num(sent.sent)} bytes ({where(sent)}{extra})"]]
    rows = []
    if sent is not None:
        rows.append(["largest payload sent (after dedupe)", f"{num(sent.sent)} bytes ({where(sent)})"])
    if raw is not None:
        after = f"; {num(raw.sent)} sent" if raw.sent is not None else ""
        rows.append(["largest payload before dedupe", f"{num(raw.raw)} bytes ({where(raw)}{after})"])
    return rows


def _agreement_text(report: dict[str, Any]) -> str:
    found = agreement(report)
    if found is None:
        return "not replayed"
    agree, judged = found
    return f"{num(agree)} of {num(judged)} turns"


def _kinds(report: dict[str, Any]) -> list[str]:
    cont = report.get("continuity") or {}
    by_kind: dict[str, int] = cont.get("by_kind") or {}
    events = cont.get("events") or 0
    rows = [[code(kind), num(n), pct(n / events if events else None)] for kind, n in by_kind.items()]
    return ["## Decisions by kind", "", *table(["kind", "lines", "share"], rows), ""]


def _reasons(report: dict[str, Any]) -> list[str]:
    by_reason: dict[str, dict[str, int]] = (report.get("continuity") or {}).get("by_reason") or {}
    if not by_reason:
        return ["## Reasons by kind", "", "No continuity lines.", ""]
    kinds = kinds_of(*by_reason.values())
    rows = [
        [code(reason), *(num(counts.get(kind, 0)) for kind in kinds), num(sum(counts.values()))]
        for reason, counts in list(by_reason.items())[:MAX_REASONS]
    ]
    return [
        "## Reasons by kind",
        "",
        *table(["reason", *map(kind_header, kinds), "total"], rows),
        "",
        *more(len(rows), len(by_reason), "reasons"),
    ]


def _streaks(report: dict[str, Any]) -> list[str]:
    streaks = (report.get("continuity") or {}).get("streaks") or []
    head = [
        "## Longest streaks",
        "",
        "Runs of consecutive log lines with the same kind and reason (delta excluded).",
        "",
    ]
    if not streaks:
        return [*head, "No streak of two or more.", ""]
    rows = [
        [
            code(s.get("kind")),
            code(s.get("reason")),
            num(s.get("length")),
            f"{when(s.get('start'))} → {when(s.get('end'))}",
            f"{num(s.get('count_first'))} → {num(s.get('count_last'))}",
        ]
        for s in streaks[:MAX_STREAKS]
    ]
    return [
        *head,
        *table(["kind", "reason", "length", "start → end", "count first → last"], rows),
        "",
        *more(len(rows), len(streaks), "streaks"),
    ]


def _peak_closes(report: dict[str, Any]) -> list[str]:
    cont = report.get("continuity") or {}
    peak = cont.get("peak_count")
    out = ["## Peak", ""]
    if peak:
        out.append(
            f"Largest count on a flatten/fork/bootstrap line: **{num(peak.get('value'))}** "
            f"({code(peak.get('kind'))}) at {when(peak.get('at'))}."
        )
    else:
        out.append("No count on a flatten, fork or bootstrap line.")
    out.append("")
    closes: dict[str, int] = cont.get("closes") or {}
    if closes:
        out += [
            "## Session closes",
            "",
            *table(["reason", "lines"], [[code(r), num(n)] for r, n in closes.items()]),
            "",
        ]
    return out


def _sessions(report: dict[str, Any]) -> list[str]:
    sessions = report.get("sessions") or []
    if not sessions:
        return ["## Sessions", "", "No transcript in the selection.", ""]
    kinds = kinds_of(*(s.get("by_kind") or {} for s in sessions))
    rows = [
        [
            code(s.get("id")),
            code(s.get("cwd")) if s.get("cwd") else "–",
            num(s.get("turns")),
            *(num((s.get("by_kind") or {}).get(kind, 0)) for kind in kinds),
            num(s.get("rewritten")),
            num(s.get("payload_bytes_total")),
        ]
        for s in sessions[:MAX_SESSIONS]
    ]
    headers = ["session", "cwd", "turns", *map(kind_header, kinds), "rewritten", "payload bytes"]
    out = ["## Sessions", "", *table(headers, rows), "", *more(len(rows), len(sessions), "sessions")]
    profiles = [(s, found) for s in sessions[:MAX_SESSIONS] if (found := profile_of(s)) is not None]
    if profiles:
        out += ["Build profile chosen per session (the rules the recomputation used):", ""]
        for session, (label, why) in profiles:
            out.append(f"- {code(session.get('id'))}: {esc(label)}" + (f" — {esc(why)}" if why else ""))
        out.append("")
    return out


def _disagreements(report: dict[str, Any]) -> list[str]:
    found = agreement(report)
    if found is None:
        return []
    turns = disagreements(report)
    out = ["## Replay disagreements", ""]
    if not turns:
        return [*out, f"The replay agrees with every logged decision ({num(found[1])} turns).", ""]
    rows = [
        [
            code(t.get("session")),
            num(t.get("index")),
            when(t.get("ts")),
            code(decision_text(t.get("logged"))),
            code(decision_text(t.get("recomputed"))),
            esc(t.get("disagreement") or "–"),
        ]
        for t in turns[:MAX_AVOIDABLE]
    ]
    headers = ["session", "turn", "time", "logged", "recomputed", "first difference"]
    return [*out, *table(headers, rows), "", *more(len(rows), len(turns), "disagreements")]


def _turns(report: dict[str, Any]) -> list[str]:
    turns = report.get("turns") or []
    if not turns:
        return []
    out = [
        "## Turns",
        "",
        "One row per provider call. *share of payload* is the part of the call's raw payload made of tagged "
        "directive copies.",
        "",
    ]
    shown = 0
    by_session: dict[str, list[dict[str, Any]]] = {}
    for turn in turns:
        by_session.setdefault(str(turn.get("session")), []).append(turn)
    for session, items in by_session.items():
        if shown >= MAX_TURN_ROWS:
            break
        items = items[: MAX_TURN_ROWS - shown]
        shown += len(items)
        rows = []
        for turn in items:
            kind = turn_kind(turn)
            rewritten = is_rewritten(turn)
            rows.append(
                [
                    when(turn.get("ts")),
                    (code(kind) if kind else "–") + (" (rewritten)" if rewritten else ""),
                    num(turn_payload(turn)),
                    copies_per_tag(turn),
                    pct(directive_share(turn)),
                ]
            )
        out += [
            f"### Session {code(session)}",
            "",
            *table(["time", "kind", "payload bytes", "copies per tag", "share of payload"], rows),
            "",
        ]
    return out + more(shown, len(turns), "turns")


def _directives(report: dict[str, Any]) -> list[str]:
    directives = report.get("directives")
    if not directives:
        return ["## Directives", "", "Payloads were not reconstructed: no directive counts.", ""]
    tags: dict[str, dict[str, Any]] = directives.get("tags") or {}
    out = ["## Directives", ""]
    if tags:
        rows = [
            [
                code(tag),
                num(t.get("injections")),
                num(t.get("variants")),
                num(t.get("bytes_per_copy")),
                num(t.get("copies_in_largest_payload")),
                num(t.get("bytes_in_largest_payload")),
            ]
            for tag, t in tags.items()
        ]
        headers = ["tag", "injections", "variants", "bytes per copy", "copies in largest", "bytes in largest"]
        out += [*table(headers, rows), ""]
    else:
        out += ["No tagged directive block in any payload.", ""]
    _sent, raw = largest_payloads(report)
    if raw is not None:
        after = f" ({num(raw.sent)} sent after the agent's dedupe)" if raw.sent is not None else ""
        out += [
            f"Largest payload before dedupe (the one dedupe is simulated on): {num(raw.raw)} bytes{after}, session "
            f"{code(raw.session)} turn {num(raw.index)}.",
            "",
        ]
    dedupe: dict[str, dict[str, Any]] = directives.get("dedupe") or {}
    if dedupe:
        rows = []
        for policy, sim in dedupe.items():
            before, after = sim.get("bytes_before"), sim.get("bytes_after")
            saved = before - after if isinstance(before, int) and isinstance(after, int) else None
            rows.append(
                [code(policy), num(before), num(after), num(saved), pct(saved / before if saved and before else None)]
            )
        out += [
            "Dedupe policies simulated on the largest payload:",
            "",
            *table(["policy", "bytes before", "bytes after", "saved", "saved share"], rows),
            "",
        ]
    return out


def _avoidable(report: dict[str, Any]) -> list[str]:
    cf = report.get("counterfactual")
    out = ["## Avoidable re-sends", ""]
    if not cf:
        return [*out, "Not computed: the continuity decisions could not be replayed with a stable fingerprint.", ""]
    logged, stable = cf.get("bytes_logged"), cf.get("bytes_if_stable")
    out += [
        f"- Re-sends (fork + flatten) in transcripts: **{num(cf.get('resends_logged'))}**",
        f"- Avoidable (caused by a volatile-only rewrite): **{num(cf.get('resends_avoidable'))}**",
    ]
    if isinstance(logged, int) and isinstance(stable, int):
        saved = pct((logged - stable) / logged) if logged else "–"
        out.append(f"- Payload bytes as sent: {num(logged)}; with a stable fingerprint: {num(stable)} (saves {saved})")
    out.append("")
    turns = [t for t in report.get("turns") or [] if t.get("avoidable")]
    if turns:
        rows = [
            [
                code(t.get("session")),
                num(t.get("index")),
                when(t.get("ts")),
                code(turn_kind(t) or "–"),
                code(turn_reason(t) or "–"),
                num(turn_payload(t)),
                num(t.get("payload_bytes_if_stable")),
            ]
            for t in turns[:MAX_AVOIDABLE]
        ]
        headers = ["session", "turn", "time", "kind", "reason", "payload bytes", "if stable"]
        out += [*table(headers, rows), "", *more(len(rows), len(turns), "avoidable turns")]
    return out


def _rewritten(report: dict[str, Any]) -> list[str]:
    turns = [t for t in report.get("turns") or [] if is_rewritten(t)]
    out = ["## Rewritten turns", ""]
    if not turns:
        known = any(t.get("commit") for t in report.get("turns") or [])
        return [*out, "No turn committed as rewritten." if known else "Commit outcomes are not known.", ""]
    for turn in turns[:MAX_REWRITTEN]:
        commit = turn.get("commit") or {}
        klass = commit.get("class")
        out.append(f"### {code(turn.get('session'))} turn {num(turn.get('index'))} · {when(turn.get('ts'))}")
        out.append("")
        klass_text = esc(klass) if klass else "class unknown"
        out.append(f"- Outcome: rewritten ({klass_text}); evidence: {esc(commit.get('source'))}")
        content = turn.get("content")
        if isinstance(content, dict):
            blocks = ", ".join(f"{num(n)} {esc(kind)}" for kind, n in (content.get("blocks") or {}).items())
            out.append(f"- Message: {blocks or 'no blocks'}; {num(content.get('chars'))} characters of text")
        why = turn.get("why")
        if why:
            out.append(f"- Why: {esc(why)}")
        out.append("")
        lines = diff_lines(commit)
        out += [*fenced(lines), ""] if lines else ["No field diff recorded for this turn.", ""]
        text = content.get("text") if isinstance(content, dict) else None
        if isinstance(text, str) and text:  # only with --include-text
            shown = text.splitlines()[:MAX_TEXT_LINES]
            out += ["Message text:", "", *fenced(shown), ""]
    return out + more(min(len(turns), MAX_REWRITTEN), len(turns), "rewritten turns")


def _problems(report: dict[str, Any]) -> list[str]:
    problems = report.get("problems") or []
    total = report.get("problems_total") or len(problems)
    if not problems:
        return ["## Problems", "", "None: every line read was understood.", ""]
    rows = [
        [code(p.get("path")), plain(p.get("line")), plain(p.get("offset")), code(p.get("error"), 500)]
        for p in problems[-MAX_PROBLEMS:]
    ]
    return [
        "## Problems",
        "",
        f"{num(total)} bad lines or file events; the newest {len(rows)} are listed.",
        "",
        *table(["file", "line", "offset", "error"], rows),
        "",
    ]


def _sources(report: dict[str, Any]) -> list[str]:
    sources = report.get("sources") or []
    rows = [
        [
            code(s.get("path")),
            code(s.get("format")) if s.get("format") else "–",
            num(s.get("bytes")),
            num(s.get("lines")),
            num(s.get("bad_lines")),
        ]
        for s in sources[:MAX_SOURCES]
    ]
    return [
        "## Sources",
        "",
        *table(["file", "format", "bytes", "lines", "bad lines"], rows),
        "",
        *more(len(rows), len(sources), "files"),
    ]
