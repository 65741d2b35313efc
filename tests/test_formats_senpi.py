"""senpi session.log, compaction.log, transcript and sidecar adapters: every event and entry type."""

from __future__ import annotations

import orjson
import pytest

from core.agents import sniff
from core.agents.senpi.formats.logs import CompactionLogAdapter, SessionLogAdapter
from core.agents.senpi.formats.sidecar import SidecarAdapter
from core.agents.shared.pi_family.transcript import TranscriptAdapter
from core.model import CloseLine, ContinuityLine, LogEvent, Problem, SessionHeader, TranscriptEntry

LOG = "/a/logs/session.log"

SESSION_LOG_LINES = [
    '{"ts":"2026-08-22T09:00:03.412Z","level":"info","event":"claude_sdk_oauth_session_continuity","kind":"bootstrap","reason":"registry_miss","count":1}',
    '{"ts":"2026-08-22T09:40:00.001Z","level":"info","event":"claude_sdk_oauth_session_close","reason":"idle_ttl"}',
    '{"ts":"2026-08-22T09:52:00.000Z","level":"info","event":"claude_sdk_oauth_session_continuity","kind":"flatten","reason":"query_failed"}',
    '{"ts":"2026-08-22T09:54:00.000Z","level":"info","event":"compaction_start","attemptId":"u","reason":"threshold","mode":"auto","action":"compact","tokensBefore":181234}',
    '{"ts":"2026-08-22T09:54:10.000Z","level":"info","event":"compaction_decision","accepted":true,"tokensBefore":181234,"tokensAfter":20000}',
    '{"ts":"2026-08-22T09:54:30.000Z","level":"warn","event":"provider_error","kind":"timeout","error":"socket hang up"}',
    '{"ts":"2026-08-22T09:54:31.000Z","level":"warn","event":"prompt_rejected","reason":"too_long"}',
    '{"ts":"2026-08-22T09:55:00.000Z","level":"debug","event":"queue_enqueue","mode":"steer","count":1}',
    '{"ts":"2026-08-22T09:55:01.000Z","level":"debug","event":"queue_dequeue","mode":"steer","count":1}',
    '{"ts":"2026-08-22T09:55:02.000Z","level":"warn","event":"clipboard_error","error":"no display"}',
    '{"ts":"2026-10-10T09:53:30.000Z","level":"info","event":"claude_sdk_oauth_checkpoint_recovered"}',
    '{"ts":"2026-10-10T09:54:00.000Z","level":"info","event":"some_future_event","x":1}',
]


def parse_all(adapter, lines, path=LOG):
    out = []
    offset = 0
    for i, line in enumerate(lines, 1):
        data = line.encode() if isinstance(line, str) else line
        out.extend(adapter.parse(path, i, offset, data))
        offset += len(data) + 1
    return out


def test_session_log_every_event_becomes_a_record() -> None:
    records = parse_all(SessionLogAdapter(), SESSION_LOG_LINES)
    assert len(records) == len(SESSION_LOG_LINES)
    assert isinstance(records[0], ContinuityLine)
    assert (records[0].kind, records[0].reason, records[0].count) == ("bootstrap", "registry_miss", 1)
    assert records[0].ts_ms == 1787389203412 or records[0].ts_ms is not None
    assert isinstance(records[1], CloseLine) and records[1].reason == "idle_ttl"
    assert isinstance(records[2], ContinuityLine) and records[2].count is None
    events = [r.event for r in records if isinstance(r, LogEvent)]
    assert events == [
        "compaction_start", "compaction_decision", "provider_error", "prompt_rejected", "queue_enqueue",
        "queue_dequeue", "clipboard_error", "claude_sdk_oauth_checkpoint_recovered", "some_future_event",
    ]  # fmt: skip
    provider_error = next(r for r in records if isinstance(r, LogEvent) and r.event == "provider_error")
    assert provider_error.data == {"kind": "timeout", "error": "socket hang up"}
    assert provider_error.where.line == 6


