"""Turning data from files into report values: inert strings, ISO times, summarized message text.

Every string that leaves the data passes `text()` (terminal escapes and bidi overrides stripped, one line,
clipped), so the three renderings start from the same clean values. Values taken from message bodies (the
capture/commit sides of a field diff) are *summarized* by default: a bug report should show that a thinking
block changed, not paste the thinking; `--include-text` keeps them (still sanitized, still bounded).
"""

from __future__ import annotations

from typing import Any

import xxhash

from core.sanitize import clip, display, sanitize
from core.timeutil import iso_ms, parse_iso_ms

#: strings up to this length are kept verbatim in summarized mode (ids, signatures, short values)
SHORT_TEXT = 64
#: bounds for one value taken from a message body, whatever the mode
MAX_TEXT = 20_000
MAX_ITEMS = 50
MAX_DEPTH = 6


def text(value: object, limit: int = 2000) -> str:
    """Any value -> an inert single-line string (ids, reasons, kinds, paths, error messages). `display`'s
    test for a string with nothing to do is made here first: a 7,900-call report passes ~280,000 strings,
    nearly all of them already inert, and the second call was ~4 % of writing it."""
    if type(value) is str and value and len(value) <= limit and value.isprintable():
        return value
    return display(value, limit)


def opt_text(value: object, limit: int = 2000) -> str | None:
    return None if value is None else text(value, limit)


def iso(ms: int | None, raw: str | None = None) -> str | None:
    """The contract's time form (`…T03:10:00.000Z`) from epoch ms, else from an ISO string; None if neither."""
    if ms is None and raw is not None:
        ms = parse_iso_ms(raw)
    return iso_ms(ms)


def summarize_text(value: str) -> str:
    """A long message string -> `[text: N chars, L lines, xxh3 …]`: its shape and identity, not its words."""
    lines = value.count("\n") + 1
    digest = xxhash.xxh3_64_hexdigest(value.encode("utf-8", "surrogatepass"))[:8]
    return f"[text: {len(value)} chars, {lines} lines, xxh3 {digest}]"


def body_value(value: Any, *, include_text: bool, depth: int = 0) -> Any:
    """A JSON value from a message body, bounded and inert; long strings summarized unless `include_text`."""
    if isinstance(value, str):
        if include_text:
            return clip(sanitize(value), MAX_TEXT)
        return text(value) if len(value) <= SHORT_TEXT else summarize_text(value)
    if value is None or isinstance(value, bool | int | float):
        return value
    if depth >= MAX_DEPTH:
        return f"[{type(value).__name__} nested deeper than {MAX_DEPTH}]"
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for i, (key, item) in enumerate(value.items()):
            if i >= MAX_ITEMS:
                out["…"] = f"[{len(value) - MAX_ITEMS} more keys]"
                break
            out[text(key, 200)] = body_value(item, include_text=include_text, depth=depth + 1)
        return out
    if isinstance(value, list | tuple):
        items = [body_value(item, include_text=include_text, depth=depth + 1) for item in value[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            items.append(f"[{len(value) - MAX_ITEMS} more items]")
        return items
    return text(value)


_NUMBERS = (int, float, bool, type(None))


def plain_value(value: Any, depth: int = 0) -> Any:
    """A JSON value produced by an analysis (not a message body): strings made inert, size bounded.

    Every report turn passes its cache evidence through here (~20 numbers each): numbers are let through by an
    exact type test before any other check (`plain_value` was ~14 % of writing a 7,900-call report)."""
    if type(value) in _NUMBERS:
        return value
    if isinstance(value, str):
        return text(value)
    if value is None or isinstance(value, bool | int | float):
        return value
    if depth >= MAX_DEPTH:
        return None
    if isinstance(value, dict):
        items = value.items() if len(value) <= MAX_ITEMS * 4 else list(value.items())[: MAX_ITEMS * 4]
        inner = depth + 1
        # (keys are the analysis's own names, inert and short: `text`'s test inline, its call only for the rest)
        return {
            (k if type(k) is str and k and len(k) <= 200 and k.isprintable() else text(k, 200)): v
            if type(v) in _NUMBERS
            else plain_value(v, inner)
            for k, v in items
        }
    if isinstance(value, list | tuple):
        return [plain_value(v, depth + 1) for v in value[: MAX_ITEMS * 4]]
    return text(value)
