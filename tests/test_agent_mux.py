"""mux / Xum workspaces through the engine: rows updated by history sequence across whole-file rewrites,
partial.json as the capture, per-turn cache verdicts and the thinking-replay audit."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import orjson

from core.agents import sniff
from core.agents.mux.formats.chat import merge_parts
from core.agents.mux.rules import capture_vs_commit, mux_usage, replay_facts
from core.engine import Engine
from core.report import build_report

T0 = 1_700_000_000_000
WS = "replay-fixture"
MODEL = "anthropic:claude-opus-5-5"


def user(seq: int, text: str) -> dict[str, Any]:
    return {"id": f"user-{seq}", "role": "user", "metadata": {"timestamp": T0 + seq * 1000, "historySequence": seq},
            "parts": [{"type": "text", "text": text, "state": "done"}], "workspaceId": WS}  # fmt: skip


def assistant(seq: int, parts: list[dict[str, Any]], *, total: int | None = None, read: int = 0, write: int = 0,
              context: int | None = None, **meta: Any) -> dict[str, Any]:  # fmt: skip
    metadata: dict[str, Any] = {"requestHistorySequence": seq - 1, "timestamp": T0 + seq * 1000, "model": MODEL,
                                "agentId": "exec", "thinkingLevel": "high"}  # fmt: skip
    if total is not None:
        metadata["usage"] = {"inputTokens": total, "outputTokens": 60, "totalTokens": total + 60,
                             "cachedInputTokens": read}  # fmt: skip
        metadata["providerMetadata"] = {"anthropic": {"cacheCreationInputTokens": write}}
        if context is not None:
            metadata["contextUsage"] = {"inputTokens": context, "outputTokens": 1, "totalTokens": context + 1}
        metadata["finishReason"] = "stop"
    metadata.update(meta)
    metadata["historySequence"] = seq
    return {"id": f"assistant-{seq}", "role": "assistant", "metadata": metadata, "parts": parts, "workspaceId": WS}


def reasoning(text: str, signature: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "reasoning", "text": text, "timestamp": T0}
    if signature:
        part.update(signature=signature, providerOptions={"anthropic": {"signature": signature}})
    return part


def failed_search(native: bool = False) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "dynamic-tool", "toolCallId": "srvtoolu_1", "toolName": "web_search",
                            "state": "output-available", "input": {"query": "xum"},
                            "output": {"type": "web_search_tool_result_error", "errorCode": "unavailable"}}  # fmt: skip
    if native:
        part["providerExecuted"] = True
    return part


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t, "timestamp": T0}


def rewrite(path: Path, rows: list[Any]) -> None:
    """mux's updateHistory: write the whole file to a temp name, then rename it over chat.jsonl."""
    tmp = path.with_name(".chat.jsonl.tmp")
    tmp.write_bytes(b"".join((r if isinstance(r, bytes) else orjson.dumps(r)) + b"\n" for r in rows))
    os.replace(tmp, path)


