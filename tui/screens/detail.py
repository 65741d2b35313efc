"""The drill-down (Enter on a turn): why this call re-sent history, and what changed.

Top: the logged decision next to the recomputed one with its one-line why, the payload composition
(history, new and directive bytes), the fingerprints, and the capture-vs-commit field diff. Bottom: the
captured (streamed) and committed (persisted) message side by side, with the changed paths highlighted.
The raw JSON is not kept in memory: a thread worker re-reads it from disk by offset when the view opens.
Esc returns to the dashboard exactly where it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import orjson
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from core.agents import Agent, agent_named, drilldown_for
from core.kernel.diff import diff
from core.kernel.directives import sent_counts
from core.kernel.pricing import BUNDLED, PriceTable
from core.kernel.waste import call_waste, cause_text, lifetime_name
from core.model import DiffChange, Turn
from core.report.redact import shown
from core.report.waste import gap_text
from core.sources.reread import FileReread
from tui.fmt import MUTED, cell, count, date_time, human_bytes, kind_style, pct, short_id
from tui.view import EngineView, directive_bytes, payload_bytes, prompt_tokens
from tui.widgets.json_view import JsonLine, JsonView, build_lines

DIFF_ROWS = 12
NARROW = 110


@dataclass(frozen=True, slots=True)
class Sides:
    """What the worker read: the two messages (or why one is missing)."""

    capture: Any
    commit: Any
    capture_note: str | None
    commit_note: str | None
    capture_label: str
    commit_label: str


def diff_paths(changes: list[DiffChange]) -> dict[str, bool]:
    return {change.path: change.volatile for change in changes}


class DetailScreen(Screen[None]):
    """One turn in depth. The dashboard underneath keeps ingesting."""

    DEFAULT_CSS = """
    DetailScreen #detail-title { height: 1; background: $panel; padding: 0 1; }
    DetailScreen #detail-summary { height: auto; max-height: 55%; min-height: 6; }
    DetailScreen #detail-top { height: auto; }
    DetailScreen #detail-top > Static {
        width: 1fr; height: auto; min-height: 8; border: round $primary 60%; padding: 0 1;
    }
    DetailScreen #fingerprints, DetailScreen #diff {
        height: auto; border: round $primary 60%; padding: 0 1;
    }
    DetailScreen #detail-top > Static, DetailScreen #fingerprints, DetailScreen #diff {
        border-title-color: $text;  /* the border's own colour was hard to read on the dark themes */
    }
    DetailScreen #sides { height: 1fr; min-height: 6; }
    DetailScreen #sides > Vertical { width: 1fr; border: round $accent 60%; }
    DetailScreen #sides > Vertical:focus-within { border: round $accent; }
    DetailScreen.-narrow #detail-top { layout: vertical; }
    DetailScreen.-narrow #detail-top > Static { min-height: 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Back", show=True, id="detail_back"),
        Binding("tab", "app.focus_next", "Next pane", show=True, id="next_pane"),
        Binding("m", "maximize", "Maximize pane", show=True, id="detail_zoom"),
        Binding("c", "app.copy", "Copy", show=True, id="detail_copy"),
    ]

    def __init__(
        self, turn: Turn, session_cwd: str | None, session_key: str | None, engine: EngineView | None = None
    ) -> None:
        super().__init__()
        self.engine = engine  # the session's analysis (recordings) and the re-read port; None: the turn alone
        self.turn = turn
        self.session_cwd = session_cwd
        self.session_key = session_key
        self.agent = self._agent()

    def _agent(self) -> Agent | None:
        """The call's agent: what the empty blocks say depends on what that agent records."""
        if self.engine is None or self.session_key is None:
            return None
        with self.engine.lock:
            session = self.engine.state.sessions.get(self.session_key)
            return agent_named(session.agent.name) if session is not None else None

    def _cache_judged(self) -> str | None:
        """The agent's name when its verdicts come from one fixed rule (the prompt cache), not a replay."""
        agent = self.agent
        return agent.name if agent is not None and agent.rules is not None else None

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="detail-title")
        with VerticalScroll(id="detail-summary"):
            with Horizontal(id="detail-top"):
                yield Static(self._decision(), id="decision")
                yield Static(self._payload(), id="payload")
            yield Static(self._diff(), id="diff")
            yield Static(self._fingerprints(), id="fingerprints")
        with Horizontal(id="sides"):
            with Vertical(id="capture-box"):
                yield JsonView(id="capture")
            with Vertical(id="commit-box"):
                yield JsonView(id="commit")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#decision", Static).border_title = "Decision"
        self.query_one("#payload", Static).border_title = "Payload composition"
        self.query_one("#fingerprints", Static).border_title = "Fingerprints"
        self.query_one("#diff", Static).border_title = self._diff_title()
        self.query_one("#capture-box").border_title = "capture"
        self.query_one("#commit-box").border_title = "commit"
        # `m` zooms what has focus: a JSON side zooms with its box (the title names the side), and the summary
        # (where Tab goes first) zooms too; scroll containers refuse by default, so `m` after a Tab did nothing
        for zoomable in ("#detail-summary", "#capture-box", "#commit-box"):
            self.query_one(zoomable).ALLOW_MAXIMIZE = True
        self._arrange(self.app.size.width)
        self.query_one("#commit", JsonView).focus()
        self._load()

    def on_resize(self, event: events.Resize) -> None:
        self._arrange(event.size.width)  # (runs before Screen._on_resize stores the size: read the event)

    def _arrange(self, width: int) -> None:
        """Narrow terminals stack the boxes; the field diff then comes first, since it is what Enter on a
        rewritten turn is for, and it would otherwise sit below a screenful of decision and payload."""
        narrow = width < NARROW
        self.set_class(narrow, "-narrow")
        summary = self.query_one("#detail-summary")
        diff, top = self.query_one("#diff"), self.query_one("#detail-top")
        if narrow and summary.children.index(diff) > summary.children.index(top):
            summary.move_child(diff, before=top)
        elif not narrow and summary.children.index(diff) < summary.children.index(top):
            summary.move_child(diff, after=top)

    # ------------------------------------------------------------------ lazy raw JSON
    @work(thread=True, exclusive=True, group="detail-read", exit_on_error=False)
    def _load(self) -> None:
        """Read both sides from disk (worker thread), then hand them to the UI."""
        sides = self._read_sides()
        changes = list(self.turn.commit.diff) if self.turn.commit else []
        computed = False
        if not changes and sides.capture is not None and sides.commit is not None:
            changes, computed = _diff(sides.capture, sides.commit), True
        changed = diff_paths(changes)
        capture_paths = _present(sides.capture)
        commit_paths = _present(sides.commit)
        cap_notes = [sides.capture_note] if sides.capture_note else []
        com_notes = [sides.commit_note] if sides.commit_note else []
        missing_cap = [p for p in changed if p not in capture_paths and sides.capture is not None]
        missing_com = [p for p in changed if p not in commit_paths and sides.commit is not None]
        if missing_cap:
            cap_notes.append("missing here: " + ", ".join(missing_cap[:8]))
        if missing_com:
            com_notes.append("missing here: " + ", ".join(missing_com[:8]))
        cap_lines = build_lines(sides.capture, cap_notes) if sides.capture is not None else build_lines(None, cap_notes)
        com_lines = build_lines(sides.commit, com_notes) if sides.commit is not None else build_lines(None, com_notes)
        if sides.capture is None:
            cap_lines = [line for line in cap_lines if line.kind == "note"]
        if sides.commit is None:
            com_lines = [line for line in com_lines if line.kind == "note"]
        self.app.call_from_thread(self._show_sides, sides, cap_lines, com_lines, changed, changes if computed else None)

    def _read_sides(self) -> Sides:
        """Through core's commit analysis (it knows recordings and inferred captures)."""
        engine = self.engine
        if engine is not None and self.session_key is not None:
            with engine.lock:
                session = engine.state.sessions.get(self.session_key)
                load = drilldown_for(session.agent.name if session is not None else None)
                loaded = load(self.turn, session, engine.reread)
        else:
            loaded = drilldown_for(None)(self.turn, None, FileReread())
        source = self.turn.commit.source if self.turn.commit else None
        cap_label = "capture · last streamed update" if source == "events" else "capture"
        note = shown(loaded.note, 300) if loaded.note else None
        return Sides(
            capture=loaded.capture,
            commit=loaded.commit,
            capture_note=note,
            commit_note=None if loaded.commit is not None else "the committed message could not be re-read",
            capture_label=cap_label,
            commit_label=loaded.commit_label,
        )

    def _show_sides(
        self,
        sides: Sides,
        cap: list[JsonLine],
        com: list[JsonLine],
        changed: dict[str, bool],
        computed: list[DiffChange] | None,
    ) -> None:
        if computed is not None:
            note = "compared here: capture vs commit as re-read from disk" if computed else None
            self.query_one("#diff", Static).update(diff_table(computed, note=note))
        self.query_one("#capture-box").border_title = sides.capture_label
        self.query_one("#commit-box").border_title = sides.commit_label
        for view_id, lines in (("#capture", cap), ("#commit", com)):
            view = self.query_one(view_id, JsonView)
            view.set_lines(lines, changed)
            first = view.first_changed()
            if first is not None:
                view.scroll_to(y=max(0, first - 2), animate=False)

    # ------------------------------------------------------------------ the summary blocks
    def _title(self) -> Content:
        turn = self.turn
        parts: list[Content | tuple[str, str] | str] = [
            (f"Turn #{turn.index}", "bold"),
            "  session ",
            (short_id(turn.session), "$accent"),
        ]
        if self.session_cwd:
            parts += [" ", (shown(self.session_cwd, 60), MUTED)]
        parts += ["  ", date_time(turn.ts_ms)]
        if turn.model:
            parts += ["  ", (shown(turn.model, 40), MUTED)]
        if turn.stop_reason:
            parts += ["  stop: ", shown(turn.stop_reason, 20)]
        if turn.rewritten:
            parts += ["  ", ("REWRITTEN", "$error bold")]
        if turn.avoidable:
            parts += ["  ", ("AVOIDABLE", "$warning bold")]
        return Content.assemble(*parts)

    def _decision(self) -> Content:
        turn = self.turn
        lines: list[Content] = []
        logged = turn.logged
        if logged is not None:
            lines.append(_decision_line("logged", logged.kind, logged.reason, logged.count,
                                        f"({shown(logged.source, 20)})"))  # fmt: skip
        else:
            lines.append(Content.assemble(("logged     ", "bold"), ("no diagnostic and no matched log line", MUTED)))
        rec = turn.recomputed
        if rec is not None:
            verdict: tuple[str, str]
            if turn.agreement is True:
                verdict = ("✓ agrees", "$success")
            elif turn.agreement is False:
                verdict = ("≠ differs", "$error bold")
            else:
                verdict = ("", "")
            lines.append(_decision_line("recomputed", rec.kind, rec.reason, rec.count, "", verdict))
        elif turn.logged_only:
            lines.append(Content.assemble(("recomputed ", "bold"), ("cause not on disk; logged decision taken", MUTED)))
        elif (judged := self._cache_judged()) is not None:
            text = f"— {judged}: judged from the prompt cache (why), not replayed"
            lines.append(Content.assemble(("recomputed ", "bold"), (shown(text, 200), MUTED)))
        else:
            lines.append(Content.assemble(("recomputed ", "bold"), ("no data yet (replay not available)", MUTED)))
        if turn.disagreement:
            lines.append(Content.assemble(("differs    ", "bold"), (shown(turn.disagreement, 300), "$error")))
        lines.append(Content.assemble(("why        ", "bold"), shown(turn.why, 400) if turn.why else ("—", MUTED)))
        if turn.avoidable is None:
            lines.append(Content.assemble(("avoidable  ", "bold"), ("— (only re-sends are judged)", MUTED)))
        else:
            text = "yes — a volatile-only rewrite; a stable fingerprint keeps the delta" if turn.avoidable else "no"
            if turn.avoidable and turn.payload_bytes_if_stable is not None:
                text += f" ({human_bytes(turn.payload_bytes_if_stable)} instead of {human_bytes(payload_bytes(turn))})"
            lines.append(Content.assemble(("avoidable  ", "bold"), (text, "$warning" if turn.avoidable else "")))
        lines += cache_lines(turn, getattr(self.app, "prices", None) or BUNDLED)
        return Content("\n").join(lines)

    def _payload(self) -> Content:
        turn = self.turn
        total = payload_bytes(turn)
        history = turn.payload_history_bytes
        new = turn.payload_new_bytes
        lines: list[Content] = []
        if total is None and history is None:
            agent = self.agent
            if agent is not None and not agent.payload_exact:
                text = f"{agent.name} files hold no system prompt or tools: the prompt is measured in tokens"
                lines.append(Content.styled(shown(text, 200), MUTED))
            else:
                lines.append(Content.styled("no payload reconstruction yet", MUTED))
        else:
            # history and new are measured on the prompt as serialized: where the agent's dedupe shrank it, the
            # bars are of that side, and the directives sent get a row of their own (each share of its side)
            raw = turn.payload_bytes_raw
            deduped = raw is not None and total is not None and raw != total
            base = raw if deduped else total
            if self.agent is not None and not self.agent.payload_exact:
                head = f"messages {human_bytes(total)} (the files hold no system prompt or tools)"
            elif deduped:
                head = f"serialized {human_bytes(raw)} → sent {human_bytes(total)} after the agent's own dedupe"
            else:
                head = f"sent {human_bytes(total)}"
            lines.append(Content.styled(head, "bold"))
            lines.append(_bar(base, [(history, "$error"), (new, "$success")]))
            rows: list[tuple[str, int | None, str, int | None]] = [
                ("history", history, "$error", base),
                ("new", new, "$success", base),
                ("of which directives", directive_bytes(turn, serialized=deduped), "$primary", base),
            ]
            if deduped:
                rows.append(("directives sent", directive_bytes(turn), "$primary", total))
            for label, value, style, whole in rows:
                share = value / whole if value is not None and whole else None
                lines.append(
                    Content.assemble(
                        ("■ ", style),
                        cell(label, 20),
                        cell(human_bytes(value), 9, right=True),
                        (cell(pct(share), 8, right=True), MUTED),
                    )
                )
        if turn.directives:
            tags = ", ".join(_tag_copies(tag, v) for tag, v in turn.directives.items())
            lines.append(Content.assemble(("tags  ", MUTED), tags))
        tokens = turn.tokens
        if tokens:
            lines.append(Content.assemble(
                ("tokens ", MUTED),
                f"prompt {count(prompt_tokens(turn))} (in {count(tokens.get('input'))} · read "
                f"{count(tokens.get('cache_read'))} · write {count(tokens.get('cache_write'))}) · out "
                f"{count(tokens.get('output'))}",
            ))  # fmt: skip
        return Content("\n").join(lines)

    def _fingerprints(self) -> Content:
        prints = self.turn.fingerprints
        if not prints:
            if (judged := self._cache_judged()) is not None:
                return Content.styled(shown(f"{judged} keeps no continuity fingerprint: none to show", 200), MUTED)
            return Content.styled("no fingerprints yet (computed when the transcript is analysed)", MUTED)
        labels = {"senpi_sha256": "senpi sha256", "senpi_sha256_verbatim": "sha256 verbatim",
                  "senpi_sha256_projected": "sha256 projected", "stable_xxh3": "stable xxh3"}  # fmt: skip
        lines = [
            Content.assemble((cell(labels.get(name, shown(name, 30)), 18), "bold"), (shown(value, 100), MUTED))
            for name, value in prints.items()
        ]
        return Content("\n").join(lines)

    def _diff_title(self) -> Content:
        commit = self.turn.commit
        if commit is None:
            return Content("Commit")
        parts: list[tuple[str, str] | str] = [
            "Commit: ",
            (shown(commit.outcome, 20), "$error bold" if commit.outcome == "rewritten" else ""),
        ]
        extras = [
            x for x in (commit.klass, f"source {commit.source}", commit.variant and f"rule {commit.variant}") if x
        ]
        if extras:
            parts.append(" · " + shown(" · ".join(str(x) for x in extras), 80))
        return Content.assemble(*parts)

    def _diff(self) -> Content:
        commit = self.turn.commit
        if commit is None:
            agent = self.agent
            if agent is not None and agent.load().drilldown is None:
                text = f"{agent.name} records no streamed capture beside the message: no capture-vs-commit check"
                return Content.styled(shown(text, 200), MUTED)
            if agent is not None and agent.rules is not None:
                text = f"no streamed version of this call was read: no capture-vs-commit check ({agent.name})"
                return Content.styled(shown(text, 200), MUTED)
            return Content.styled("no commit outcome yet (capture and commit are compared when recorded)", MUTED)
        if not commit.diff:
            return Content.styled("comparing capture and commit…", MUTED)
        return diff_table(commit.diff)

    # ------------------------------------------------------------------ actions
    def action_close(self) -> None:
        if self.maximized is not None:  # Esc first restores a zoom, as on the dashboard
            self.minimize()
            return
        self.dismiss(None)

    def action_maximize(self) -> None:
        """`m`: the focused part full screen (the commit side when nothing has focus); `m` or Esc restores."""
        if self.maximized is not None:
            self.minimize()
            return
        focused = self.focused or self.query_one("#commit", JsonView)
        if not self.maximize(focused):
            self.maximize(self.query_one("#commit", JsonView))


