"""A built report as Markdown that pastes cleanly into an issue tracker: tables and short lists, no HTML.

Data strings are either code spans (ids, kinds, reasons, paths, tags: literal in every renderer, readable
raw) or escaped text; a `|` inside a table cell is escaped, and fenced blocks use a fence longer than any
backtick run they contain, so no value can close a span, a cell or a block early.

It fits one GitHub issue at any history size. An issue body or comment takes 65,536 characters; the
"paste-ready" report of a 21-session history was 69,410, and every section grew with the history. Now the
document opens with the one-sentence answer (`core.report.headline`), repeated findings are grouped (17
rewritten turns with the same field diff are one "×17" entry, problems of one kind in one file one row),
tables are top-N ("… and N more in the JSON and HTML reports"), and the whole is rendered at decreasing
detail until it is under `BUDGET` (measured in UTF-16 code units, as a browser counts a textarea), which
leaves room for the reporter's own words. The JSON and the HTML keep every detail.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from msgspec import Struct, field
from msgspec.structs import fields

from core.kernel.waste import cause_text
from core.model import CALL_KINDS
from core.report.common import (
    CallFigures,
    Payload,
    agreement,
    call_figures,
    copies_text,
    decision_text,
    diff_total,
    disagreements,
    inexact_agents,
    is_rewritten,
    kind_order,
    kinds_of,
    largest_composition,
    largest_payloads,
    largest_prompt,
    profile_of,
    prompt_tokens,
    same_call,
    share_sent,
    tag_rows,
    turn_kind,
    turn_payload,
    turn_reason,
    value_text,
)
from core.report.headline import headline
from core.report.waste import gap_text
from core.report.waste import usd_text as usd
from core.sanitize import display

LIMIT = 65_536
"""GitHub's limit for an issue body or a comment, in characters."""
BUDGET = 60_000
"""What the whole document is kept under: the limit less room for the reporter's own lines."""
MAX_DIFF_LINES = 40
MAX_TEXT_LINES = 40

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
    """A column named after a kind: the call kinds as words, any other kind (data) as a code span."""
    return kind if kind in CALL_KINDS else code(kind)


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
    if total <= shown:
        return []
    return [f"_… and {total - shown:,} more {what} in the JSON and HTML reports._", ""]


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


# ---------------------------------------------------------------------- how much detail fits
class Caps(Struct, frozen=True):
    """How many items each section lists; `scaled` lowers them toward their floors (`FLOORS`)."""

    reasons: int = 25
    streaks: int = 10
    closes: int = 20
    sessions: int = 25
    turn_sessions: int = 10
    turns_per_session: int = 40
    tags: int = 20
    avoidable_groups: int = 15
    avoidable: int = 20
    disagreements: int = 20
    rewritten: int = 15
    listed_turns: int = 40
    problems: int = 25
    sources: int = 25

    def scaled(self, factor: float) -> Caps:
        return Caps(
            **{f.name: max(getattr(FLOORS, f.name), round(getattr(self, f.name) * factor)) for f in fields(self)}
        )


FLOORS = Caps(reasons=5, streaks=3, closes=5, sessions=5, turn_sessions=0, turns_per_session=0, tags=5,
              avoidable_groups=5, avoidable=0, disagreements=3, rewritten=3, listed_turns=8, problems=5,
              sources=5)  # fmt: skip
LEVELS = (1.0, 0.6, 0.35, 0.2, 0.1, 0.0)


