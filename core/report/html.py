"""A built report as ONE self-contained HTML page: inline CSS and SVG, no network, no JavaScript.

The page is attached to bug reports and opened by people who did not produce it, so it must be inert
whatever the data holds. Every data string goes through `core.sanitize.display` (escapes and controls
removed, one line, clipped) and then `html.escape(quote=True)`; data never lands in a tag name, an attribute
name, a style or a URL: colours and CSS classes come from fixed tables keyed by kind. A Content-Security-Policy
meta tag forbids scripts and every fetch, as a second wall. Long sections are capped; the JSON has it all.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from core.kernel.waste import cause_text
from core.model import CALL_KINDS
from core.report.common import (
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
from core.report.timeline import timeline
from core.report.waste import gap_text, usd_text
from core.sanitize import display
from core.timeutil import iso_ms, parse_iso_ms

MAX_STREAKS = 20
MAX_TURN_ROWS = 500
MAX_REWRITTEN = 100
MAX_DIFF_ROWS = 100
MAX_TEXT_LINES = 200
MAX_PROBLEMS = 200
MAX_SOURCES = 200
MAX_BARS = 480
#: a pause between decisions longer than this is marked on the timeline
GAP_MS = 30 * 60_000
CHART_W, CHART_H, PAD = 960, 180, 28

KIND_COLOURS = {
    "bootstrap": "#4e79a7",
    "delta": "#59a14f",
    "fork": "#f28e2b",
    "flatten": "#e15759",
    "disabled": "#9c9c9c",
    "failed": "#b07aa1",
    "re-send": "#ff9da7",
    "compaction": "#76b7b2",
    "aborted": "#9c755f",
}
OTHER_COLOUR = "#bab0ac"

CSS = """
:root{color-scheme:light dark;--fg:#1d2125;--muted:#5f6b76;--bg:#fff;--card:#f4f6f8;--line:#d8dee4;--bad:#c62828}
@media (prefers-color-scheme:dark){:root{--fg:#e6e9ec;--muted:#9aa5b1;--bg:#15181b;--card:#1f2428;--line:#333b42}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1040px;padding:24px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;
color:var(--fg);background:var(--bg)}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid var(--line)}
h3{font-size:14px;margin:16px 0 6px}
.meta,.note{color:var(--muted)}.headline{font-size:1.1em;max-width:60em}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:8px;margin:14px 0}
.card{background:var(--card);border-radius:6px;padding:8px 10px}
.card b{display:block;font-size:20px}.card span{color:var(--muted);font-size:12px}
table{border-collapse:collapse;width:100%;margin:6px 0 10px;font-size:13px}
th,td{border-bottom:1px solid var(--line);padding:3px 6px;text-align:left;vertical-align:top}
th{font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums}
code{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
.k{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;vertical-align:-1px}
.legend span{margin-right:14px;white-space:nowrap}
svg{width:100%;height:auto;background:var(--card);border-radius:6px}
svg text{font:11px system-ui,sans-serif;fill:var(--muted)}
details{margin:6px 0}summary{cursor:pointer}
pre{background:var(--card);padding:8px;border-radius:6px;overflow-x:auto;white-space:pre-wrap}
.vol{color:var(--muted)}.sem{color:var(--bad);font-weight:600}
"""

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


# ---------------------------------------------------------------------- escaping
def e(value: object, limit: int = 500) -> str:
    """Any data value -> inert HTML text."""
    if value is None:
        return "–"
    return html.escape(display(value, limit), quote=True)


def n(value: object) -> str:
    if isinstance(value, bool) or value is None:
        return "–"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.4f}"
    return e(value)


def pct(share: float | None) -> str:
    return "–" if share is None else f"{share * 100:.1f} %"


def colour(kind: object) -> str:
    """A fixed colour per known kind; data never chooses a style."""
    return KIND_COLOURS.get(kind, OTHER_COLOUR) if isinstance(kind, str) else OTHER_COLOUR


def swatch(kind: object) -> str:
    return f'<span class="k" style="background:{colour(kind)}"></span><code>{e(kind)}</code>'


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], numeric: Sequence[int] = ()) -> str:
    """Headers are literal (ours); cells are already escaped HTML."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = []
    for row in rows:
        cells = "".join(f'<td class="n">{c}</td>' if i in numeric else f"<td>{c}</td>" for i, c in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def more(shown: int, total: int, what: str) -> str:
    return f'<p class="note">… {total - shown} more {what} in the JSON report.</p>' if total > shown else ""


# ---------------------------------------------------------------------- page
def render_html(report: dict[str, Any]) -> str:
    """The whole report as one HTML document."""
    body = "".join(
        section(report)
        for section in (
            _header,
            _cards,
            _waste,
            _timeline,
            _payload_graph,
            _kinds,
            _streaks,
            _directives,
            _rewritten,
            _avoidable,
            _disagreements,
            _sessions,
            _turns,
            _problems,
            _sources,
        )
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>Continuity report {e(report.get('generated_at'))}</title>"
        f"<style>{CSS}</style></head>\n<body>\n{body}\n</body></html>\n"
    )


def _header(report: dict[str, Any]) -> str:
    sel = report.get("selection") or {}
    scope = f"session <code>{e(sel['session'])}</code>" if sel.get("session") else "all sessions"
    if sel.get("since") or sel.get("until"):
        scope += f", from {e(sel.get('since'))} to {e(sel.get('until'))}"
    red = report.get("redactions") or {}
    if red.get("enabled"):
        kinds = ", ".join(f"{e(k)} {n(v)}" for k, v in (red.get("by_kind") or {}).items())
        redaction = f"redaction on, {n(red.get('total', 0))} replaced" + (f" ({kinds})" if kinds else "")
    else:
        redaction = "<b>redaction off</b>"
    sentence = "".join(
        f"<code>{e(seg.text)}</code>" if seg.style == "code" else f"<b>{e(seg.text)}</b>" if seg.style == "strong"
        else e(seg.text)
        for seg in headline(report)
    )  # fmt: skip
    if sel.get("filter"):
        scope += f", turns matching <code>{e(sel.get('filter'))}</code>"
    found = report.get("discovery") or {}
    left = found.get("left_out") or 0
    capped = ""
    if left:  # the discovery cap left files out: said where the reader looks first
        more = "" if found.get("counted_all", True) else "at least "
        capped = (f' · <b>{more}{n(left)} files left out</b>, never read: discovery stops at '
                  f"{n(found.get('cap'))} files")  # fmt: skip
    return (
        f'<header><h1>Continuity report</h1><p class="headline">{sentence}</p>'
        f'<p class="meta">Generated {e(report.get("generated_at"))} by continuity-tui '
        f"{e(report.get('tool_version'))} · schema <code>{e(report.get('schema'))}</code> · {scope} · "
        f"{redaction}{capped}</p></header>\n"
    )


def _cards(report: dict[str, Any]) -> str:
    cont = report.get("continuity") or {}
    turns = report.get("turns") or []
    cf = report.get("counterfactual")
    peak = cont.get("peak_count")
    rewritten = sum(1 for t in turns if is_rewritten(t))
    calls = call_figures(report)
    cards: list[tuple[str, str]] = []
    if calls is not None:  # the calls first, every agent's
        share = pct(calls.resends / calls.judged if calls.judged else None)
        cards += [
            (n(calls.total), "calls"),
            (share, f"re-send share of calls ({n(calls.resends)} of {n(calls.judged)})"),
        ]
        if calls.tokens:
            cards.append((n(prompt_tokens(calls.tokens)), "prompt tokens (input + cache read + cache write)"))
    if cont.get("events") or calls is None:
        cards += [
            (n(cont.get("events")), "continuity decisions (log)"),
            (pct(cont.get("resend_share")), "re-send share of log lines (fork + flatten)"),
        ]
    cards += [
        (f"{n(len(report.get('sessions') or []))} / {n(len(turns))}", "sessions / turns"),
        (n(rewritten) if any(t.get("commit") for t in turns) else "–", "rewritten turns"),
        (f"{n(cf.get('resends_avoidable'))} / {n(cf.get('resends_logged'))}" if cf else "–", "avoidable re-sends"),
        *_largest_cards(report),
        *(
            [(f"{n(peak.get('value'))} <small>{e(peak.get('kind'))}</small>" if peak else "–", "peak count")]
            if cont.get("events") or calls is None  # the log lines' largest count
            else []
        ),
        (_agreement_card(report), "replay agrees with the log"),
        (n(report.get("problems_total")), "problems"),
    ]
    inner = "".join(f'<div class="card"><b>{value}</b><span>{label}</span></div>' for value, label in cards)
    return f'<section><div class="cards">{inner}</div></section>\n'


def _waste(report: dict[str, Any]) -> str:
    """Prompt-cache waste by cause and the calls it adds up to (the Markdown's section, with every call listed
    that the JSON's `top` names)."""
    waste = report.get("waste")
    if not isinstance(waste, dict):
        return ""
    out = "<section><h2>Prompt-cache waste</h2>"
    if waste.get("calls"):
        cost = waste.get("cost_usd") or {}
        actual = cost.get("actual")
        money = (f"{usd_text(cost.get('excess'))} beyond cache hits at list prices, of {usd_text(actual)} the calls "
                 "cost") if isinstance(actual, int | float) else "no list price for these calls"  # fmt: skip
        out += (f"<p>{n(waste.get('excess_tokens'))} tokens were processed again that a warm cache would have read "
                f"({pct(waste.get('share'))} of the {n(waste.get('not_read_tokens'))} not read from cache, over "
                f"{n(waste.get('calls'))} calls judged from cache figures): {money}.</p>")  # fmt: skip
        by_cause, usd_by = waste.get("by_cause") or {}, cost.get("by_cause") or {}
        calls_by = waste.get("calls_by_cause") or {}
        lifetimes = waste.get("expired_after") if isinstance(waste.get("expired_after"), dict) else None
        total = sum(v for v in by_cause.values() if isinstance(v, int)) or 1
        rows = [[f"<code>{e(c)}</code>", e(cause_text(str(c), lifetimes)), n(calls_by.get(c)), n(t),
                 pct(t / total if isinstance(t, int) else None), e(usd_text(usd_by.get(c)))]
                for c, t in by_cause.items()]  # fmt: skip
        if rows:
            out += table(["cause", "what", "calls", "tokens", "share of tokens", "USD"], rows, numeric=(2, 3, 4, 5))
        top = waste.get("top") or []
        if top:
            rows = [_top_row(t) for t in top]
            headers = ["session", "turn", "time", "cause", "expected read", "read", "excess", "USD",
                       "gap / lifetime", "after · where"]  # fmt: skip
            out += "<h3>Largest</h3>" + table(headers, rows, numeric=(1, 4, 5, 6, 7))
        pricing = waste.get("pricing") or {}
        unpriced = pricing.get("unpriced_models") or {}
        missing = (" No list price, left out of the dollars: " + ", ".join(f"<code>{e(m)}</code> ({n(k)})"
                   for m, k in list(unpriced.items())[:5]) + ".") if unpriced else ""  # fmt: skip
        file = f" + <code>{e(pricing.get('file'))}</code>" if pricing.get("file") else ""
        urls = ", ".join(e(u) for u in pricing.get("urls") or [])
        out += (f'<p class="note">Prices: {e(pricing.get("source"))}{file}, as of {e(pricing.get("as_of"))} '
                f"({urls}).{missing}</p>")  # fmt: skip
    senpi = waste.get("counterfactual")
    if isinstance(senpi, dict):
        out += (f"<p>senpi's resident lane (its own decisions, no cache figures): {n(senpi.get('resends_avoidable'))} "
                f"of {n(senpi.get('resends'))} re-sends avoidable with a stable fingerprint, "
                f"{n(senpi.get('bytes_avoidable'))} payload bytes and {n(senpi.get('messages_avoidable'))} messages "
                "sent again for nothing.</p>")  # fmt: skip
    return out + "</section>\n"


def _top_row(t: dict[str, Any]) -> list[str]:
    told = "; ".join(part for part in (", ".join(t.get("after") or []), t.get("where") or "") if part)
    return [f"<code>{e(t.get('session'))}</code>", n(t.get("index")), e(t.get("ts")),
            f"<code>{e(t.get('cause'))}</code>", n(t.get("expected_read")), n(t.get("cache_read")),
            n(t.get("excess")), e(usd_text(t.get("excess_usd"))), e(gap_text(t.get("gap_ms"), t.get("ttl_ms"))),
            e(told)]  # fmt: skip


def _largest_cards(report: dict[str, Any]) -> list[tuple[str, str]]:
    """The largest payload in bytes where they are exact, the largest prompt in tokens where they are not."""
    prompt = largest_prompt(report)
    tokens = []
    if prompt is not None:
        note = f"{e(', '.join(prompt.agents))}: tokens, not bytes (no system prompt or tools in the transcript)"
        tokens = [(f"{n(prompt.tokens)} <small>turn {n(prompt.index)}</small>", f"largest prompt (tokens); {note}")]
    sent, raw = largest_payloads(report)
    if sent is None and raw is None and tokens:
        return tokens
    return [_largest_card(report), *tokens]


def _largest_card(report: dict[str, Any]) -> tuple[str, str]:
    """The largest payload sent, with the same call's size before dedupe (or the largest raw one, named)."""
    sent, raw = largest_payloads(report)
    if sent is None and raw is None:
        return "–", "largest payload sent (bytes)"
    if sent is None:
        assert raw is not None
        return n(raw.raw), "largest payload before dedupe (bytes)"
    before = raw if raw is not None and not same_call(sent, raw) else None
    raw_size = raw.raw if raw is not None and same_call(sent, raw) else sent.raw
    if before is not None:
        note = f"largest {e(before.noun)} before dedupe: {n(before.raw)}, turn {n(before.index)}"
    elif raw_size is not None and raw_size != sent.sent:
        note = f"{n(raw_size)} before dedupe"
    else:
        note = ""
    small = f" <small>{note}</small>" if note else ""
    return f"{n(sent.sent)}{small}", "largest payload sent (bytes, after dedupe)"


def _agreement_card(report: dict[str, Any]) -> str:
    found = agreement(report)
    return "–" if found is None else f"{n(found[0])} / {n(found[1])}"


def _legend(kinds: Iterable[str]) -> str:
    """Every kind shown, in the calls' display order (one order for every run: the kinds a set gave, in the order
    a hash set gave them, made the page differ between runs)."""
    items = "".join(f'<span><span class="k" style="background:{colour(k)}"></span>{e(k)}</span>'
                    for k in kind_order(kinds))  # fmt: skip
    return f'<p class="legend">{items}</p>'


def _timeline(report: dict[str, Any]) -> str:
    """The decisions in order, coloured by kind (one bar per decision, or per group of consecutive ones);
    dashed lines mark pauses of more than GAP_MS, labelled with the time the next burst began."""
    series = (report.get("continuity") or {}).get("timeline")
    source = "continuity lines of the logs"
    if call_figures(report) is not None or not series:  # the calls, every agent's, whenever there are some
        turns = sorted(report.get("turns") or [], key=lambda t: (t.get("ts") is None, t.get("ts") or ""))
        series = timeline(((parse_iso_ms(t.get("ts")), kind) for t in turns if (kind := turn_kind(t)) is not None),
                          order=CALL_KINDS)  # fmt: skip
        source = "calls of the transcripts"
    head = "<section><h2>Decisions over time</h2>"
    counts: list[list[int]] = (series or {}).get("counts") or []
    if not counts:
        return head + '<p class="note">No continuity decision.</p></section>\n'
    kinds: list[str] = [str(k) for k in series.get("kinds") or []]
    starts: list[str | None] = list(series.get("starts") or [])
    ends: list[str | None] = list(series.get("ends") or [])
    plot_w, plot_h = CHART_W - 2 * PAD, CHART_H - 2 * PAD
    slot = plot_w / len(counts)
    width = max(slot * (0.9 if slot > 3 else 1.0), 0.6)
    shapes: list[str] = []
    last_label_x = -1e9
    previous_end: int | None = None
    for i, row in enumerate(counts):
        x = PAD + i * slot
        total = sum(row) or 1
        start_ms = parse_iso_ms(starts[i]) if i < len(starts) else None
        end_ms = parse_iso_ms(ends[i]) if i < len(ends) else None
        if previous_end is not None and start_ms is not None and start_ms - previous_end > GAP_MS:
            shapes.append(
                f'<line x1="{x:.1f}" y1="{PAD - 4}" x2="{x:.1f}" y2="{PAD + plot_h}" stroke="currentColor" '
                'stroke-opacity=".5" stroke-dasharray="3 3"/>'
            )
            if x - last_label_x > 150:
                shapes.append(f'<text x="{x + 3:.1f}" y="{PAD - 8}">{e(_short_time(start_ms))}</text>')
                last_label_x = x
        previous_end = end_ms if end_ms is not None else previous_end
        y = PAD + plot_h
        for j, count in enumerate(row):
            if not count:
                continue
            h = plot_h * count / total
            y -= h
            kind = kinds[j] if j < len(kinds) else "?"
            when = e(starts[i] if i < len(starts) else None)
            shapes.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{h:.1f}" fill="{colour(kind)}">'
                f"<title>{when}: {n(count)} {e(kind)}</title></rect>"
            )
    first = next((s for s in starts if s), None)
    last = next((s for s in reversed(ends) if s), None)
    axis = _axis(e(first), e(last), "")
    svg = _svg("Continuity decisions in order, coloured by kind", "".join(shapes) + axis)
    size = series.get("group_size") or 1
    per_bar = "one bar per decision" if size == 1 else f"each bar is {n(size)} consecutive decisions, by share"
    note = (
        f'<p class="note">From the {source}, in order ({per_bar}); a dashed line marks a pause of more than '
        f"{GAP_MS // 60_000} minutes.</p>"
    )
    seen = [kind for j, kind in enumerate(kinds) if any(j < len(r) and r[j] for r in counts)]
    return f"{head}{_legend(seen)}{svg}{note}</section>\n"


def _short_time(ms: int) -> str:
    """`2026-10-12 14:03` (UTC): enough to tell bursts apart in a chart label."""
    return (iso_ms(ms) or "")[:16].replace("T", " ")


def _payload_graph(report: dict[str, Any]) -> str:
    """One bar per call (grouped beyond MAX_BARS): bytes sent, coloured by kind; rewritten turns marked. Prompt
    tokens instead when an agent's transcripts cannot give byte-exact payloads (Claude Code, pi, mux, Codex hold
    no system prompt or tools: 37 bytes stood for a first call of 25,353 prompt tokens), and the note says so."""
    inexact = inexact_agents(report)
    size_of: Callable[[dict[str, Any]], int | None] = (lambda t: prompt_tokens(t.get("tokens")) or None) if inexact \
        else turn_payload  # fmt: skip
    unit = "prompt tokens" if inexact else "bytes sent"
    turns = [t for t in report.get("turns") or [] if size_of(t) is not None]
    head = "<section><h2>Payload per turn</h2>"
    if not turns:
        return (
            head + '<p class="note">No payload size known (no reconstruction, no logged payloadBytes).</p></section>\n'
        )
    group = -(-len(turns) // MAX_BARS)
    bars: list[dict[str, Any]] = []
    for i in range(0, len(turns), group):
        chunk = turns[i : i + group]
        top = max(chunk, key=lambda t: size_of(t) or 0)
        bars.append({"turn": top, "rewritten": any(is_rewritten(t) for t in chunk)})
    tallest = max(size_of(b["turn"]) or 0 for b in bars) or 1
    plot_w, plot_h = CHART_W - 2 * PAD, CHART_H - 2 * PAD
    slot = plot_w / len(bars)
    width = max(slot * 0.8, 1.0)
    shapes: list[str] = []
    for i, bar in enumerate(bars):
        turn = bar["turn"]
        size = size_of(turn) or 0
        h = max(plot_h * size / tallest, 1.0)
        x, y = PAD + i * slot, PAD + plot_h - h
        kind = turn_kind(turn)
        label = f"{e(turn.get('session'), 60)} turn {n(turn.get('index'))} · {e(turn.get('ts'))}"
        label += f" · {e(kind)} · {n(size)} {unit}"
        if bar["rewritten"]:
            label += " · rewritten"
            shapes.append(
                f'<circle cx="{x + width / 2:.1f}" cy="{y - 5:.1f}" r="2.5" fill="{KIND_COLOURS["flatten"]}"/>'
            )
        shapes.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{h:.1f}" fill="{colour(kind)}">'
            f"<title>{label}</title></rect>"
        )
    axis = _axis("first turn", "last turn", f"{n(tallest)} {unit}")
    svg = _svg(f"Payload per turn ({unit}), coloured by kind", "".join(shapes) + axis)
    kinds = [turn_kind(b["turn"]) or "?" for b in bars]
    if inexact:
        note = f'<p class="note">Prompt tokens per call (input + cache read + cache write): {e(", ".join(inexact))} '
        note += "transcripts hold no system prompt or tools, so their payload bytes would count the messages only"
    else:
        note = '<p class="note">Reconstructed bytes sent per call, after the agent\'s own dedupe (the size the '
        note += "agent logged where not reconstructed)"
    note += "; a dot marks a rewritten turn"
    note += f"; {group} turns per bar, tallest shown.</p>" if group > 1 else ".</p>"
    return f"{head}{_legend(kinds)}{svg}{note}</section>\n"


def _svg(title: str, inner: str) -> str:
    return f'<svg viewBox="0 0 {CHART_W} {CHART_H}" role="img"><title>{title}</title>{inner}</svg>'


def _axis(left: str, right: str, top: str) -> str:
    """Baseline, the extremes of the x axis and the y maximum; arguments are already escaped."""
    base = CHART_H - PAD
    return (
        f'<line x1="{PAD}" y1="{base}" x2="{CHART_W - PAD}" y2="{base}" stroke="currentColor" stroke-opacity=".3"/>'
        f'<text x="{PAD}" y="{base + 16}">{left}</text>'
        f'<text x="{CHART_W - PAD}" y="{base + 16}" text-anchor="end">{right}</text>'
        f'<text x="{PAD}" y="{PAD - 10}">{top}</text>'
    )


def _kinds(report: dict[str, Any]) -> str:
    """The calls by kind and reason (every agent's), then the log lines' where senpi's logs were read: two
    units, never added together."""
    cont = report.get("continuity") or {}
    calls = report.get("calls") or {}
    out = "<section><h2>Decisions by kind</h2>"
    units: list[tuple[str, dict[str, int], int, dict[str, dict[str, int]]]] = []
    if calls.get("total"):
        by_kind = calls.get("by_kind") or {}
        units.append(
            ("calls", {k: by_kind[k] for k in kind_order(by_kind)}, calls["total"], calls.get("by_reason") or {})
        )
    if cont.get("events") or not units:
        units.append(("log lines", cont.get("by_kind") or {}, cont.get("events") or 0, cont.get("by_reason") or {}))
    for unit, by_kind, total, by_reason in units:
        if len(units) > 1:
            out += f"<h3>{'Calls' if unit == 'calls' else 'Log lines'}</h3>"
        rows = [[swatch(k), n(v), pct(v / total if total else None)] for k, v in by_kind.items()]
        out += table(["kind", unit, "share"], rows, numeric=(1, 2))
        if by_reason:
            kinds = kind_order(k for c in by_reason.values() for k in c)
            reason_rows = [
                [f"<code>{e(r)}</code>", *(n(c.get(k, 0)) for k in kinds), n(sum(c.values()))]
                for r, c in by_reason.items()
            ]
            headers = ["reason", *(e(k) for k in kinds), "total"]
            out += f"<h3>Reasons by kind ({unit})</h3>" + table(headers, reason_rows, numeric=range(1, len(kinds) + 2))
    peak = cont.get("peak_count")
    if peak:
        out += (
            f"<p>Peak count: <b>{n(peak.get('value'))}</b> on a {swatch(peak.get('kind'))} line at "
            f"{e(peak.get('at'))}.</p>"
        )
    closes: dict[str, int] = cont.get("closes") or {}
    if closes:
        out += "<h3>Session closes</h3>" + table(
            ["reason", "lines"], [[f"<code>{e(r)}</code>", n(c)] for r, c in closes.items()], numeric=(1,)
        )
    return out + "</section>\n"


def _streaks(report: dict[str, Any]) -> str:
    """Runs of one kind and reason: over the calls of one session, and over the log lines where they were read."""
    calls = report.get("calls") or {}
    cont = report.get("continuity") or {}
    units: list[tuple[str, list[dict[str, Any]]]] = []
    if calls.get("total"):
        units.append(("calls", calls.get("streaks") or []))
    if cont.get("events") or not units:
        units.append(("log lines", cont.get("streaks") or []))
    out = "<section><h2>Longest streaks</h2>"
    for unit, streaks in units:
        if len(units) > 1:
            out += f"<h3>{'Calls' if unit == 'calls' else 'Log lines'}</h3>"
        out += _streak_table(streaks, unit)
    return out + "</section>\n"


def _streak_table(streaks: list[dict[str, Any]], unit: str) -> str:
    if not streaks:
        return f'<p class="note">No run of two or more identical non-delta {e(unit)}.</p>'
    rows = [
        [
            swatch(s.get("kind")),
            f"<code>{e(s.get('reason'))}</code>",
            n(s.get("length")),
            f"{e(s.get('start'))} → {e(s.get('end'))}",
            f"{n(s.get('count_first'))} → {n(s.get('count_last'))}",
        ]
        for s in streaks[:MAX_STREAKS]
    ]
    headers = ["kind", "reason", "length", "start → end", "count first → last"]
    return table(headers, rows, numeric=(2,)) + more(len(rows), len(streaks), "streaks")


def _directives(report: dict[str, Any]) -> str:
    directives = report.get("directives")
    out = "<section><h2>Directives</h2>"
    if not directives:
        return out + '<p class="note">Payloads were not reconstructed: no directive counts.</p></section>\n'
    rows, deduped = tag_rows(report)
    payloads = directives.get("payloads") or {}
    if deduped:
        out += (
            '<p class="note">Counted on both sides of the agent\'s own dedupe: serialized (the prompt as the '
            "agent built it) and sent (what the provider received after the dedupe); a share divides "
            "figures of one side.</p>"
        )
    if rows:
        if deduped:
            headers = ["tag", "injections", "variants", "bytes per copy", "copies serialized", "copies sent",
                       "bytes serialized", "bytes sent", "share of bytes serialized", "share of bytes sent",
                       "copies in largest serialized", "copies in largest sent"]  # fmt: skip
            body = [
                [f"<code>{e(r.tag)}</code>", n(r.injections), n(r.variants), n(r.bytes_per_copy), n(r.copies),
                 n(r.copies_sent), n(r.bytes), n(r.bytes_sent), pct(r.share), pct(r.share_sent),
                 n(r.largest_copies), n(r.largest_copies_sent)]
                for r in rows
            ]  # fmt: skip
        else:
            headers = ["tag", "injections", "variants", "bytes per copy", "copies", "bytes", "share of bytes sent",
                       "copies in largest payload"]  # fmt: skip
            body = [
                [f"<code>{e(r.tag)}</code>", n(r.injections), n(r.variants), n(r.bytes_per_copy), n(r.copies_sent),
                 n(r.bytes_sent), pct(r.share_sent), n(r.largest_copies_sent)]
                for r in rows
            ]  # fmt: skip
        out += table(headers, body, numeric=tuple(range(1, len(headers))))
        calls = payloads.get("calls")
        if isinstance(calls, int) and calls:
            raw, sent = payloads.get("payload_bytes_raw"), payloads.get("payload_bytes")
            size = f"{n(raw)} bytes serialized, {n(sent)} sent" if deduped else f"{n(sent)} bytes sent"
            inexact = inexact_agents(report)
            messages = f" ({e(', '.join(inexact))}: the messages' bytes, their transcripts hold no system prompt "
            messages += "or tools)"
            noun = "call" if calls == 1 else "calls"
            out += f'<p class="note">Copies and bytes are over the {n(calls)} {noun} whose payload was reconstructed: '
            out += f"{size}{messages if inexact else ''}.</p>"
    else:
        out += '<p class="note">No tagged directive block in any payload.</p>'
    _sent, raw = largest_payloads(report)
    comp = largest_composition(report)
    if raw is not None and comp is not None:
        where = f"session <code>{e(raw.session)}</code> turn {n(raw.index)}"
        where += f", <code>{e(raw.kind)}</code>" if raw.kind else ""
        sent = f"<b>{n(comp.payload_sent)}</b> bytes sent, {pct(comp.share_sent)} of them directives"
        if deduped and comp.sent_known:
            text = f"<b>{n(comp.payload_raw)}</b> bytes serialized ({pct(comp.share_raw)} directives), {sent}"
        elif comp.sent_known:
            text = sent
        else:
            text = f"<b>{n(comp.payload_raw)}</b> bytes serialized, {pct(comp.share_raw)} of them directives"
        out += f"<p>Largest {e(raw.noun)} (the most bytes serialized; dedupe is simulated on it): {text}; {where}.</p>"
    dedupe: dict[str, dict[str, Any]] = directives.get("dedupe") or {}
    if dedupe:
        sent_size = (directives.get("largest_payload") or {}).get("payload_bytes")
        body = []
        for policy, sim in dedupe.items():
            before, after = sim.get("bytes_before"), sim.get("bytes_after")
            saved = before - after if isinstance(before, int) and isinstance(after, int) else None
            share = saved / before if saved is not None and isinstance(before, int) and before else None
            mine = " (what was sent)" if deduped and isinstance(sent_size, int) and after == sent_size else ""
            body.append([f"<code>{e(policy)}</code>{mine}", n(before), n(after), n(saved), pct(share)])
        out += "<h3>Dedupe policies on the largest payload as serialized</h3>"
        out += table(["policy", "bytes serialized", "bytes after", "saved", "saved share"], body, numeric=(1, 2, 3, 4))
    return out + "</section>\n"


def _rewritten(report: dict[str, Any]) -> str:
    all_turns = report.get("turns") or []
    turns = [t for t in all_turns if is_rewritten(t)]
    out = "<section><h2>Rewritten turns</h2>"
    if not turns:
        known = any(t.get("commit") for t in all_turns)
        text = "No turn committed as rewritten." if known else "Commit outcomes are not known."
        return out + f'<p class="note">{text}</p></section>\n'
    for turn in turns[:MAX_REWRITTEN]:
        commit = turn.get("commit") or {}
        klass = commit.get("class")
        out += (
            f"<details open><summary><code>{e(turn.get('session'))}</code> turn {n(turn.get('index'))} · "
            f"{e(turn.get('ts'))} · {swatch(turn_kind(turn))} · {e(klass) if klass else 'class unknown'} "
            f"(evidence: {e(commit.get('source'))})</summary>"
        )
        content = turn.get("content")
        if isinstance(content, dict):
            blocks = ", ".join(f"{n(c)} {e(k)}" for k, c in (content.get("blocks") or {}).items())
            out += f'<p class="note">Message: {blocks or "no blocks"}; {n(content.get("chars"))} characters.</p>'
        if turn.get("why"):
            out += f"<p>{e(turn.get('why'))}</p>"
        text = content.get("text") if isinstance(content, dict) else None
        if isinstance(text, str) and text:  # only with --include-text
            body = "\n".join(e(line, 1000) for line in text.splitlines()[:MAX_TEXT_LINES])
            out += f"<details><summary>message text</summary><pre><code>{body}</code></pre></details>"
        diff = commit.get("diff") or []
        if diff:
            rows = [
                [
                    f"<code>{e(d.get('path'))}</code>",
                    e(d.get("change")),
                    '<span class="vol">volatile</span>' if d.get("volatile") else '<span class="sem">semantic</span>',
                    f"<code>{e(value_text(d.get('capture')))}</code>",
                    f"<code>{e(value_text(d.get('commit')))}</code>",
                ]
                for d in diff[:MAX_DIFF_ROWS]
            ]
            out += table(["field", "change", "", "capture", "commit"], rows)
            out += more(len(rows), diff_total(commit), "changed fields")
        else:
            out += '<p class="note">No field diff recorded for this turn.</p>'
        out += "</details>"
    return out + more(min(len(turns), MAX_REWRITTEN), len(turns), "rewritten turns") + "</section>\n"


def _avoidable(report: dict[str, Any]) -> str:
    cf = report.get("counterfactual")
    out = "<section><h2>Avoidable re-sends</h2>"
    if not cf:
        return (
            out
            + '<p class="note">Not computed: the decisions could not be replayed with a stable fingerprint.</p>'
            + "</section>\n"
        )
    logged, stable = cf.get("bytes_logged"), cf.get("bytes_if_stable")
    items = [
        f"Re-sends (fork + flatten) in transcripts: <b>{n(cf.get('resends_logged'))}</b>",
        f"Avoidable (caused by a volatile-only rewrite): <b>{n(cf.get('resends_avoidable'))}</b>",
    ]
    if isinstance(logged, int) and isinstance(stable, int):
        items.append(
            f"Payload bytes as sent: {n(logged)}; with a stable fingerprint: {n(stable)} "
            f"(saves {pct((logged - stable) / logged) if logged else '–'})"
        )
    out += "<ul>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>"
    turns = [t for t in report.get("turns") or [] if t.get("avoidable")]
    if turns:
        rows = [
            [
                f"<code>{e(t.get('session'))}</code>",
                n(t.get("index")),
                e(t.get("ts")),
                swatch(turn_kind(t)),
                f"<code>{e(turn_reason(t))}</code>",
                n(turn_payload(t)),
                n(t.get("payload_bytes_if_stable")),
            ]
            for t in turns[:MAX_TURN_ROWS]
        ]
        out += table(
            ["session", "turn", "time", "kind", "reason", "payload bytes", "if stable"], rows, numeric=(1, 5, 6)
        )
        out += more(len(rows), len(turns), "avoidable turns")
    return out + "</section>\n"


def _sessions(report: dict[str, Any]) -> str:
    sessions = report.get("sessions") or []
    out = "<section><h2>Sessions</h2>"
    if not sessions:
        return out + '<p class="note">No transcript in the selection.</p></section>\n'
    kinds = kinds_of(*(s.get("by_kind") or {} for s in sessions))
    rows = [
        [
            f"<code>{e(s.get('id'))}</code>",
            f"<code>{e(s.get('cwd'))}</code>",
            n(s.get("turns")),
            *(n((s.get("by_kind") or {}).get(k, 0)) for k in kinds),
            n(s.get("rewritten")),
            n(s.get("payload_bytes_total")),
        ]
        for s in sessions
    ]
    headers = ["session", "cwd", "turns", *(e(k) for k in kinds), "rewritten", "payload bytes"]
    out += table(headers, rows, numeric=range(2, len(kinds) + 5))
    profiles = [(s, found) for s in sessions if (found := profile_of(s)) is not None]
    if profiles:
        items = "".join(
            f"<li><code>{e(session.get('id'))}</code>: {e(label)}"
            + (f' <span class="note">— {e(why)}</span>' if why else "")
            + "</li>"
            for session, (label, why) in profiles
        )
        out += f"<h3>Build profile per session</h3><ul>{items}</ul>"
    return out + "</section>\n"


def _disagreements(report: dict[str, Any]) -> str:
    found = agreement(report)
    if found is None:
        return ""
    turns = disagreements(report)
    out = "<section><h2>Replay disagreements</h2>"
    if not turns:
        return (
            out + f'<p class="note">The replay agrees with every logged decision ({n(found[1])} turns).</p></section>\n'
        )
    rows = [
        [
            f"<code>{e(t.get('session'), 60)}</code>",
            n(t.get("index")),
            e(t.get("ts")),
            f"<code>{e(decision_text(t.get('logged')))}</code>",
            f"<code>{e(decision_text(t.get('recomputed')))}</code>",
            e(t.get("disagreement")),
        ]
        for t in turns[:MAX_TURN_ROWS]
    ]
    headers = ["session", "turn", "time", "logged", "recomputed", "first difference"]
    said = [t for t in turns[:MAX_TURN_ROWS] if t.get("contradiction")]
    against = ""
    if said:
        items = "".join(
            f"<li><code>{e(t.get('session'), 60)}</code> turn {n(t.get('index'))}: {e(t.get('contradiction'))}</li>"
            for t in said
        )
        against = f'<p class="note">Against the build profile each session\'s evidence points to:</p><ul>{items}</ul>'
    listed = table(headers, rows, numeric=(1,)) + more(len(rows), len(turns), "disagreements")
    return out + listed + against + "</section>\n"


def _turns(report: dict[str, Any]) -> str:
    turns = report.get("turns") or []
    if not turns:
        return ""
    rows = []
    for t in turns[:MAX_TURN_ROWS]:
        rewritten = is_rewritten(t)
        rows.append(
            [
                f"<code>{e(t.get('session'), 60)}</code>",
                n(t.get("index")),
                e(t.get("ts")),
                swatch(turn_kind(t)) + (" <b>rewritten</b>" if rewritten else ""),
                n(turn_payload(t)),
                copies_text(t, lambda tag: f"<code>{e(tag)}</code>"),
                pct(share_sent(t)),
            ]
        )
    headers = ["session", "turn", "time", "kind", "bytes sent", "copies per tag", "share of bytes sent"]
    return (
        f"<section><h2>Turns</h2><details><summary>{n(len(turns))} provider calls</summary>"
        + "<p class=\"note\">Every figure of the payload as sent, after the agent's own dedupe; a tag's count as "
        "serialized is in parentheses where the dedupe collapsed copies.</p>"
        + table(headers, rows, numeric=(1, 4, 6))
        + more(len(rows), len(turns), "turns")
        + "</details></section>\n"
    )


def _problems(report: dict[str, Any]) -> str:
    problems = report.get("problems") or []
    out = "<section><h2>Problems</h2>"
    if not problems:
        return out + '<p class="note">None: every line read was understood.</p></section>\n'
    rows = [
        [f"<code>{e(p.get('path'))}</code>", e(p.get("line")), e(p.get("offset")), e(p.get("error"))]
        for p in problems[-MAX_PROBLEMS:]
    ]
    total = report.get("problems_total") or len(problems)
    return (
        out
        + f'<p class="note">{n(total)} bad lines or file events; the newest {len(rows)} are listed.</p>'
        + table(["file", "line", "offset", "error"], rows, numeric=(1, 2))
        + "</section>\n"
    )


def _sources(report: dict[str, Any]) -> str:
    sources = report.get("sources") or []
    rows = [
        [
            f"<code>{e(s.get('path'))}</code>",
            f"<code>{e(s.get('format'))}</code>",
            n(s.get("bytes")),
            n(s.get("lines")),
            n(s.get("bad_lines")),
        ]
        for s in sources[:MAX_SOURCES]
    ]
    return (
        "<section><h2>Sources</h2>"
        + table(["file", "format", "bytes", "lines", "bad lines"], rows, numeric=(2, 3, 4))
        + more(len(rows), len(sources), "files")
        + "</section>\n"
    )