def diff_table(changes: list[DiffChange], note: str | None = None) -> Content:
    """The field-level differences, one per line: path, change, volatile, capture → commit."""
    if not changes:
        return Content.styled("capture and commit are identical", MUTED)
    listed = changes[:DIFF_ROWS]
    path_w = min(40, max(12, *(len(c.path) + 2 for c in listed)))
    change_w = max(8, *(len(c.change) + 2 for c in listed))
    head = cell("path", path_w) + cell("change", change_w) + cell("vol", 4) + "capture → commit"
    lines = [Content.styled(head, "bold")]
    for change in listed:
        style = "$warning" if change.volatile else "$error"
        lines.append(
            Content.assemble(
                (cell(shown(change.path, 200), path_w), style),
                cell(shown(change.change, 40), change_w),
                cell("yes" if change.volatile else "no", 4),
                (shown(_short(change.capture), 60), MUTED),
                " → ",
                shown(_short(change.commit), 60),
            )
        )
    if len(changes) > DIFF_ROWS:
        lines.append(Content.styled(f"… {len(changes) - DIFF_ROWS} more (highlighted below)", MUTED))
    if note:
        lines.append(Content.styled(note, f"{MUTED} italic"))
    return Content("\n").join(lines)


def _diff(capture: Any, commit: Any) -> list[DiffChange]:
    return diff(capture, commit)


