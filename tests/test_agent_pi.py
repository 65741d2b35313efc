"""pi session files (v1 without ids, v3 trees) through the engine: per-call cache verdicts, forks, compaction."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from core.agents import sniff
from core.agents.pi.format import PiSessionAdapter, is_pi_header
from core.agents.pi.turns import PiSessionTurns
from core.agents.shared.pi_family.context import ProviderContext
from core.engine import Engine
from core.kernel.directives import DirectiveLedger
from core.model import TranscriptEntry
from core.timeutil import iso_ms

T0 = 1_765_233_600_000  # 2025-12-08T22:40:00Z
SID = "d97339c6-6c10-4827-846b-9ff1d9c3dc37"  # randomUUID(): version 4, as pi writes
REMINDER = "<system-reminder>\nKeep answers short.\n</system-reminder>"


def usage(inp: int, read: int, write: int, out: int = 100) -> dict[str, Any]:
    return {"input": inp, "output": out, "cacheRead": read, "cacheWrite": write,
            "totalTokens": inp + out + read + write,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}  # fmt: skip


def user(eid: str | None, parent: str | None, ms: int, text: str = "go on") -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "message", "timestamp": iso_ms(ms),
                             "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ms}}  # fmt: skip
    if eid is not None:
        entry.update(id=eid, parentId=parent)
    return entry


def assistant(eid: str | None, parent: str | None, ms: int, u: dict[str, Any], stop: str = "stop") -> dict[str, Any]:
    entry: dict[str, Any] = {
        "type": "message", "timestamp": iso_ms(ms + 4000),
        "message": {"role": "assistant", "content": [{"type": "text", "text": "done"}], "api": "anthropic-messages",
                    "provider": "anthropic", "model": "claude-opus-4-5", "usage": u, "stopReason": stop,
                    "timestamp": ms},
    }  # fmt: skip
    if eid is not None:
        entry.update(id=eid, parentId=parent)
    return entry


def write(path: Path, lines: list[Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = [line if isinstance(line, bytes) else orjson.dumps(line) for line in lines]
    path.write_bytes(b"".join(r + b"\n" for r in raw))


def header_v3(sid: str = SID, **extra: Any) -> dict[str, Any]:
    return {"type": "session", "version": 3, "id": sid, "timestamp": iso_ms(T0), "cwd": "/Users/dev/pi-mono", **extra}


def drain(root: Path) -> Engine:
    engine = Engine([root])
    engine.drain()
    return engine


def kinds(engine: Engine, key: str | None = None) -> list[tuple[str | None, str | None]]:
    sessions = [engine.state.sessions[key]] if key else list(engine.state.sessions.values())
    return [(t.logged.kind, t.logged.reason) if t.logged else (None, None) for s in sessions for t in s.turns]


# ---------------------------------------------------------------------------------------------- sniffing
def test_pi_headers_are_told_from_senpi_by_content() -> None:
    v1 = {"type": "session", "id": "d703a1a9-1b7b-4fb1-b512-c9738b1fe617", "timestamp": "2025-11-20T23:33:50.805Z",
          "cwd": "/Users/badlogic/workspaces/pi-mono", "provider": "anthropic", "modelId": "claude-sonnet-4-5",
          "thinkingLevel": "off"}  # fmt: skip
    assert is_pi_header(v1) and sniff("/x/a.jsonl", v1).name == "pi-transcript"
    assert sniff("/x/a.jsonl", header_v3()).name == "pi-transcript"  # UUIDv4 session id
    senpi = header_v3("0198f0a1-aaaa-7bbb-8ccc-000000000001")  # UUIDv7: senpi
    assert sniff("/x/a.jsonl", senpi).name == "senpi-transcript"
    assert sniff("/x/a.jsonl", header_v3("caller-chosen")).name == "senpi-transcript"
    assert sniff("/x/a.jsonl", {**header_v3(), "version": 2}).name == "pi-transcript"


def test_adapter_normalizes_v1_compaction_index_and_v2_hook_messages() -> None:
    adapter = PiSessionAdapter()
    comp = adapter.parse("/x/a.jsonl", 9, 0, orjson.dumps({"type": "compaction", "timestamp": iso_ms(T0),
                                                            "summary": "s", "firstKeptEntryIndex": 4,
                                                            "tokensBefore": 5}))  # fmt: skip
    assert isinstance(comp[0], TranscriptEntry) and comp[0].obj["firstKeptEntryId"] == "#5"
    hook = adapter.parse("/x/a.jsonl", 3, 0, orjson.dumps({"type": "message", "id": "a", "parentId": None,
                                                           "timestamp": iso_ms(T0),
                                                           "message": {"role": "hookMessage", "content": "x"}}))  # fmt: skip
    assert isinstance(hook[0], TranscriptEntry) and hook[0].role == "custom"


# ---------------------------------------------------------------------------------------------- end to end
def test_v3_session_verdicts_branch_fork_compaction_and_bad_lines(tmp_path: Path) -> None:
    root = tmp_path / ".pi" / "agent" / "sessions"
    path = root / "--Users-dev-pi-mono--" / "2025-12-08T22-40-00-000Z_d97339c6.jsonl"
    m = 60_000
    write(path, [
        header_v3(),
        {"type": "model_change", "id": "m0", "parentId": None, "timestamp": iso_ms(T0), "provider": "anthropic",
         "modelId": "claude-opus-4-5"},
        user("u1", "m0", T0 + 1_000, f"read main.ts\n{REMINDER}"),
        assistant("a1", "u1", T0 + 2_000, usage(10, 0, 20_000)),  # bootstrap
        user("u2", "a1", T0 + 10_000),
        assistant("a2", "u2", T0 + 11_000, usage(10, 20_000, 600)),  # delta
        user("u3", "a2", T0 + 11_000 + 7 * m),
        assistant("a3", "u3", T0 + 12_000 + 7 * m, usage(10, 2_000, 19_000)),  # TTL expired (gap 7 min)
        b"{not json",
        user("u4", "a1", T0 + 13_000 + 7 * m, "try another way"),  # a new child of an older entry: a branch
        assistant("a4", "u4", T0 + 14_000 + 7 * m, usage(10, 20_000, 300)),  # fork (shares the a1 prefix)
        user("u5", "a4", T0 + 15_000 + 7 * m),
        assistant("a5", "u5", T0 + 16_000 + 7 * m, usage(10, 2_000, 19_000)),  # rewrite within TTL
        {"type": "compaction", "id": "c1", "parentId": "a5", "timestamp": iso_ms(T0 + 17_000 + 7 * m),
         "summary": "# Context Checkpoint", "firstKeptEntryId": "u5", "tokensBefore": 21_000,
         "details": {"readFiles": [], "modifiedFiles": []}},
        user("u6", "c1", T0 + 18_000 + 7 * m),
        assistant("a6", "u6", T0 + 19_000 + 7 * m, usage(10, 0, 3_000)),  # compaction
        assistant("a7", "a6", T0 + 20_000 + 7 * m, usage(0, 0, 0, 0), stop="aborted"),  # aborted: no usage
        user("u8", "a7", T0 + 21_000 + 7 * m),
        assistant("a8", "u8", T0 + 22_000 + 7 * m, usage(10, 3_000, 200)),  # delta against a6 (a7 had none)
    ])  # fmt: skip
    engine = drain(root)
    session = engine.state.sessions[str(path)]
    assert engine.stats[str(path)].format == "pi-transcript" and session.agent.name == "pi"
    assert kinds(engine) == [
        ("bootstrap", "first_call"), ("delta", "cache_hit"), ("re-send", "cache_expired"), ("fork", "branch"),
        ("re-send", "prefix_rewritten"), ("compaction", "compaction_entry"), ("aborted", "request_aborted"),
        ("delta", "cache_hit"),
    ]  # fmt: skip
    turns = session.turns
    assert turns[1].tokens == {"input": 10, "cache_read": 20_000, "cache_write": 600, "output": 100}
    assert turns[1].logged.source == "cache" and turns[3].logged.source == "transcript"
    assert turns[2].cache["gap_ms"] == 7 * m + 1_000 and turns[2].cache["prev_prompt"] == 20_610
    # the fork read back the prefix it shares with a1 (20,000), not all a3 cached (21,000)
    assert (turns[3].cache["cache_reason"], turns[3].cache["expected_read"]) == ("prefix_rewritten", 21_000)
    assert turns[3].cache["excess"] == 310  # min(310 not read, 1,000 short)
    assert turns[1].logged.count == 1  # the new prompt (the previous reply is not counted, as in senpi)
    assert turns[0].logged.count == 1
    # what each call re-sent, counted from the context: the reminder rides along until the compaction drops it
    assert [t.directives for t in turns][:5] == [{"system-reminder": {"copies": 1, "bytes": len(REMINDER)}}] * 5
    assert turns[5].directives is None and turns[5].payload_bytes_raw > 0
    assert turns[1].payload_history_bytes == turns[0].payload_bytes_raw
    assert turns[3].payload_new_bytes == turns[3].payload_bytes_raw  # the fork's context was recounted
    assert session.profile["id"] == "pi" and list(session.analyzers) == [
        ProviderContext,
        DirectiveLedger,
        PiSessionTurns,
    ]
    problems = [p for p in engine.state.problems if p.path == str(path)]
    assert len(problems) == 1 and problems[0].line == 9 and "invalid JSON" in problems[0].error
    assert engine.stats[str(path)].bad_lines == 1


def test_v1_file_without_ids_is_a_linear_chain(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    path = root / "--Users-badlogic-workspaces-pi-mono--" / "2025-11-20T23-33-50-805Z_d703a1a9.jsonl"
    write(path, [
        {"type": "session", "id": "d703a1a9-1b7b-4fb1-b512-c9738b1fe617", "timestamp": iso_ms(T0),
         "cwd": "/Users/badlogic/workspaces/pi-mono", "provider": "anthropic", "modelId": "claude-sonnet-4-5",
         "thinkingLevel": "off"},
        user(None, None, T0 + 1_000),
        assistant(None, None, T0 + 2_000, usage(5, 0, 9_000)),
        user(None, None, T0 + 3_000),
        assistant(None, None, T0 + 4_000, usage(5, 9_000, 150)),
    ])  # fmt: skip
    engine = drain(root)
    assert engine.stats[str(path)].format == "pi-transcript"
    assert kinds(engine) == [("bootstrap", "first_call"), ("delta", "cache_hit")]
    session = engine.state.sessions[str(path)]
    assert session.header is not None and session.header.version is None
    assert session.branch == ["#2", "#3", "#4", "#5"]


def test_branched_session_copies_are_not_counted_again(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    parent = root / "--p--" / "2025-12-08T22-40-00-000Z_parent.jsonl"
    child = root / "--p--" / "2025-12-09T00-00-00-000Z_child.jsonl"
    branched_at = T0 + 3_600_000
    copied = [user("u1", None, T0 + 1_000), assistant("a1", "u1", T0 + 2_000, usage(10, 0, 20_000))]
    write(parent, [header_v3(), *copied])
    write(child, [
        {"type": "session", "version": 3, "id": "5f0c2a1e-0d4b-4e5f-9a6b-7c8d9e0f1a2b", "timestamp": iso_ms(branched_at),
         "cwd": "/Users/dev/pi-mono", "parentSession": str(parent)},
        *copied,
        user("u2", "a1", branched_at + 1_000),
        assistant("a2", "u2", branched_at + 2_000, usage(10, 0, 20_300)),
    ])  # fmt: skip
    engine = drain(root)
    child_turns = engine.state.sessions[str(child)].turns
    assert child_turns[0].logged is None and child_turns[0].copied_from == str(parent)
    assert (child_turns[1].logged.kind, child_turns[1].logged.reason) == ("fork", "branched_session")
    assert child_turns[1].cache["cache_reason"] == "cache_expired"  # an hour after the copied call


def test_senpi_resident_turns_keep_their_own_diagnostic(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    path = root / "--x--" / "2026-08-22T09-00-00-000Z_s.jsonl"
    senpi_call = assistant("a1", "u1", T0 + 2_000, usage(6, 0, 6_274))
    senpi_call["message"].update(api="claude-sdk-oauth", provider="claude-sdk-oauth", diagnostics=[
        {"type": "claude_sdk_oauth_session_continuity", "timestamp": T0 + 3_000,
         "details": {"kind": "bootstrap", "reason": "registry_miss", "deltaMessages": 1}}])  # fmt: skip
    other_lane = assistant("a2", "u2", T0 + 12_000, usage(6, 6_274, 100))
    write(path, [header_v3("0198f0a1-aaaa-7bbb-8ccc-000000000001"), user("u1", None, T0 + 1_000), senpi_call,
                 user("u2", "a1", T0 + 11_000), other_lane])  # fmt: skip
    engine = drain(root)
    assert engine.stats[str(path)].format == "senpi-transcript"
    assert engine.state.sessions[str(path)].agent.name == "senpi"
    turns = engine.state.sessions[str(path)].turns
    assert (turns[0].logged.kind, turns[0].logged.source) == ("bootstrap", "diagnostic")
    assert (turns[1].logged.kind, turns[1].logged.source) == ("delta", "cache")
