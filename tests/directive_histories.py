"""Two histories of one `<ultrawork-mode>` copy per user prompt, for the serialized-vs-sent tests (issue 22).

- `keep_last_chain`: the incident of DEVELOPERS.md, written by the demo simulator (`core.demo.sim`, an
  independent re-implementation of senpi): a senpi 2026.8.4-2 session with thinking on, so every commit is
  rewritten and every call after the first is a flatten that re-serializes every earlier copy; senpi's
  keep-last dedupe collapses all but the last before sending, and logs the `payloadBytes` it sent.
- `pi_chain`: the same prompts in a pi session, which re-sends the whole context on every call and has no
  dedupe: what was serialized is what was sent.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson

from core.demo.sim.builds import OLD_BUILD
from core.demo.sim.directives import ULTRAWORK_DIRECTIVE, ULTRAWORK_SPAN_BYTES
from core.demo.sim.ids import parse_iso_ms
from core.demo.sim.scenarios import OLD_TOOLS
from core.demo.sim.session import SessionSim
from core.demo.sim.sink import Sink
from core.demo.sim.specs import CallSpec, PromptSpec, SessionSpec
from core.timeutil import iso_ms

ULW_BYTES = ULTRAWORK_SPAN_BYTES
PI_SID = "d97339c6-6c10-4827-846b-9ff1d9c3dc38"  # randomUUID(): pi's version-4 id


def keep_last_chain(root: Path, prompts: int) -> Path:
    """A senpi agent dir: one session, `prompts` ulw prompts, one call each (the first a bootstrap-like flatten,
    then a flatten chain), on the keep-last build."""

    def script(_tx: Any) -> Any:
        for i in range(prompts):
            call = CallSpec(True, f"ULTRAWORK MODE ENABLED!\n\nstep {i} done.")
            yield PromptSpec(f"ulw step {i}: keep refactoring the ledger", (call,), gap_ms=20_000)

    spec = SessionSpec(OLD_BUILD, "/home/mika/work/ledger-api", "claude-opus-4-8",
                       parse_iso_ms("2026-08-07T09:12:04.311Z"), script, OLD_TOOLS)  # fmt: skip
    sim = SessionSim(spec, random.Random("issue-22"), 1.0)
    sink = Sink(root, 5 * 1024 * 1024, record_replay=False)
    for step in sim.run():
        for write in step:
            sink.apply(write)
    sink.finish()
    return root


def pi_chain(root: Path, prompts: int) -> Path:
    """A pi sessions dir: one session, `prompts` prompts each carrying the ulw directive, one call each."""
    t0 = 1_765_233_600_000
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": PI_SID, "timestamp": iso_ms(t0), "cwd": "/Users/dev/ledger"}
    ]
    parent = None
    cached = 0
    for i in range(prompts):
        ms = t0 + 60_000 * (i + 1)
        text = f"{ULTRAWORK_DIRECTIVE}\nulw step {i}: keep refactoring the ledger"
        uid, aid = f"u{i:07x}", f"a{i:07x}"
        lines.append(
            {
                "type": "message",
                "id": uid,
                "parentId": parent,
                "timestamp": iso_ms(ms),
                "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": ms},
            }
        )
        write = 6_300
        usage = {
            "input": 6,
            "output": 40,
            "cacheRead": cached,
            "cacheWrite": write,
            "totalTokens": 46 + cached + write,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        }
        lines.append({"type": "message", "id": aid, "parentId": uid, "timestamp": iso_ms(ms + 4_000),
                      "message": {"role": "assistant", "content": [{"type": "text", "text": f"step {i} done"}],
                                  "api": "anthropic-messages", "provider": "anthropic", "model": "claude-opus-4-5",
                                  "usage": usage, "stopReason": "stop", "timestamp": ms}})  # fmt: skip
        cached += write
        parent = aid
    path = root / "sessions" / "--Users-dev-ledger--" / f"2025-12-08T22-40-00-000Z_{PI_SID}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return root
