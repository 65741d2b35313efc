"""A Codex CLI rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<id>.jsonl`), as 0.118 writes it.

The shapes follow `../shared/reviews/codex-format.md` and the real rollouts in `../shared/realdata/codex`:
every line is `{"timestamp", "type", "payload"}`; `session_meta` first (a UUIDv7 id, `originator: codex-tui`,
`base_instructions`), then per turn `task_started`, the developer/AGENTS.md messages on the first turn,
`turn_context` once per turn (0.118), the user message twice (as a `response_item` and a `user_message` event);
per call `reasoning` (encrypted), `function_call` (`exec_command`), its `exec_command_end` event, the
`token_count` (after the call's items, before their outputs: its `info.last_token_usage` is the call, its
`total_token_usage` the running sum) and the `function_call_output`s; the first `token_count` of the file has
`info: null` (rate limits only), and each turn starts with a repeat of the previous call's `token_count` (the
repeat carries the same totals: it is not a call). File and day folder are in local time, lines in UTC.

The story: three turns. In the second the provider has dropped its newest cache entries (OpenAI publishes no
lifetime and may evict): a call reads back an older, shorter prefix. The third comes after 25 minutes away and
finds nothing cached. Usage is `core.demo.prompt_cache.OpenAICache`'s (prefixes read back in 128-token blocks).
"""

from __future__ import annotations

import json
from typing import Any

from core.demo.plan import AgentPlan, CallTruth, SessionTruth, Write
from core.demo.prompt_cache import OPENAI_BLOCK, OPENAI_MIN, Block, OpenAICache
from core.demo.prose import Prose
from core.demo.seeded import Seeded, iso, line

AGENT = "codex"
HOME = "codex"
CWD = "/home/mika/work/fx-rates"
MODEL = "gpt-5.4"
CLI = "0.118.0"
START_MS = 1_786_094_340_903  # 2026-08-07T09:19:00.903Z
LOCAL_OFFSET_MS = 2 * 3_600_000  # the user's clock (CEST) names the file; lines are UTC
BYTES_PER_TOKEN = 3.9
INSTRUCTIONS_TOKENS = 6_784  # base instructions and tools: what the real 0.1xx calls read back after a compaction
WINDOW = 258_400


def tokens(text: str) -> int:
    return max(1, round(len(text.encode("utf-8")) / BYTES_PER_TOKEN))


