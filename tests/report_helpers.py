"""A senpi agent dir built on disk for the report tests: rotated logs, one transcript, a few bad lines.

The layout and the line shapes follow senpi-formats §8 (the fixture recipe): continuity lines in
`logs/session.log.1` (older) and `logs/session.log` (newer), with a fork streak that spans the rotation; a
transcript whose assistant diagnostics match some of those lines (same kind, reason, count, ~time) and whose
third call committed as rewritten (invalidation entry before it), followed by a fork and a flatten. `extra` strings are spliced into every
free-text place the data offers, so the escaping and redaction tests can push hostile input end to end.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.engine import Engine
from core.report import ReportOptions, build_report
from core.timeutil import iso_ms, parse_iso_ms

T0 = parse_iso_ms("2026-08-04T02:00:00.000Z") or 0
SESSION_ID = "0198f0a1-aaaa-7bbb-8ccc-000000000001"
OTHER_SESSION_ID = "0198f0a1-aaaa-7bbb-8ccc-000000000002"

# (seconds after T0, kind, reason, count); the first six go to session.log.1
LOG_LINES: list[tuple[int, str, str, int | None]] = [
    (1, "bootstrap", "registry_miss", 1),
    (10, "delta", "prefix_matched", 1),
    (20, "delta", "prefix_matched", 1),
    (40, "fork", "assistant_rewritten", 2),
    (50, "fork", "assistant_rewritten", 3),
    (60, "fork", "assistant_rewritten", 4),
    (61, "fork", "assistant_rewritten", 5),
    (70, "flatten", "assistant_rewritten", 6),
    (80, "flatten", "assistant_rewritten", 132),
    (90, "delta", "prefix_matched", 1),
    (95, "disabled", "resume_mode_off", None),
    (100, "flatten", "idle_ttl", 7),
    (110, "flatten", "idle_ttl", 8),
]
ROTATED = 6
CLOSES = [(30, "idle_ttl"), (105, "model_selected")]


def ts(seconds: float) -> str:
    return iso_ms(T0 + int(seconds * 1000)) or ""


def log_line(seconds: int, kind: str, reason: str, count: int | None) -> str:
    obj: dict[str, Any] = {
        "ts": ts(seconds),
        "level": "info",
        "event": "claude_sdk_oauth_session_continuity",
        "kind": kind,
        "reason": reason,
    }
    if count is not None:
        obj["count"] = count
    return json.dumps(obj, separators=(",", ":"))


def close_line(seconds: int, reason: str) -> str:
    return json.dumps(
        {"ts": ts(seconds), "level": "info", "event": "claude_sdk_oauth_session_close", "reason": reason},
        separators=(",", ":"),
    )


class Transcript:
    """Writes transcript entries with chained ids, one call at a time."""

    def __init__(self, session_id: str, cwd: str, extra: str = "") -> None:
        self.session_id = session_id
        self.extra = extra
        self.lines: list[dict[str, Any]] = [
            {"type": "session", "version": 3, "id": session_id, "timestamp": ts(0), "cwd": cwd}
        ]
        self.parent: str | None = None
        self.n = 0

    def add(self, entry: dict[str, Any], seconds: float) -> None:
        self.n += 1
        entry_id = f"{self.n:08x}"
        entry.update({"id": entry_id, "parentId": self.parent, "timestamp": ts(seconds)})
        self.parent = entry_id
        self.lines.append(entry)

    def user(self, seconds: float, text: str) -> None:
        self.add(
            {
                "type": "message",
                "message": {
                    "role": "user",
                    "content": [{"type": "text", "text": text}],
                    "timestamp": T0 + int(seconds * 1000),
                },
            },
            seconds,
        )

    def assistant(
        self,
        seconds: float,
        kind: str,
        reason: str,
        count: int | None,
        *,
        payload_bytes: int | None = None,
        rewritten: bool = False,
        text: str = "done",
    ) -> None:
        details: dict[str, Any] = {"kind": kind, "reason": reason}
        if count is not None:
            details["deltaMessages"] = count
        if payload_bytes is not None:
            details.update({"payloadBytes": payload_bytes, "collapsedDirectives": 0})
        if rewritten:
            self.add(
                {
                    "type": "custom",
                    "customType": "claude-sdk-oauth-binding",
                    "data": {"schemaVersion": 1, "invalidated": True, "reason": "assistant_rewritten"},
                },
                seconds + 0.5,
            )
        start = T0 + int((seconds - 2) * 1000)
        msg = {
            "role": "assistant",
            "content": [
                {
                    "type": "thinking",
                    "thinking": f"thinking {self.extra}",
                    "thinkingSignature": "sig",
                    "startedAt": start + 10,
                    "endedAt": start + 900,
                },
                {"type": "text", "text": f"{text} {self.extra}"},
            ],
            "api": "claude-sdk-oauth",
            "provider": "claude-sdk-oauth",
            "model": f"claude-opus-4-8{self.extra}",
            "usage": {"input": 6, "output": 180, "cacheRead": 0, "cacheWrite": 6274, "totalTokens": 6460},
            "stopReason": "stop",
            "timestamp": start,
            "diagnostics": [
                {
                    "type": "claude_sdk_oauth_session_continuity",
                    "timestamp": T0 + int(seconds * 1000),
                    "details": details,
                }
            ],
        }
        self.add({"type": "message", "message": msg}, seconds + 0.6)

    def text(self) -> str:
        return "".join(json.dumps(line) + "\n" for line in self.lines)


def write_agent(
    root: Path, *, extra: str = "", secret: str = "", bad_lines: bool = True, folder_extra: str | None = None
) -> Path:
    """An agent dir under `root`; returns the agent dir. `extra` goes into every free-text field (and the session
    directory's name, unless `folder_extra` is given: a name holds 255 bytes at most)."""
    agent = root / "agent"
    logs = agent / "logs"
    logs.mkdir(parents=True)
    lines = [log_line(*item) for item in LOG_LINES]
    for seconds, reason in CLOSES:
        lines.append(close_line(seconds, reason))
    if extra:  # a kind, a reason and a close reason of hostile text (new kinds are listed as seen)
        lines += [log_line(112, f"fork{extra}", f"why{extra}", 3), log_line(113, f"fork{extra}", f"why{extra}", 4)]
        lines.append(close_line(114, f"closed{extra}"))
    lines.sort(key=lambda line: json.loads(line)["ts"])
    rotated_cut = ts(LOG_LINES[ROTATED - 1][0] + 0.5)
    older = [line for line in lines if json.loads(line)["ts"] < rotated_cut]
    newer = [line for line in lines if json.loads(line)["ts"] >= rotated_cut]
    (logs / "session.log.1").write_text("\n".join(older) + "\n", encoding="utf-8")
    error = {
        "ts": ts(111),
        "level": "warn",
        "event": "provider_error",
        "kind": "error",
        "error": f"boom {extra} {secret}",
    }
    tail = [*newer, json.dumps(error)]
    if bad_lines:
        tail.insert(2, '{"ts":"2026-08-04T02:01:00.000Z","level":"info"')
    (logs / "session.log").write_text("\n".join(tail) + "\n", encoding="utf-8")

    cwd = f"/home/dev/shop{extra}"
    folder = agent / "sessions" / f"--home-dev-shop{_safe(extra if folder_extra is None else folder_extra)}--"
    folder.mkdir(parents=True)
    transcript = Transcript(SESSION_ID, cwd, extra)
    transcript.add({"type": "model_change", "provider": "claude-sdk-oauth", "modelId": "claude-opus-4-8"}, 0)
    transcript.user(0.5, f"fix the build {secret}")
    transcript.assistant(1, "bootstrap", "registry_miss", 1, payload_bytes=25096)
    transcript.user(9, f"and the tests {extra}")
    transcript.assistant(10, "delta", "prefix_matched", 1)
    transcript.user(19, "more")
    transcript.assistant(20, "delta", "prefix_matched", 1, rewritten=True, text=f"rewritten answer {secret}")
    transcript.user(39, "again")
    transcript.assistant(40, "fork", "assistant_rewritten", 2)
    transcript.user(69, "and once more")
    transcript.assistant(70, "flatten", "assistant_rewritten", 6, payload_bytes=50303)
    (folder / f"2026-08-04T02-00-00-000Z_{SESSION_ID}.jsonl").write_text(transcript.text(), encoding="utf-8")

    other = Transcript(OTHER_SESSION_ID, "/home/dev/other")
    other.user(89, "hello")
    other.assistant(90, "delta", "prefix_matched", 1)
    if bad_lines:
        other.lines.append("{broken")  # type: ignore[arg-type]
    body = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in other.lines)
    (folder / f"2026-08-04T02-01-00-000Z_{OTHER_SESSION_ID}.jsonl").write_text(body, encoding="utf-8")
    return agent


