"""Engine + state end to end on real files: turns, attribution of log lines, branches, resets, problems."""

from __future__ import annotations

from pathlib import Path

import orjson

from core.engine import Engine
from core.timeutil import iso_ms

T0 = 1_787_389_200_000  # 2026-08-22T09:00:00Z


def log_line(ms: int, kind: str, reason: str, count: int | None = None, session_id: str | None = None) -> bytes:
    obj: dict = {"ts": iso_ms(ms), "level": "info", "event": "claude_sdk_oauth_session_continuity",
                 "kind": kind, "reason": reason}  # fmt: skip
    if count is not None:
        obj["count"] = count
    if session_id is not None:
        obj["sessionId"] = session_id
    return orjson.dumps(obj) + b"\n"


def assistant(eid: str, parent: str, ms: int, kind: str, reason: str, count: int | None, **extra: object) -> dict:
    details: dict = {"kind": kind, "reason": reason}
    if count is not None:
        details["deltaMessages"] = count
    details.update(extra)
    return {
        "type": "message", "id": eid, "parentId": parent, "timestamp": iso_ms(ms + 1500),
        "message": {
            "role": "assistant", "content": [{"type": "text", "text": "ok"}], "api": "claude-sdk-oauth",
            "provider": "claude-sdk-oauth", "model": "claude-opus-4-8",
            "usage": {"input": 6, "output": 10, "cacheRead": 100, "cacheWrite": 50, "totalTokens": 166},
            "stopReason": "stop", "timestamp": ms,
            "diagnostics": [{"type": "claude_sdk_oauth_session_continuity", "timestamp": ms + 1000,
                             "details": details}],
        },
    }  # fmt: skip


def user(eid: str, parent: str | None, ms: int, text: str = "hi") -> dict:
    return {"type": "message", "id": eid, "parentId": parent, "timestamp": iso_ms(ms),
            "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ms}}  # fmt: skip


def write_transcript(path: Path, session_id: str, entries: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    header = {"type": "session", "version": 3, "id": session_id, "timestamp": iso_ms(T0), "cwd": "/home/dev/shop"}
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in [header, *entries]))


def agent_dir(tmp_path: Path) -> Path:
    agent = tmp_path / "agent"
    (agent / "logs").mkdir(parents=True)
    write_transcript(
        agent / "sessions" / "--home-dev-shop--" / "2026-08-22T09-00-00-000Z_S1.jsonl",
        "S1",
        [
            user("u1", None, T0),
            assistant("a1", "u1", T0 + 1000, "bootstrap", "registry_miss", 1, payloadBytes=198, collapsedDirectives=0),
            user("u2", "a1", T0 + 10_000),
            assistant("a2", "u2", T0 + 11_000, "delta", "prefix_matched", 1),
        ],
    )
    (agent / "logs" / "session.log").write_bytes(
        log_line(T0 + 2000, "bootstrap", "registry_miss", 1)
        + log_line(T0 + 12_000, "delta", "prefix_matched", 1)
        + log_line(T0 + 12_500, "delta", "prefix_matched", 1)  # another session's line: stays global
        + log_line(T0 + 90_000, "flatten", "query_failed")
    )
    return agent


def test_turns_carry_the_logged_decision_and_match_log_lines(tmp_path: Path) -> None:
    engine = Engine([agent_dir(tmp_path) / "logs"])
    engine.drain()
    (session,) = engine.state.sessions.values()
    assert session.session_id == "S1" and session.cwd == "/home/dev/shop"
    assert [(t.index, t.kind, t.logged.count) for t in session.turns] == [(0, "bootstrap", 1), (1, "delta", 1)]
    assert session.turns[0].logged.payload_bytes == 198
    assert session.turns[0].tokens == {"input": 6, "cache_read": 100, "cache_write": 50, "output": 10}
    lines = engine.state.log.continuity
    assert [(line.matched_session, line.matched_turn) for line in lines] == [
        ("S1", 0), ("S1", 1), (None, None), (None, None)
    ]  # fmt: skip
    assert session.turns[0].log_line == 0 and session.turns[1].log_line == 1
    engine.close()


def test_attribution_works_whichever_file_is_read_first(tmp_path: Path) -> None:
    agent = agent_dir(tmp_path)
    engine = Engine([agent / "sessions", agent / "logs"])  # transcripts before logs
    engine.drain()
    (session,) = engine.state.sessions.values()
    assert [t.log_line for t in session.turns] == [0, 1]
    engine.close()


