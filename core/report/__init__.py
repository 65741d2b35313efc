"""Snapshot reports: the `continuity.report/1` JSON contract, paste-ready Markdown, one self-contained HTML file.

    from core.report import ReportOptions, build_report, render
    report = build_report(engine, ReportOptions(session="0198…"))   # a dict per reference/report-schema.md
    sys.stdout.write(render(report, "md"))                          # "json" | "md" | "html"

`build_report` is the only place that reads state; the renderers read only the dict, so the JSON a CI job
parses and the HTML a person opens always say the same thing. Redaction runs inside `build_report` (on by
default), so no rendering can carry a secret the JSON does not.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from core.report.build import SCHEMA, EngineLike, build_report
from core.report.options import ReportOptions
from core.report.stream import TurnStream, as_data, json_default

FORMATS: tuple[str, ...] = ("json", "md", "html")
FILE_STEM = "continuity-report"

__all__ = [
    "FILE_STEM",
    "FORMATS",
    "SCHEMA",
    "ReportOptions",
    "build_report",
    "export",
    "render",
    "render_bytes",
    "write",
    "write_report",
]

_TURNS_MARK = "\x00continuity-tui:turns\x00"
_TURNS_MARK_JSON = orjson.dumps(_TURNS_MARK)


def render(report: dict[str, Any], fmt: str) -> str:
    """One built report as text: `json` (the contract, indented), `md` (Markdown), `html` (one page)."""
    if fmt == "json":
        return orjson.dumps(report, default=json_default, option=orjson.OPT_INDENT_2).decode("utf-8") + "\n"
    report = as_data(report)
    if fmt in ("md", "markdown"):
        from core.report.markdown import render_markdown

        return render_markdown(report)
    if fmt == "html":
        from core.report.html import render_html

        return render_html(report)
    raise ValueError(f"unknown report format {fmt!r}: expected one of {', '.join(FORMATS)}")


def render_bytes(report: dict[str, Any], fmt: str) -> bytes:
    """`render` as UTF-8 bytes, for a file or stdout. JSON goes straight from orjson: on a 1 GB history the
    report is ~100 MB, and decoding it to text and encoding it back held three more copies at the peak."""
    if fmt == "json":
        return orjson.dumps(report, default=json_default, option=orjson.OPT_INDENT_2) + b"\n"
    return render(report, fmt).encode("utf-8")


def write(report: dict[str, Any], fmt: str, out: IO[bytes]) -> None:
    """`render_bytes` into a binary stream, byte for byte. JSON is written a turn at a time: the turns are most
    of a big report (96 MB for 46 000 turns), so the whole document never exists as one bytes object, and a
    report built with `stream_turns` never holds more than one turn's dict.

    Each turn is dumped at orjson's indent and shifted right by the list's depth (4 spaces after every newline:
    a JSON string holds no raw newline, so only the layout moves); the rest of the report is dumped with a
    marker string where the list goes, and split there. The part after the list is dumped after the turns
    were written, so a streamed report's redaction summary counts them."""
    turns = report.get("turns")
    if isinstance(turns, TurnStream) and fmt != "json":
        report = {**report, "turns": list(turns)}
        turns = report["turns"]
    if fmt != "json" or not isinstance(turns, list | TurnStream):
        out.write(render_bytes(report, fmt))
        return
    head, ok = _split(report)
    if not ok:  # the marker text occurs in the data itself: no shortcut
        out.write(render_bytes({**report, "turns": list(turns)}, fmt))
        return
    out.write(head)
    first = True
    for chunk in _chunks(turns, TURNS_PER_WRITE):
        out.write(b"[\n    " if first else b",\n    ")
        out.write(_dump_items(chunk))
        first = False
    out.write(b"[]" if first else b"\n  ]")
    out.write(_skeleton(_after_turns(report)).partition(_TURNS_MARK_JSON)[2])
    out.write(b"\n")


TURNS_PER_WRITE = 64
"""Turns dumped per orjson call: one turn at a time paid a call, a re-indenting copy and a write per turn
(~8 % of writing a 7,900-call report); 64 at a time hold ~150 KB of JSON."""

_ITEMS_HEAD = b'{\n  "t": [\n    '
_ITEMS_TAIL = b"\n  ]\n}"


def _dump_items(items: list[dict[str, Any]]) -> bytes:
    """Items of a list two levels deep in the report, as orjson lays them out there (4 spaces in, separated by
    `,\n    `): a list one key deep in a wrapper dict is dumped at exactly that depth, and the wrapper's bytes cut
    off."""
    dumped = orjson.dumps({"t": items}, option=orjson.OPT_INDENT_2)
    return dumped[len(_ITEMS_HEAD) : -len(_ITEMS_TAIL)]


def _chunks(items: Iterable[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    chunk: list[dict[str, Any]] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _after_turns(report: dict[str, Any]) -> dict[str, Any]:
    """The report with every field before `turns` emptied: the tail is dumped after the turns (the redaction
    summary counts them), and the fields before them (a big log's streaks) need not be dumped twice."""
    keys = list(report)
    cut = keys.index("turns")
    return {key: (None if i < cut else report[key]) for i, key in enumerate(keys)}


def _skeleton(report: dict[str, Any]) -> bytes:
    """The report's JSON with the marker string where the turns list goes."""
    return orjson.dumps({**report, "turns": _TURNS_MARK}, default=json_default, option=orjson.OPT_INDENT_2)


def _split(report: dict[str, Any]) -> tuple[bytes | memoryview, bool]:
    """The report's JSON up to its turns list (a view of it: the 1.1M-line log's is 14 MB, copying it took ~14 ms
    of a 0.5 s report), and whether the marker stands for the list alone."""
    skeleton = _skeleton(report)
    at = skeleton.find(_TURNS_MARK_JSON)
    once = at >= 0 and skeleton.find(_TURNS_MARK_JSON, at + len(_TURNS_MARK_JSON)) < 0
    return memoryview(skeleton)[: max(at, 0)], once


def export(
    engine: EngineLike,
    directory: Path,
    options: ReportOptions | None = None,
    formats: tuple[str, ...] = FORMATS,
) -> list[Path]:
    """Write `continuity-report.{json,md,html}` into `directory` from one snapshot (the TUI's `e` key)."""
    return write_report(build_report(engine, options), directory, formats)


def write_report(report: dict[str, Any], directory: Path, formats: tuple[str, ...] = FORMATS) -> list[Path]:
    """`export` of a report already built (the dashboard reads it back to say what it included)."""
    from core.report.output import write_file

    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for fmt in formats:
        path = directory / f"{FILE_STEM}.{fmt}"
        write_file(path, lambda fh, fmt=fmt: write(report, fmt, fh))  # a temp name, then a rename
        written.append(path)
    return written