def size(text: str) -> int:
    """Characters as a browser's textarea (and GitHub's limit) counts them: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


# ---------------------------------------------------------------------- sections
def render_markdown(report: dict[str, Any], budget: int = BUDGET) -> str:
    """The whole report as one Markdown document, under `budget` characters (see the module docstring)."""
    facts = Facts.of(report)
    text = ""
    for level in LEVELS:
        text = _render(report, facts, Caps().scaled(level))
        if size(text) <= budget:
            return text
    return _cut(text, budget)


SECTIONS: tuple[Callable[[dict[str, Any], Facts, Caps], list[str]], ...] = ()


def _render(report: dict[str, Any], facts: Facts, caps: Caps) -> str:
    out: list[str] = []
    for section in SECTIONS:
        out.extend(section(report, facts, caps))
    return "\n".join(out).rstrip("\n") + "\n"


def _cut(text: str, budget: int) -> str:
    """Whole sections while they fit, then a note: only reached when even the least detail is too long (data
    strings near their display limits in every cell)."""
    note = "\n_The rest of this report does not fit in one issue: it is in the JSON and HTML reports._\n"
    parts = re.split(r"(?m)^(?=## )", text)
    out = ""
    for part in parts:
        if size(out + part) + size(note) > budget:
            break
        out += part
    if not out:  # not even the header fits: cut inside it, on a line
        lines: list[str] = []
        for line in text.splitlines(keepends=True):
            if size("".join(lines) + line) + size(note) > budget:
                break
            lines.append(line)
        out = "".join(lines)
    return out.rstrip("\n") + "\n" + note


# ---------------------------------------------------------------------- groupings, computed once
def _shape(text: object) -> str:
    """An error or difference text with its numbers blanked: what makes two findings "the same"."""
    return re.sub(r"\d+", "#", display(text, 300))


class Group(Struct):
    """Findings that read the same, kept in first-seen order; `first` is shown as the example."""

    key: tuple[Any, ...]
    items: list[dict[str, Any]] = field(default_factory=list)

    @property
    def first(self) -> dict[str, Any]:
        return self.items[0]


def group(items: Iterable[dict[str, Any]], key: Callable[[dict[str, Any]], tuple[Any, ...]]) -> list[Group]:
    """Groups by `key`, largest first (ties in first-seen order)."""
    groups: dict[tuple[Any, ...], Group] = {}
    for item in items:
        k = key(item)
        found = groups.get(k)
        if found is None:
            found = groups[k] = Group(k)
        found.items.append(item)
    return sorted(groups.values(), key=lambda g: -len(g.items))


def _diff_signature(turn: dict[str, Any]) -> tuple[Any, ...]:
    commit = turn.get("commit") or {}
    changes = tuple((c.get("path"), c.get("change"), bool(c.get("volatile"))) for c in commit.get("diff") or [])
    return (commit.get("class"), commit.get("source"), changes, diff_total(commit))


def _resends(session: dict[str, Any]) -> int:
    by_kind = session.get("by_kind") or {}
    return sum(int(n) for k, n in by_kind.items() if k in ("fork", "flatten", "re-send") and isinstance(n, int))


class Facts(Struct):
    """What several levels of detail share: each computed once, in one pass over the turns where possible."""

    sessions: list[dict[str, Any]]
    rewritten: list[Group]
    avoidable: list[dict[str, Any]]
    avoidable_groups: list[Group]
    disagreements: list[Group]
    problems: list[Group]
    sources: list[dict[str, Any]]
    commits_known: bool

    @classmethod
    def of(cls, report: dict[str, Any]) -> Facts:
        turns = report.get("turns") or []
        sessions = sorted(report.get("sessions") or [],
                          key=lambda s: (-_resends(s), -(s.get("rewritten") or 0), -(s.get("turns") or 0)))  # fmt: skip
        avoidable = [t for t in turns if t.get("avoidable")]
        return cls(
            sessions=sessions,
            rewritten=group((t for t in turns if is_rewritten(t)), _diff_signature),
            avoidable=sorted(avoidable, key=lambda t: -(turn_payload(t) or 0)),
            avoidable_groups=group(avoidable, lambda t: (turn_kind(t), turn_reason(t))),
            disagreements=group(
                disagreements(report),
                lambda t: (
                    decision_kind(t.get("logged")),
                    decision_kind(t.get("recomputed")),
                    _shape(t.get("disagreement")),
                ),
            ),
            problems=group(report.get("problems") or [], lambda p: (p.get("path"), _shape(p.get("error")))),
            sources=sorted(
                report.get("sources") or [], key=lambda s: (-(s.get("bad_lines") or 0), -(s.get("bytes") or 0))
            ),
            commits_known=any(t.get("commit") for t in turns),
        )


def decision_kind(decision: Any) -> str:
    """`fork/assistant_rewritten` (a decision without its count, so equal decisions group)."""
    return "/".join(decision_text(decision).split("/")[:2])


def _headline(report: dict[str, Any], _facts: Facts, _caps: Caps) -> list[str]:
    parts = []
    for segment in headline(report):
        if segment.style == "code":
            parts.append(code(segment.text))
        elif segment.style == "strong":
            parts.append(f"**{esc(segment.text)}**")
        else:
            parts.append(esc(segment.text))
    return ["# Continuity report", "", "".join(parts), ""]


def _header(report: dict[str, Any], _facts: Facts, _caps: Caps) -> list[str]:
    sel = report.get("selection") or {}
    parts = [f"session {code(sel['session'])}" if sel.get("session") else "all sessions"]
    if sel.get("since") or sel.get("until"):
        parts.append(f"from {when(sel.get('since'))} to {when(sel.get('until'))}")
    else:
        parts.append("all time")
    if sel.get("filter"):
        parts.append(f"turns matching {code(sel.get('filter'))}")
    red = report.get("redactions") or {}
    if red.get("enabled"):
        kinds = ", ".join(f"{esc(k)} {v}" for k, v in (red.get("by_kind") or {}).items())
        redaction = f"on, {red.get('total', 0)} replaced" + (f" ({kinds})" if kinds else "")
    else:
        redaction = "**off** (`--no-redact`)"
    return [
        f"Generated {when(report.get('generated_at'))} by continuity-tui {esc(report.get('tool_version'))} "
        f"(schema {code(report.get('schema'))}).",
        "",
        f"- Selection: {', '.join(parts)}",
        f"- Redaction: {redaction}",
        *_left_out(report),
        "",
    ]


def _left_out(report: dict[str, Any]) -> list[str]:
    """A line when the discovery cap left files out (nothing otherwise: the usual report is unchanged)."""
    found = report.get("discovery") or {}
    left = found.get("left_out") or 0
    if not left:
        return []
    more = "" if found.get("counted_all", True) else "at least "
    return [f"- Files: **{more}{num(left)} files left out**, never read: discovery stops at {num(found.get('cap'))} "
            f"files ({num(found.get('files'))} read); name a narrower path"]  # fmt: skip


def _summary(report: dict[str, Any], facts: Facts, _caps: Caps) -> list[str]:
    """The calls first (every agent's: what its user expects to read), then senpi's log lines where they were
    read; the two are never added together."""
    cont = report.get("continuity") or {}
    turns = report.get("turns") or []
    rewritten = sum(len(g.items) for g in facts.rewritten)
    cf = report.get("counterfactual")
    peak = cont.get("peak_count")
    calls = call_figures(report)
    logs = bool(cont.get("events")) or calls is None  # the log-line rows where logs were read (or nothing else)
    rows = _call_rows(calls) if calls is not None else []
    if logs:
        rows += [
            ["continuity decisions (log lines)", num(cont.get("events"))],
            ["re-send share of the log lines (fork + flatten)", pct(cont.get("resend_share"))],
        ]
    sessions = num(len(report.get("sessions") or []))
    rows += [
        ["sessions / calls" if calls is not None else "sessions / turns", f"{sessions} / {num(len(turns))}"],
        ["rewritten turns", num(rewritten) if facts.commits_known else "not known"],
        [
            "avoidable re-sends",
            f"{num(cf.get('resends_avoidable'))} of {num(cf.get('resends_logged'))}" if cf else "not computed",
        ],
        *_largest_rows(report),
    ]
    if logs:
        at = f"{num(peak.get('value'))} ({code(peak.get('kind'))}) at {when(peak.get('at'))}" if peak else "–"
        rows.append(["peak count", at])
    rows += [
        ["replay agrees with the logged decision", _agreement_text(report)],
        ["problems", num(report.get("problems_total"))],
    ]
    return ["## Summary", "", *table(["measure", "value"], rows), ""]


def _waste(report: dict[str, Any], _facts: Facts, caps: Caps) -> list[str]:
    """How much re-writing already-cached history cost and why: by cause, then the calls it adds up to (issue
    14). Every figure is the sum of `turns[].cache.excess` and `turns[].cost_usd` of the calls named."""
    waste = report.get("waste")
    if not isinstance(waste, dict):
        return []
    out = ["## Prompt-cache waste", ""]
    senpi = waste.get("counterfactual")
    if waste.get("calls"):
        cost = waste.get("cost_usd") or {}
        excess, actual = cost.get("excess"), cost.get("actual")
        money = f"{usd(excess)} beyond cache hits at list prices, of {usd(actual)} the calls cost" if isinstance(
            actual, int | float) else "no list price for these calls"  # fmt: skip
        out += [
            f"{num(waste.get('excess_tokens'))} tokens were processed again that a warm cache would have read "
            f"({pct(waste.get('share'))} of the {num(waste.get('not_read_tokens'))} not read from cache, over "
            f"{num(waste.get('calls'))} calls judged from cache figures): {money}. A call's excess is min(tokens "
            "not read from cache, expected read − cache read), the expected read being what the previous call "
            "of its thread cached (its read + write; OpenAI: its prompt in 128-token blocks).",
            "",
        ]
        by_cause = waste.get("by_cause") or {}
        usd_by = cost.get("by_cause") or {}
        calls_by = waste.get("calls_by_cause") or {}
        lifetimes = waste.get("expired_after") if isinstance(waste.get("expired_after"), dict) else None
        total = sum(v for v in by_cause.values() if isinstance(v, int)) or 1
        money_total = sum(v for v in usd_by.values() if isinstance(v, int | float)) or None
        rows = [[code(cause), esc(cause_text(str(cause), lifetimes)), num(calls_by.get(cause)), num(tokens),
                 pct(tokens / total if isinstance(tokens, int) else None), usd(usd_by.get(cause)),
                 pct(usd_by[cause] / money_total if money_total and isinstance(usd_by.get(cause), int | float)
                     else None)]
                for cause, tokens in by_cause.items()]  # fmt: skip
        if rows:
            out += [*table(["cause", "what", "calls", "tokens", "share of tokens", "USD", "share of USD"], rows), ""]
        top = (waste.get("top") or [])[: max(3, caps.streaks)]
        if top:
            out += ["Largest (each is one call's `turns[].cache`):", ""]
            rows = [[code(t.get("session")), num(t.get("index")), when(t.get("ts")), code(t.get("cause")),
                     num(t.get("expected_read")), num(t.get("cache_read")), num(t.get("excess")),
                     usd(t.get("excess_usd")), gap_text(t.get("gap_ms"), t.get("ttl_ms"))] for t in top]  # fmt: skip
            out += [*table(["session", "turn", "time", "cause", "expected read", "read", "excess", "USD",
                            "gap / lifetime"], rows), ""]  # fmt: skip
            told = [t for t in top if t.get("where") or t.get("after")]
            for t in told:
                after = f"after {', '.join(code(a) for a in t['after'])}" if t.get("after") else ""
                where = esc(t.get("where")) if t.get("where") else ""
                out.append(f"- {code(t.get('session'))} turn {num(t.get('index'))}: " + "; ".join(
                    part for part in (after, where) if part))  # fmt: skip
            if told:
                out.append("")
        written = waste.get("not_read_by_reason") or {}
        if written:
            parts = " · ".join(f"{code(reason)} {num(n)}" for reason, n in list(written.items())[:8])
            out += [f"Tokens not read from cache, by the call's reason (waste beside the expected cost of new "
                    f"content): {parts}.", ""]  # fmt: skip
        out += _pricing_lines(waste)
    if isinstance(senpi, dict):
        out += [
            f"senpi's resident lane (its own decisions, no cache figures): {num(senpi.get('resends_avoidable'))} of "
            f"{num(senpi.get('resends'))} re-sends were avoidable with a stable fingerprint, "
            f"{num(senpi.get('bytes_avoidable'))} payload bytes and {num(senpi.get('messages_avoidable'))} messages "
            "sent again for nothing.",
            "",
        ]
    return out


def _pricing_lines(waste: dict[str, Any]) -> list[str]:
    pricing = waste.get("pricing") or {}
    unpriced = pricing.get("unpriced_models") or {}
    missing = ""
    if unpriced:
        names = ", ".join(f"{code(m)} ({num(k)})" for m, k in list(unpriced.items())[:5])
        missing = f" No list price, left out of the dollars: {names} calls (add them with `--prices FILE`)."
    sources = ", ".join(esc(url) for url in pricing.get("urls") or [])
    file = f" + {code(pricing.get('file'))}" if pricing.get("file") else ""
    agent = (pricing.get("actual_from") or {}).get("agent")
    own = f" {num(agent)} calls' actual cost is the agent's own figure (pi's `usage.cost`)." if agent else ""
    return [f"Prices: {esc(pricing.get('source'))}{file}, as of {esc(pricing.get('as_of'))} ({sources}).{own}"
            f"{missing}", ""]  # fmt: skip


def _call_rows(calls: CallFigures) -> list[list[str]]:
    """The figures a user of any agent reads first: calls (by agent), their kinds, the re-send share, tokens."""
    agents = ", ".join(f"{code(agent)} {num(n)}" for agent, n in calls.by_agent.items())
    kinds = " · ".join(f"{num(calls.by_kind[k])} {code(k)}" for k in kind_order(calls.by_kind))
    exact = calls.resends / calls.judged if calls.judged else None  # (the headline's figure, not one rounded twice)
    share = f"{pct(exact)} ({num(calls.resends)} of {num(calls.judged)}"
    share += f"; {num(calls.aborted)} aborted, with no usage, not counted)" if calls.aborted else ")"
    rows = [
        ["calls", f"{num(calls.total)} ({agents})" if agents else num(calls.total)],
        ["calls by kind", kinds],
        ["re-send share of the calls (fork + flatten + re-send)", share],
    ]
    if calls.tokens:
        figures = " · ".join(num(calls.tokens.get(k)) for k in ("input", "cache_read", "cache_write", "output"))
        rows.append(["tokens: input · cache read · cache write · output", figures])
    return rows


def _largest_rows(report: dict[str, Any]) -> list[list[str]]:
    """The largest payload sent and the largest before dedupe, each labelled (one row when it is one call)."""
    sent, raw = largest_payloads(report)
    prompt = largest_prompt(report)
    tokens_row = []
    if prompt is not None:  # the agents whose transcripts cannot give the bytes: their prompt in tokens, and why
        kind = f", {code(prompt.kind)}" if prompt.kind else ""
        why = f"{', '.join(prompt.agents)} transcripts hold no system prompt or tools: tokens, not bytes"
        tokens_row = [["largest prompt (tokens)", f"{num(prompt.tokens)} tokens ({code(prompt.session)} turn "
                                                  f"{num(prompt.index)}{kind}; {esc(why)})"]]  # fmt: skip
    if sent is None and raw is None:
        return tokens_row or [["largest payload", "not reconstructed"]]
    return _bytes_rows(sent, raw) + tokens_row


def _bytes_rows(sent: Payload | None, raw: Payload | None) -> list[list[str]]:

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
        rows.append([f"largest {raw.noun} before dedupe", f"{num(raw.raw)} bytes ({where(raw)}{after})"])
    return rows


def _agreement_text(report: dict[str, Any]) -> str:
    found = agreement(report)
    if found is None:
        return "not replayed"
    agree, judged = found
    return f"{num(agree)} of {num(judged)} turns"


def _log_tables(report: dict[str, Any]) -> bool:
    """Whether the log lines get tables of their own: where no call was read, or where some line is not one of
    the calls' own decisions (every line matched to a call would repeat the calls' tables, line for line)."""
    cont = report.get("continuity") or {}
    if not (report.get("calls") or {}).get("total"):
        return True
    return bool(cont.get("events")) and (cont.get("attributed") or 0) < cont["events"]


def _kinds(report: dict[str, Any], _facts: Facts, _caps: Caps) -> list[str]:
    """Calls by kind (every agent's), then the log lines by kind where senpi's logs were read: two units, two
    tables, never added together (the section said "0 decisions" beside 937 pi calls)."""
    out: list[str] = []
    calls = report.get("calls") or {}
    if calls.get("total"):
        by_kind: dict[str, int] = calls.get("by_kind") or {}
        total = calls["total"]
        rows = [[code(kind), num(by_kind.get(kind, 0)), pct(by_kind.get(kind, 0) / total)]
                for kind in kind_order(by_kind)]  # fmt: skip
        out += ["## Calls by kind", "", *table(["kind", "calls", "share"], rows), ""]
    cont = report.get("continuity") or {}
    if _log_tables(report):
        log_kinds: dict[str, int] = cont.get("by_kind") or {}
        events = cont.get("events") or 0
        rows = [[code(kind), num(n), pct(n / events if events else None)] for kind, n in log_kinds.items()]
        title = "## Log decisions by kind" if out else "## Decisions by kind"
        out += [title, "", *table(["kind", "lines", "share"], rows), ""]
    return out


def _reasons(report: dict[str, Any], _facts: Facts, caps: Caps) -> list[str]:
    out: list[str] = []
    calls = report.get("calls") or {}
    if calls.get("total"):
        by_reason = calls.get("by_reason") or {}
        out += _reason_table(
            "## Call reasons by kind", by_reason, caps, kind_order(k for c in by_reason.values() for k in c)
        )
    cont = report.get("continuity") or {}
    if _log_tables(report):
        title = "## Log reasons by kind" if out else "## Reasons by kind"
        by_reason: dict[str, dict[str, int]] = cont.get("by_reason") or {}
        if not by_reason:
            return [*out, title, "", "No continuity lines.", ""]
        out += _reason_table(title, by_reason, caps, kinds_of(*by_reason.values()))
    return out


def _reason_table(title: str, by_reason: dict[str, dict[str, int]], caps: Caps, kinds: list[str]) -> list[str]:
    ranked = sorted(by_reason.items(), key=lambda item: -sum(item[1].values()))  # most first
    rows = [
        [code(reason), *(num(counts.get(kind, 0)) for kind in kinds), num(sum(counts.values()))]
        for reason, counts in ranked[: caps.reasons]
    ]
    return [
        title,
        "",
        *table(["reason", *map(kind_header, kinds), "total"], rows),
        "",
        *more(len(rows), len(by_reason), "reasons"),
    ]


def _streaks(report: dict[str, Any], _facts: Facts, caps: Caps) -> list[str]:
    calls = report.get("calls") or {}
    cont = report.get("continuity") or {}
    out = ["## Longest streaks", ""]
    units = []
    if calls.get("total"):
        units.append(("calls of one session", calls.get("streaks") or []))
    if _log_tables(report):
        units.append(("log lines", cont.get("streaks") or []))
    for unit, streaks in units:
        out += [f"Runs of consecutive {unit} with the same kind and reason (delta excluded).", ""]
        if not streaks:
            out += ["No streak of two or more.", ""]
            continue
        rows = [
            [
                code(s.get("kind")),
                code(s.get("reason")),
                num(s.get("length")),
                f"{when(s.get('start'))} → {when(s.get('end'))}",
                f"{num(s.get('count_first'))} → {num(s.get('count_last'))}",
            ]
            for s in streaks[: caps.streaks]
        ]
        out += [
            *table(["kind", "reason", "length", "start → end", "count first → last"], rows),
            "",
            *more(len(rows), len(streaks), "streaks"),
        ]
    return out


def _peak_closes(report: dict[str, Any], _facts: Facts, caps: Caps) -> list[str]:
    cont = report.get("continuity") or {}
    if not cont.get("events") and (report.get("calls") or {}).get("total"):
        return []  # the peak count and the closes are the log lines' (the calls' largest payload is in the summary)
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
        ranked = sorted(closes.items(), key=lambda item: -item[1])[: caps.closes]
        out += [
            "## Session closes",
            "",
            *table(["reason", "lines"], [[code(r), num(n)] for r, n in ranked]),
            "",
            *more(len(ranked), len(closes), "close reasons"),
        ]
    return out


def _sessions(report: dict[str, Any], facts: Facts, caps: Caps) -> list[str]:
    sessions = facts.sessions
    if not sessions:
        return ["## Sessions", "", "No transcript in the selection.", ""]
    shown = sessions[: caps.sessions]
    kinds = kind_order(kinds_of(*(s.get("by_kind") or {} for s in shown)))
    inexact = set(inexact_agents(report))
    # bytes where the transcript gives them exactly (senpi), prompt tokens for every agent that reports usage
    with_tokens = any(isinstance(s.get("tokens"), dict) for s in shown)
    rows = [
        [
            code(s.get("id")),
            code(s.get("cwd")) if s.get("cwd") else "–",
            num(s.get("turns")),
            *(num((s.get("by_kind") or {}).get(kind, 0)) for kind in kinds),
            num(s.get("rewritten")),
            num(s.get("payload_bytes_total")) if s.get("agent") not in inexact else "–",
            *([num(prompt_tokens(s.get("tokens")))] if with_tokens else []),
        ]
        for s in shown
    ]
    headers = ["session", "cwd", "turns", *map(kind_header, kinds), "rewritten", "payload bytes",
               *(["prompt tokens"] if with_tokens else [])]  # fmt: skip
    order = "most re-sends first" if len(sessions) > 1 else ""
    out = ["## Sessions", "", *([f"{order.capitalize()}.", ""] if order else []), *table(headers, rows), "",
           *more(len(rows), len(sessions), "sessions")]  # fmt: skip
    profiles = [(s, found) for s in shown if (found := profile_of(s)) is not None]
    if profiles:
        out += ["Build profile chosen per session (the rules the recomputation used):", ""]
        for session, (label, why) in profiles:
            out.append(f"- {code(session.get('id'))}: {esc(label)}" + (f" — {esc(why)}" if why else ""))
        out.append("")
    return out


def _disagreements(report: dict[str, Any], facts: Facts, caps: Caps) -> list[str]:
    found = agreement(report)
    if found is None:
        return []
    out = ["## Replay disagreements", ""]
    if not facts.disagreements:
        return [*out, f"The replay agrees with every logged decision ({num(found[1])} turns).", ""]
    rows = []
    for g in facts.disagreements[: caps.disagreements]:
        t = g.first
        rows.append(
            [
                code(t.get("session")),
                num(t.get("index")),
                when(t.get("ts")),
                code(decision_text(t.get("logged"))),
                code(decision_text(t.get("recomputed"))),
                esc(t.get("disagreement") or "–"),
                f"×{len(g.items)}" if len(g.items) > 1 else "1",
            ]
        )
    total = sum(len(g.items) for g in facts.disagreements)
    headers = ["session", "turn", "time", "logged", "recomputed", "first difference", "turns like it"]
    said = [g.first for g in facts.disagreements[: caps.disagreements] if g.first.get("contradiction")]
    against = ["Against the build profile each session's evidence points to:", ""] if said else []
    for t in said:
        against.append(f"- {code(t.get('session'))} turn {num(t.get('index'))}: {esc(t.get('contradiction'))}")
    return [
        *out,
        *table(headers, rows),
        "",
        *more(len(rows), len(facts.disagreements), f"kinds of disagreement ({total:,} turns in all)"),
        *([*against, ""] if against else []),
    ]


def _turns(report: dict[str, Any], facts: Facts, caps: Caps) -> list[str]:
    turns = report.get("turns") or []
    if not turns:
        return []
    out = [
        "## Turns",
        "",
        "One row per provider call, each figure of the payload as sent (after the agent's own dedupe): *bytes "
        "sent* what the provider received, *copies per tag* the directive blocks in it (with the count as "
        "serialized where the dedupe collapsed some), *share of bytes sent* the part of those bytes they make.",
        "",
    ]
    if not caps.turn_sessions or not caps.turns_per_session:
        return [*out, f"_{len(turns):,} turns: one row each in the JSON and HTML reports._", ""]
    by_session: dict[str, list[dict[str, Any]]] = {}
    for turn in turns:
        by_session.setdefault(str(turn.get("session")), []).append(turn)
    order = [str(s.get("id")) for s in facts.sessions if str(s.get("id")) in by_session]
    order += [sid for sid in by_session if sid not in order]
    shown_turns = 0
    for session in order[: caps.turn_sessions]:
        items = by_session[session]
        rows = []
        for turn in items[: caps.turns_per_session]:
            kind = turn_kind(turn)
            rewritten = is_rewritten(turn)
            rows.append(
                [
                    when(turn.get("ts")),
                    (code(kind) if kind else "–") + (" (rewritten)" if rewritten else ""),
                    num(turn_payload(turn)),
                    copies_text(turn, code),
                    pct(share_sent(turn)),
                ]
            )
        shown_turns += len(rows)
        out += [
            f"### Session {code(session)}",
            "",
            *table(["time", "kind", "bytes sent", "copies per tag", "share of bytes sent"], rows),
            "",
            *more(len(rows), len(items), "turns of this session"),
        ]
    if len(order) > caps.turn_sessions:
        rest = sum(len(by_session[s]) for s in order[caps.turn_sessions :])
        out += [f"_… and {rest:,} turns of {len(order) - caps.turn_sessions:,} more sessions in the JSON and HTML "
                "reports._", ""]  # fmt: skip
    return out


def _directives(report: dict[str, Any], _facts: Facts, caps: Caps) -> list[str]:
    directives = report.get("directives")
    if not directives:
        return ["## Directives", "", "Payloads were not reconstructed: no directive counts.", ""]
    rows, deduped = tag_rows(report)
    out = ["## Directives", ""]
    payloads = directives.get("payloads") or {}
    if deduped:
        out += [
            "Counted on both sides of the agent's own dedupe: *serialized* (the prompt as the agent built it) and "
            "*sent* (what the provider received after the dedupe); a share divides figures of one side.",
            "",
        ]
    if rows:
        both = (lambda a, b: sides(a, b)) if deduped else (lambda _a, b: num(b))
        body = [
            [
                code(r.tag),
                num(r.injections),
                num(r.variants),
                num(r.bytes_per_copy),
                both(r.copies, r.copies_sent),
                both(r.bytes, r.bytes_sent),
                share_sides(r.share, r.share_sent) if deduped else pct(r.share_sent),
                both(r.largest_copies, r.largest_copies_sent),
            ]
            for r in rows[: caps.tags]
        ]
        arrow = " (serialized → sent)" if deduped else ""
        headers = ["tag", "injections", "variants", "bytes per copy", f"copies{arrow}", f"bytes{arrow}",
                   f"share of the bytes{arrow}", f"copies in largest{arrow}"]  # fmt: skip
        out += [*table(headers, body), "", *more(len(body), len(rows), "tags")]
        calls = payloads.get("calls")
        if isinstance(calls, int) and calls:
            raw, sent = payloads.get("payload_bytes_raw"), payloads.get("payload_bytes")
            size = f"{num(raw)} bytes serialized, {num(sent)} sent" if deduped else f"{num(sent)} bytes sent"
            inexact = inexact_agents(report)
            messages = f" ({', '.join(inexact)}: the messages' bytes, their transcripts hold no system prompt or tools)"
            noun = "call" if calls == 1 else "calls"
            out += [f"Copies and bytes are over the {num(calls)} {noun} whose payload was reconstructed: {size}"
                    f"{messages if inexact else ''}.", ""]  # fmt: skip
    else:
        out += ["No tagged directive block in any payload.", ""]
    out += _largest_line(report, deduped)
    dedupe: dict[str, dict[str, Any]] = directives.get("dedupe") or {}
    if dedupe:
        sent = (directives.get("largest_payload") or {}).get("payload_bytes")
        body = []
        for policy, sim in dedupe.items():
            before, after_bytes = sim.get("bytes_before"), sim.get("bytes_after")
            saved = before - after_bytes if isinstance(before, int) and isinstance(after_bytes, int) else None
            mine = " (what was sent)" if deduped and isinstance(sent, int) and after_bytes == sent else ""
            body.append(
                [code(policy) + mine, num(before), num(after_bytes), num(saved),
                 pct(saved / before if saved and before else None)]
            )  # fmt: skip
        out += [
            "Dedupe policies simulated on the largest payload as serialized:",
            "",
            *table(["policy", "bytes serialized", "bytes after", "saved", "saved share"], body),
            "",
        ]
    return out


def sides(serialized: int | None, sent: int | None) -> str:
    """`2,485 → 70` where the agent's dedupe changed a figure, else the one figure."""
    if serialized is None or serialized == sent:
        return num(sent)
    return f"{num(serialized)} → {num(sent)}"


def share_sides(serialized: float | None, sent: float | None) -> str:
    """`97.9 % → 53.1 %`: each share of its own side's payload bytes."""
    if serialized is None or pct(serialized) == pct(sent):
        return pct(sent)
    return f"{pct(serialized)} → {pct(sent)}"


def _largest_line(report: dict[str, Any], deduped: bool) -> list[str]:
    """The largest payload on both sides, with the share of directives in each (the `check` figure is the
    sent one)."""
    _sent, raw = largest_payloads(report)
    comp = largest_composition(report)
    if raw is None or comp is None:
        return []
    where = f"session {code(raw.session)} turn {num(raw.index)}" + (f", {code(raw.kind)}" if raw.kind else "")
    sent = f"{num(comp.payload_sent)} bytes sent, {pct(comp.share_sent)} of them directives"
    if deduped and comp.sent_known:
        text = f"{num(comp.payload_raw)} bytes serialized ({pct(comp.share_raw)} directives), {sent}"
    elif comp.sent_known:
        text = sent
    else:
        text = f"{num(comp.payload_raw)} bytes serialized, {pct(comp.share_raw)} of them directives"
    return [f"Largest {raw.noun} (the most bytes serialized; dedupe is simulated on it): {text}; {where}.", ""]


def _avoidable(report: dict[str, Any], facts: Facts, caps: Caps) -> list[str]:
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
    if not facts.avoidable:
        return out
    if len(facts.avoidable_groups) < len(facts.avoidable):
        rows = []
        for g in facts.avoidable_groups[: caps.avoidable_groups]:
            sent = sum(turn_payload(t) or 0 for t in g.items)
            if_stable = [t.get("payload_bytes_if_stable") for t in g.items]
            stable_sum = (
                sum(v for v in if_stable if isinstance(v, int)) if any(isinstance(v, int) for v in if_stable) else None
            )
            rows.append([code(g.key[0] or "–"), code(g.key[1] or "–"), f"×{len(g.items)}", num(sent), num(stable_sum)])
        out += ["By kind and reason:", "",
                *table(["kind", "reason", "turns", "payload bytes", "if stable"], rows), "",
                *more(len(rows), len(facts.avoidable_groups), "kinds of avoidable re-send")]  # fmt: skip
    if caps.avoidable:
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
            for t in facts.avoidable[: caps.avoidable]
        ]
        headers = ["session", "turn", "time", "kind", "reason", "payload bytes", "if stable"]
        lead = ["Largest first:", ""] if len(facts.avoidable) > 1 else []
        out += [*lead, *table(headers, rows), "", *more(len(rows), len(facts.avoidable), "avoidable turns")]
    return out