def test_newer_build_session_id_is_read_wherever_it_sits() -> None:
    lines = [
        '{"ts":"2026-10-10T09:00:03.412Z","level":"info","event":"claude_sdk_oauth_session_continuity","kind":"bootstrap","reason":"registry_miss","count":2,"sessionId":"S1"}',
        '{"ts":"2026-10-10T09:52:00.000Z","level":"info","event":"claude_sdk_oauth_session_continuity","kind":"failed","reason":"query_failed","sessionId":"S1"}',
        '{"ts":"2026-10-10T09:40:00.001Z","level":"info","event":"claude_sdk_oauth_session_close","reason":"idle_ttl","sessionId":"S1"}',
        '{"ts":"2026-10-10T09:54:00.000Z","level":"info","event":"compaction_start","sessionId":"S1","provider":"anthropic-subscription","model":"m","reason":"threshold"}',
    ]
    records = parse_all(SessionLogAdapter(), lines)
    assert [getattr(r, "session_id", None) for r in records] == ["S1", "S1", "S1", "S1"]
    assert records[1].kind == "failed"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b'{"ts":"x","level":"info"', "invalid JSON"),
        (b"\xff\xfe{}", "invalid UTF-8 at byte 0"),
        (b"[1,2]", "expected a JSON object"),
        (b'{"ts":"x","level":"info"}', "log line without string event"),
        (b'{"ts":"x","level":"info","event":"claude_sdk_oauth_session_continuity","kind":1}', "kind/reason"),
        (b'{"ts":"x","level":"info","event":"claude_sdk_oauth_session_close"}', "close line without"),
    ],
)
def test_bad_log_lines_become_one_located_problem(data: bytes, reason: str) -> None:
    records = SessionLogAdapter().parse(LOG, 17, 2311, data)
    assert len(records) == 1 and isinstance(records[0], Problem)
    problem = records[0]
    assert (problem.path, problem.line, problem.offset) == (LOG, 17, 2311)
    assert reason in problem.error


def test_compaction_log_events_are_generic_records() -> None:
    line = '{"ts":"2026-08-22T09:54:00.000Z","level":"debug","event":"speculative_started","generation":3,"origin":"speculative"}'
    (record,) = CompactionLogAdapter().parse("/a/logs/compaction.log", 1, 0, line.encode())
    assert isinstance(record, LogEvent) and record.source == "compaction-log"
    assert record.data == {"generation": 3, "origin": "speculative"}


def test_sniff_tells_the_formats_apart() -> None:
    log = orjson.loads(SESSION_LOG_LINES[0])
    assert sniff("/x/session.log", log).name == "senpi-session-log"
    assert sniff("/x/other.log", {"ts": "t", "level": "debug", "event": "speculative_started"}).name == (
        "senpi-compaction-log"
    )
    header = {"type": "session", "version": 3, "id": "u", "timestamp": "t", "cwd": "/x"}
    assert sniff("/x/a.jsonl", header).name == "senpi-transcript"
    assert sniff("/x/a.jsonl.claude-sdk-oauth-binding.json", {"schemaVersion": 1}).name == "senpi-sidecar"
    assert sniff("/x/a.jsonl", {"hello": 1}) is None