class CodexDemo:
    def __init__(self, seed: int) -> None:
        self.s = Seeded(AGENT, seed)
        self.p = Prose(self.s)
        self.cache = OpenAICache()
        self.writes: list[Write] = []
        self.sid = self.s.uuid7(START_MS)
        local = iso(START_MS + LOCAL_OFFSET_MS)
        day = local[:10].replace("-", "/")
        self.path = f"sessions/{day}/rollout-{local[:19].replace(':', '-')}-{self.sid}.jsonl"
        self.truth = SessionTruth(AGENT, self.sid, f"{HOME}/{self.path}", CWD)
        self.blocks: list[Block] = [Block("instructions", INSTRUCTIONS_TOKENS)]
        self.total = {
            "input_tokens": 0,
            "cached_input_tokens": 0,
            "output_tokens": 0,
            "reasoning_output_tokens": 0,
            "total_tokens": 0,
        }
        self.last: dict[str, int] | None = None
        self.warm: int | None = None  # what a warm cache reads back on the next call (the previous prompt)
        self.cause: str | None = None
        self.used = 3  # rate-limit percent

    def _line(self, ms: int, kind: str, payload: dict[str, Any]) -> None:
        self.writes.append(Write(ms, self.path, line({"timestamp": iso(ms), "type": kind, "payload": payload})))

    def _rates(self) -> dict[str, Any]:
        return {
            "limit_id": "codex",
            "limit_name": None,
            "primary": {"used_percent": self.used, "window_minutes": 300, "resets_at": START_MS // 1000 + 14_400},
            "secondary": {"used_percent": 21, "window_minutes": 10080, "resets_at": START_MS // 1000 + 380_000},
            "credits": None,
            "plan_type": "plus",
        }

    def _token_count(self, ms: int) -> None:
        info = (
            None
            if self.last is None
            else {
                "total_token_usage": dict(self.total),
                "last_token_usage": dict(self.last),
                "model_context_window": WINDOW,
            }
        )
        self._line(ms, "event_msg", {"type": "token_count", "info": info, "rate_limits": self._rates()})

    # ------------------------------------------------------------------ a turn
    def turn(self, t: int, text: str, steps: list[tuple[str, str]], answer: str, *, first: bool = False) -> int:
        turn_id = self.s.uuid7(t)
        self._line(
            t,
            "event_msg",
            {
                "type": "task_started",
                "turn_id": turn_id,
                "model_context_window": WINDOW,
                "collaboration_mode_kind": "default",
            },
        )
        if first:
            self._line(
                t,
                "response_item",
                {
                    "type": "message",
                    "role": "developer",
                    "content": [
                        {
                            "type": "input_text",
                            "text": "<permissions instructions>\n"
                            + self.p.paragraph(18)
                            + "\n</permissions instructions>",
                        }
                    ],
                },
            )
            agents_md = f"# AGENTS.md instructions for {CWD}\n\n<INSTRUCTIONS>\n{self.p.paragraph(30)}\n</INSTRUCTIONS>"
            env = (
                f"<environment_context>\n  <cwd>{CWD}</cwd>\n  <shell>bash</shell>\n  <current_date>2026-08-07"
                "</current_date>\n  <timezone>Europe/Berlin</timezone>\n</environment_context>"
            )
            self._line(
                t,
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": agents_md}, {"type": "input_text", "text": env}],
                },
            )
            self.blocks.append(Block("context", tokens(agents_md + env) + 420))
        else:
            self._token_count(t)  # the repeat of the previous call's count, at the start of the next turn
        self._line(
            t + 1,
            "turn_context",
            {
                "turn_id": turn_id,
                "cwd": CWD,
                "current_date": iso(t)[:10],
                "timezone": "Europe/Berlin",
                "approval_policy": "on-request",
                "sandbox_policy": {
                    "type": "workspace-write",
                    "writable_roots": [],
                    "network_access": False,
                    "exclude_tmpdir_env_var": False,
                    "exclude_slash_tmp": False,
                },
                "model": MODEL,
                "personality": "pragmatic",
                "realtime_active": False,
                "collaboration_mode": {"mode": "default", "settings": {"model": MODEL, "reasoning_effort": None}},
                "effort": "medium",
                "summary": "auto",
                "truncation_policy": {"mode": "tokens", "limit": 10000},
            },
        )
        self._line(
            t + 2,
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]},
        )
        self._line(
            t + 2,
            "event_msg",
            {"type": "user_message", "message": text, "images": [], "local_images": [], "text_elements": []},
        )
        self.blocks.append(Block(f"user:{turn_id}", tokens(text)))
        t += 2
        for command, output in steps:
            t = self.call(t + self.s.randint(1_800, 6_500), command, output, turn_id)
        t = self.call(t + self.s.randint(2_500, 7_000), None, answer, turn_id)
        self._line(t + 40, "event_msg", {"type": "task_complete", "turn_id": turn_id, "last_agent_message": answer})
        return t + 40

    def call(self, t: int, command: str | None, output: str, turn_id: str) -> int:
        """One request at `t`: reasoning, then a command (or the final answer when `command` is None)."""
        reasoning = self.s.randint(0, 6) * 64
        said = self.p.sentence() if command is not None else output
        out_tokens = reasoning + tokens(said) + (tokens(command) + 30 if command else 0)
        key = f"response:{len(self.truth.calls)}"
        use = self.cache.call(MODEL, self.blocks, Block(key, out_tokens))
        self._truth(t, use.input, use.cached, out_tokens)
        last = {
            "input_tokens": use.input,
            "cached_input_tokens": use.cached,
            "output_tokens": out_tokens,
            "reasoning_output_tokens": reasoning,
            "total_tokens": use.input + out_tokens,
        }
        end = t + self.s.randint(1_200, 5_000)
        self._line(
            end - 300,
            "response_item",
            {
                "type": "reasoning",
                "summary": [],
                "content": None,
                "encrypted_content": "gAAAAAB" + self.s.b62(self.s.randint(600, 2_400)),
            },
        )
        self._line(
            end - 200,
            "event_msg",
            {
                "type": "agent_message",
                "message": said,
                "phase": "commentary" if command else "final",
                "memory_citation": None,
            },
        )
        self._line(
            end - 199,
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": said}],
                "phase": "commentary" if command else "final",
            },
        )
        for k in self.total:
            self.total[k] += last[k]
        self.last = last
        self.blocks.append(Block(key, out_tokens))
        if command is None:
            self._counted(end)
            return end
        call_id = "call_" + self.s.b62(24)
        self._line(
            end - 100,
            "response_item",
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": json.dumps(
                    {"cmd": command, "workdir": CWD, "yield_time_ms": 1000, "max_output_tokens": 10000},
                    separators=(",", ":"),
                ),
                "call_id": call_id,
            },
        )
        ran = self.s.randint(40, 4_000)
        self._line(
            end + ran,
            "event_msg",
            {
                "type": "exec_command_end",
                "call_id": call_id,
                "process_id": str(self.s.randint(2_000, 60_000)),
                "turn_id": turn_id,
                "command": ["/bin/bash", "-lc", command],
                "cwd": CWD,
                "parsed_cmd": [{"type": "unknown", "cmd": command}],
                "source": "unified_exec_startup",
                "stdout": "",
                "stderr": "",
                "aggregated_output": output,
                "exit_code": 0,
                "duration": {"secs": ran // 1000, "nanos": ran % 1000 * 1_000_000},
                "formatted_output": "",
                "status": "completed",
            },
        )
        self._counted(end + ran + 1)
        body = (
            f"Command: /bin/bash -lc {command!r}\nChunk ID: {self.s.hex(6)}\nWall time: {ran / 1000:.4f} seconds\n"
            f"Process exited with code 0\nOriginal token count: {tokens(output)}\nOutput:\n{output}"
        )
        self._line(end + ran + 2, "response_item", {"type": "function_call_output", "call_id": call_id, "output": body})
        self.blocks.append(Block(f"output:{call_id}", tokens(body)))
        return end + ran + 2

    def _counted(self, ms: int) -> None:
        """The call's `token_count`: the rollout's only record of the call, so its time is the call's."""
        self._token_count(ms)
        self.truth.calls[-1].ts = iso(ms)

    def _truth(self, t: int, prompt: int, cached: int, output: int) -> None:
        tok = {"input": prompt - cached, "cache_read": cached, "cache_write": 0, "output": output}
        call = CallTruth(len(self.truth.calls), iso(t), "main", "", "", tok, model=MODEL)
        warm = self.warm
        if warm is None:
            call.kind, call.reason = "bootstrap", "first_call"
        else:
            expected = warm // OPENAI_BLOCK * OPENAI_BLOCK if warm >= OPENAI_MIN else 0
            call.expected_read = expected
            if expected - cached < OPENAI_BLOCK:
                call.kind, call.reason = "delta", "cache_hit"
            else:
                call.kind = "re-send"
                call.reason = "cache_miss" if cached == 0 else "prefix_rewritten"
                call.excess = max(0, min(prompt - cached, expected - cached))
        self.warm = prompt
        self.truth.calls.append(call)

    # ------------------------------------------------------------------ the story
    def run(self) -> AgentPlan:
        t = START_MS
        meta = {
            "id": self.sid,
            "timestamp": iso(t),
            "cwd": CWD,
            "originator": "codex-tui",
            "cli_version": CLI,
            "source": "cli",
            "model_provider": "openai",
            "base_instructions": {"text": "You are Codex, a coding agent. " + self.p.paragraph(70)},
            "git": {
                "commit_hash": self.s.hex(40),
                "branch": "main",
                "repository_url": "git@example.com:mika/fx-rates.git",
            },
        }
        self._line(t + 31_000, "session_meta", meta)  # written at the first message, half a minute after start
        t += 31_000
        self._token_count(t + 1_400)  # rate limits only
        t = self.turn(
            t,
            "The rates export drops quotes posted exactly at midnight UTC. Find the off-by-one and fix it with a test.",
            [
                ("rg -n 'midnight|day_start|end_of_day' src tests", self.p.grep(24, "src")),
                ("sed -n '1,220p' src/rates/export.py", self.p.python(9_800)),
                ("sed -n '1,160p' tests/test_export.py", self.p.python(6_300)),
                (
                    "apply_patch <<'EOF'\n*** Update File: src/rates/export.py\n-    if posted < end:\n"
                    "+    if posted <= end:\nEOF",
                    "Success. Updated the following files:\nM src/rates/export.py",
                ),
                ("python -m pytest -q tests/test_export.py", self.p.pytest_run(31, size=2_200)),
            ],
            "The export compared `posted < end_of_day`; entries at 00:00:00.000 of the next day fell out. Fixed to "
            "a half-open range on the next day's start, with a test at exactly midnight.",
            first=True,
        )
        t += 52_000
        self.cache.drop_newest(3)  # the provider evicted its newest entries: the next call reads an older prefix
        t = self.turn(
            t,
            "Run the whole suite and check the CSV header did not change.",
            [
                ("python -m pytest -q", self.p.pytest_run(212, size=7_400)),
                ("head -1 out/ledger-2026-08.csv", "entry_id,posted_at,account,amount,currency,memo"),
            ],
            "All 212 tests pass and the CSV header is unchanged.",
        )
        t += 25 * 60_000
        self.cache.drop_all()  # 25 minutes away: nothing of the conversation is cached any more
        self.turn(
            t,
            "Add a line about the fix to CHANGELOG.md.",
            [
                (
                    "apply_patch <<'EOF'\n*** Update File: CHANGELOG.md\n"
                    "+- Export: quotes posted at midnight UTC are kept.\nEOF",
                    "Success. Updated the following files:\nM CHANGELOG.md",
                ),
            ],
            "Added to CHANGELOG.md under Unreleased.",
        )
        return AgentPlan(AGENT, HOME, self.writes, [self.truth], start_delay=1.2)


def generate(seed: int = 7) -> AgentPlan:
    """The Codex part of the demo (deterministic for a seed)."""
    return CodexDemo(seed).run()