def _turn_list(items: list[dict[str, Any]], cap: int) -> list[str]:
    """'- `019fdb7e-…`: turns 0, 1, 2, 3 (4)' per session, at most `cap` turn numbers in all."""
    by_session: dict[str, list[Any]] = {}
    for turn in items:
        by_session.setdefault(str(turn.get("session")), []).append(turn.get("index"))
    lines, listed = [], 0
    for session, indices in by_session.items():
        if listed >= cap:
            break
        take = indices[: max(1, cap - listed)]
        listed += len(take)
        rest = f", … {len(indices) - len(take):,} more" if len(indices) > len(take) else ""
        lines.append(
            f"- {code(session)}: turn{'s' if len(indices) > 1 else ''} {', '.join(num(i) for i in take)}{rest}"
        )
    if len(lines) < len(by_session):
        others = sum(len(v) for v in list(by_session.values())[len(lines) :])
        lines.append(f"- … and {others:,} turns of {len(by_session) - len(lines):,} more sessions")
    return lines


def _rewritten(report: dict[str, Any], facts: Facts, caps: Caps) -> list[str]:
    out = ["## Rewritten turns", ""]
    if not facts.rewritten:
        return [
            *out,
            "No turn committed as rewritten." if facts.commits_known else "Commit outcomes are not known.",
            "",
        ]
    total = sum(len(g.items) for g in facts.rewritten)
    if len(facts.rewritten) < total:
        out += [f"{total:,} rewritten turns, grouped by their field diff (paths and changes; the values shown are the "
                "first turn's).", ""]  # fmt: skip
    for g in facts.rewritten[: caps.rewritten]:
        turn = g.first
        commit = turn.get("commit") or {}
        klass = commit.get("class")
        if len(g.items) == 1:
            out.append(f"### {code(turn.get('session'))} turn {num(turn.get('index'))} · {when(turn.get('ts'))}")
        else:
            sessions = len({t.get("session") for t in g.items})
            where = f"in {sessions} sessions" if sessions > 1 else f"of {code(turn.get('session'))}"
            out.append(f"### ×{len(g.items)} rewritten turns {where} with the same diff")
        out.append("")
        klass_text = esc(klass) if klass else "class unknown"
        out.append(f"- Outcome: rewritten ({klass_text}); evidence: {esc(commit.get('source'))}")
        if len(g.items) > 1:
            out += _turn_list(g.items, caps.listed_turns)
        first = f"{display(turn.get('session'), 80)[:8]}…"
        example = f" ({code(first)} turn {num(turn.get('index'))})" if len(g.items) > 1 else ""
        content = turn.get("content")
        if isinstance(content, dict):
            blocks = ", ".join(f"{num(n)} {esc(kind)}" for kind, n in (content.get("blocks") or {}).items())
            out.append(f"- Message{example}: {blocks or 'no blocks'}; {num(content.get('chars'))} characters of text")
        why = turn.get("why")
        if why:
            out.append(f"- Why{example}: {esc(why)}")
        out.append("")
        lines = diff_lines(commit)
        out += [*fenced(lines), ""] if lines else ["No field diff recorded for this turn.", ""]
        text = content.get("text") if isinstance(content, dict) else None
        if isinstance(text, str) and text:  # only with --include-text
            shown = text.splitlines()[:MAX_TEXT_LINES]
            out += ["Message text:", "", *fenced(shown), ""]
    shown_turns = sum(len(g.items) for g in facts.rewritten[: caps.rewritten])
    return out + more(
        min(len(facts.rewritten), caps.rewritten),
        len(facts.rewritten),
        f"diffs ({total - shown_turns:,} rewritten turns)",
    )


