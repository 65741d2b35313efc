"""A Claude Code project, written line by line as Claude Code 2.1 writes `~/.claude/projects`.

The shapes follow the real transcripts in `../shared/realdata/claude-code` (marot-spotter, 2.1.39, is the
model): every line carries the conversation envelope (`parentUuid`, `isSidechain`, `userType`, `cwd`,
`sessionId`, `version`, `gitBranch`, `slug`); one API call is streamed as one `assistant` line per content
block, all with the same `message.id` and `requestId`, the earlier lines with a partial `output_tokens`; tool
results come back as `user` lines with a `toolUseResult` (a Read carries the file twice, in the message and in
the result); hooks and long commands write `progress` lines; a turn ends with `stop_hook_summary` and
`turn_duration`; prompts write `file-history-snapshot` lines.

The story, one session and its resumed copy (agent time; the demo writer accelerates it):

1. a task: explore (an `Explore` sub-agent, written both to `<session>/subagents/agent-<id>.jsonl` and as
   `agent_progress` lines in the parent, as 2.1 does), read, edit, tests started in the background;
2. the turn ends; 5 s later a `<task-notification>` arrives and Claude Code re-renders an early message: the
   next call reads back only the system prompt, a prefix rewrite seconds after a healthy call;
3. the user is away 6 min 40 s; the next call finds the 5-minute cache expired and writes everything again;
4. `/compact`: an `agent-acompact-*` sub-agent reads the conversation from cache and writes the summary; a
   `compact_boundary`, the summary, and the first call after it rebuilds the prompt from the summary;
5. the session is resumed into a new session file (`claude --resume … --fork-session`): the history since the
   boundary (the chain Claude Code loads: the boundary has no `parentUuid`) is copied under the new
   `sessionId`, each line otherwise as it was (`uuid`, `parentUuid`, `message.id`, `requestId`, times); the
   first new call finds the copied prefix rendered differently and writes it again.

Usage on every call is what `core.demo.prompt_cache.AnthropicCache` decides from the prompt's content and the
time; the truths are this model's (see `core.demo.plan`). Nothing here reads the analysis.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.demo.plan import AgentPlan, CallTruth, SessionTruth, Write
from core.demo.prompt_cache import TTL_5M_MS, AnthropicCache, Block
from core.demo.prose import Prose
from core.demo.seeded import Seeded, iso, line

AGENT = "claude-code"
HOME = "claude"
CWD = "/home/mika/work/invoice-sync"
PROJECT = "projects/-home-mika-work-invoice-sync"
VERSION = "2.1.201"
MODEL = "claude-opus-4-6"
EXPLORE_MODEL = "claude-haiku-4-5-20251001"
START_MS = 1_786_094_021_208  # 2026-08-07T09:13:41.208Z, a minute after the senpi demo's first session began
#: the tool schemas and system prompt (not in the transcript, but in every prompt): the tools part is shared by
#: every Claude Code session of the account (another session had cached it a minute before this one started)
TOOLS_TOKENS = 11_442
SYSTEM_TOKENS = 9_970
EXPLORE_SYSTEM_TOKENS = 13_522
BYTES_PER_TOKEN = 3.6


def tokens(text: str) -> int:
    return max(1, round(len(text.encode("utf-8")) / BYTES_PER_TOKEN))


@dataclass
class _Thread:
    """One conversation the API sees: the main one, or a sub-agent's."""

    session: _Session
    path: str  # the file its lines go to, relative to the home
    key: str  # "main" or "agent:<id>"
    model: str
    system: list[Block]
    blocks: list[Block] = field(default_factory=list)
    agent_id: str | None = None
    parent: str | None = None  # the uuid the next line hangs from
    cached: int | None = None  # read + write of its previous call: what a warm cache reads back next
    last_call_ms: int | None = None
    pending: tuple[str, str] | None = None  # a verdict the story decided for the next call (compaction, resume)
    cause: str | None = None  # a rewrite the story made since the previous call
    progress_to: _Thread | None = None  # a sub-agent's parent: its lines are also streamed there as progress
    progress_tool: str | None = None
    progress_msg: str | None = None
    progress_prompt: str | None = None


@dataclass
class _Session:
    id: str
    path: str  # the session file, relative to the home
    slug: str
    truth: SessionTruth
    #: the message ids whose lines this file re-logs (a resumed copy): not calls of this session
    copied: set[str] = field(default_factory=set)