def append(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("ab") as fh:
        fh.write(b"".join(orjson.dumps(r) + b"\n" for r in rows))


def write_partial(path: Path, message: dict[str, Any]) -> None:
    """mux's writePartial: pretty-printed, no trailing newline, atomic rename."""
    doc = {k: v for k, v in message.items() if k != "workspaceId"}
    doc["metadata"] = {**doc["metadata"], "partial": True}
    tmp = path.with_name(".partial.json.tmp")
    tmp.write_text(json.dumps(doc, indent=2))
    os.replace(tmp, path)


def turn_kinds(engine: Engine, key: str) -> list[tuple[str | None, str | None]]:
    return [(t.logged.kind, t.logged.reason) if t.logged else (None, None) for t in engine.state.sessions[key].turns]


# ---------------------------------------------------------------------------------------------- units
def test_sniff_and_merge_parts() -> None:
    assert sniff("/x/anything.jsonl", user(0, "hi")).name == "mux-chat"
    partial = {**assistant(5, []), "metadata": {"partial": True}}
    partial.pop("workspaceId")
    assert sniff("/x/anything.json", partial).name == "mux-partial"
    merged = merge_parts([reasoning("pl"), reasoning("an", "sig-plan"), text("do"), text("ne")])
    assert merged == [
        {"type": "reasoning", "text": "plan", "signature": "sig-plan", "providerOptions": {"anthropic": {"signature": "sig-plan"}}},
        {"type": "text", "text": "done"},
    ]  # fmt: skip


def test_replay_rule_and_usage_estimate() -> None:
    needs = replay_facts(
        merge_parts([reasoning("plan", "s1"), failed_search(), reasoning("read", "s2")]), {"model": MODEL}
    )
    assert needs.needs_receipt and needs.demoted == ["srvtoolu_1"] and not needs.receipt
    native = {"type": "dynamic-tool", "toolCallId": "srvtoolu_1", "toolName": "web_search", "state": "output-available",
              "input": {"query": "xum"}, "providerExecuted": True,
              "output": [{"type": "web_search_result", "url": "https://example.com/xum", "title": "Xum",
                          "pageAge": None, "encryptedContent": "enc-1"}]}  # fmt: skip
    assert not replay_facts([reasoning("plan", "s1"), native, reasoning("read", "s2")], {"model": MODEL}).needs_receipt
    assert not replay_facts([reasoning("plan", "s1"), failed_search()], {"model": MODEL}).needs_receipt  # none after
    assert not replay_facts([failed_search(), reasoning("r")], {"model": "openai:gpt-5"}).needs_receipt
    one_step, basis = mux_usage(assistant(3, [], total=1460, read=1400, write=50)["metadata"])
    assert one_step is not None and (one_step.cache_read, one_step.cache_write, one_step.prompt) == (1400, 50, 1460)
    assert basis["estimated"] is False
    # three steps: the first re-sent 3000 tokens, the next two read them back; the aggregate read alone looks like
    # a hit, the estimate of the first step's read does not
    many, basis = mux_usage(assistant(3, [], total=9_300, read=6_100, write=3_200, context=3_200)["metadata"])
    assert many is not None and many.cache_read == 0 and many.prompt == 3_200 and basis["estimated"] is True


def test_capture_vs_commit_ignores_streaming_progress() -> None:
    capture = merge_parts([reasoning("pl"), failed_search(native=True), text("do")])
    progressed = merge_parts([reasoning("plan", "sig"), failed_search(native=True), text("done"), text("!")])
    assert capture_vs_commit(capture, progressed) == []
    demoted = merge_parts([reasoning("plan", "sig"), failed_search(native=False), text("done")])
    changes = capture_vs_commit(capture, demoted)
    assert [(c.path, c.change) for c in changes] == [(".content[1].providerExecuted", "missing_in_commit")]


# ---------------------------------------------------------------------------------------------- end to end
def test_workspace_lifecycle(tmp_path: Path) -> None:
    sessions = tmp_path / ".xum" / "sessions"
    ws = sessions / WS
    ws.mkdir(parents=True)
    chat, partial = ws / "chat.jsonl", ws / "partial.json"
    key = str(chat)
    rows: list[Any] = [
        user(0, "Hello! Which file holds the entry point?"),
        assistant(1, [text("src/main.ts")], total=1400, read=0, write=1300),
        user(2, "Now run the linter."),
        assistant(3, [text("Lint passed with no findings.")], total=1460, read=1400, write=50),
        user(4, "search the web for xum"),
    ]
    placeholder = assistant(5, [], systemMessageTokens=1100)
    rewrite(chat, [*rows, placeholder])
    engine = Engine([sessions])
    engine.drain()
    assert engine.stats[key].format == "mux-chat"
    assert engine.state.sessions[key].session_id == WS and engine.state.sessions[key].profile["id"] == "mux"
    assert turn_kinds(engine, key) == [
        ("bootstrap", "first_call"),
        ("delta", "cache_hit"),
        ("aborted", "stream_in_progress"),
    ]
    assert engine.state.sessions[key].turns[2].why == "stream in progress (placeholder row)"

    streamed = [reasoning("pl"), reasoning("an", "sig-plan"), failed_search(native=True), reasoning("read", "sig-read"),
                text("do")]  # fmt: skip
    write_partial(partial, assistant(5, streamed))
    engine.drain()
    write_partial(partial, assistant(5, [*streamed, text("n")]))  # a later version replaces the first
    engine.drain()
    # stream end: partial.json deleted, then the whole chat.jsonl rewritten with the finished row
    partial.unlink()
    final_parts = [reasoning("pl"), reasoning("an", "sig-plan"), failed_search(native=False),
                   reasoning("read", "sig-read"), text("do"), text("ne")]  # fmt: skip
    finished = assistant(5, final_parts, total=1530, read=1460, write=60)
    rows.append(finished)
    rewrite(chat, rows)
    engine.drain()
    session = engine.state.sessions[key]
    assert len(session.turns) == 3  # the placeholder was updated, not added again
    done = session.turns[2]
    assert (done.logged.kind, done.logged.reason) == ("delta", "cache_hit")
    assert done.tokens == {"input": 10, "cache_read": 1460, "cache_write": 60, "output": 60}
    assert done.fingerprints and len(done.fingerprints["stable_xxh3"]) == 16
    # capture vs commit: the store demoted the server tool (providerExecuted dropped) after it streamed
    assert done.commit is not None and done.commit.outcome == "rewritten" and done.commit.source == "events"
    assert [c.path for c in done.commit.diff] == [".content[1].providerExecuted"] and done.commit.klass == "semantic"
    # the audit: reasoning after a demoted web_search without the receipt
    assert done.facts.audit["thinking_replay"] == "receipt_missing"
    assert session.facts.audit == {"receipt_missing": 1}
    audit_problems = [p for p in engine.state.problems if p.error.startswith("mux audit")]
    assert len(audit_problems) == 1 and "signature 400" in audit_problems[0].error
    # rewrites and partial.json versions are how mux writes: not problems
    assert [p for p in engine.state.problems if not p.error.startswith("mux audit")] == []
    assert engine.stats[str(partial)].format == "mux-partial"
    report = build_report(engine)
    assert report["sessions"][0]["agent"] == "mux" and report["sessions"][0]["audit"] == {"receipt_missing": 1}
    assert report["turns"][2]["audit"]["thinking_replay"] == "receipt_missing"
    assert report["turns"][2]["commit"]["outcome"] == "rewritten"

    # a later turn in the same segment carries the receipt: fine; a compaction starts a new segment where the
    # receipt strips thinking for nothing; a bad line is a problem
    append(chat, [user(6, "thanks"), assistant(7, [reasoning("ok", "s7"), text("ok")], total=1600, read=1530,
                                               write=60, anthropicThinkingReplay="off")])  # fmt: skip
    append(chat, [assistant(8, [text("<summary>")], total=1700, read=1600, write=90, compacted="idle",
                            compactionEpoch=2, compactionBoundary=True, muxMetadata={"type": "compaction-summary"}),
                  user(9, "continue"),
                  assistant(10, [reasoning("go", "s10"), text("go")], total=400, read=0, write=390,
                            anthropicThinkingReplay="off")])  # fmt: skip
    with chat.open("ab") as fh:
        fh.write(b'{"id": "broken\n')
    engine.drain()
    session = engine.state.sessions[key]
    assert turn_kinds(engine, key)[3:] == [("delta", "cache_hit"), ("compaction", "compaction_summary"),
                                           ("bootstrap", "after_compaction")]  # fmt: skip
    assert [t.facts.audit["thinking_replay"] for t in session.turns] == [
        "ok", "ok", "receipt_missing", "ok", "ok", "strip_without_need"]  # fmt: skip
    bad = [p for p in engine.state.problems if p.path == key and not p.error.startswith("mux audit")]
    assert len(bad) == 1 and "invalid JSON" in bad[0].error and engine.stats[key].bad_lines == 1

    # an edit truncates history after row 8 and the conversation goes on: rows 9-10 are gone, the next turn forks
    kept = [r for r in rows] + [user(6, "thanks"), assistant(7, [reasoning("ok", "s7"), text("ok")], total=1600,
                                                          read=1530, write=60, anthropicThinkingReplay="off"),
                                assistant(8, [text("<summary>")], total=1700, read=1600, write=90, compacted="idle",
                                          compactionEpoch=2, compactionBoundary=True,
                                          muxMetadata={"type": "compaction-summary"})]  # fmt: skip
    rewrite(chat, kept)
    append(chat, [user(11, "different question"), assistant(12, [text("sure")], total=500, read=300, write=190)])
    engine.drain()
    session = engine.state.sessions[key]
    assert [t.facts.history_sequence for t in session.turns] == [1, 3, 5, 7, 8, 12]
    assert [t.index for t in session.turns] == list(range(6))
    assert (session.turns[-1].logged.kind, session.turns[-1].logged.reason) == ("fork", "history_edited")
    assert session.facts.audit == {"receipt_missing": 1}


def test_side_files_are_recognised_not_reported(tmp_path: Path) -> None:
    ws = tmp_path / "sessions" / WS
    ws.mkdir(parents=True)
    rewrite(ws / "chat.jsonl", [user(0, "hi"), assistant(1, [text("hello")], total=1400, read=0, write=1300)])
    lines = {
        "devtools.jsonl": [{"type": "run", "run": {"id": "run-1", "workspaceId": WS, "requestHistorySequence": 0}},
                           {"type": "step", "step": {"id": "step-1", "runId": "run-1", "stepNumber": 0}}],
        "durable-events.jsonl": [{"kind": "turn-envelope", "workspaceId": WS, "data": {}, "v": 1, "seq": 0,
                                  "id": "8f49ddc6", "ts": T0}],
        "headless-usage.jsonl": [{"timestamp": T0, "source": "advisor", "model": MODEL, "usage": {"inputTokens": 5}}],
    }  # fmt: skip
    for name, rows in lines.items():
        (ws / name).write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    (ws / "session-usage.json").write_text(json.dumps({"byModel": {}, "version": 1}, indent=2))
    engine = Engine([tmp_path / "sessions"])
    engine.drain()
    formats = {Path(path).name: stat.format for path, stat in engine.stats.items()}
    assert formats == {"chat.jsonl": "mux-chat", "devtools.jsonl": "mux-sidefile", "durable-events.jsonl": "mux-sidefile",
                       "headless-usage.jsonl": "mux-sidefile", "session-usage.json": "mux-sidefile"}  # fmt: skip
    assert list(engine.state.problems) == []
    assert len(engine.state.sessions) == 1
