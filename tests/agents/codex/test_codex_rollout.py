"""The Codex rollout adapter: sniffed by content, every real line a record, every bad line one located Problem."""

from __future__ import annotations

import orjson

from core.agents import sniff
from core.agents.codex.rollout import CodexLine, CodexRolloutAdapter, TokenUsage
from core.model import Problem
from tests.agents.codex.codex_lines import REAL
from tests.realdata import needs_realdata

ADAPTER = CodexRolloutAdapter()
META = {
    "timestamp": "2026-03-18T18:16:42.922Z",
    "type": "session_meta",
    "payload": {"id": "019d021f-1244-77d2-b5aa-ba1d70f11e87", "cwd": "/per/dev/shell-ws"},
}


def parse(obj: object, lineno: int = 7, offset: int = 1234) -> CodexLine | Problem:
    data = obj if isinstance(obj, bytes) else orjson.dumps(obj)
    records = ADAPTER.parse("/x/rollout.jsonl", lineno, offset, data)
    assert len(records) == 1
    return records[0]


@needs_realdata
def test_sniffed_by_content_on_every_real_first_line_and_no_other_agents_line() -> None:
    firsts = [path.open("rb").readline() for path in sorted(REAL.glob("sessions/*/*/*/*.jsonl"))]
    assert len(firsts) == 14
    for line in firsts:
        adapter = sniff("/anywhere/notes.jsonl", orjson.loads(line))
        assert adapter is not None and adapter.name == "codex-rollout"
    # a later line also identifies the file (a rollout tailed from the middle, or one whose meta line is damaged)
    assert ADAPTER.sniff("/x", {"timestamp": "2026-01-01T00:00:00Z", "type": "event_msg", "payload": {"type": "x"}})
    # other agents' first lines are not claimed, and a look-alike without the envelope is not a rollout
    assert not ADAPTER.sniff("/x", {"type": "session", "id": "x", "cwd": "/", "timestamp": "2026-01-01T00:00:00Z"})
    assert not ADAPTER.sniff("/x", {"parentUuid": None, "sessionId": "s", "type": "user", "uuid": "u"})
    assert not ADAPTER.sniff("/x", {"type": "event_msg", "payload": "text", "timestamp": "2026-01-01T00:00:00Z"})
    assert not ADAPTER.sniff("/x", {"type": "world_state", "payload": {}, "timestamp": "2026-01-01T00:00:00Z"})


@needs_realdata
def test_every_real_line_parses_to_a_record() -> None:
    lines = problems = token_counts = 0
    for path in sorted(REAL.glob("sessions/*/*/*/*.jsonl")):
        offset = 0
        for lineno, data in enumerate(path.read_bytes().split(b"\n")[:-1], 1):
            for record in ADAPTER.parse(str(path), lineno, offset, data):
                lines += 1
                problems += isinstance(record, Problem)
                token_counts += isinstance(record, CodexLine) and record.kind == "token_count"
            offset += len(data) + 1
    # SOURCES.md: 6,552 lines; codex-format.md: 1,782 token_count lines
    assert (lines, problems, token_counts) == (6552, 0, 1782)


def test_token_count_usage_is_lifted_and_bad_counts_are_problems() -> None:
    usage = {
        "input_tokens": 8321,
        "cached_input_tokens": 6784,
        "output_tokens": 51,
        "reasoning_output_tokens": 0,
        "total_tokens": 8372,
    }
    line = parse(
        {
            "timestamp": "2026-01-05T20:51:19.500Z",
            "type": "event_msg",
            "payload": {
                "type": "token_count",
                "info": {"total_token_usage": usage, "last_token_usage": usage},
                "rate_limits": None,
            },
        }
    )
    assert isinstance(line, CodexLine) and line.kind == "token_count" and line.where.offset == 1234
    assert line.last == TokenUsage(8321, 6784, 51, 0, 8372) and line.total == line.last
    assert line.ts_ms == 1_767_646_279_500
    null_info = parse(
        {
            "timestamp": "2026-01-05T20:51:19.500Z",
            "type": "event_msg",
            "payload": {"type": "token_count", "info": None, "rate_limits": {}},
        }
    )
    assert isinstance(null_info, CodexLine) and null_info.total is None and null_info.last is None
    no_cached = parse(
        {
            "timestamp": "2026-01-05T20:51:19.500Z",
            "type": "event_msg",
            "payload": {"type": "token_count", "info": {"last_token_usage": {"input_tokens": 9}}},
        }
    )
    assert isinstance(no_cached, CodexLine) and no_cached.last is not None and not no_cached.last.cached_reported
    for bad, why in (
        ({"input_tokens": "8321"}, "input_tokens is not a token count"),
        ({"input_tokens": -1}, "input_tokens is not a token count"),
        ({"output_tokens": True}, "output_tokens is not a token count"),
        ({"cached_input_tokens": 1.5}, "cached_input_tokens is not a token count"),
        ([1, 2], "last_token_usage is not an object"),
    ):
        problem = parse(
            {
                "timestamp": "2026-01-05T20:51:19.500Z",
                "type": "event_msg",
                "payload": {"type": "token_count", "info": {"last_token_usage": bad}},
            }
        )
        assert isinstance(problem, Problem) and why in problem.error, (bad, problem)
        assert (problem.path, problem.line, problem.offset) == ("/x/rollout.jsonl", 7, 1234)
    empty_info = parse(
        {
            "timestamp": "2026-01-05T20:51:19.500Z",
            "type": "event_msg",
            "payload": {"type": "token_count", "info": {"model_context_window": 1}},
        }
    )
    assert isinstance(empty_info, Problem) and "without total_token_usage" in empty_info.error


def test_bad_lines_are_located_problems_and_unknown_types_are_records() -> None:
    for data, why in (
        (b'{"timestamp": "2026', "invalid JSON"),
        (b"\xff\xfe{}", "invalid UTF-8"),
        (b"[1, 2]", "expected a JSON object"),
        (orjson.dumps({"type": 3, "payload": {}}), "without string type"),
        (orjson.dumps({"type": "turn_context", "timestamp": "2026-01-01T00:00:00Z"}), "without a payload"),
        (orjson.dumps({"type": "event_msg", "payload": [1]}), "payload is not an object"),
    ):
        problem = parse(data, lineno=3, offset=99)
        assert isinstance(problem, Problem) and why in problem.error, (data, problem)
        assert (problem.line, problem.offset) == (3, 99)
    later = parse({"timestamp": "2026-09-02T15:58:14.000Z", "type": "world_state", "ordinal": 4, "payload": {"x": 1}})
    assert isinstance(later, CodexLine) and later.type == "world_state" and later.kind is None
    meta = parse(META)
    assert isinstance(meta, CodexLine) and meta.type == "session_meta" and meta.payload["cwd"] == "/per/dev/shell-ws"
