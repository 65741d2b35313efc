"""Codex rollout lines as the CLI writes them (compact JSON, one envelope per line), for synthetic fixtures, and
the path of the real rollouts in `../shared/realdata/codex`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from core.timeutil import iso_ms

ROOT = Path(__file__).resolve().parents[3]
REAL = ROOT.parent / "shared" / "realdata" / "codex"

T0 = 1_787_389_200_000  # 2026-08-22T09:00:00Z
SID = "019d9000-0000-7000-8000-00000000c0de"


class Rollout:
    """A rollout being written: envelopes with timestamps, `token_count` with a running total like Codex's."""

    def __init__(self, sid: str = SID, version: str = "0.105.0", source: Any = "cli", **meta: Any) -> None:
        self.lines: list[bytes] = []
        self.total = {
            "input_tokens": 0,
            "cached_input_tokens": 0,
            "output_tokens": 0,
            "reasoning_output_tokens": 0,
            "total_tokens": 0,
        }
        self.last: dict[str, int] | None = None
        self.emit(
            T0,
            "session_meta",
            {
                "id": sid,
                "timestamp": iso_ms(T0),
                "cwd": "/home/dev/shop",
                "originator": "codex_cli_rs",
                "cli_version": version,
                "source": source,
                "model_provider": "openai",
                **meta,
            },
        )

    def emit(self, ms: int, kind: str, payload: dict[str, Any]) -> None:
        self.lines.append(orjson.dumps({"timestamp": iso_ms(ms), "type": kind, "payload": payload}))

    def event(self, ms: int, kind: str, **payload: Any) -> None:
        self.emit(ms, "event_msg", {"type": kind, **payload})

    def user(self, ms: int, text: str, model: str | None = "gpt-5.4") -> None:
        self.emit(
            ms, "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
        )
        self.event(ms, "user_message", message=text, images=[])
        if model is not None:
            self.emit(ms + 5, "turn_context", {"cwd": "/home/dev/shop", "model": model, "approval_policy": "never"})

    def call(
        self,
        ms: int,
        prompt: int,
        cached: int,
        out: int = 100,
        reasoning: int = 64,
        *,
        tool: bool = True,
        model: str | None = "gpt-5.4",
    ) -> None:
        """One response: its usage line (total moved by `last`), then a tool call and its output, and the next
        request's turn_context followed by the repeat Codex writes of this call's line."""
        last = {
            "input_tokens": prompt,
            "cached_input_tokens": cached,
            "output_tokens": out,
            "reasoning_output_tokens": reasoning,
            "total_tokens": prompt + out,
        }
        for key, value in last.items():
            self.total[key] += value
        self.last = last
        self.token_count(ms)
        if tool:
            self.emit(
                ms + 1,
                "response_item",
                {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": f"call_{ms}"},
            )
            self.emit(
                ms + 40, "response_item", {"type": "function_call_output", "call_id": f"call_{ms}", "output": "ok"}
            )
            if model is not None:
                self.emit(ms + 41, "turn_context", {"cwd": "/home/dev/shop", "model": model})
            self.token_count(ms + 42)  # the repeat: same info, written just before the next request

    def token_count(self, ms: int, last: dict[str, int] | None = None) -> None:
        info = {
            "total_token_usage": dict(self.total),
            "last_token_usage": dict(last or self.last or {}),
            "model_context_window": 258400,
        }
        self.event(ms, "token_count", info=info, rate_limits=None)

    def raw(self, data: bytes) -> None:
        self.lines.append(data)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(line + b"\n" for line in self.lines))
        return path


def rollout_path(home: Path, sid: str = SID, day: str = "2026/08/22") -> Path:
    """Where Codex writes a rollout: `<home>/sessions/YYYY/MM/DD/rollout-<local time>-<id>.jsonl`."""
    return home / "sessions" / day / f"rollout-{day.replace('/', '-')}T11-00-00-{sid}.jsonl"
