"""The `/` filter: a few typed terms plus free text, matched against one row at a time.

Syntax (space-separated, all terms must match, case-insensitive):

* ``kind:flatten`` or ``kind:fork,flatten`` — the decision kind (exact, any of a comma list)
* ``reason:rewritten`` — substring of the reason
* ``session:0198f0`` — substring of the session id (or ``session:`` + part of its cwd)
* ``is:rewritten`` / ``is:avoidable`` / ``is:disagree`` — the row's flags
* ``-term`` — negates any term, e.g. ``-kind:delta``
* anything else — free text, found in kind, reason, session id, model or the one-line why

Kept free of Textual so it can be tested and reused by the command palette.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from core.model import Turn
from tui.view import Row, is_avoidable, is_disagreement, is_rewritten, row_kind, row_reason, row_session

FLAGS: dict[str, Callable[[Row], bool]] = {
    "rewritten": is_rewritten,
    "avoidable": is_avoidable,
    "disagree": is_disagreement,
    "disagreement": is_disagreement,
}
FIELDS = ("kind", "reason", "session", "is")


@dataclass(frozen=True, slots=True)
class Term:
    field: str  # kind | reason | session | is | text
    value: str
    negate: bool = False


@dataclass(frozen=True)
class RowFilter:
    """A parsed filter; the empty filter matches everything."""

    text: str = ""
    terms: tuple[Term, ...] = field(default_factory=tuple)
    session_key: str | None = None  # set by the sessions pane, not typed
    session_id: str | None = None

    @property
    def active(self) -> bool:
        return bool(self.terms) or self.session_id is not None

    def with_session(self, key: str | None, session_id: str | None) -> RowFilter:
        return RowFilter(self.text, self.terms, key, session_id)

    def matches(self, row: Row) -> bool:
        if self.session_id is not None and row_session(row) != self.session_id:
            return False
        return all(_term(term, row) != term.negate for term in self.terms)

    def doubtful(self) -> list[str]:
        """Terms that look typed but are not, said back to the user when nothing matches: `foo:bar` is searched
        as free text (`foo` is not a field) and `is:foo` matches no row (`foo` is not a flag)."""
        out: list[str] = []
        for term in self.terms:
            if term.field == "is" and term.value not in FLAGS:
                out.append(f"is:{term.value} is not a flag ({', '.join(sorted(set(FLAGS) - {'disagreement'}))})")
            elif term.field == "text" and ":" in term.value.strip(":"):
                name = term.value.split(":", 1)[0]
                out.append(f"{name}: is not a field ({', '.join(f + ':' for f in FIELDS)}): searched as text")
        return out

    def describe(self) -> str:
        """Plain text for the status line (it is the user's own input, still shown as data)."""
        parts = [self.text] if self.text else []
        if self.session_id is not None:
            parts.append(f"session {self.session_id[:8]}")
        return " · ".join(parts)


def parse(text: str) -> RowFilter:
    """Parse the filter bar's text. Unknown `x:y` prefixes are free text, never an error."""
    terms: list[Term] = []
    for raw in text.split():
        negate = raw.startswith("-") and len(raw) > 1
        word = raw[1:] if negate else raw
        name, sep, value = word.partition(":")
        name = name.lower()
        if sep and name in FIELDS and value:
            terms.append(Term(name, value.lower(), negate))
        else:
            terms.append(Term("text", word.lower(), negate))
    return RowFilter(text.strip(), tuple(terms))


def _term(term: Term, row: Row) -> bool:
    value = term.value
    if term.field == "kind":
        kind = (row_kind(row) or "").lower()
        return kind in value.split(",")
    if term.field == "reason":
        return value in (row_reason(row) or "").lower()
    if term.field == "session":
        return value in (row_session(row) or "").lower()
    if term.field == "is":
        check = FLAGS.get(value)
        return check(row) if check is not None else False
    return value in _haystack(row)


def _haystack(row: Row) -> str:
    parts = [row_kind(row) or "", row_reason(row) or "", row_session(row) or ""]
    if isinstance(row, Turn):
        parts += [row.model or "", row.why or "", row.entry_id or ""]
    return " ".join(parts).lower()