def cache_lines(turn: Turn, prices: PriceTable) -> list[Content]:
    """The prompt cache of one call: what a warm cache would have read back against what it read, the gap
    against the lifetime of what was cached, the excess and its cause and dollars, where the prompts parted."""
    ev = turn.cache if isinstance(turn.cache, dict) else None
    if ev is None or not ev.get("rule"):
        return []
    expected, read = ev.get("expected_read"), ev.get("cache_read")
    out = [Content.assemble(("cache      ", "bold"), f"expected read {count(expected)} · read {count(read)} · "
                            f"write {count(ev.get('cache_write'))}")]  # fmt: skip
    gap, ttl = ev.get("gap_ms"), ev.get("ttl_ms")
    if isinstance(gap, int):
        lifetime = f" of a {lifetime_name(ttl)} lifetime" if isinstance(ttl, int) else " (no published lifetime)"
        over = isinstance(ttl, int) and gap >= ttl
        out.append(Content.assemble(("gap        ", "bold"), (gap_text(gap), "$warning" if over else ""), lifetime))
    waste = call_waste(turn, prices)
    excess = ev.get("excess") or 0
    if excess and waste is not None:
        money = f" · ${waste.excess_usd:,.4f} beyond cache hits" if waste.excess_usd is not None else " · no price"
        cause = shown(turn.reason or "?", 40)
        out.append(Content.assemble(("excess     ", "bold"), (f"{count(excess)} tokens", "$error bold"), money,
                                    " · ", (cause, "$error"), (f" ({cause_text(cause)})", MUTED)))  # fmt: skip
    elif expected is not None:
        out.append(Content.assemble(("excess     ", "bold"), ("0: nothing a warm cache would have read was "
                                                              "processed again", MUTED)))  # fmt: skip
    new = ev.get("new_input")
    if isinstance(new, list) and new:
        out.append(Content.assemble(("after      ", "bold"), shown(", ".join(map(str, new)), 200)))
    changed = ev.get("changed_at")
    if isinstance(changed, dict) and changed.get("where"):
        out.append(Content.assemble(("parted     ", "bold"), shown(str(changed["where"]), 400)))
    if ev.get("resumed_from"):
        out.append(Content.assemble(("resumed    ", "bold"), shown(str(ev["resumed_from"]), 80)))
    return out


