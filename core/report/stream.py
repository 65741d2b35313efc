"""The report's turns as a stream: made, redacted and written one at a time.

A 1 GB history has ~46 000 turns; as dicts they are ~200 MB on top of the analysis state they are made from,
and a JSON writer only needs one at a time. `build_report(..., stream_turns=True)` puts a `TurnStream` where
the list would be; `core.report.write` consumes it. Everything else in the report (selection, counterfactual,
sessions) is computed from the state's `Turn` objects, so it is the same either way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson


class TurnStream:
    """An iterable that can be iterated once; `then` runs after the last item (e.g. the redaction summary,
    which counts what the turns held, is final only then)."""

    def __init__(self, items: Iterable[dict[str, Any]], then: Callable[[], None] | None = None) -> None:
        self._items = items
        self._then = then
        self._used = False

    def __iter__(self) -> Iterator[dict[str, Any]]:
        if self._used:
            raise RuntimeError("a TurnStream can be read only once")
        self._used = True
        return self._run()

    def _run(self) -> Iterator[dict[str, Any]]:
        yield from self._items
        if self._then is not None:
            self._then()

    def map(self, fn: Callable[[dict[str, Any]], dict[str, Any]], then: Callable[[], None]) -> TurnStream:
        """The same turns through `fn`, lazily."""
        return TurnStream((fn(item) for item in self), then)


STORED_AT = ("continuity", "streaks")
"""The one place a builder puts a `StoredJSON`: the log's streaks, two keys deep in the report."""


def stored_json(value: Any) -> bytes:
    """`value` as the JSON writer lays it out at `STORED_AT`: dumped on its own at orjson's two-space indent and
    shifted right two spaces a level after every newline (a JSON string holds no raw newline, so only the layout
    moves). What a `StoredJSON` holds; `tests/index/test_index_logs.py` compares the whole report with a cold one."""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).replace(b"\n", b"\n" + b"  " * len(STORED_AT))


class StoredJSON:
    """A list of the report held as the JSON the JSON writer writes for it where it stands (`json_default` hands
    orjson those bytes as an `orjson.Fragment`), and `plain()`, the list itself, for every other reader. A stored
    log view's streaks are one (`core.index.views`: ~56,000 on the 1.1M-line log, 13 MB of its 14 MB report):
    written as stored, never rebuilt as dicts."""

    __slots__ = ("data", "plain")

    def __init__(self, data: bytes, plain: Callable[[], list[Any]]) -> None:
        self.data = data
        self.plain = plain


def json_default(value: Any) -> Any:
    """orjson's `default`: a `StoredJSON` as its bytes, anything else not JSON (orjson's TypeError)."""
    if isinstance(value, StoredJSON):
        return orjson.Fragment(value.data)
    raise TypeError(f"Type is not JSON serializable: {type(value).__name__}")


def as_data(report: dict[str, Any]) -> dict[str, Any]:
    """The report with its stored JSON as data (at `STORED_AT`): what a Markdown or HTML rendering reads."""
    outer, inner = STORED_AT
    section = report.get(outer)
    if isinstance(section, dict) and isinstance(section.get(inner), StoredJSON):
        return {**report, outer: {**section, inner: section[inner].plain()}}
    return report
