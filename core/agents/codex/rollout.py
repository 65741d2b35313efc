"""OpenAI Codex CLI rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<id>.jsonl`).

Every line since Codex 0.3x is one envelope `{"timestamp", "type", "payload"}` (reviews/codex-format.md):
`session_meta` (the first line: id, cwd, cli_version, source, model_provider), `turn_context` (the model; once
per call up to 0.105, once per turn from 0.118), `response_item` (what entered the conversation: messages,
reasoning, tool calls and their outputs), `event_msg` (UI events; `token_count` carries the usage) and
`compacted` (the history a compaction replaced). Later CLIs add types (0.152's `world_state`): an unknown type
is a record like any other, ignored downstream, never a problem.

The adapter validates the envelope and the one payload whose numbers matter, `token_count`: its usage is lifted
into `TokenUsage` here, so a count that is not a count is a `Problem` naming the line instead of a call that
silently counts zero. Telling calls from Codex's repeated `token_count` lines is `calls.py`'s job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.formats.base import Adapter, load_object
from core.model import Problem, Record, Where
from core.timeutil import parse_iso_ms

FORMAT = "codex-rollout"

#: The envelope types the CLI writes (0.34 to 0.118). Only these are accepted as a file's first line: the
#: sniff must not claim another agent's JSONL that happens to have `type` and `payload`.
KNOWN_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})

#: The usage fields of `token_count` (`info.total_token_usage` / `info.last_token_usage`). Codex writes them
#: all; `cache_write_input_tokens` arrived in 0.152 (none of the real files have it).
_USAGE_FIELDS = (
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
    "total_tokens",
    "cache_write_input_tokens",
)


@dataclass(slots=True, frozen=True)
class TokenUsage:
    """One usage object in Codex's own convention: `input` includes `cached` (and `cache_write`, 0.152+),
    `output` includes `reasoning`. `cached_reported` is False when the provider wrote no cached figure at all."""

    input: int
    cached: int
    output: int
    reasoning: int
    total: int
    cache_write: int = 0
    cached_reported: bool = True

    @property
    def empty(self) -> bool:
        """All four counted fields 0: the estimate Codex writes at a compaction, not a call (total may be > 0)."""
        return self.input == 0 and self.cached == 0 and self.output == 0 and self.reasoning == 0

    def minus(self, earlier: TokenUsage | None) -> TokenUsage:
        """This cumulative total less an earlier one: a call's usage when a line has no `last_token_usage`."""
        if earlier is None:
            return self
        return TokenUsage(
            max(0, self.input - earlier.input),
            max(0, self.cached - earlier.cached),
            max(0, self.output - earlier.output),
            max(0, self.reasoning - earlier.reasoning),
            max(0, self.total - earlier.total),
            max(0, self.cache_write - earlier.cache_write),
            self.cached_reported,
        )

    def key(self) -> tuple[int, ...]:
        """What "the total changed" compares (every field Codex writes)."""
        return (self.input, self.cached, self.output, self.reasoning, self.total, self.cache_write)


@dataclass(slots=True)
class CodexLine:
    """One rollout line: its envelope lifted out. `kind` is `payload.type` (None for `session_meta`,
    `turn_context` and `compacted`, which have none); for `token_count`, `total`/`last` are its usage, both None
    when `info` is null (a rate-limits-only line)."""

    where: Where
    type: str
    kind: str | None
    timestamp: str | None
    ts_ms: int | None
    payload: dict[str, Any]
    total: TokenUsage | None = None
    last: TokenUsage | None = None


def is_rollout_line(obj: dict[str, Any]) -> bool:
    """A line only Codex writes: a known envelope type with a `payload` object and a string `timestamp`."""
    return (
        obj.get("type") in KNOWN_TYPES
        and isinstance(obj.get("payload"), dict)
        and isinstance(obj.get("timestamp"), str)
    )


def usage_of(value: Any, what: str) -> TokenUsage | str | None:
    """A usage object as `TokenUsage`; None when absent; the reason as a string when it is malformed."""
    if value is None:
        return None
    if not isinstance(value, dict):
        return f"token_count {what} is not an object"
    counts: dict[str, int] = {}
    for name in _USAGE_FIELDS:
        raw = value.get(name)
        if raw is None:
            continue
        if isinstance(raw, bool) or not isinstance(raw, int | float) or raw < 0 or raw != int(raw):
            return f"token_count {what}.{name} is not a token count: {str(raw)[:40]!r}"
        counts[name] = int(raw)
    inp, out = counts.get("input_tokens", 0), counts.get("output_tokens", 0)
    return TokenUsage(
        inp,
        counts.get("cached_input_tokens", 0),
        out,
        counts.get("reasoning_output_tokens", 0),
        counts.get("total_tokens", inp + out),
        counts.get("cache_write_input_tokens", 0),
        "cached_input_tokens" in counts,
    )


class CodexRolloutAdapter(Adapter):
    """Codex CLI rollout files: `CodexLine` records, bad lines as `Problem`s (never raises).

    A rollout is its session's whole history, written by appending: a truncated or replaced one starts its
    session over (`resets_on_replace`). Its session is built by a record handler with no per-session analyzer
    to park, so it is not `parkable`.
    """

    name = FORMAT
    resets_on_replace = True

    def sniff(self, path: str, obj: dict[str, Any]) -> bool:
        return is_rollout_line(obj)

    def parse(self, path: str, lineno: int, offset: int, data: bytes) -> list[Record]:
        obj = load_object(path, lineno, offset, data)
        if isinstance(obj, Problem):
            return [obj]
        kind_of_line = obj.get("type")
        if not isinstance(kind_of_line, str):
            return [Problem(path, lineno, offset, "Codex rollout line without string type")]
        payload = obj.get("payload", {})
        if not isinstance(payload, dict):
            return [Problem(path, lineno, offset, f"Codex {kind_of_line[:40]!r} line whose payload is not an object")]
        if kind_of_line in KNOWN_TYPES and "payload" not in obj:
            return [Problem(path, lineno, offset, f"Codex {kind_of_line!r} line without a payload")]
        timestamp = obj.get("timestamp")
        timestamp = timestamp if isinstance(timestamp, str) else None
        kind = payload.get("type") if kind_of_line in ("event_msg", "response_item") else None
        line = CodexLine(
            Where(path, lineno, offset, len(data)),
            kind_of_line,
            kind if isinstance(kind, str) else None,
            timestamp,
            parse_iso_ms(timestamp),
            payload,
        )
        if line.kind == "token_count" and line.type == "event_msg":
            info = payload.get("info")
            if info is not None and not isinstance(info, dict):
                return [Problem(path, lineno, offset, "token_count info is neither an object nor null")]
            if info is not None:
                total = usage_of(info.get("total_token_usage"), "total_token_usage")
                last = usage_of(info.get("last_token_usage"), "last_token_usage")
                for found in (total, last):
                    if isinstance(found, str):
                        return [Problem(path, lineno, offset, found)]
                line.total, line.last = total, last  # type: ignore[assignment]
                if total is None and last is None:
                    return [
                        Problem(path, lineno, offset, "token_count info without total_token_usage or last_token_usage")
                    ]
        return [line]


__all__ = ["FORMAT", "CodexLine", "CodexRolloutAdapter", "TokenUsage", "is_rollout_line", "usage_of"]
