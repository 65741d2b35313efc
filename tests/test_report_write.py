"""`core.report.write` streams JSON a turn at a time; its bytes must be exactly `render_bytes`'s."""

from __future__ import annotations

import io
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from report_helpers import T0, enrich, report_for, write_agent

from core.engine import Engine
from core.report import FORMATS, ReportOptions, build_report, render_bytes, write
from core.report.stream import TurnStream

SECRET = "sk-ant-api03-Zx9QwErTyUiOp_AsDfGhJkL-0123456789abcdefGHIJ"

_leaf = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=12)
_json = st.recursive(
    _leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)


def _streamed(report: dict, fmt: str) -> bytes:
    buf = io.BytesIO()
    write(report, fmt, buf)
    return buf.getvalue()


@settings(max_examples=200, deadline=None)
@given(
    before=st.dictionaries(st.sampled_from(["schema", "sessions", "a"]), _json, max_size=3),
    turns=st.lists(_json, max_size=4),
    after=st.dictionaries(st.sampled_from(["directives", "problems", "z"]), _json, max_size=3),
)
def test_streamed_json_is_byte_identical(before: dict, turns: list, after: dict) -> None:
    report = {**before, "turns": turns, **after}
    assert _streamed(report, "json") == render_bytes(report, "json")


def test_marker_text_in_the_data_falls_back_to_one_dump() -> None:
    report = {"a": "\x00continuity-tui:turns\x00", "turns": [{"x": 1}], "b": [1, 2]}
    assert _streamed(report, "json") == render_bytes(report, "json")


def test_every_format_of_a_built_report(tmp_path: Path) -> None:
    report = report_for(write_agent(tmp_path))
    assert report["turns"], "the fixture must have turns for this test to mean anything"
    for fmt in FORMATS:
        assert _streamed(report, fmt) == render_bytes(report, fmt)


def test_a_streamed_report_writes_the_same_bytes_in_every_format(tmp_path: Path) -> None:
    """`stream_turns` (the `report` command's path) changes when turns are made, never what is written: the
    redaction summary, which sits after the turns, counts the secrets they held."""
    agent = write_agent(tmp_path)
    for redact in (True, False):
        options = ReportOptions(now_ms=T0, redact=redact)
        for fmt in FORMATS:
            expected = render_bytes(_built(agent, options, stream=False), fmt)
            streamed = _built(agent, options, stream=True)
            assert isinstance(streamed["turns"], TurnStream)
            assert _streamed(streamed, fmt) == expected, (fmt, redact)
            if fmt == "json":
                assert (b"[REDACTED:" in expected) is redact  # the fixture does carry secrets into turns


def _built(agent: Path, options: ReportOptions, *, stream: bool) -> dict:
    engine = Engine([agent])
    engine.drain()
    enrich(engine, diff_value=f"Authorization: Bearer {SECRET}", long_text=f"x-api-key: {SECRET} " * 3)
    report = build_report(engine, options, stream_turns=stream)
    engine.close()
    return report