def _problems(report: dict[str, Any], facts: Facts, caps: Caps) -> list[str]:
    problems = report.get("problems") or []
    total = report.get("problems_total") or len(problems)
    if not problems:
        return ["## Problems", "", "None: every line read was understood.", ""]
    rows = []
    for g in facts.problems[: caps.problems]:
        p = g.first
        lines = [plain(x.get("line")) for x in g.items[:5]] + (["…"] if len(g.items) > 5 else [])
        rows.append([code(p.get("path")), ", ".join(lines), plain(p.get("offset")), code(p.get("error"), 500),
                     str(len(g.items))])  # fmt: skip
    kept = f" (the report keeps the newest {len(problems):,})" if total > len(problems) else ""
    grouped = (
        "; grouped by file and kind, with the offset and text of the first"
        if len(facts.problems) < len(problems)
        else ""
    )
    return [
        "## Problems",
        "",
        f"{num(total)} bad lines or file events{kept}{grouped}.",
        "",
        *table(["file", "line", "offset", "error", "count"], rows),
        "",
        *more(len(rows), len(facts.problems), "kinds of problem"),
    ]


def _sources(report: dict[str, Any], facts: Facts, caps: Caps) -> list[str]:
    sources = facts.sources
    rows = [
        [
            code(s.get("path")),
            code(s.get("format")) if s.get("format") else "–",
            num(s.get("bytes")),
            num(s.get("lines")),
            num(s.get("bad_lines")),
        ]
        for s in sources[: caps.sources]
    ]
    lead = ["Files with bad lines first, then the largest.", ""] if len(sources) > caps.sources else []
    rest = sources[caps.sources :]
    tail = []
    if rest:
        nbytes = sum(s.get("bytes") or 0 for s in rest)
        tail = [f"_… and {len(rest):,} more files ({nbytes:,} bytes) in the JSON and HTML reports._", ""]
    return [
        "## Sources",
        "",
        *lead,
        *table(["file", "format", "bytes", "lines", "bad lines"], rows),
        "",
        *tail,
    ]


SECTIONS = (
    _headline,
    _header,
    _summary,
    _waste,
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
)
