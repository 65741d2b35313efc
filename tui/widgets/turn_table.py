"""The turn table: one row per provider call, fast at 100 000 rows, filtered incrementally.

Columns: time, session, index, kind, reason, count, payload bytes, directive copies and flags
(`R` rewritten, `A` avoidable, `≠` logged and recomputed decisions disagree). Narrow terminals drop the
least useful columns first; the reason column takes what is left.

Filtering keeps a list of row indices; when a snapshot only appended rows, just the new tail is tested,
so a live tail costs O(new rows) per repaint whatever the table's size.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from core.model import Turn
from core.report.redact import shown
from tui.filters import RowFilter
from tui.fmt import MUTED, cell, clock_time, kind_style, short_bytes, short_id
from tui.view import (
    Row,
    directive_copies,
    is_avoidable,
    is_disagreement,
    is_rewritten,
    payload_bytes,
    prompt_tokens,
    row_count,
    row_kind,
    row_ms,
    row_reason,
    row_session,
)
from tui.widgets.rowlist import RowList


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    title: str
    width: int
    right: bool = False
    min_total: int = 0  # the column is shown only when the table is at least this wide
    help: str = ""  # what the help screen says about it


COLUMNS: tuple[Column, ...] = (
    Column("time", "time UTC", 8, help="when the call started (UTC, the data's own zone)"),
    Column("session", "session", 8, min_total=64, help="the head of the session id (as in transcript file names)"),
    Column("index", "#", 4, right=True, min_total=96, help="the call's index in its session, from 0"),
    Column("kind", "kind", 9, help="the continuity decision (Kinds below)"),
    Column("reason", "reason", 0, help="why the agent decided so (Reasons below)"),
    Column("count", "n", 4, right=True,
           help="messages the decision covered (senpi's deltaMessages: new ones for a delta, all re-sent otherwise)"),
    Column("bytes", "size", 6, right=True,
           help="payload bytes sent (after the agent's own directive dedupe); prompt tokens, marked t, for agents whose"
                " files hold no system prompt or tools (Claude Code, pi, mux, Codex)"),
    Column("copies", "dir", 3, right=True, min_total=72,
           help="directive blocks (<ultrawork-mode>, …) in the payload sent, after the agent's own dedupe; the "
                "Directives pane sums them, serialized and sent"),
    Column("flags", "flg", 3, help="R rewritten · A avoidable · ≠ logged and recomputed disagree (Flags below)"),
    Column("why", "why (recomputed)", 0, min_total=100, help="the one-line why of the replayed decision"),
)  # fmt: skip
REASON_MIN = 10
REASON_WIDE = 24


def layout(width: int) -> list[Column]:
    """The visible columns for a table `width` cells wide: reason (and on wide tables the one-line why of
    the recomputed decision) share what the fixed columns leave."""
    shown = [c for c in COLUMNS if width >= c.min_total]
    fixed = sum(c.width for c in shown if c.key not in ("reason", "why")) + len(shown)  # one space before each
    rest = max(REASON_MIN, width - fixed)
    has_why = any(c.key == "why" for c in shown)
    reason = min(REASON_WIDE, rest) if has_why else rest
    why = max(0, rest - reason)
    sized = {"reason": reason, "why": why}
    return [Column(c.key, c.title, sized[c.key], c.right) if c.key in sized else c for c in shown]


def flags(row: Row) -> Content:
    """`R`, `A` and `≠` in fixed positions so the column reads like a set of lamps."""
    return Content.assemble(
        ("R", "$error bold") if is_rewritten(row) else " ",
        ("A", "$warning bold") if is_avoidable(row) else " ",
        ("≠", "$accent bold") if is_disagreement(row) else " ",
    )


MATCH_STYLE = "reverse $warning"
MARK = "▌"


def highlight(content: Content, columns: list[Column], search: RowFilter) -> Content:
    """A search match: a mark in the margin, the matched text (or the matched field's cell) highlighted.

    Free text is found wherever it shows in the row; `kind:`/`reason:`/`session:` light up that cell, `is:` the
    flags. A row can match on a field too narrow to show (the why at 80 columns): the margin mark still says so.
    """
    plain = content.plain.lower()
    spans: dict[str, tuple[int, int]] = {}
    at = 0
    for column in columns:
        spans[column.key] = (at + 1, at + 1 + column.width)
        at += 1 + column.width
    out = Content.assemble((MARK, "$warning bold"), content[1:])
    for term in search.terms:
        if term.negate:
            continue
        if term.field == "text":
            start = plain.find(term.value)
            while start >= 0 and term.value:
                out = out.stylize(MATCH_STYLE, start, start + len(term.value))
                start = plain.find(term.value, start + len(term.value))
            continue
        cell_key = {"kind": "kind", "reason": "reason", "session": "session", "is": "flags"}.get(term.field)
        if cell_key in spans:
            start, end = spans[cell_key]
            inside = plain.find(term.value, start, end) if term.field == "reason" else -1
            if inside >= 0:
                out = out.stylize(MATCH_STYLE, inside, inside + len(term.value))
            else:
                out = out.stylize(MATCH_STYLE, start, min(end, start + len(plain[start:end].rstrip())))
    return out


def _size(row: Row, inexact: Collection[str]) -> str:
    """The size cell: payload bytes, or for a session in `inexact` (its agent's files hold no system prompt or
    tools: 37 bytes for a Claude Code call of 25,353 prompt tokens) the prompt tokens, marked `t`."""
    if not isinstance(row, Turn):
        return ""
    if row.session in inexact:
        tokens = prompt_tokens(row)
        return "" if tokens is None else f"{short_bytes(tokens)}t"
    size = payload_bytes(row)
    return "" if size is None else short_bytes(size)


def copy_origin(copied_from: str) -> str:
    """The session a copied call came from, as the session column shows it: the head of its id (pi names the
    parent by its file, `<time>_<session id>.jsonl`: the id is what follows the time)."""
    name = copied_from.rsplit("/", 1)[-1].removesuffix(".jsonl")
    return short_id(name.rsplit("_", 1)[-1])


def render_cells(row: Row, columns: list[Column], inexact: Collection[str] = ()) -> Content:
    """One table row as styled Content (all text from data is sanitized and inserted as plain text); `inexact`:
    the session ids whose size is shown in prompt tokens (`_size`)."""
    parts: list[Content | tuple[str, str] | str] = []
    kind = row_kind(row)
    copy_of = row.copied_from if isinstance(row, Turn) else None
    for column in columns:
        parts.append(" ")
        key, width = column.key, column.width
        if key == "time":
            parts.append((cell(clock_time(row_ms(row)), width), MUTED))
        elif key == "session":
            session = row_session(row)
            parts.append(cell(short_id(session) if session else "log", width))
        elif key == "index":
            text = str(row.index) if isinstance(row, Turn) else ""
            parts.append((cell(text, width, right=True), MUTED))
        elif key == "kind":
            if copy_of is not None:  # a copy of another session's call (a resume, a branch): judged there
                parts.append((cell("copy", width), MUTED))
            else:
                parts.append((cell(kind or "?", width), kind_style(kind)))
        elif key == "reason":
            parts.append(cell(shown(row_reason(row) or "—", 300), width))
        elif key == "count":
            n = row_count(row)
            parts.append(cell("" if n is None else str(n), width, right=True))
        elif key == "bytes":
            parts.append(cell(_size(row, inexact), width, right=True))
        elif key == "copies":
            copies = directive_copies(row) if isinstance(row, Turn) else None
            parts.append(cell("" if not copies else str(copies), width, right=True))  # ($secondary was unreadable)
        elif key == "flags":
            parts.append(flags(row))
        elif key == "why":
            why = row.why if isinstance(row, Turn) else None
            if copy_of is not None and not why:
                why = f"copied: counted in {copy_origin(copy_of)}"
            parts.append((cell(shown(why or "", 400), width), MUTED))
    return Content.assemble(*parts)


def header(columns: list[Column]) -> Content:
    return Content.assemble(*[(" " + cell(c.title, c.width, right=c.right)) for c in columns]).stylize("bold")


class TurnTable(RowList):
    """The rows of the current snapshot, through the current filter."""

    DEFAULT_CSS = """
    TurnTable { height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(empty_text="no turns yet — waiting for transcripts or session.log lines", id=id)
        self.rows: list[Row] = []
        self.view: list[int] | None = None  # indices into rows when a filter is active
        self.filter = RowFilter()
        self.search: RowFilter | None = None
        """The ctrl+f search: its matching rows are marked and their matches highlighted."""
        self.matches = 0
        """How many rows in view match the search."""
        self._matched_upto = 0  # rows of the view counted into `matches`
        self.generation = -1
        self.inexact: Collection[str] = ()
        """Session ids whose agent gives no byte-exact payload: their size column shows prompt tokens."""
        self._columns: list[Column] = layout(80)
        self._layout_width = 80

    # ------------------------------------------------------------------ data
    @property
    def row_count(self) -> int:
        return len(self.view) if self.view is not None else len(self.rows)

    def row_at(self, index: int) -> Row | None:
        if not 0 <= index < self.row_count:
            return None
        return self.rows[self.view[index]] if self.view is not None else self.rows[index]

    @property
    def current(self) -> Row | None:
        return self.row_at(self.cursor)

    def set_rows(self, rows: list[Row], generation: int, *, follow: bool) -> None:
        """Take a snapshot's rows; keep the cursor on the same row unless following the tail."""
        anchor = None if follow else self.current
        old_len = len(self.rows)
        reordered = generation != self.generation or len(rows) < old_len
        self.rows = rows
        self.generation = generation
        if self.filter.active:
            if reordered or self.view is None:
                self.view = [i for i, row in enumerate(rows) if self.filter.matches(row)]
            else:
                self.view.extend(i for i in range(old_len, len(rows)) if self.filter.matches(rows[i]))
        else:
            self.view = None
        self._place_cursor(anchor, follow=follow, searched=reordered)

    def set_filter(self, row_filter: RowFilter, *, follow: bool) -> None:
        anchor = None if follow else self.current
        self.filter = row_filter
        if row_filter.active:
            self.view = [i for i, row in enumerate(self.rows) if row_filter.matches(row)]
        else:
            self.view = None
        self._place_cursor(anchor, follow=follow, searched=True)

    def set_search(self, search: RowFilter | None) -> None:
        self.search = search if search is not None and search.terms else None
        self._matched_upto, self.matches = 0, 0
        self._count_matches()
        self.invalidate()

    def _count_matches(self) -> None:
        """Counts the rows of the view not counted yet (a live tail appends: O(new rows) per snapshot)."""
        search = self.search
        if search is None:
            return
        for index in range(self._matched_upto, self.row_count):
            row = self.row_at(index)
            if row is not None and search.matches(row):
                self.matches += 1
        self._matched_upto = self.row_count

    def _place_cursor(self, anchor: Row | None, *, follow: bool, searched: bool) -> None:
        if searched or self.row_count < self._matched_upto:
            self._matched_upto, self.matches = 0, 0
        self._count_matches()
        self.rows_changed()
        if follow or anchor is None:
            if follow and self.row_count:
                self.move_to(self.row_count - 1)
            return
        if searched or self.current is not anchor:
            index = self.index_of(anchor)
            if index is not None:
                self.move_to(index)

    def index_of(self, row: Row) -> int | None:
        """Where `row` is in the current view (identity, not equality: turns are dataclasses)."""
        count = self.row_count
        start = min(self.cursor, count - 1)
        for delta in range(count):  # search outward from the cursor: the row rarely moves far
            for index in (start + delta, start - delta - 1):
                if 0 <= index < count and self.row_at(index) is row:
                    return index
            if start + delta >= count and start - delta - 1 < 0:
                break
        return None

    def find(self, predicate: object, *, forward: bool, start: int | None = None) -> int | None:
        """Index of the next (or previous) row after `start` (the cursor) for which `predicate(row)` holds."""
        assert callable(predicate)
        step = 1 if forward else -1
        index = (self.cursor if start is None else start) + step
        while 0 <= index < self.row_count:
            if predicate(self.row_at(index)):
                return index
            index += step
        return None

    def empty_lines(self) -> list[Content]:
        """No row: either nothing was read yet, or the filter hides every row (then say so, and how to clear it:
        "waiting for transcripts" under a filter that matches nothing sent users looking for a reading bug)."""
        if not self.rows or self.view is None:
            return [Content(self.empty_text)]
        described = self.filter.describe()
        lines = [
            Content.assemble(
                f"nothing matches the filter ({len(self.rows):,} turns hidden): ",
                (shown(described, 200), "$accent"),
            )
        ]
        lines += [Content(shown(line, 200)) for line in self.filter.doubtful()]
        lines.append(Content("Esc clears the filter · / edits it · fields: kind: reason: session: is: -term"))
        return lines

    # ------------------------------------------------------------------ rendering
    def on_resize(self, event: events.Resize) -> None:
        self._set_layout(self.scrollable_content_region.width)
        super().on_resize(event)

    def _set_layout(self, width: int) -> None:
        self._layout_width = width
        self._columns = layout(width)
        parent = self.parent
        if isinstance(parent, TurnPane):
            parent.update_header(self._columns)

    def render_row(self, index: int, width: int) -> Content:
        if width != self._layout_width:  # a scrollbar came or went: the content area changed, not the size
            self._set_layout(width)
        row = self.row_at(index)
        if row is None:
            return Content("")
        content = render_cells(row, self._columns, self.inexact)
        if self.search is not None and self.search.matches(row):
            return highlight(content, self._columns, self.search)
        return content


class TurnHeader(Static):
    """The column titles, kept outside the scrolling area so they never scroll away."""

    DEFAULT_CSS = """
    TurnHeader { height: 1; background: $panel; color: $text; }
    """


class TurnPane(Vertical):
    """Header + table, with the border title naming the filter and the row count."""

    ALLOW_MAXIMIZE = True  # `m` or the palette zooms the table with its header (a Vertical is not focusable)

    DEFAULT_CSS = """
    TurnPane { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield TurnHeader(header(layout(80)), id="turn-header")
        yield TurnTable(id="turns")

    def update_header(self, columns: list[Column]) -> None:
        self.query_one(TurnHeader).update(header(columns))