def _decision_line(label: str, kind: str, reason: str, n: int | None, note: str = "",
                   verdict: tuple[str, str] = ("", "")) -> Content:  # fmt: skip
    return Content.assemble(
        (cell(label, 11), "bold"),
        (cell(shown(kind, 20), 10), kind_style(kind)),
        shown(reason, 80),
        (f"  n={n}" if n is not None else "", MUTED),
        (f"  {note}" if note else "", MUTED),
        ("  " if verdict[0] else "", ""),
        verdict,
    )


def _tag_copies(tag: str, values: dict[str, int]) -> str:
    """`ultrawork-mode×1 (70 serialized)`: the copies sent, and as serialized where the dedupe changed them."""
    sent, _ = sent_counts(values)
    serialized = int(values.get("copies", 0))
    return f"{shown(tag, 40)}×{sent}" + (f" ({serialized:,} serialized)" if serialized != sent else "")


def _bar(total: int | None, parts: list[tuple[int | None, str]], width: int = 40) -> Content:
    if not total:
        return Content("")
    cells: list[tuple[str, str]] = []
    used = 0
    for value, style in parts:
        if not value:
            continue
        n = max(1, round(value / total * width))
        n = min(n, width - used)
        cells.append(("█" * n, style))
        used += n
    cells.append(("·" * (width - used), MUTED))
    return Content.assemble(*cells)


def _short(value: Any) -> str:
    """A diff side as one JSON text, whole: `shown` clips it after redaction (a secret cut first would leak)."""
    if value is None:
        return "∅"
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def _present(value: Any) -> set[str]:
    """Every jq path present in `value` (used to say which changed paths are missing on a side)."""
    from tui.widgets.json_view import child_path

    out: set[str] = set()
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        node, path = stack.pop()
        out.add(path)
        if isinstance(node, dict):
            stack.extend((v, child_path(path, str(k))) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, child_path(path, i)) for i, v in enumerate(node))
    return out
