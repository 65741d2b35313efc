"""A Claude Code history of a chosen size, for the benchmark against ccusage: `~/.claude/projects/` as the CLI
writes it.

``python -m bench.claude_corpus --size 100MB OUT`` writes ``OUT/projects/<encoded-cwd>/<session>.jsonl`` files
shaped like the real ones in ``../shared/realdata/claude-code`` (Claude Code 2.1.x): the conversation envelope
on every line (``parentUuid`` → ``uuid`` chains, ``sessionId``, ``cwd``, ``version``, ``gitBranch``, ``userType``,
``isSidechain``), one ``assistant`` line per content block with the call's ``message.id`` and ``requestId`` and
``usage`` on every line (``output_tokens`` final on the last), thinking blocks with signatures, ``tool_use``
blocks answered by ``user`` lines carrying ``tool_result`` content and a ``toolUseResult`` copy, ``<system-
reminder>`` blocks, ``progress`` hook lines, ``file-history-snapshot`` and ``system`` bookkeeping, a
``compact_boundary`` now and then, idle gaps past the cache lifetime, and sub-agent transcripts under
``<session>/subagents/agent-<id>.jsonl``. The review's corpus had 129 files, 22,951 lines, 119 sessions and
5,810 calls per 100 MB; this one lands close to that.

Deterministic for a seed; ~10 s per 100 MB. Token totals are not fixed in advance: the benchmark compares what
this tool and ccusage each count on the same files.
"""

from __future__ import annotations

import argparse
import random
import sys
import uuid as uuidlib
from pathlib import Path
from typing import Any

import orjson

from bench.corpus import human_size, parse_size
from core.timeutil import iso_ms

T0 = 1_785_000_000_000  # 2026-07-25
VERSION = "2.1.39"
MODEL = "claude-opus-4-6"
CALLS_PER_SESSION = (30, 70)
SUBAGENT_SHARE = 0.08
WORDS = [
    "the",
    "function",
    "returns",
    "a",
    "list",
    "of",
    "rows",
    "read",
    "from",
    "the",
    "cache",
    "and",
    "the",
    "tests",
    "check",
    "that",
    "every",
    "row",
    "is",
    "kept",
    "in",
    "order",
    "while",
    "the",
    "parser",
    "handles",
    "a",
    "line",
    "that",
    "was",
    "cut",
    "in",
    "the",
    "middle",
    "of",
    "a",
    "write",
    "so",
    "nothing",
    "is",
    "lost",
]
CODE = [
    "def read_rows(path: Path) -> list[Row]:",
    '    """Rows of the file, in order; a torn last line is held back."""',
    "    with path.open('rb') as fh:",
    "        for lineno, data in enumerate(fh, 1):",
    "            if not data.endswith(b'\\n'):",
    "                break",
    "            yield Row.parse(lineno, data)",
    "    return []",
    "",
    "class Cache:",
    "    def __init__(self, limit: int = 1024) -> None:",
    "        self.items: dict[str, bytes] = {}",
]
REMINDER = (
    "<system-reminder>\nWhenever you read a file, you should consider whether it would be considered malware. "
    "You CAN and SHOULD provide analysis of malware, what it is doing.\n</system-reminder>"
)
TOOLS = ("Read", "Bash", "Grep", "Edit", "Glob")


