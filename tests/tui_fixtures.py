"""Small, deterministic senpi agent dirs for the TUI tests (no dependency on the demo simulator).

`write_agent(root)` writes `logs/session.log` and two transcripts: session A with a rewritten-turn
incident (an `assistant_rewritten` invalidation, then fork/flatten re-sends carrying an `<ultrawork-mode>`
directive) and a healthy session B (bootstrap then deltas), plus one bad log line. `hostile=True` puts
markup and terminal control sequences into every string the panes show.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.sources.reread import FileReread

T0 = 1_785_800_000_000  # 2026-07-27T... UTC, fixed so screenshots are stable
SID_A = "0198f0a1-7c3e-7000-8000-00000000000a"
SID_B = "0198f0b2-1d2e-7000-8000-00000000000b"
DIRECTIVE = "<ultrawork-mode>\n" + "ULTRAWORK: keep going until every task is done. " * 40 + "\n</ultrawork-mode>"
HOSTILE = "[/x] [link=https://evil.example]click[/link] [$v] [b]bold \x1b]2;PWNED\x07\x1b[31mred\x1b[0m\x1bc"


def iso(ms: int) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"


@dataclass
class Transcript:
    """Builds one transcript's entries and the matching session.log lines."""

    sid: str
    cwd: str
    entries: list[dict[str, Any]] = field(default_factory=list)
    log: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    _n: int = 0
    _parent: str | None = None

    def _id(self) -> str:
        self._n += 1
        return f"{int(self.sid[-2:], 16):02x}{self._n:06x}"

    def add(self, ms: int, etype: str, **payload: Any) -> str:
        entry_id = self._id()
        entry = {"type": etype, "id": entry_id, "parentId": self._parent, "timestamp": iso(ms), **payload}
        self.entries.append(entry)
        self._parent = entry_id
        return entry_id

    def header(self, ms: int) -> None:
        self.entries.append({"type": "session", "version": 3, "id": self.sid, "timestamp": iso(ms), "cwd": self.cwd})
        self.add(ms, "model_change", provider="claude-sdk-oauth", modelId="claude-opus-4-8")

    def user(self, ms: int, text: str) -> None:
        self.add(ms, "message", message={"role": "user", "content": [{"type": "text", "text": text}],
                                         "timestamp": ms})  # fmt: skip

    def assistant(self, ms: int, kind: str, reason: str, count: int | None, *, payload: int | None = None,
                  text: str = "done", rewritten: bool = False) -> None:  # fmt: skip
        details: dict[str, Any] = {"kind": kind, "reason": reason}
        if count is not None:
            details["deltaMessages"] = count
        if payload is not None:
            details["payloadBytes"] = payload
            details["collapsedDirectives"] = 0
        if rewritten:
            self.add(ms + 900, "custom", customType="claude-sdk-oauth-binding",
                     data={"schemaVersion": 1, "invalidated": True, "reason": "assistant_rewritten"})  # fmt: skip
        thinking: dict[str, Any] = {"type": "thinking", "thinking": "thinking about it", "thinkingSignature": "sig"}
        if rewritten:  # the pre-2026.8.11 bug: thinking timing stamped after the capture
            thinking.update(startedAt=ms + 10, endedAt=ms + 20)
        message = {
            "role": "assistant",
            "content": [thinking, {"type": "text", "text": text}],
            "api": "claude-sdk-oauth", "provider": "claude-sdk-oauth", "model": "claude-opus-4-8",
            "usage": {"input": 6, "output": 120, "cacheRead": 1000 + self._n * 50, "cacheWrite": 200,
                      "totalTokens": 1326},
            "stopReason": "stop", "timestamp": ms,
            "diagnostics": [{"type": "claude_sdk_oauth_session_continuity", "timestamp": ms + 500, "details": details}],
        }  # fmt: skip
        self.add(ms + 1000, "message", message=message)
        line: dict[str, Any] = {
            "ts": iso(ms + 500),
            "level": "info",
            "event": "claude_sdk_oauth_session_continuity",
            "kind": kind,
            "reason": reason,
        }
        if count is not None:
            line["count"] = count
        self.log.append((ms + 500, line))

    def write(self, root: Path) -> Path:
        folder = root / "sessions" / ("--" + self.cwd.strip("/").replace("/", "-") + "--")
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{iso(T0).replace(':', '-').replace('.', '-')}_{self.sid}.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in self.entries), encoding="utf-8")
        return path


