"""The report's turns as a stream: made, redacted and written one at a time.

A 1 GB history has ~46 000 turns; as dicts they are ~200 MB on top of the analysis state they are made from,
and a JSON writer only needs one at a time. `build_report(..., stream_turns=True)` puts a `TurnStream` where
the list would be; `core.report.write` consumes it. Everything else in the report (selection, counterfactual,
sessions) is computed from the state's `Turn` objects, so it is the same either way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any


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