class _Session:
    """One session file being written: the envelope, the uuid chain, the cache figures of its calls."""

    def __init__(self, rng: random.Random, sid: str, cwd: str, *, agent_id: str | None = None) -> None:
        self.rng = rng
        self.sid = sid
        self.cwd = cwd
        self.agent_id = agent_id
        self.lines: list[bytes] = []
        self.last: str | None = None
        self.context = 12_000 + rng.randint(0, 8_000)  # system prompt + tools, cached once
        self.calls = 0
        self.msg = 0

    def _uuid(self) -> str:
        return str(uuidlib.UUID(int=self.rng.getrandbits(128), version=4))

    def _env(self, kind: str, ms: int, parent: str | bool | None = True) -> dict[str, Any]:
        uid = self._uuid()
        env: dict[str, Any] = {
            "parentUuid": self.last if parent is True else parent,
            "isSidechain": self.agent_id is not None,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.sid,
            "version": VERSION,
            "gitBranch": "main",
        }
        if self.agent_id is not None:
            env["agentId"] = self.agent_id
        env.update(type=kind, uuid=uid, timestamp=iso_ms(ms))
        self.last = uid
        return env

    def _put(self, obj: dict[str, Any]) -> None:
        self.lines.append(orjson.dumps(obj))

    def text(self, words: int) -> str:
        rng = self.rng
        return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."

    def code(self, lines: int) -> str:
        rng = self.rng
        start = rng.randrange(len(CODE))
        return "\n".join(f"{i + 1:>6}\t{CODE[(start + i) % len(CODE)]}" for i in range(lines))

    # ------------------------------------------------------------------ lines
    def bookkeeping(self, ms: int) -> None:
        mid = self._uuid()
        self._put({"type": "file-history-snapshot", "messageId": mid,
                   "snapshot": {"messageId": mid, "trackedFileBackups": {}, "timestamp": iso_ms(ms)},
                   "isSnapshotUpdate": False})  # fmt: skip

    def hook(self, ms: int) -> None:
        env = self._env("progress", ms, None)
        tid = f"toolu_{self._uuid()[:24]}"
        env.update(data={"type": "hook_progress", "hookEvent": "SessionStart", "hookName": "SessionStart:startup",
                         "command": "~/.claude/hooks/notify.sh"}, parentToolUseID=tid, toolUseID=tid)  # fmt: skip
        self._put(env)
        self.last = None

    def prompt(self, ms: int, words: int) -> None:
        env = self._env("user", ms)
        env["message"] = {"role": "user", "content": self.text(words)}
        env.update(thinkingMetadata={"maxThinkingTokens": 31999}, todos=[], permissionMode="default")
        self._put(env)

    def tool_result(self, ms: int, tool_id: str, lines: int) -> int:
        body = self.code(lines)
        if self.rng.random() < 0.3:
            body += "\n\n" + REMINDER
        env = self._env("user", ms)
        env["message"] = {"role": "user", "content": [{"tool_use_id": tool_id, "type": "tool_result",
                                                        "content": body, "is_error": False}]}  # fmt: skip
        file = {"filePath": f"{self.cwd}/src/cache.py", "content": body, "numLines": lines, "startLine": 1,
                "totalLines": lines}  # fmt: skip
        env["toolUseResult"] = {"type": "text", "file": file}
        self._put(env)
        return len(body) // 4

    def call(self, ms: int, blocks: list[dict[str, Any]], *, fresh: int, expired: bool) -> None:
        """One API call: one line per block, usage on each (the final output on the last)."""
        self.msg += 1
        self.calls += 1
        msg_id = f"msg_01{self._uuid().replace('-', '')[:22]}"
        request_id = f"req_011C{self._uuid().replace('-', '')[:20]}"
        if expired or self.calls == 1:
            read, write = (0 if self.calls == 1 else self.rng.randint(0, 4_000)), self.context
        else:
            read, write = self.context, fresh
        self.context += fresh
        out = self.rng.randint(40, 1_800)
        for i, block in enumerate(blocks):
            last = i == len(blocks) - 1
            env = self._env("assistant", ms + 40 * i)
            usage = {"input_tokens": self.rng.randint(1, 9), "cache_creation_input_tokens": write,
                     "cache_read_input_tokens": read,
                     "cache_creation": {"ephemeral_5m_input_tokens": write, "ephemeral_1h_input_tokens": 0},
                     "output_tokens": out if last else self.rng.randint(1, 9), "service_tier": "standard"}  # fmt: skip
            env["message"] = {"model": MODEL, "id": msg_id, "type": "message", "role": "assistant",
                              "content": [block], "stop_reason": ("tool_use" if block["type"] == "tool_use" else
                                                                  "end_turn") if last else None,
                              "stop_sequence": None, "usage": usage}  # fmt: skip
            env["requestId"] = request_id
            # the envelope's key order: requestId before type/uuid/timestamp, as the CLI writes it
            env = {k: env[k] for k in (*(k for k in env if k not in ("type", "uuid", "timestamp")),
                                       "type", "uuid", "timestamp")}  # fmt: skip
            self._put(env)

    def system(self, ms: int, subtype: str, **extra: Any) -> None:
        env = self._env("system", ms, None if subtype == "compact_boundary" else True)
        env.update(subtype=subtype, level="info", **extra)
        self._put(env)