def write_agent(root: Path, *, hostile: bool = False, turns: int = 12) -> dict[str, Path]:
    """An agent dir with two sessions; returns the paths written."""
    reason_x = HOSTILE if hostile else "assistant_rewritten"
    a = Transcript(SID_A, "/home/dev/" + ("shop" + HOSTILE if hostile else "shop"))
    a.header(T0)
    t = T0 + 1000
    a.user(t, DIRECTIVE + "\nbuild the shop")
    a.assistant(t, "flatten", "registry_miss", 2, payload=3100)
    for i in range(turns):
        t += 20_000
        a.user(t, f"step {i}")
        if i == 3:
            a.assistant(
                t, "delta", "prefix_matched", 1, rewritten=True, text="rewritten " + (HOSTILE if hostile else "")
            )
        elif i in (4, 5, 6):
            kind = "fork" if i != 5 else "flatten"
            a.assistant(t, kind, reason_x, 2 + i, payload=3100 + 900 * i, rewritten=i == 5)
        else:
            a.assistant(t, "delta", "prefix_matched", 1)
    if hostile:
        a.entries[1]["modelId"] = "claude" + HOSTILE
        for entry in a.entries:
            message = entry.get("message")
            if isinstance(message, dict) and message.get("role") == "assistant":
                message["model"] = "opus" + HOSTILE
    b = Transcript(SID_B, "/home/dev/api")
    b.header(T0 + 5000)
    t = T0 + 6000
    b.user(t, "hello")
    b.assistant(t, "bootstrap", "registry_miss", 1, payload=900)
    for i in range(4):
        t += 31_000
        b.user(t, f"more {i}")
        b.assistant(t, "delta", "prefix_matched", 1)
    lines = sorted(a.log + b.log, key=lambda item: item[0])
    logs = root / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    body = [json.dumps(line) for _, line in lines]
    body.insert(3, '{"ts": "2026-07-27T00:00:00.000Z", "level": "info", "event": broken')
    paths = {"log": logs / "session.log", "a": a.write(root), "b": b.write(root)}
    if hostile:
        body.insert(5, "not json " + HOSTILE)
        body.append(continuity_line(T0 + 999_000, HOSTILE, HOSTILE, 3).rstrip("\n"))
        odd = root / "sessions" / ("--odd" + HOSTILE.replace("/", "|") + "--")
        odd.mkdir(parents=True)
        header = {"type": "session", "version": 3, "id": "0198ffff-" + HOSTILE, "timestamp": iso(T0), "cwd": "/x"}
        (odd / "x.jsonl").write_text(json.dumps(header) + "\n{broken " + HOSTILE + "\n", encoding="utf-8")
        paths["odd"] = odd / "x.jsonl"
    (logs / "session.log").write_text("\n".join(body) + "\n", encoding="utf-8")
    return paths


def continuity_line(ms: int, kind: str, reason: str, count: int | None = None) -> str:
    line: dict[str, Any] = {"ts": iso(ms), "level": "info", "event": "claude_sdk_oauth_session_continuity",
                            "kind": kind, "reason": reason}  # fmt: skip
    if count is not None:
        line["count"] = count
    return json.dumps(line) + "\n"


# ---------------------------------------------------------------------------------------------- Pilot helpers
FROZEN = 1_785_900_000.0  # a fixed wall clock (seconds) for byte-stable screens


async def wait_for(pilot: Any, predicate: Any, timeout: float = 5.0, step: float = 0.05) -> bool:
    """Pause the pilot until `predicate()` is true (bounded); returns the last value."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await pilot.pause(step)
    return bool(predicate())


async def wait_loaded(pilot: Any, app: Any, timeout: float = 8.0) -> None:
    """Until the worker read what was on disk and the screen painted that snapshot."""
    ok = await wait_for(
        pilot,
        lambda: app.loaded.is_set() and app.snapshot.version == app.engine.state.version and app._consumed.is_set(),
        timeout,
    )
    assert ok, "the ingest worker did not finish reading the fixture"
    await pilot.pause()


def screen_output(app: Any) -> tuple[str, list[str]]:
    """What the terminal would receive for a full repaint of the current screen, and its plain lines."""
    update = app.screen._compositor.render_full_update()
    raw = update.render_segments(app.console)
    lines = ["".join(segment.text for strip in line for segment in strip) for line in update.strips]
    return raw, lines


class FakeEngine:
    """`tui.view.EngineView` without files: a state the test builds, read by the snapshot builder and the app."""

    def __init__(self, state: Any, *, lines: int = 0, files: int = 0, generation: int = 0) -> None:
        import threading

        self.state = state
        self.lock = threading.RLock()
        self.roots: list[str] = ["/x"]
        self.paths: list[Path] = [Path("/x")]
        self.stats: dict[str, Any] = {}
        self.reread = FileReread()
        self.total_lines = lines
        self.total_bytes = lines * 100
        self.files = files
        self.generation = generation

    @property
    def park_after(self) -> float | None:
        return None

    @property
    def files_generation(self) -> int:
        return self.generation

    def poll(self, max_bytes: int | None = None) -> Any:
        from core.engine import PollResult

        return PollResult()

    def wait(self, timeout: float) -> bool:
        import time

        time.sleep(min(timeout, 0.05))
        return False

    def wake(self) -> None:
        return None

    def finish_pending(self) -> None:
        return None

    def park_idle(self, min_idle_s: float, only: set[str] | None = None) -> int:
        return 0

    def file_count(self) -> int:
        return self.files

    def pending_bytes(self) -> int:
        return 0

    def pending_count(self) -> int:
        return 0

    def pending_problems(self) -> list[Any]:
        return []