def test_session_id_on_newer_log_lines_decides_attribution(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    (agent / "logs").mkdir(parents=True)
    write_transcript(
        agent / "sessions" / "--x--" / "t_S2.jsonl",
        "S2",
        [user("u1", None, T0), assistant("a1", "u1", T0 + 1000, "delta", "prefix_matched", 1)],
    )
    (agent / "logs" / "session.log").write_bytes(
        log_line(T0 + 2000, "delta", "prefix_matched", 1, session_id="OTHER")
        + log_line(T0 + 2100, "delta", "prefix_matched", 1, session_id="S2")
    )
    engine = Engine([agent])
    engine.drain()
    assert engine.state.sessions[next(iter(engine.state.sessions))].turns[0].log_line == 1
    engine.close()


def test_appended_lines_show_up_and_bad_lines_are_problems(tmp_path: Path) -> None:
    agent = agent_dir(tmp_path)
    engine = Engine([agent / "logs"])
    engine.drain()
    assert engine.state.log.stats.events == 4
    with open(agent / "logs" / "session.log", "ab") as fh:
        fh.write(b'{"ts":"2026-08-22T09:03:00.000Z","level":"info","event":"claude_sdk_oauth_session_cont')
    engine.poll()
    assert engine.state.log.stats.events == 4  # partial line held
    with open(agent / "logs" / "session.log", "ab") as fh:
        fh.write(b'inuity","kind":"fork","reason":"idle_ttl","count":3}\n{broken\n\xff\xfe\n')
    engine.poll()
    assert engine.state.log.stats.events == 5
    problems = list(engine.state.problems)
    assert [(p.line, p.error.split(":")[0]) for p in problems] == [(6, "invalid JSON"), (7, "invalid UTF-8 at byte 0")]
    stat = engine.stats[str(agent / "logs" / "session.log")]
    assert (stat.format, stat.lines, stat.bad_lines) == ("senpi-session-log", 7, 2)
    engine.close()


def test_branch_switch_cuts_back_and_numbers_turns_in_file_order(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    write_transcript(
        agent / "sessions" / "--x--" / "t_S3.jsonl",
        "S3",
        [
            user("u1", None, T0),
            assistant("a1", "u1", T0 + 1000, "bootstrap", "registry_miss", 1),
            user("u2", "a1", T0 + 5000),
            assistant("a2", "u2", T0 + 6000, "delta", "prefix_matched", 1),
            user("u3", "a1", T0 + 9000),  # branch back to a1
            assistant("a3", "u3", T0 + 10_000, "fork", "history_rolled_back", 1),
        ],
    )
    engine = Engine([agent / "sessions"])
    engine.drain()
    (session,) = engine.state.sessions.values()
    assert session.branch == ["u1", "a1", "u3", "a3"]
    assert [t.entry_id for t in session.turns] == ["a1", "a2", "a3"]
    engine.close()


def test_transcript_replaced_in_place_resets_its_session(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    path = agent / "sessions" / "--x--" / "t_S4.jsonl"
    write_transcript(
        path, "S4", [user("u1", None, T0), assistant("a1", "u1", T0 + 1000, "bootstrap", "registry_miss", 1)]
    )
    engine = Engine([agent / "sessions"])
    engine.drain()
    tmp = path.with_name(".tmp")
    write_transcript(tmp, "S4", [user("u9", None, T0)])
    tmp.replace(path)
    engine.drain()
    (session,) = engine.state.sessions.values()
    assert session.turns == [] and session.branch == ["u9"]
    assert any("replaced" in p.error for p in engine.state.problems)
    engine.close()


def test_unrecognised_json_file_is_ignored_once_and_binary_jsonl_lines_are_problems(tmp_path: Path) -> None:
    (tmp_path / "other.json").write_text('{"hello": 1}\n{"hello": 2}\n')
    (tmp_path / "bin.jsonl").write_bytes(b"\x00\x01\x02\xff\n" * 3)
    engine = Engine([tmp_path])
    engine.drain()
    errors = sorted((Path(p.path).name, p.line, p.error) for p in engine.state.problems)
    assert errors[0] == ("bin.jsonl", 1, "invalid UTF-8 at byte 3 (file format not recognised)")
    assert len([e for e in errors if e[0] == "bin.jsonl"]) == 3
    assert [e for e in errors if e[0] == "other.json"] == [
        ("other.json", 1, "not a format this tool reads; file ignored")
    ]
    engine.close()


def test_a_snapshot_names_an_unterminated_last_line_and_rotation_is_not_a_problem(tmp_path: Path) -> None:
    agent = agent_dir(tmp_path)
    log = agent / "logs" / "session.log"
    engine = Engine([agent / "logs"])
    engine.drain()
    log.rename(agent / "logs" / "session.log.1")
    first = log_line(T0 + 100_000, "delta", "prefix_matched", 1)
    log.write_bytes(first + b'{"ts":"2026-08-22T09:05:00.000Z","lev')
    engine.drain()
    errors = [(Path(p.path).name, p.line, p.offset, p.error) for p in engine.state.problems]
    assert errors == [
        (
            "session.log",
            2,
            len(first),
            "incomplete last line: 37 bytes without a newline (a write in progress or a torn write); not read",
        )
    ]
    assert engine.rotations == 1 and engine.state.log.stats.events == 5
    engine.drain()  # named once, not on every snapshot
    assert len(engine.state.problems) == 1
    engine.close()


def test_a_big_file_of_another_format_is_counted_whole_and_ignored_once(tmp_path: Path) -> None:
    """Its lines come from the tailer in blocks: all counted, none parsed, one problem (not one per line)."""
    path = tmp_path / "other.jsonl"
    lines = [b"not json"] + [orjson.dumps({"unknown": i, "pad": "x" * 200}) for i in range(20_000)]
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    engine = Engine([path])
    engine.drain()
    stat = engine.stats[str(path)]
    assert (stat.lines, stat.bytes) == (len(lines), path.stat().st_size)
    assert [p.error for p in engine.state.problems] == ["not a format this tool reads; file ignored"]