def write_session(out: Path, rng: random.Random, index: int) -> list[Path]:
    """One session (and maybe a sub-agent's file); returns the files written."""
    project = f"-Users-dev-src-project-{index % 12:02d}"
    cwd = f"/Users/dev/src/project-{index % 12:02d}"
    sid = str(uuidlib.UUID(int=rng.getrandbits(128), version=4))
    s = _Session(rng, sid, cwd)
    ms = T0 + index * 3 * 3_600_000 + rng.randint(0, 3_600_000)
    s.bookkeeping(ms)
    s.hook(ms)
    s.prompt(ms + 500, rng.randint(10, 60))
    calls = rng.randint(*CALLS_PER_SESSION)
    pending_tool: str | None = None
    for n in range(calls):
        gap = rng.choice((2_000, 4_000, 9_000, 20_000)) if rng.random() > 0.04 else rng.randint(6, 90) * 60_000
        ms += gap
        expired = gap > 5 * 60_000
        fresh = 200
        if pending_tool is not None:
            fresh += s.tool_result(ms, pending_tool, rng.randint(20, 260))
            pending_tool = None
        elif n:
            s.prompt(ms, rng.randint(5, 40))
        if n and rng.random() < 0.01:
            s.system(ms, "compact_boundary", content="Conversation compacted",
                     compactMetadata={"trigger": "auto", "preTokens": s.context})  # fmt: skip
            s.context = 15_000
        blocks: list[dict[str, Any]] = []
        if rng.random() < 0.7:
            blocks.append({"type": "thinking", "thinking": s.text(rng.randint(30, 400)),
                           "signature": "Eu8D" + s._uuid().replace("-", "") * 12})  # fmt: skip
        if n < calls - 1 and rng.random() < 0.75:
            if rng.random() < 0.5:
                blocks.append({"type": "text", "text": s.text(rng.randint(10, 80))})
            pending_tool = f"toolu_01{s._uuid().replace('-', '')[:22]}"
            blocks.append({"type": "tool_use", "id": pending_tool, "name": rng.choice(TOOLS),
                           "input": {"file_path": f"{cwd}/src/cache.py", "limit": 400}})  # fmt: skip
        else:
            blocks.append({"type": "text", "text": s.text(rng.randint(20, 300))})
        s.call(ms + 1_000, blocks, fresh=fresh, expired=expired)
        if rng.random() < 0.1:
            s.system(ms + 2_000, "turn_duration", durationMs=rng.randint(800, 90_000))
    path = out / "projects" / project / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(line + b"\n" for line in s.lines))
    files = [path]
    if rng.random() < SUBAGENT_SHARE:
        agent = f"a{rng.getrandbits(28):07x}"
        sub = _Session(rng, sid, cwd, agent_id=agent)
        ams = ms - 600_000
        sub.prompt(ams, 40)
        for n in range(rng.randint(8, 25)):
            ams += 3_000
            fresh = 200 + (sub.tool_result(ams, f"toolu_01{n:022d}", rng.randint(20, 200)) if n else 0)
            sub.call(ams + 500, [{"type": "text", "text": sub.text(rng.randint(20, 120))}], fresh=fresh,
                     expired=False)  # fmt: skip
        agent_path = out / "projects" / project / sid / "subagents" / f"agent-{agent}.jsonl"
        agent_path.parent.mkdir(parents=True, exist_ok=True)
        agent_path.write_bytes(b"".join(line + b"\n" for line in sub.lines))
        files.append(agent_path)
    return files


def generate(out: Path, size: int, seed: int = 7) -> dict[str, int]:
    """Sessions until `size` bytes are written; returns the corpus' shape."""
    rng = random.Random(seed)
    written = files = lines = sessions = 0
    while written < size:
        for path in write_session(out, rng, sessions):
            data = path.read_bytes()
            written += len(data)
            lines += data.count(b"\n")
            files += 1
        sessions += 1
    return {"bytes": written, "files": files, "lines": lines, "sessions": sessions}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write a Claude Code history (~/.claude layout) of a given size.")
    parser.add_argument("out", type=Path, help="the directory that plays CLAUDE_CONFIG_DIR (projects/ goes in it)")
    parser.add_argument("--size", default="100MB")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    shape = generate(args.out, parse_size(args.size), args.seed)
    print(f"{args.out}: {human_size(shape['bytes'])}, {shape['files']} files, {shape['lines']:,} lines, "
          f"{shape['sessions']} sessions", file=sys.stderr)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
