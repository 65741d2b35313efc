"""A pi session (`$PI_CODING_AGENT_DIR/sessions/--<cwd>--/<time>_<uuid>.jsonl`), written as pi 0.x writes it (v3).

The shapes follow `../shared/reference/other-agents.md` §A and the real files in `../shared/realdata/pi`: a
`session` header (version 3, a version-4 UUID); `message` entries with an 8-hex `id` and the `parentId` chain;
a message's own `timestamp` (ms) is when the request started, the entry's (ISO) when it ended; nothing reaches
disk before the first assistant message (the header, the model and thinking-level entries and the first prompt
are written at once with it); only final messages are written (no streaming partials); every assistant message
carries `usage` with pi's `cost` in dollars (Anthropic's list prices for the model).

The story (agent time): a task with reads, a bash run and edits; the user raises the thinking level
(`thinking_level_change`: Anthropic drops the message breakpoints, the next call reads back only the system
prompt, a prefix rewrite); later the user is away 7 minutes and the next call finds the 5-minute cache expired.
Usage is what `core.demo.prompt_cache.AnthropicCache` decides; the truths are its, not the analysis's.
"""

from __future__ import annotations

from typing import Any

from core.demo.plan import AgentPlan, CallTruth, SessionTruth, Write
from core.demo.prompt_cache import TTL_5M_MS, AnthropicCache, Block
from core.demo.prose import Prose
from core.demo.seeded import Seeded, file_stamp, iso, line

AGENT = "pi"
HOME = "pi"
CWD = "/home/mika/work/tile-server"
MODEL = "claude-sonnet-4-5"
START_MS = 1_786_094_100_517  # 2026-08-07T09:15:00.517Z
SYSTEM_TOKENS = 2_774  # pi's system prompt and its four tools: the real first calls read 2,775 input tokens
BYTES_PER_TOKEN = 3.6
#: Anthropic's list prices for claude-sonnet-4-5, $ per million tokens (what pi's models table holds)
PRICE = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}


def tokens(text: str) -> int:
    return max(1, round(len(text.encode("utf-8")) / BYTES_PER_TOKEN))