class ClaudeCodeDemo:
    def __init__(self, seed: int) -> None:
        self.s = Seeded(AGENT, seed)
        self.p = Prose(self.s)
        self.cache = AnthropicCache()
        self.writes: list[Write] = []
        self.sessions: list[_Session] = []
        self._written: dict[str, list[tuple[int, dict[str, Any]]]] = {}  # main-file lines, for the resume copy

    # ------------------------------------------------------------------ files
    def _emit(self, ms: int, path: str, obj: dict[str, Any]) -> None:
        self.writes.append(Write(ms, path, line(obj)))
        self._written.setdefault(path, []).append((ms, obj))

    def _envelope(self, th: _Thread, parent: str | None, kind: str, *, sidechain: bool | None = None) -> dict:
        side = th.agent_id is not None if sidechain is None else sidechain
        out: dict[str, Any] = {
            "parentUuid": parent,
            "isSidechain": side,
            "userType": "external",
            "cwd": CWD,
            "sessionId": th.session.id,
            "version": VERSION,
            "gitBranch": "main",
        }
        if th.agent_id is not None and sidechain is None:
            out["agentId"] = th.agent_id
        out["slug"] = th.session.slug
        out["type"] = kind
        return out

    # ------------------------------------------------------------------ lines of a thread
    def prompt(self, th: _Thread, ms: int, text: str, *, snapshot: bool = True) -> None:
        uuid = self.s.uuid4()
        if snapshot and th.agent_id is None:
            self._emit(
                ms - 3,
                th.path,
                {
                    "type": "file-history-snapshot",
                    "messageId": uuid,
                    "snapshot": {"messageId": uuid, "trackedFileBackups": {}, "timestamp": iso(ms - 3)},
                    "isSnapshotUpdate": False,
                },
            )
        obj = self._envelope(th, th.parent, "user")
        obj["message"] = {"role": "user", "content": text}
        obj |= {"uuid": uuid, "timestamp": iso(ms)}
        if th.agent_id is None:
            obj |= {"thinkingMetadata": {"maxThinkingTokens": 31999}, "todos": [], "permissionMode": "acceptEdits"}
        self._line(th, ms, obj)
        th.parent = uuid
        th.blocks.append(Block(f"user:{uuid}", tokens(text)))

    def _line(self, th: _Thread, ms: int, obj: dict[str, Any]) -> None:
        """A line of `th`; a sub-agent's is also streamed into its parent as an `agent_progress` line."""
        self._emit(ms, th.path, obj)
        parent = th.progress_to
        if parent is None:
            return
        inner = {k: obj[k] for k in ("type", "message", "uuid", "timestamp") if k in obj}
        if "requestId" in obj:
            inner["requestId"] = obj["requestId"]
        data = {
            "message": inner,
            "normalizedMessages": [],
            "type": "agent_progress",
            "prompt": th.progress_prompt,
            "agentId": th.agent_id,
        }
        prog = self._envelope(parent, parent.parent, "progress")
        prog |= {
            "data": data,
            "toolUseID": f"agent_{th.progress_msg}",
            "parentToolUseID": th.progress_tool,
            "uuid": self.s.uuid4(),
            "timestamp": iso(ms),
        }
        self._emit(ms, parent.path, prog)
        parent.parent = prog["uuid"]

    def call(
        self, th: _Thread, ms: int, parts: list[tuple[Any, ...]], output: int, *, stop: str | None = None
    ) -> tuple[list[str], int]:
        """One API call streamed as one line per content block. `parts`: ("thinking", text), ("text", text),
        ("tool_use", name, input). Returns the tool_use ids and the time of the call's last line."""
        use = self.cache.call(
            th.model,
            [*th.system, *th.blocks],
            ms,
            system_blocks=len(th.system),
            ttl_ms=TTL_5M_MS,
            uncached=self.s.choice((1, 1, 3, 3, 5, 8)),
        )
        msg_id, request_id = "msg_01" + self.s.b62(22), "req_011C" + self.s.b58(20)
        self._truth(th, ms, use, msg_id, output)
        ids: list[str] = []
        t = ms
        for n, part in enumerate(parts):
            last = n == len(parts) - 1
            if part[0] == "thinking":
                block: dict[str, Any] = {"type": "thinking", "thinking": part[1], "signature": self.s.signature()}
            elif part[0] == "text":
                block = {"type": "text", "text": part[1]}
            else:
                tool_id = "toolu_01" + self.s.b62(22)
                ids.append(tool_id)
                block = {
                    "type": "tool_use",
                    "id": tool_id,
                    "name": part[1],
                    "input": part[2],
                    "caller": {"type": "direct"},
                }
            usage = {
                "input_tokens": use.input,
                "cache_creation_input_tokens": use.cache_write,
                "cache_read_input_tokens": use.cache_read,
                "cache_creation": {"ephemeral_5m_input_tokens": use.cache_write, "ephemeral_1h_input_tokens": 0},
                "output_tokens": output if last else self.s.randint(1, 12),
                "service_tier": "standard",
                "inference_geo": "global",
            }
            message = {
                "model": th.model,
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": stop if last else None,
                "stop_sequence": None,
                "usage": usage,
            }
            obj = self._envelope(th, th.parent, "assistant")
            del obj["type"]
            obj |= {
                "message": message,
                "requestId": request_id,
                "type": "assistant",
                "uuid": self.s.uuid4(),
                "timestamp": iso(t),
            }
            self._line(th, t, obj)
            th.parent = obj["uuid"]
            t += self.s.randint(350, 1400) if not last else 0
        th.blocks.append(Block(f"assistant:{msg_id}", output))
        th.last_call_ms = ms
        th.cached = use.cache_read + use.cache_write
        return ids, t

    def _truth(self, th: _Thread, ms: int, use: Any, msg_id: str, output: int) -> None:
        tok = {"input": use.input, "cache_read": use.cache_read, "cache_write": use.cache_write, "output": output}
        call = CallTruth(0, iso(ms), th.key, "", "", tok, model=th.model, entry_id=msg_id, ttl_ms=TTL_5M_MS)
        warm = th.cached
        if th.pending is not None:
            call.kind, call.reason = th.pending
            if call.kind == "re-send":  # a resume: what the copied history's warm cache held
                call.expected_read = warm
                call.excess = max(0, min(use.cache_write + use.input, (warm or 0) - use.cache_read))
        elif warm is None:
            call.kind, call.reason = "bootstrap", "first_call"
        else:
            call.expected_read = warm
            if use.cache_read >= warm:
                call.kind, call.reason = "delta", "cache_hit"
            else:
                gap = ms - (th.last_call_ms or ms)
                cause = "cache_expired" if gap >= TTL_5M_MS else th.cause
                if cause is None:
                    raise AssertionError(
                        f"{msg_id}: the cache read {use.cache_read} < {warm} with no cause in the story"
                    )
                call.kind, call.reason = "re-send", cause
                call.excess = max(0, min(use.cache_write + use.input, warm - use.cache_read))
        th.pending = th.cause = None
        th.session.truth.calls.append(call)

    def result(self, th: _Thread, ms: int, tool_id: str, text: str, result: Any, *, error: bool = False) -> None:
        obj = self._envelope(th, th.parent, "user")
        obj["message"] = {
            "role": "user",
            "content": [{"tool_use_id": tool_id, "type": "tool_result", "content": text, "is_error": error}],
        }
        obj |= {
            "uuid": self.s.uuid4(),
            "timestamp": iso(ms),
            "toolUseResult": result,
            "sourceToolAssistantUUID": th.parent,
        }
        self._line(th, ms, obj)
        th.parent = obj["uuid"]
        th.blocks.append(Block(f"result:{tool_id}", tokens(text)))

    def hooks(self, th: _Thread, ms: int, event: str, tool: str, tool_id: str, commands: tuple[str, ...]) -> None:
        for i, command in enumerate(commands):
            obj = self._envelope(th, th.parent, "progress")
            obj |= {
                "data": {
                    "type": "hook_progress",
                    "hookEvent": event,
                    "hookName": f"{event}:{tool}",
                    "command": command,
                },
                "parentToolUseID": tool_id,
                "toolUseID": tool_id,
                "timestamp": iso(ms + i),
                "uuid": self.s.uuid4(),
            }
            self._emit(ms + i, th.path, obj)

    def bash_progress(self, th: _Thread, ms: int, tool_id: str, output: str, steps: int, every_ms: int) -> None:
        rows = output.split("\n")
        for step in range(1, steps + 1):
            shown = "\n".join(rows[: max(1, len(rows) * step // (steps + 1))])
            obj = self._envelope(th, th.parent, "progress")
            obj |= {
                "data": {
                    "type": "bash_progress",
                    "output": shown[-400:],
                    "fullOutput": shown,
                    "elapsedTimeSeconds": step * every_ms // 1000,
                    "totalLines": shown.count("\n") + 1,
                    "timeoutMs": 120000,
                },
                "toolUseID": f"bash-progress-{step - 1}",
                "parentToolUseID": tool_id,
                "uuid": self.s.uuid4(),
                "timestamp": iso(ms + step * every_ms),
            }
            self._emit(ms + step * every_ms, th.path, obj)

    def end_turn(self, th: _Thread, ms: int, started: int) -> None:
        hooks = [{"command": "~/.claude/hooks/notify.sh stop"}, {"command": "ruff check --quiet ."}]
        obj = self._envelope(th, th.parent, "system")
        obj |= {
            "subtype": "stop_hook_summary",
            "hookCount": len(hooks),
            "hookInfos": hooks,
            "hookErrors": [],
            "preventedContinuation": False,
            "stopReason": "",
            "hasOutput": False,
            "level": "suggestion",
            "timestamp": iso(ms),
            "uuid": self.s.uuid4(),
            "toolUseID": self.s.uuid4(),
        }
        self._emit(ms, th.path, obj)
        th.parent = obj["uuid"]
        obj = self._envelope(th, th.parent, "system")
        obj |= {
            "subtype": "turn_duration",
            "durationMs": ms - started,
            "timestamp": iso(ms + 40),
            "uuid": self.s.uuid4(),
            "isMeta": False,
        }
        self._emit(ms + 40, th.path, obj)
        th.parent = obj["uuid"]

    # ------------------------------------------------------------------ tools
    def read(self, th: _Thread, ms: int, tool_id: str, path: str, size: int) -> int:
        content = self.p.python(size)
        numbered = self.p.numbered(content)
        n = content.count("\n") + 1
        result = {
            "type": "text",
            "file": {"filePath": path, "content": content, "numLines": n, "startLine": 1, "totalLines": n},
        }
        self.hooks(th, ms, "PreToolUse", "Read", tool_id, ("~/.claude/hooks/guard.sh",))
        self.result(th, ms + 60, tool_id, numbered, result)
        return ms + 60

    def edit(self, th: _Thread, ms: int, tool_id: str, path: str, old: str, new: str) -> int:
        original = self.p.python(self.s.randint(3000, 9000))
        result = {
            "filePath": path,
            "oldString": old,
            "newString": new,
            "originalFile": original,
            "structuredPatch": [
                {
                    "oldStart": 41,
                    "oldLines": old.count("\n") + 1,
                    "newStart": 41,
                    "newLines": new.count("\n") + 1,
                    "lines": [f"-{x}" for x in old.split("\n")] + [f"+{x}" for x in new.split("\n")],
                }
            ],
            "userModified": False,
            "replaceAll": False,
        }
        self.hooks(th, ms, "PreToolUse", "Edit", tool_id, ("~/.claude/hooks/guard.sh",))
        self.result(th, ms + 150, tool_id, f"The file {path} has been updated successfully.", result)
        self.hooks(th, ms + 160, "PostToolUse", "Edit", tool_id, ("ruff format --quiet", "ruff check --fix --quiet"))
        return ms + 900

    def bash(self, th: _Thread, ms: int, tool_id: str, output: str, run_ms: int, *, progress: bool = False) -> int:
        self.hooks(th, ms, "PreToolUse", "Bash", tool_id, ("~/.claude/hooks/guard.sh",))
        if progress:
            self.bash_progress(th, ms, tool_id, output, steps=max(1, run_ms // 1000 - 1), every_ms=1000)
        result = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}
        self.result(th, ms + run_ms, tool_id, output, result)
        return ms + run_ms

    # ------------------------------------------------------------------ the story
    def run(self) -> AgentPlan:
        main = self._session(START_MS)
        self.cache.call(MODEL, main.system[:1], START_MS - 61_000, system_blocks=1)  # another session's call
        t = self._turn_one(main, START_MS)
        t = self._notification(main, t + 5_000)
        t = self._turn_two(main, t + 400_000)  # 6 min 40 s away: the 5-minute cache is gone
        t = self._compact(main, t + 95_000)
        t = self._turn_four(main, t + 30_000)
        self._resume(main, t + 180_000)
        truths = []
        for session in self.sessions:
            truth = session.truth
            truth.calls.sort(key=lambda c: c.ts)
            for i, call in enumerate(truth.calls):
                call.index = i
            truths.append(truth)
        self.writes.sort(key=lambda w: w.ms)  # (stable: a file's lines keep their order at equal times)
        return AgentPlan(AGENT, HOME, self.writes, truths, start_delay=0.4)

    def _session(self, ms: int, session_id: str | None = None) -> _Thread:
        sid = session_id or self.s.uuid4()
        path = f"{PROJECT}/{sid}.jsonl"
        truth = SessionTruth(AGENT, sid, f"{HOME}/{path}", CWD)
        session = _Session(sid, path, "quiet-amber-harbor", truth)
        self.sessions.append(session)
        system = [Block(f"tools:{VERSION}", TOOLS_TOKENS), Block(f"system:{CWD}", SYSTEM_TOKENS)]
        return _Thread(session, path, "main", MODEL, system)

    def _sub(self, parent: _Thread, name: str, model: str, system: list[Block]) -> _Thread:
        aid = name
        path = f"{parent.session.path[: -len('.jsonl')]}/subagents/agent-{aid}.jsonl"
        return _Thread(parent.session, path, f"agent:{aid}", model, system, agent_id=aid)

    def _turn_one(self, main: _Thread, t: int) -> int:
        started = t
        self.hooks(main, t - 2_000, "SessionStart", "startup", self.s.uuid4(), ("~/.claude/hooks/notify.sh clear",))
        self.prompt(
            main,
            t,
            "The invoice sync job gives up after the first 502 from the billing API. Add retries "
            "with exponential backoff (base 0.5 s, factor 2, jitter) to the billing client, make the job "
            "use them, and cover it with tests.",
        )
        (grep,), t = self.call(
            main,
            t + 3_100,
            [
                ("thinking", self.p.paragraph(3)),
                ("text", "Let me look at how the billing client and the sync job talk to each other."),
                (
                    "tool_use",
                    "Grep",
                    {"pattern": "class BillingClient|def sync_invoices", "path": CWD, "output_mode": "content"},
                ),
            ],
            212,
            stop="tool_use",
        )
        grep_out = self.p.grep(9, CWD)
        t = self.bash(main, t + 300, grep, grep_out, 180)
        (task,), t = self.call(
            main,
            t + 4_200,
            [
                ("text", "I'll have an Explore agent map the error handling while I read the job."),
                (
                    "tool_use",
                    "Task",
                    {
                        "subagent_type": "Explore",
                        "description": "Map billing client error handling",
                        "prompt": EXPLORE_PROMPT,
                    },
                ),
            ],
            187,
            stop="tool_use",
        )
        t = self._explore(main, t + 600, task)
        (read1, read2), t = self.call(
            main,
            t + 3_800,
            [
                ("thinking", self.p.paragraph(4)),
                ("tool_use", "Read", {"file_path": f"{CWD}/sync/job.py"}),
                ("tool_use", "Read", {"file_path": f"{CWD}/billing/client.py"}),
            ],
            341,
            stop="tool_use",
        )
        t = self.read(main, t + 200, read1, f"{CWD}/sync/job.py", 16_800)
        t = self.read(main, t + 100, read2, f"{CWD}/billing/client.py", 13_900)
        (edit1,), t = self.call(
            main,
            t + 6_400,
            [
                ("text", "The client raises on any non-2xx. I'll add a retry policy to it."),
                (
                    "tool_use",
                    "Edit",
                    {
                        "file_path": f"{CWD}/billing/client.py",
                        "old_string": RETRY_OLD,
                        "new_string": RETRY_NEW,
                        "replace_all": False,
                    },
                ),
            ],
            1_204,
            stop="tool_use",
        )
        t = self.edit(main, t + 200, edit1, f"{CWD}/billing/client.py", RETRY_OLD, RETRY_NEW)
        (edit2,), t = self.call(
            main,
            t + 4_900,
            [
                (
                    "tool_use",
                    "Edit",
                    {
                        "file_path": f"{CWD}/sync/job.py",
                        "old_string": JOB_OLD,
                        "new_string": JOB_NEW,
                        "replace_all": False,
                    },
                )
            ],
            433,
            stop="tool_use",
        )
        t = self.edit(main, t + 200, edit2, f"{CWD}/sync/job.py", JOB_OLD, JOB_NEW)
        (bg,), t = self.call(
            main,
            t + 3_700,
            [
                ("text", "Now the tests, in the background: the suite takes a while."),
                (
                    "tool_use",
                    "Bash",
                    {"command": "pytest -q tests/", "description": "Run the test suite", "run_in_background": True},
                ),
            ],
            118,
            stop="tool_use",
        )
        self.hooks(main, t + 100, "PreToolUse", "Bash", bg, ("~/.claude/hooks/guard.sh",))
        self.result(
            main,
            t + 400,
            bg,
            f"Command running in background with ID: {BG_TASK}. Output is being written to:"
            f" /tmp/claude-1000/-home-mika-work-invoice-sync/tasks/{BG_TASK}.output",
            {"stdout": "", "stderr": "", "interrupted": False, "isImage": False, "backgroundTaskId": BG_TASK},
        )
        (_,), t = self.call(
            main,
            t + 4_300,
            [
                (
                    "text",
                    "While the suite runs: the retry policy is in "
                    "`billing/client.py`, the job passes its own deadline. I'll report when the tests finish.",
                ),
                (
                    "tool_use",
                    "TodoWrite",
                    {
                        "todos": [
                            {
                                "content": "Retry with backoff in BillingClient",
                                "status": "completed",
                                "activeForm": "Adding retries",
                            },
                            {"content": "Run the suite", "status": "in_progress", "activeForm": "Running the suite"},
                        ]
                    },
                ),
            ],
            265,
            stop="tool_use",
        )
        self.result(main, t + 50, _, "Todos have been modified successfully.", {"oldTodos": [], "newTodos": []})
        _ids, t = self.call(
            main,
            t + 3_900,
            [("text", "The tests are running in the background; I'll check the result as soon as they finish.")],
            41,
            stop="end_turn",
        )
        self.end_turn(main, t + 300, started)
        return t + 400

    def _explore(self, main: _Thread, t: int, task: str) -> int:
        sub = self._sub(main, self.s.hex(7), EXPLORE_MODEL, [Block("system:explore", EXPLORE_SYSTEM_TOKENS)])
        sub.progress_to, sub.progress_tool, sub.progress_prompt = main, task, EXPLORE_PROMPT
        sub.progress_msg = main.blocks[-1].key.split(":", 1)[1]
        started = t
        self.prompt(sub, t, EXPLORE_PROMPT, snapshot=False)
        t += 200
        for n in range(5):
            path = f"{CWD}/{self.p.ident().replace('_', '/')}.py"
            tool = ("Glob", {"pattern": "**/*.py"}) if n == 0 else ("Read", {"file_path": path})
            (tid,), t = self.call(
                sub, t + self.s.randint(900, 2_400), [("tool_use", *tool)], self.s.randint(60, 140), stop="tool_use"
            )
            if n == 0:
                t = self.bash(sub, t + 50, tid, self.p.listing(40), 120)
            else:
                t = self.read(sub, t + 50, tid, path, self.s.randint(5_000, 12_000))
        report = "## Billing client error handling\n\n" + "\n".join(
            f"- `{self.p.ident()}` {self.p.sentence()}" for _ in range(24)
        )
        _ids, t = self.call(sub, t + 2_600, [("text", report)], tokens(report) + 40, stop="end_turn")
        total = sum(b.tokens for b in sub.blocks) + EXPLORE_SYSTEM_TOKENS
        result = {
            "status": "completed",
            "prompt": EXPLORE_PROMPT,
            "agentId": sub.agent_id,
            "content": [{"type": "text", "text": report}],
            "totalDurationMs": t - started,
            "totalTokens": total,
            "totalToolUseCount": 5,
        }
        self.result(main, t + 150, task, report, result)
        return t + 150

    def _notification(self, main: _Thread, t: int) -> int:
        """Claude Code re-renders the first message of the conversation once a background task reports back
        (its `<system-reminder>` lists the running tasks): everything after the system prompt is new to the cache."""
        started = t
        note = (
            f"<task-notification>\n<task-id>{BG_TASK}</task-id>\n<output-file>/tmp/claude-1000/-home-mika-work-"
            f"invoice-sync/tasks/{BG_TASK}.output</output-file>\n<status>completed</status>\n<summary>Background "
            f'command "Run the test suite" completed (exit code 1)</summary>\n</task-notification>\nRead the output '
            f"file to retrieve the result: /tmp/claude-1000/-home-mika-work-invoice-sync/tasks/{BG_TASK}.output"
        )
        self._emit(
            t - 1,
            main.path,
            {
                "type": "queue-operation",
                "operation": "enqueue",
                "timestamp": iso(t - 1),
                "sessionId": main.session.id,
                "content": note,
            },
        )
        self._emit(
            t,
            main.path,
            {"type": "queue-operation", "operation": "dequeue", "timestamp": iso(t), "sessionId": main.session.id},
        )
        first = main.blocks[0]
        main.blocks[0] = Block(first.key + "+tasks-reminder", first.tokens + 38)
        main.cause = "prefix_rewritten"
        self.prompt(main, t + 30, note, snapshot=False)
        (out,), t = self.call(
            main,
            t + 4_640,
            [("tool_use", "TaskOutput", {"task_id": BG_TASK, "block": True, "timeout": 180000})],
            96,
            stop="tool_use",
        )
        failing = self.p.pytest_run(61, failed=1, size=5_200)
        self.result(
            main,
            t + 80,
            out,
            f"<retrieval_status>success</retrieval_status>\n\n<task_id>{BG_TASK}</task_id>"
            f"\n\n<status>completed</status>\n\n<exit_code>1</exit_code>\n\n<output>\n{failing}\n</output>",
            {
                "retrieval_status": "success",
                "task": {
                    "task_id": BG_TASK,
                    "task_type": "local_bash",
                    "status": "completed",
                    "description": "Run the test suite",
                    "output": failing,
                    "exitCode": 1,
                },
            },
        )
        (fix,), t = self.call(
            main,
            t + 5_300,
            [
                ("thinking", self.p.paragraph(3)),
                (
                    "text",
                    "One test expects the job "
                    "to give up after the deadline, not after the attempts; fixing the order of the checks.",
                ),
                (
                    "tool_use",
                    "Edit",
                    {
                        "file_path": f"{CWD}/billing/client.py",
                        "old_string": DEADLINE_OLD,
                        "new_string": DEADLINE_NEW,
                        "replace_all": False,
                    },
                ),
            ],
            402,
            stop="tool_use",
        )
        t = self.edit(main, t + 200, fix, f"{CWD}/billing/client.py", DEADLINE_OLD, DEADLINE_NEW)
        (run,), t = self.call(
            main,
            t + 3_400,
            [("tool_use", "Bash", {"command": "pytest -q tests/", "description": "Run the test suite"})],
            77,
            stop="tool_use",
        )
        t = self.bash(main, t + 200, run, self.p.pytest_run(62, size=4_800), 6_000, progress=True)
        _ids, t = self.call(
            main,
            t + 4_100,
            [
                (
                    "text",
                    "All 62 tests pass. `BillingClient` now retries 502/503/504 and "
                    "connection resets with exponential backoff and jitter, up to the job's deadline.",
                )
            ],
            58,
            stop="end_turn",
        )
        self.end_turn(main, t + 300, started)
        return t + 400

    def _turn_two(self, main: _Thread, t: int) -> int:
        started = t
        self.prompt(
            main, t, "Also log each retry with the attempt number and the delay, and cap the total wait at 60 s."
        )
        (read,), t = self.call(
            main,
            t + 4_900,
            [("thinking", self.p.paragraph(2)), ("tool_use", "Read", {"file_path": f"{CWD}/billing/retry.py"})],
            143,
            stop="tool_use",
        )
        t = self.read(main, t + 100, read, f"{CWD}/billing/retry.py", 7_400)
        for _ in range(3):
            (edit,), t = self.call(
                main,
                t + self.s.randint(3_000, 6_000),
                [
                    (
                        "tool_use",
                        "Edit",
                        {
                            "file_path": f"{CWD}/billing/retry.py",
                            "old_string": LOG_OLD,
                            "new_string": LOG_NEW,
                            "replace_all": False,
                        },
                    )
                ],
                self.s.randint(180, 600),
                stop="tool_use",
            )
            t = self.edit(main, t + 200, edit, f"{CWD}/billing/retry.py", LOG_OLD, LOG_NEW)
        (run,), t = self.call(
            main,
            t + 3_100,
            [("tool_use", "Bash", {"command": "pytest -q tests/test_retry.py", "description": "Run the retry tests"})],
            69,
            stop="tool_use",
        )
        t = self.bash(main, t + 200, run, self.p.pytest_run(14, size=2_400), 3_000, progress=True)
        _ids, t = self.call(
            main,
            t + 3_800,
            [("text", "Each retry now logs `attempt`, `delay_s` and `waited_s`; the total wait is capped at 60 s.")],
            37,
            stop="end_turn",
        )
        self.end_turn(main, t + 300, started)
        return t + 400

    def _compact(self, main: _Thread, t: int) -> int:
        """A manual `/compact`: the summary is written by an `acompact` sub-agent over the cached conversation."""
        command = (
            "<command-name>/compact</command-name>\n<command-message>compact</command-message>\n"
            "<command-args></command-args>"
        )
        uuid = self.s.uuid4()
        obj = self._envelope(main, main.parent, "user")
        obj["message"] = {"role": "user", "content": command}
        obj |= {"uuid": uuid, "timestamp": iso(t)}
        self._emit(t, main.path, obj)
        main.parent = uuid
        sub = _Thread(
            main.session,
            f"{main.session.path[: -len('.jsonl')]}/subagents/agent-acompact-{self.s.hex(6)}.jsonl",
            "",
            MODEL,
            main.system,
            list(main.blocks),
        )
        sub.agent_id = "acompact-" + sub.path.rsplit("acompact-", 1)[1][: -len(".jsonl")]
        sub.key = f"agent:{sub.agent_id}"
        sub.parent = None
        self.prompt(sub, t + 200, COMPACT_PROMPT, snapshot=False)
        summary = (
            "Analysis:\n"
            + self.p.paragraph(14)
            + "\n\nSummary:\n"
            + "\n".join(f"{i}. {self.p.sentence()}" for i in range(1, 40))
        )
        _ids, end = self.call(sub, t + 400, [("text", summary)], tokens(summary) + 60, stop="end_turn")
        pre = sum(b.tokens for b in main.system) + sum(b.tokens for b in main.blocks)
        boundary = self._envelope(main, None, "system")
        boundary["logicalParentUuid"] = main.parent
        boundary = (
            {k: boundary[k] for k in ("parentUuid",)}
            | {"logicalParentUuid": main.parent}
            | {k: v for k, v in boundary.items() if k not in ("parentUuid", "logicalParentUuid")}
        )
        boundary |= {
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "isMeta": False,
            "timestamp": iso(end + 420),
            "uuid": self.s.uuid4(),
            "level": "info",
            "compactMetadata": {"trigger": "manual", "preTokens": pre},
        }
        self._emit(end + 420, main.path, boundary)
        main.parent = boundary["uuid"]
        text = (
            "This session is being continued from a previous conversation that ran out of context. The summary "
            "below covers the earlier portion of the conversation.\n\n" + summary
        )
        obj = self._envelope(main, main.parent, "user")
        obj["message"] = {"role": "user", "content": text}
        obj |= {
            "isVisibleInTranscriptOnly": True,
            "isCompactSummary": True,
            "uuid": self.s.uuid4(),
            "timestamp": iso(end + 421),
        }
        self._emit(end + 421, main.path, obj)
        main.parent = obj["uuid"]
        main.blocks = [Block(f"summary:{obj['uuid']}", tokens(text))]
        main.pending = ("compaction", "compact_boundary")
        stdout = self._envelope(main, main.parent, "user")
        stdout["message"] = {"role": "user", "content": "<local-command-stdout>Compacted </local-command-stdout>"}
        stdout |= {"uuid": self.s.uuid4(), "timestamp": iso(end + 470)}
        self._emit(end + 470, main.path, stdout)
        main.parent = stdout["uuid"]
        return end + 470

    def _turn_four(self, main: _Thread, t: int) -> int:
        started = t
        self.prompt(main, t, "Now add a --dry-run flag to the sync CLI: fetch and build everything, send nothing.")
        (read,), t = self.call(
            main,
            t + 5_200,
            [("thinking", self.p.paragraph(2)), ("tool_use", "Read", {"file_path": f"{CWD}/sync/cli.py"})],
            151,
            stop="tool_use",
        )
        t = self.read(main, t + 100, read, f"{CWD}/sync/cli.py", 6_100)
        for old, new in ((CLI_OLD, CLI_NEW), (JOB_OLD, DRY_NEW)):
            (edit,), t = self.call(
                main,
                t + self.s.randint(3_500, 5_500),
                [
                    (
                        "tool_use",
                        "Edit",
                        {"file_path": f"{CWD}/sync/cli.py", "old_string": old, "new_string": new, "replace_all": False},
                    )
                ],
                self.s.randint(200, 500),
                stop="tool_use",
            )
            t = self.edit(main, t + 200, edit, f"{CWD}/sync/cli.py", old, new)
        (run,), t = self.call(
            main,
            t + 3_000,
            [("tool_use", "Bash", {"command": "pytest -q tests/", "description": "Run the test suite"})],
            71,
            stop="tool_use",
        )
        t = self.bash(main, t + 200, run, self.p.pytest_run(65, size=5_000), 6_000, progress=True)
        _ids, t = self.call(
            main,
            t + 3_500,
            [
                (
                    "text",
                    "`invoice-sync --dry-run` builds every request and logs it instead of sending it. 65 tests pass.",
                )
            ],
            33,
            stop="end_turn",
        )
        self.end_turn(main, t + 300, started)
        return t + 400

    def _resume(self, old: _Thread, t: int) -> None:
        """`claude --resume <id> --fork-session`: a new session file that starts with the copied history."""
        new = self._session(t)
        session = new.session
        copies = self._written[old.path]
        start = next(i for i, (_ms, o) in enumerate(copies) if o.get("subtype") == "compact_boundary")
        parent = None
        for offset, (_ms, obj) in enumerate(copies[start:]):
            if obj.get("type") not in ("user", "assistant", "system"):
                continue
            copy = dict(obj)  # the line as it was (uuid, parentUuid, message id, requestId, time), under the new id
            copy["sessionId"] = session.id
            self._emit(t + offset // 8, new.path, copy)
            parent = obj["uuid"]
            msg = obj.get("message")
            if obj.get("type") == "assistant" and isinstance(msg, dict):
                if msg["id"] not in session.copied:
                    session.truth.copied.append(msg["id"])
                session.copied.add(msg["id"])
        new.parent = parent
        # the copied history as the API sees it, except that Claude Code renders the summary message again on
        # resume (a fresh session-start reminder in it): the cache holds the old rendering
        new.blocks = [Block(b.key + "+resumed", b.tokens + 45) if i == 0 else b for i, b in enumerate(old.blocks)]
        new.cached = old.cached
        new.last_call_ms = old.last_call_ms
        new.pending = ("re-send", "resume")
        started = t + 2_000
        self.prompt(new, started, "One more thing: in dry-run mode print the invoices it would send, one per line.")
        (read,), t = self.call(
            new,
            started + 4_400,
            [("thinking", self.p.paragraph(2)), ("tool_use", "Read", {"file_path": f"{CWD}/sync/cli.py"})],
            122,
            stop="tool_use",
        )
        t = self.read(new, t + 100, read, f"{CWD}/sync/cli.py", 6_400)
        (edit,), t = self.call(
            new,
            t + 4_100,
            [
                (
                    "tool_use",
                    "Edit",
                    {
                        "file_path": f"{CWD}/sync/cli.py",
                        "old_string": DRY_NEW,
                        "new_string": PRINT_NEW,
                        "replace_all": False,
                    },
                )
            ],
            288,
            stop="tool_use",
        )
        t = self.edit(new, t + 200, edit, f"{CWD}/sync/cli.py", DRY_NEW, PRINT_NEW)
        _ids, t = self.call(
            new,
            t + 3_600,
            [("text", "Dry runs now print `invoice_id  tenant  amount` for each invoice they would send.")],
            29,
            stop="end_turn",
        )
        self.end_turn(new, t + 300, started)


BG_TASK = "b3f81c2"
EXPLORE_PROMPT = (
    "Find where the billing client handles HTTP errors and timeouts and where the invoice sync job "
    "calls it. Report file paths, line numbers and which errors are retried today (if any)."
)
COMPACT_PROMPT = (
    "Your task is to create a detailed summary of the conversation so far, paying close attention to "
    "the user's explicit requests and your previous actions."
)
RETRY_OLD = "        response = self._session.send(request)\n        response.raise_for_status()"
RETRY_NEW = (
    "        for attempt in self.retry.attempts(deadline):\n            response = self._session.send(request)\n"
    "            if response.status_code not in RETRYABLE:\n                break\n"
    "            attempt.wait()\n        response.raise_for_status()"
)
JOB_OLD = "    client.post_invoices(batch)"
JOB_NEW = "    client.post_invoices(batch, deadline=job.deadline)"
DEADLINE_OLD = "            attempt.wait()"
DEADLINE_NEW = "            if attempt.past(deadline):\n                break\n            attempt.wait()"
LOG_OLD = "    def wait(self) -> None:"
LOG_NEW = "    def wait(self) -> None:\n        log.info('retry', extra={'attempt': self.n, 'delay_s': self.delay})"
CLI_OLD = "    parser.add_argument('--tenant')"
CLI_NEW = "    parser.add_argument('--tenant')\n    parser.add_argument('--dry-run', action='store_true')"
DRY_NEW = "    client.post_invoices(batch, deadline=job.deadline, dry_run=args.dry_run)"
PRINT_NEW = DRY_NEW + "\n    if args.dry_run:\n        print_batch(batch)"


def generate(seed: int = 7) -> AgentPlan:
    """The Claude Code part of the demo (deterministic for a seed)."""
    return ClaudeCodeDemo(seed).run()
