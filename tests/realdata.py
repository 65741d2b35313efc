"""The real agent files in `../shared/realdata` (read-only), and independent line-level readings of them.

The readings here use `json` alone and none of this tool's code: they are what the tests compare the engine's
calls and tokens with (reviews/real-data.md: "call counts and tokens match the line-level reading").
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "realdata"
needs_realdata = pytest.mark.skipif(
    not REAL.is_dir(), reason=f"{REAL} is not here (the real agent files ship beside the checkout as ../shared)"
)
"""For a test that reads the real files: a checkout without them (a user's clone anywhere) skips it, one reason."""

CLAUDE_SETS = (
    "Crazytieguy-alignment-hive",
    "DRMacIver-claude-reliability",
    "chiphuyen-sniffly",
    "d-kimuson-claude-code-viewer",
    "marot-spotter",
    "oneryalcin-fasthooks",
)
#: every set as the dashboard or `report` is pointed at it
SETS: dict[str, Path] = {
    **{f"cc-{name}": REAL / "claude-code" / name / "projects" for name in CLAUDE_SETS},
    "pi": REAL / "pi" / "badlogic-pi-mono" / "sessions",
    "mux": REAL / "mux" / "coder-mux" / "sessions",
    "codex": REAL / "codex" / "sessions",
    "senpi-live": REAL / "senpi-live" / "agent",
}

TOKEN_KEYS = ("input", "cache_read", "cache_write", "output")


def lines(path: Path) -> Iterator[dict[str, Any]]:
    for raw in path.read_bytes().splitlines():
        if raw.strip():
            yield json.loads(raw)


def messages(paths: Iterable[Path]) -> Iterator[dict[str, Any]]:
    """The `message` object of every line of `paths` that is a JSON object holding one (transcript entries of
    senpi, pi, Claude Code); other and unparsable lines are passed over."""
    for path in paths:
        for raw in path.read_bytes().splitlines():
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            message = obj.get("message") if isinstance(obj, dict) else None
            if isinstance(message, dict):
                yield message


# ---------------------------------------------------------------------------------------------- Claude Code
def claude_session_files(main: Path) -> list[Path]:
    """A session file and its `<session>/subagents/*.jsonl`."""
    sub = main.with_suffix("") / "subagents"
    return [main, *sorted(sub.glob("*.jsonl"))] if sub.is_dir() else [main]


def claude_calls(files: list[Path]) -> dict[tuple[str, str | None], dict[str, int]]:
    """Distinct (message.id, requestId) over the files and the sub-agent calls inside `agent_progress` lines,
    each with its largest copy of `usage` (streamed lines repeat partial usage), in the report's token names."""
    calls: dict[tuple[str, str | None], tuple[int, dict[str, int]]] = {}
    for path in files:
        for line in lines(path):
            found = [line]
            if line.get("type") == "progress":
                data = line.get("data") or {}
                inner = data.get("message") if data.get("type") == "agent_progress" else None
                found = [inner] if isinstance(inner, dict) else []
            for item in found:
                msg = item.get("message") or {}
                if item.get("type") != "assistant" or not msg.get("id"):
                    continue
                if msg.get("model") == "<synthetic>" or item.get("isApiErrorMessage"):
                    continue  # an API error written as a message: no request reached the model
                usage = msg.get("usage") or {}
                tokens = {
                    "input": usage.get("input_tokens") or 0,
                    "cache_read": usage.get("cache_read_input_tokens") or 0,
                    "cache_write": usage.get("cache_creation_input_tokens") or 0,
                    "output": usage.get("output_tokens") or 0,
                }
                key = (msg["id"], item.get("requestId"))
                total = sum(tokens.values())
                if key not in calls or total >= calls[key][0]:
                    calls[key] = (total, tokens)
    return {key: tokens for key, (_, tokens) in calls.items()}


def claude_sessions(projects: Path) -> dict[str, tuple[int, dict[str, int]]]:
    """session id -> (calls, tokens) for every session file of a `projects/` dir: `<id>.jsonl` with its
    sub-agent files, and a 2.0-era top-level `agent-<id>.jsonl` as its own session `agent-<id>` (as ccusage)."""
    out: dict[str, tuple[int, dict[str, int]]] = {}
    for main in sorted(projects.glob("*/*.jsonl")):
        calls = claude_calls(claude_session_files(main))
        out[main.stem] = (len(calls), sum_tokens(calls.values()))
    return out


# ---------------------------------------------------------------------------------------------- pi, mux
def pi_sessions(sessions: Path) -> dict[str, tuple[int, dict[str, int], int]]:
    """session id -> (assistant messages, tokens, messages with every usage figure 0) for each pi file."""
    out: dict[str, tuple[int, dict[str, int], int]] = {}
    for path in sorted(sessions.glob("*/*.jsonl")):
        header = next(lines(path))
        calls: list[dict[str, int]] = []
        for line in lines(path):
            msg = line.get("message") or {}
            if line.get("type") == "message" and msg.get("role") == "assistant":
                usage = msg.get("usage") or {}
                calls.append({"input": usage.get("input", 0), "cache_read": usage.get("cacheRead", 0),
                              "cache_write": usage.get("cacheWrite", 0), "output": usage.get("output", 0)})  # fmt: skip
        zero = sum(1 for c in calls if not any(c.values()))
        out[header["id"]] = (len(calls), sum_tokens(calls), zero)
    return out


def mux_workspace(chat: Path) -> tuple[int, dict[str, int]]:
    """(assistant rows, tokens) of a mux `chat.jsonl`: AI-SDK usage, `inputTokens` the whole prompt (it is at
    least the cached and written parts here), the write from `providerMetadata.anthropic`."""
    calls = []
    for row in lines(chat):
        meta = row.get("metadata") or {}
        usage = meta.get("usage")
        if row.get("role") != "assistant" or not usage:
            continue
        read = usage.get("cachedInputTokens", 0)
        write = ((meta.get("providerMetadata") or {}).get("anthropic") or {}).get("cacheCreationInputTokens", 0)
        calls.append({"input": usage["inputTokens"] - read - write, "cache_read": read, "cache_write": write,
                      "output": usage.get("outputTokens", 0)})  # fmt: skip
    return len(calls), sum_tokens(calls)


def sum_tokens(calls: Any) -> dict[str, int]:
    total: Counter[str] = Counter()
    for tokens in calls:
        total.update({key: tokens.get(key, 0) for key in TOKEN_KEYS})
    return {key: total.get(key, 0) for key in TOKEN_KEYS}


def copy_set(name: str, dst: Path) -> Path:
    """A copy of the realdata set `name` at `dst` (nothing may write next to the originals); the test is skipped
    where the set is not here (it ships beside the checkout as ../shared)."""
    import shutil

    src = SETS[name]
    if not src.exists():
        pytest.skip(f"{src} is not here (the realdata set ships beside the checkout as ../shared)")
    shutil.copytree(src, dst)
    return dst
