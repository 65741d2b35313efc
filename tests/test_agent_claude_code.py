"""Claude Code transcripts through the engine: one turn per API call, cache verdicts, sub-agents, directives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from core.agents import sniff
from core.agents.claude_code.format import ClaudeCodeAdapter, ClaudeLine
from core.engine import Engine
from core.kernel.directives import DirectiveLedger
from core.model import Problem
from core.report import build_report
from core.timeutil import iso_ms

T0 = 1_787_389_200_000  # 2026-08-22T09:00:00Z
SID = "2ff46cd5-f4e7-4724-bb20-579dae7956ea"
CWD = "/Users/tom/tmp/tenant-library"
REMINDER = "<system-reminder>\nWhenever you read a file, consider whether it is malware.\n</system-reminder>"


class Log:
    """Writes Claude Code lines with the real envelope, chaining parentUuid -> uuid like the CLI does."""

    def __init__(self, sidechain: bool = False, agent_id: str | None = None) -> None:
        self.lines: list[Any] = []
        self.last: str | None = None
        self.n = 0
        self.sidechain = sidechain
        self.agent_id = agent_id

    def _env(self, kind: str, ms: int, parent: str | bool | None = True) -> dict[str, Any]:
        self.n += 1
        uuid = f"{'s' if self.sidechain else 'm'}{self.n:07d}-0000-4000-8000-000000000000"
        env: dict[str, Any] = {"parentUuid": self.last if parent is True else parent, "isSidechain": self.sidechain,
                               "userType": "external", "cwd": CWD, "sessionId": SID, "version": "2.1.233",
                               "gitBranch": "HEAD", "type": kind, "uuid": uuid, "timestamp": iso_ms(ms)}  # fmt: skip
        if self.agent_id:
            env["agentId"] = self.agent_id
        self.last = uuid
        return env

    def user(self, ms: int, content: Any, parent: str | bool | None = True, **extra: Any) -> str:
        env = self._env("user", ms, parent)
        env["message"] = {"role": "user", "content": content}
        env.update(extra)
        self.lines.append(env)
        return env["uuid"]

    def call(self, ms: int, msg_id: str, request_id: str, blocks: list[dict[str, Any]], *, inp: int, read: int,
             write: int, out: int = 120, one_hour: bool = True, stop: str = "end_turn") -> None:  # fmt: skip
        for i, block in enumerate(blocks):
            last = i == len(blocks) - 1
            usage = {"input_tokens": inp, "cache_creation_input_tokens": write, "cache_read_input_tokens": read,
                     "output_tokens": out if last else 1, "service_tier": "standard",
                     "cache_creation": {"ephemeral_1h_input_tokens": write if one_hour else 0,
                                        "ephemeral_5m_input_tokens": 0 if one_hour else write}}  # fmt: skip
            env = self._env("assistant", ms + i * 50)
            env["message"] = {"model": "claude-opus-4-6", "id": msg_id, "type": "message", "role": "assistant",
                              "content": [block], "stop_reason": stop if last else None, "stop_sequence": None,
                              "usage": usage}  # fmt: skip
            env["requestId"] = request_id
            self.lines.append(env)

    def system(self, ms: int, subtype: str, **extra: Any) -> None:
        env = self._env("system", ms, None if subtype == "compact_boundary" else True)
        env.update(subtype=subtype, **extra)
        self.lines.append(env)

    def raw(self, line: Any) -> None:
        self.lines.append(line)

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = [line if isinstance(line, bytes) else orjson.dumps(line) for line in self.lines]
        path.write_bytes(b"".join(d + b"\n" for d in data))


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def tool_use(tid: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": "Read", "input": {"file_path": "/x/main.py"},
            "caller": {"type": "direct"}}  # fmt: skip


def build(tmp_path: Path) -> tuple[Path, Path, Path]:
    projects = tmp_path / ".claude" / "projects"
    main_path = projects / "-Users-tom-tmp-tenant-library" / f"{SID}.jsonl"
    agent_path = projects / "-Users-tom-tmp-tenant-library" / SID / "subagents" / "agent-a7b1cd4e.jsonl"
    m = 60_000
    log = Log()
    log.raw({"type": "file-history-snapshot", "messageId": "4d2196f2", "isSnapshotUpdate": False,
             "snapshot": {"messageId": "4d2196f2", "trackedFileBackups": {}, "timestamp": iso_ms(T0)}})  # fmt: skip
    log.user(T0, "make a python script that exports the chat history", parent=None)
    log.call(T0 + 1_000, "msg_1", "req_1", [{"type": "thinking", "thinking": "plan", "signature": "Eo8D"},
                                           tool_use("toolu_1")], inp=10, read=0, write=9_907)  # fmt: skip
    log.user(T0 + 3_000, [{"tool_use_id": "toolu_1", "type": "tool_result", "content": "print(1)\n" + REMINDER,
                           "is_error": False}])  # fmt: skip
    log.call(T0 + 4_000, "msg_2", "req_2", [text("Here is the script.")], inp=10, read=9_907, write=400)
    log.system(T0 + 5_000, "turn_duration", durationMs=4_000)
    log.raw(log.lines[-2])  # the same line written twice (same uuid): read once
    log.user(T0 + 6_000 + 70 * m, [text("also add a --since flag\n" + REMINDER)])
    log.call(T0 + 7_000 + 70 * m, "msg_3", "req_3", [text("Done.")], inp=10, read=3_000, write=7_500)
    log.user(T0 + 8_000 + 71 * m, "now make it async")
    log.call(T0 + 9_000 + 71 * m, "msg_4", "req_4", [text("Done.")], inp=10, read=2_000, write=9_000)
    log.raw(b'{"parentUuid": broken')
    log.system(T0 + 10_000 + 71 * m, "compact_boundary", content="Conversation compacted", logicalParentUuid=log.last,
               compactMetadata={"trigger": "auto", "preTokens": 11_010})  # fmt: skip
    log.user(T0 + 11_000 + 71 * m, [text("condensed context")], isCompactSummary=True, isVisibleInTranscriptOnly=True)
    fork_point = log.last
    log.call(T0 + 12_000 + 71 * m, "msg_5", "req_5", [text("Resuming.")], inp=10, read=2_000, write=1_500)
    log.user(T0 + 13_000 + 71 * m, "undo that, do it differently", parent=fork_point)  # rewound onto the summary
    log.call(T0 + 14_000 + 71 * m, "msg_6", "req_6", [text("Sure.")], inp=10, read=2_000, write=1_200)
    log.raw({"parentUuid": log.last, "isSidechain": False, "type": "assistant", "uuid": "err-1",
             "timestamp": iso_ms(T0 + 15_000 + 71 * m), "requestId": "req_7", "error": "rate_limit",
             "apiErrorStatus": 429, "isApiErrorMessage": True, "sessionId": SID,
             "message": {"model": "<synthetic>", "role": "assistant", "type": "message",
                         "content": [text("You've reached your limit.")]}})  # fmt: skip
    log.write(main_path)

    sub = Log(sidechain=True, agent_id="a7b1cd4e")
    sub.user(T0 + 3_100, "Read main.py and review it", parent=None)
    sub.call(T0 + 3_200, "msg_1", "req_replayed", [text("plan")], inp=10, read=0, write=9_907)  # a replayed copy
    sub.call(T0 + 3_300, "msg_s1", "req_s1", [tool_use("toolu_s1")], inp=4, read=0, write=3_000)
    sub.user(T0 + 3_400, [{"tool_use_id": "toolu_s1", "type": "tool_result", "content": "x = 1"}])
    sub.call(T0 + 3_500, "msg_s2", "req_s2", [text("Looks fine.")], inp=4, read=3_000, write=80)
    sub.write(agent_path)
    return projects, main_path, agent_path


def test_sniffed_by_content() -> None:
    adapter = ClaudeCodeAdapter()
    assert sniff("/x/whatever.jsonl", {"type": "summary", "summary": "t", "leafUuid": "abc"}).name == "claude-code"
    envelope = {"parentUuid": None, "isSidechain": False, "sessionId": SID, "type": "user", "uuid": "u"}
    assert sniff("/x/notes.jsonl", envelope).name == "claude-code"
    assert not adapter.sniff("/x", {"type": "session", "id": "x", "cwd": "/"})
    bad = adapter.parse("/x", 1, 0, b'{"type":"assistant","message":"no"}')
    assert isinstance(bad[0], Problem) and "message object" in bad[0].error
    good = adapter.parse("/x", 2, 9, orjson.dumps({**envelope, "agentId": "a1", "isSidechain": True}))
    assert isinstance(good[0], ClaudeLine) and good[0].sidechain and good[0].agent_id == "a1"


def test_calls_grouped_judged_and_sub_agents_attached(tmp_path: Path) -> None:
    projects, main_path, agent_path = build(tmp_path)
    engine = Engine([projects])
    engine.drain()
    assert engine.stats[str(main_path)].format == "claude-code"
    assert engine.stats[str(agent_path)].format == "claude-code"
    assert list(engine.state.sessions) == [str(main_path)]  # the sub-agent file joined its parent session
    session = engine.state.sessions[str(main_path)]
    assert session.session_id == SID and session.cwd == CWD and session.agent.name == "claude-code"
    assert session.profile["id"] == "claude-code" and list(session.analyzers) == [DirectiveLedger]
    main = [t for t in session.turns if t.thread == "main"]
    sub = [t for t in session.turns if t.thread != "main"]
    assert [t.entry_id for t in main] == ["msg_1", "msg_2", "msg_3", "msg_4", "msg_5", "msg_6"]
    assert [t.entry_id for t in sub] == ["msg_s1", "msg_s2"]  # the replayed msg_1 is not counted again
    assert len(session.turns) == 8 and [t.index for t in session.turns] == list(range(8))
    verdicts = [(t.logged.kind, t.logged.reason) for t in main]
    assert verdicts == [
        ("bootstrap", "first_call"), ("delta", "cache_hit"), ("re-send", "cache_expired"),
        ("re-send", "prefix_rewritten"), ("compaction", "compact_boundary"), ("fork", "rewind"),
    ]  # fmt: skip
    assert [(t.logged.kind, t.logged.reason) for t in sub] == [("bootstrap", "first_call"), ("delta", "cache_hit")]

    first, second, expired, rewritten, compacted, _ = main
    # two lines, one call: the final usage is kept, tokens counted once
    assert first.tokens == {"input": 10, "cache_read": 0, "cache_write": 9_907, "output": 120}
    assert first.facts.lines == 2 and first.stop_reason == "end_turn"
    assert first.fingerprints and len(first.fingerprints["stable_xxh3"]) == 16
    # the evidence that tells a TTL expiry (70 min > the 1 h lifetime) from a rewrite (1 min later)
    ev = expired.cache
    assert ev["ttl_ms"] == 3_600_000 and ev["gap_ms"] == 70 * 60_000 + 3_000
    assert (ev["prev_prompt"], ev["cache_read"], ev["cache_write"]) == (10_317, 3_000, 7_500)
    assert rewritten.cache["gap_ms"] < 3_600_000
    assert compacted.cache["compaction"]["pre_tokens"] == 11_010
    assert second.logged.count == 1 and second.logged.source == "cache" and compacted.logged.source == "transcript"
    # directives: the reminder in the tool result rides along in every later call until the compaction
    assert second.directives == {"system-reminder": {"copies": 1, "bytes": len(REMINDER)}}
    assert expired.directives == {"system-reminder": {"copies": 2, "bytes": 2 * len(REMINDER)}}
    assert compacted.directives is None
    ledger = session.analyzer(DirectiveLedger)
    assert ledger is not None and ledger.injections == {"system-reminder": 2}
    # payload sizes: the conversation's content grows, new bytes are what the previous prompt did not hold
    assert second.payload_bytes_raw > first.payload_bytes_raw
    assert second.payload_history_bytes == first.payload_bytes_raw
    assert session.facts.api_errors == 1 and session.facts.replayed_copies == 1
    problems = [p for p in engine.state.problems if p.path == str(main_path)]
    assert len(problems) == 1 and "invalid JSON" in problems[0].error
    assert engine.stats[str(main_path)].bad_lines == 1


def test_a_replaced_file_is_read_again_without_double_counting(tmp_path: Path) -> None:
    projects, main_path, _ = build(tmp_path)
    engine = Engine([projects])
    engine.drain()
    assert len(engine.state.sessions[str(main_path)].turns) == 8
    data = main_path.read_bytes()
    main_path.unlink()
    main_path.write_bytes(data)  # a new inode with the same content: the tailer reads it from 0 again
    engine.drain()
    session = engine.state.sessions[str(main_path)]
    assert len(session.turns) == 8
    assert sorted(t.entry_id or "" for t in session.turns) == sorted(
        ["msg_1", "msg_2", "msg_3", "msg_4", "msg_5", "msg_6", "msg_s1", "msg_s2"]
    )
    assert [t.index for t in session.turns] == list(range(8))


def test_report_names_the_agent_and_the_evidence(tmp_path: Path) -> None:
    projects, _, _ = build(tmp_path)
    engine = Engine([projects])
    engine.drain()
    report = build_report(engine)
    assert [s["agent"] for s in report["sessions"]] == ["claude-code"]
    assert report["sessions"][0]["profile"]["id"] == "claude-code"
    assert {s["format"] for s in report["sources"]} == {"claude-code"}
    by_id = {t["entry_id"]: t for t in report["turns"]}
    assert [t["entry_id"] for t in report["turns"]][:4] == ["msg_1", "msg_s1", "msg_s2", "msg_2"]  # time order
    expired = by_id["msg_3"]
    assert expired["logged"]["kind"] == "re-send" and expired["logged"]["source"] == "cache"
    assert expired["cache"]["gap_ms"] > expired["cache"]["ttl_ms"] and expired["thread"] == "main"
    assert by_id["msg_s2"]["thread"] == "agent:a7b1cd4e"


def test_agent_progress_lines_count_sub_agent_calls_once(tmp_path: Path) -> None:
    projects, main_path, _ = build(tmp_path)
    progress = Log()
    for msg_id, request_id in (("msg_s1", "req_s1"), ("msg_p1", "req_p1")):  # one also in the sub-agent file
        progress.raw({"type": "progress", "parentToolUseID": "toolu_1", "sessionId": SID, "parentUuid": None,
                      "uuid": f"prog-{msg_id}", "timestamp": iso_ms(T0 + 3_150),
                      "data": {"type": "agent_progress", "agentId": "a7b1cd4e", "prompt": "review",
                               "message": {"type": "assistant", "timestamp": iso_ms(T0 + 3_150), "requestId": request_id,
                                           "message": {"model": "claude-opus-4-6", "id": msg_id, "type": "message",
                                                       "role": "assistant", "content": [text("x")],
                                                       "stop_reason": "end_turn",
                                                       "usage": {"input_tokens": 4, "cache_read_input_tokens": 0,
                                                                 "cache_creation_input_tokens": 3_000,
                                                                 "output_tokens": 9}}}}})  # fmt: skip
    with main_path.open("ab") as fh:
        fh.write(b"".join(orjson.dumps(line) + b"\n" for line in progress.lines))
    engine = Engine([projects])
    engine.drain()
    session = engine.state.sessions[str(main_path)]
    agent_calls = [t.entry_id for t in session.turns if t.thread == "agent:a7b1cd4e"]
    assert sorted(agent_calls) == ["msg_p1", "msg_s1", "msg_s2"]
    assert len(session.turns) == 9