TRANSCRIPT = [
    {"type": "session", "version": 3, "id": "0198f0a1", "timestamp": "2026-08-22T09:00:00.000Z", "cwd": "/home/a"},
    {
        "type": "model_change",
        "id": "a0000001",
        "parentId": None,
        "timestamp": "2026-08-22T09:00:00.001Z",
        "provider": "claude-sdk-oauth",
        "modelId": "claude-opus-4-8",
    },
    {
        "type": "thinking_level_change",
        "id": "a0000002",
        "parentId": "a0000001",
        "timestamp": "2026-08-22T09:00:00.002Z",
        "thinkingLevel": "high",
    },
    {
        "type": "custom_message",
        "customType": "senpi-task.usage",
        "content": "<omo-senpi-task>\nx\n</omo-senpi-task>",
        "display": False,
        "details": {},
        "id": "a0000003",
        "parentId": "a0000002",
        "timestamp": "2026-08-22T09:00:01.000Z",
    },
    {
        "type": "message",
        "id": "a0000004",
        "parentId": "a0000003",
        "timestamp": "2026-08-22T09:00:01.100Z",
        "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1},
    },
    {
        "type": "custom",
        "customType": "claude-sdk-oauth-binding",
        "data": {"schemaVersion": 2, "marker": True},
        "id": "a0000005",
        "parentId": "a0000004",
        "timestamp": "2026-08-22T09:00:04.000Z",
    },
    {
        "type": "message",
        "id": "a0000006",
        "parentId": "a0000005",
        "timestamp": "2026-08-22T09:00:04.100Z",
        "message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "hello"}],
            "api": "claude-sdk-oauth",
            "provider": "claude-sdk-oauth",
            "model": "claude-opus-4-8",
            "usage": {"input": 6, "output": 180, "cacheRead": 0, "cacheWrite": 6274, "totalTokens": 6460},
            "stopReason": "stop",
            "timestamp": 1787389201100,
            "diagnostics": [
                {
                    "type": "claude_sdk_oauth_session_continuity",
                    "timestamp": 1787389203400,
                    "details": {
                        "kind": "flatten",
                        "reason": "registry_miss",
                        "deltaMessages": 2,
                        "payloadBytes": 400,
                        "collapsedDirectives": 0,
                    },
                }
            ],
        },
    },
    {
        "type": "custom",
        "customType": "claude-sdk-oauth-binding",
        "data": {"schemaVersion": 1, "invalidated": True, "reason": "assistant_rewritten"},
        "id": "a0000007",
        "parentId": "a0000006",
        "timestamp": "2026-08-22T09:00:05.000Z",
    },
    {
        "type": "compaction",
        "id": "a0000008",
        "parentId": "a0000007",
        "timestamp": "2026-08-22T09:10:00.000Z",
        "summary": "s",
        "firstKeptEntryId": "a0000004",
        "tokensBefore": 123,
        "details": {},
        "fromHook": False,
    },
    {
        "type": "branch_summary",
        "id": "a0000009",
        "parentId": "a0000008",
        "timestamp": "t",
        "fromId": "root",
        "summary": "b",
    },
    {"type": "label", "id": "a000000a", "parentId": "a0000009", "timestamp": "t", "targetId": "a0000004", "label": "x"},
    {"type": "session_info", "id": "a000000b", "parentId": "a000000a", "timestamp": "t", "name": "n"},
    {
        "type": "context_edit",
        "id": "a000000c",
        "parentId": "a000000b",
        "timestamp": "t",
        "targetId": "a0000004",
        "replacement": None,
    },
    {"type": "brand_new_type", "id": "a000000d", "parentId": "a000000c", "timestamp": "t"},
]


def test_transcript_every_entry_type() -> None:
    lines = [orjson.dumps(obj) for obj in TRANSCRIPT]
    records = parse_all(TranscriptAdapter(), lines, "/a/sessions/x.jsonl")
    assert isinstance(records[0], SessionHeader) and records[0].session_id == "0198f0a1"
    assert all(isinstance(r, TranscriptEntry) for r in records[1:])
    assert [r.type for r in records[1:]] == [obj["type"] for obj in TRANSCRIPT[1:]]
    assistant = records[6]
    assert assistant.role == "assistant" and assistant.id == "a0000006" and assistant.parent_id == "a0000005"
    assert assistant.where.offset == sum(len(x) + 1 for x in lines[:6])


def test_transcript_bad_lines() -> None:
    adapter = TranscriptAdapter()
    (p1,) = adapter.parse("/t.jsonl", 3, 10, b'{"type":"message","id":"x"}')
    assert isinstance(p1, Problem) and "message entry without a message object" in p1.error
    (p2,) = adapter.parse("/t.jsonl", 4, 20, b'{"id":"x"}')
    assert isinstance(p2, Problem) and "without string type" in p2.error
    (p3,) = adapter.parse("/t.jsonl", 5, 30, b'{"type":"message","message":{"role":"user"}')
    assert isinstance(p3, Problem) and p3.offset == 30


def test_sidecar() -> None:
    data = b'{"schemaVersion":1,"sessionPath":"/x.jsonl","sessionId":"s","markerEntryId":"m","sentCount":2}'
    (record,) = SidecarAdapter().parse("/x.jsonl.claude-sdk-oauth-binding.json", 1, 0, data)
    assert record.data["sentCount"] == 2
