"""Field-level structural diff of two JSON values (capture vs commit of an assistant message).

Why a diff and not just two hashes: a `rewritten` commit only says *that* the hashed fields changed
between the last `message_update` and `message_end`. The diff says *which* (`.content[0].startedAt`), and the
volatility policy says whether each change matters, so a turn can be classed `volatile-only` (the re-send
it caused was avoidable) or `semantic` (something really rewrote the answer).

Rules: objects compare key by key, arrays by index (a shorter array's missing tail is missing on that
side), JSON types compare as JavaScript sees them (1 and 1.0 are the same number; a bool is not a
number). Paths are jq-style: `.content[0].startedAt`, `.["a b"]` for keys that are not identifiers, `.`
for the root.

Values kept in a change are summaries, not bodies: scalars as they are (strings cut at
`MAX_VALUE_CHARS`), containers only when small; the drill-down re-reads the full JSON from disk.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from core.kernel.canonical import canonical_json
from core.kernel.volatility import PathPart, VolatilityPolicy, policy
from core.model import DiffChange

MAX_CHANGES = 200
MAX_VALUE_CHARS = 200
MAX_CONTAINER_CHARS = 400

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")

CHANGE_KINDS = ("missing_in_capture", "missing_in_commit", "changed", "type_changed")


def jq_path(path: Sequence[PathPart]) -> str:
    """`("content", 0, "startedAt")` -> `.content[0].startedAt`."""
    if not path:
        return "."
    out = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENT.fullmatch(part):
            out.append(f".{part}")
        else:
            out.append(".[" + canonical_json(part) + "]")
    text = "".join(out)
    return text if text.startswith(".") else "." + text


def json_type(value: Any) -> str:
    """The JSON type name JavaScript would report (numbers are one type)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def summarize(value: Any) -> Any:
    """What a change keeps of a value: scalars (strings cut), small containers, else a short description."""
    if isinstance(value, str):
        return value if len(value) <= MAX_VALUE_CHARS else value[: MAX_VALUE_CHARS - 1] + "…"
    if isinstance(value, dict | list):
        text = canonical_json(value)
        if len(text) <= MAX_CONTAINER_CHARS:
            return value
        size = len(value)
        unit = "keys" if isinstance(value, dict) else "items"
        return f"<{json_type(value)} with {size} {unit}, {len(text.encode('utf-8'))} bytes>"
    return value


#: leaf types whose value always equals itself, so one object on both sides is never a change
_SELF_EQUAL = frozenset({str, int, bool, type(None)})


class _Differ:
    def __init__(self, capture: Any, commit: Any, volatility: VolatilityPolicy) -> None:
        self.capture_root = capture
        self.commit_root = commit
        self.policy = volatility
        self.changes: list[DiffChange] = []
        self.truncated = 0

    def add(self, path: list[PathPart], change: str, capture: Any, commit: Any) -> None:
        if len(self.changes) >= MAX_CHANGES:
            self.truncated += 1
            return
        volatile = self.policy.is_volatile(path, self.capture_root, self.commit_root)
        self.changes.append(DiffChange(jq_path(path), change, volatile, summarize(capture), summarize(commit)))

    def walk(self, a: Any, b: Any, path: list[PathPart]) -> None:
        if a is b and type(a) in _SELF_EQUAL:
            return  # a capture shares most of its leaves with the commit (a float is walked: NaN != NaN)
        ta, tb = json_type(a), json_type(b)
        if ta != tb:
            self.add(path, "type_changed", a, b)
            return
        if ta == "object":
            for key in a:
                path.append(key)
                if key in b:
                    self.walk(a[key], b[key], path)
                else:
                    self.add(path, "missing_in_commit", a[key], None)
                path.pop()
            for key in b:
                if key not in a:
                    path.append(key)
                    self.add(path, "missing_in_capture", None, b[key])
                    path.pop()
        elif ta == "array":
            for i in range(max(len(a), len(b))):
                path.append(i)
                if i >= len(a):
                    self.add(path, "missing_in_capture", None, b[i])
                elif i >= len(b):
                    self.add(path, "missing_in_commit", a[i], None)
                else:
                    self.walk(a[i], b[i], path)
                path.pop()
        elif a != b:
            self.add(path, "changed", a, b)


def diff(capture: Any, commit: Any, volatility: VolatilityPolicy | None = None) -> list[DiffChange]:
    """Every difference between `capture` and `commit`, in document order (capped at `MAX_CHANGES`)."""
    return diff_with_count(capture, commit, volatility)[0]


def diff_with_count(
    capture: Any, commit: Any, volatility: VolatilityPolicy | None = None
) -> tuple[list[DiffChange], int]:
    """`diff` plus how many further changes were left out by the cap."""
    differ = _Differ(capture, commit, volatility or policy())
    differ.walk(capture, commit, [])
    return differ.changes, differ.truncated


def classify(changes: Sequence[DiffChange]) -> str | None:
    """`volatile-only` when every change is volatile, `semantic` when one is not, None when there is none."""
    if not changes:
        return None
    return "volatile-only" if all(c.volatile for c in changes) else "semantic"


def describe(changes: Sequence[DiffChange], limit: int = 4) -> str:
    """A short phrase for explanations: `.content[0].startedAt, .content[0].endedAt`."""
    paths = [c.path for c in changes[:limit]]
    more = len(changes) - limit
    return ", ".join(paths) + (f" and {more} more" if more > 0 else "")