def _safe(extra: str) -> str:
    """The part of `extra` a file name can hold (no slash, no NUL)."""
    return extra.replace("/", "-").replace("\x00", "")


def report_for(path: Path, options: ReportOptions | None = None, *, paths: list[Path] | None = None) -> dict:
    """Drain an engine over `path` (or `paths`) and build the report."""
    engine = Engine(paths or [path])
    try:
        engine.drain()
        return build_report(engine, options or ReportOptions(now_ms=T0 + 3_600_000))
    finally:
        engine.close()


def enrich(engine: Engine, *, diff_value: str = "x", long_text: str = "") -> None:
    """Fill the analysis fields of the built session the way the analyzers do, with known values.

    The report must render whatever the analyzers produce; pinning their outputs here lets the renderer
    tests check exact rows (payload sizes, directive copies, a rewritten turn's diff, avoidable re-sends)
    independently of how the analyzers compute them.
    """
    from core.model import CommitInfo, Decision, DiffChange

    session = next(s for s in engine.state.sessions.values() if s.session_id == SESSION_ID)
    sizes = [(25096, 25096), (300, 300), (420, 420), (2000, 2000), (50303, 75174)]
    for turn, (sent, raw) in zip(session.turns, sizes, strict=True):
        turn.payload_bytes, turn.payload_bytes_raw = sent, raw
        # a 24,871-byte copy in the first call, none in the small ones; the flatten serialized 3 copies (75,174
        # bytes) and sent 2 after the agent's dedupe (50,303). Each side is given, as the senpi analysis gives
        # them (`copies_sent`/`bytes_sent`), and fits in its payload: no share passes 1
        copies, sent_copies = (0, 0) if raw < 24871 else (1, 1) if raw < 50000 else (3, 2)
        turn.directives = {
            "ultrawork-mode": {"copies": copies, "bytes": 24871 * copies, "copies_sent": sent_copies,
                               "bytes_sent": 24871 * sent_copies}
        } if copies else {}  # fmt: skip
        turn.recomputed = Decision(turn.kind or "delta", "prefix_matched", 1)
        turn.fingerprints = {"senpi_sha256": "a" * 64, "senpi_sha256_verbatim": "b" * 64, "stable_xxh3": "c" * 16}
        turn.commit = CommitInfo("clean", "transcript")
        turn.avoidable = False
        turn.agreement = True
    session.turns[1].agreement = False
    session.turns[1].recomputed = Decision("fork", "assistant_rewritten", 1)
    session.turns[1].disagreement = "kind: logged delta, replay fork"
    rewritten = session.turns[2]
    rewritten.commit = CommitInfo(
        "rewritten",
        "transcript",
        "volatile-only",
        [
            DiffChange(".content[0].startedAt", "missing_in_capture", True, None, 1785819137555),
            DiffChange(".content[1].text", "changed", True, diff_value, long_text or diff_value + "!"),
        ],
    )
    flatten = session.turns[4]
    flatten.avoidable = True
    flatten.payload_bytes_if_stable = 700
    flatten.why = f"assistant rewritten at turn 2 {diff_value}"