class PiDemo:
    def __init__(self, seed: int) -> None:
        self.s = Seeded(AGENT, seed)
        self.p = Prose(self.s)
        self.cache = AnthropicCache()
        self.writes: list[Write] = []
        self.buffer: list[bytes] | None = []  # entries held until the first assistant message (pi's rule)
        self.sid = self.s.uuid4()
        self.path = f"sessions/--{CWD.strip('/').replace('/', '-')}--/{file_stamp(START_MS)}_{self.sid}.jsonl"
        self.truth = SessionTruth(AGENT, self.sid, f"{HOME}/{self.path}", CWD)
        self.system = [Block("pi-system", SYSTEM_TOKENS)]
        self.blocks: list[Block] = []
        self.parent: str | None = None
        self.thinking = "medium"
        self.cached: int | None = None
        self.last_ms: int | None = None
        self.cause: str | None = None

    # ------------------------------------------------------------------ entries
    def _entry(self, ms: int, obj: dict[str, Any]) -> None:
        eid = self.s.hex(8)
        out = {"type": obj.pop("type"), "id": eid, "parentId": self.parent, "timestamp": iso(ms), **obj}
        self.parent = eid
        data = line(out)
        if self.buffer is not None:
            self.buffer.append(data)
            if out["type"] == "message" and out["message"]["role"] == "assistant":
                self.writes.append(Write(ms, self.path, b"".join(self.buffer)))
                self.buffer = None
        else:
            self.writes.append(Write(ms, self.path, data))

    def user(self, ms: int, text: str) -> None:
        self._entry(
            ms,
            {
                "type": "message",
                "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ms - 6},
            },
        )
        self.blocks.append(Block(f"user:{self.parent}", tokens(text)))

    def call(self, start: int, parts: list[tuple[Any, ...]], output: int, stop: str, latency: int) -> list[str]:
        """One request started at `start`, written when it ended (`start + latency`)."""
        use = self.cache.call(
            MODEL,
            [*self.system, *self.blocks],
            start,
            system_blocks=1,
            ttl_ms=TTL_5M_MS,
            uncached=self.s.choice((1, 2, 3, 5, 8, 10)),
        )
        usage: dict[str, Any] = {
            "input": use.input,
            "output": output,
            "cacheRead": use.cache_read,
            "cacheWrite": use.cache_write,
        }
        usage["totalTokens"] = sum(usage.values())
        cost = {k: usage[k] * PRICE[k] / 1e6 for k in ("input", "output", "cacheRead", "cacheWrite")}
        cost["total"] = sum(cost.values())
        usage["cost"] = cost
        content: list[dict[str, Any]] = []
        ids: list[str] = []
        for part in parts:
            if part[0] == "thinking":
                content.append({"type": "thinking", "thinking": part[1], "thinkingSignature": self.s.signature()})
            elif part[0] == "text":
                content.append({"type": "text", "text": part[1]})
            else:
                ids.append("toolu_01" + self.s.b62(22))
                content.append({"type": "toolCall", "id": ids[-1], "name": part[1], "arguments": part[2]})
        msg = {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": MODEL,
            "usage": usage,
            "stopReason": stop,
            "timestamp": start,
        }
        self._truth(start, use, output, cost["total"])
        self._entry(start + latency, {"type": "message", "message": msg})
        self.truth.calls[-1].entry_id = self.parent
        self.blocks.append(Block(f"assistant:{self.parent}", output))
        return ids

    def _truth(self, start: int, use: Any, output: int, cost: float) -> None:
        tok = {"input": use.input, "cache_read": use.cache_read, "cache_write": use.cache_write, "output": output}
        call = CallTruth(
            len(self.truth.calls), iso(start), "main", "", "", tok, model=MODEL, ttl_ms=TTL_5M_MS, cost_usd=cost
        )
        warm = self.cached
        if warm is None:
            call.kind, call.reason = "bootstrap", "first_call"
        else:
            call.expected_read = warm
            if use.cache_read >= warm:
                call.kind, call.reason = "delta", "cache_hit"
            else:
                gap = start - (self.last_ms or start)
                cause = "cache_expired" if gap >= TTL_5M_MS else self.cause
                if cause is None:
                    raise AssertionError(f"pi call {call.index}: read {use.cache_read} < {warm} with no cause")
                call.kind, call.reason = "re-send", cause
                call.excess = max(0, min(use.cache_write + use.input, warm - use.cache_read))
        self.cause = None
        self.cached = use.cache_read + use.cache_write
        self.last_ms = start
        self.truth.calls.append(call)

    def result(self, ms: int, tool_id: str, name: str, text: str, *, error: bool = False) -> None:
        self._entry(
            ms,
            {
                "type": "message",
                "message": {
                    "role": "toolResult",
                    "toolCallId": tool_id,
                    "toolName": name,
                    "content": [{"type": "text", "text": text}],
                    "isError": error,
                    "timestamp": ms,
                },
            },
        )
        self.blocks.append(Block(f"result:{tool_id}", tokens(text)))

    def tool_call(self, t: int, parts: list[tuple[Any, ...]], output: int, results: list[tuple[str, str]]) -> int:
        """A call that asks for tools, then their results; returns the time the next request starts."""
        latency = self.s.randint(2_400, 7_800)
        ids = self.call(t, parts, output, "toolUse", latency)
        t += latency
        for tool_id, (name, text) in zip(ids, results, strict=True):
            t += self.s.randint(20, 900) if name != "bash" else self.s.randint(1_500, 9_000)
            self.result(t, tool_id, name, text)
        return t + self.s.randint(3, 12)

    # ------------------------------------------------------------------ the story
    def run(self) -> AgentPlan:
        t = START_MS
        header = {"type": "session", "version": 3, "id": self.sid, "timestamp": iso(t), "cwd": CWD}
        self.buffer = [line(header)]
        self._entry(t, {"type": "model_change", "provider": "anthropic", "modelId": MODEL})
        self._entry(t + 1, {"type": "thinking_level_change", "thinkingLevel": self.thinking})
        t += 21_000
        self.user(
            t,
            "The tile server returns 500 for zoom levels above 18. Find out why and make it return 404 "
            "for tiles outside the dataset's range instead.",
        )
        src = f"{CWD}/src/tiles.py"
        t = self.tool_call(
            t + 8,
            [
                ("thinking", self.p.paragraph(3)),
                ("toolCall", "bash", {"command": f"cd {CWD} && rg -n 'zoom' src/ | head -40"}),
            ],
            168,
            [("bash", self.p.grep(38, f"{CWD}/src"))],
        )
        t = self.tool_call(
            t,
            [("toolCall", "read", {"path": src}), ("toolCall", "read", {"path": f"{CWD}/src/app.py"})],
            131,
            [("read", self.p.python(15_300)), ("read", self.p.python(8_900))],
        )
        t = self.tool_call(
            t,
            [
                ("thinking", self.p.paragraph(4)),
                ("text", "`tile_bounds` indexes the pyramid by zoom without checking it; the KeyError becomes a 500."),
                (
                    "toolCall",
                    "edit",
                    {
                        "path": src,
                        "oldText": "    level = pyramid[zoom]",
                        "newText": "    if zoom not in pyramid:\n        "
                        "raise TileNotFound(zoom)\n    level = pyramid[zoom]",
                    },
                ),
            ],
            612,
            [("edit", f"Successfully replaced text in {src}.")],
        )
        t = self.tool_call(
            t,
            [("toolCall", "bash", {"command": f"cd {CWD} && python -m pytest -q"})],
            74,
            [("bash", self.p.pytest_run(48, failed=1, size=3_800))],
        )
        t = self.tool_call(
            t,
            [
                ("thinking", self.p.paragraph(2)),
                (
                    "toolCall",
                    "edit",
                    {
                        "path": f"{CWD}/src/app.py",
                        "oldText": "except KeyError:",
                        "newText": "except TileNotFound:\n        return 404",
                    },
                ),
            ],
            388,
            [("edit", f"Successfully replaced text in {CWD}/src/app.py.")],
        )
        t = self.tool_call(
            t,
            [("toolCall", "bash", {"command": f"cd {CWD} && python -m pytest -q"})],
            70,
            [("bash", self.p.pytest_run(49, size=3_600))],
        )
        latency = self.s.randint(2_000, 4_000)
        self.call(
            t,
            [("text", "Zoom levels outside the dataset now return 404 (`TileNotFound`); 49 tests pass.")],
            41,
            "stop",
            latency,
        )
        t += latency + 48_000
        # the user raises the thinking level: message breakpoints are invalidated, the system prompt stays cached
        self.thinking = "high"
        self._entry(t, {"type": "thinking_level_change", "thinkingLevel": self.thinking})
        self.cache.keep_only(MODEL, [*self.system, *self.blocks], 1, t)
        self.cause = "prefix_rewritten"
        t += 9_000
        self.user(t, "Also add a test that a zoom of 19 gets a 404 and a zoom of 3 still gets a tile.")
        t = self.tool_call(
            t + 6,
            [("thinking", self.p.paragraph(5)), ("toolCall", "read", {"path": f"{CWD}/tests/test_tiles.py"})],
            420,
            [("read", self.p.python(6_200))],
        )
        t = self.tool_call(
            t,
            [
                (
                    "toolCall",
                    "edit",
                    {
                        "path": f"{CWD}/tests/test_tiles.py",
                        "oldText": "def test_",
                        "newText": "def test_zoom_out_of_range(client):\n    assert client.get('/19/1/1.png')"
                        ".status_code == 404\n\n\ndef test_",
                    },
                )
            ],
            266,
            [("edit", f"Successfully replaced text in {CWD}/tests/test_tiles.py.")],
        )
        t = self.tool_call(
            t,
            [("toolCall", "bash", {"command": f"cd {CWD} && python -m pytest -q tests/test_tiles.py"})],
            77,
            [("bash", self.p.pytest_run(12, size=1_600))],
        )
        latency = self.s.randint(2_000, 4_000)
        self.call(t, [("text", "Added `test_zoom_out_of_range`; 12 tile tests pass.")], 23, "stop", latency)
        t += latency + 7 * 60_000  # away 7 minutes: the 5-minute cache expires
        self.user(t, "Commit it with a message that says why.")
        t = self.tool_call(
            t + 5,
            [
                (
                    "toolCall",
                    "bash",
                    {
                        "command": f"cd {CWD} && git add -A && git commit -m "
                        "'tiles: 404 for zooms outside the dataset (a KeyError was a 500)'"
                    },
                )
            ],
            92,
            [
                (
                    "bash",
                    "[main 4e1c2d9] tiles: 404 for zooms outside the dataset (a KeyError was a 500)\n"
                    " 3 files changed, 19 insertions(+), 2 deletions(-)",
                )
            ],
        )
        latency = self.s.randint(1_500, 3_000)
        self.call(t, [("text", "Committed as 4e1c2d9.")], 11, "stop", latency)
        return AgentPlan(AGENT, HOME, self.writes, [self.truth], start_delay=0.8)


def generate(seed: int = 7) -> AgentPlan:
    """The pi part of the demo (deterministic for a seed)."""
    return PiDemo(seed).run()
