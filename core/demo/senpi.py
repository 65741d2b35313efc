"""The senpi part of the demo: the bundled senpi history (`core/demo/data`, written by `core.demo.sim`), as today.

The simulator already plays senpi in full (the shared session.log and its rotation, transcripts, events, the
atomic sidecar) and records both the order of its writes (`manifest.json` → `replay`) and the truth of every
turn (`sessions[].turns[]`: its continuity verdict, whether its commit rewrote what was captured). This module
only turns that record into an `AgentPlan`, so senpi writes side by side with the other demo agents; the
tokens of each call are the usage the simulator wrote into the transcript.

The bundle also holds six lines the simulator broke on purpose (its `problems`: bad JSON, invalid UTF-8, a
torn and a truncated line), there to exercise the Problems pane and its tests. The live demo leaves them out: a
newcomer's first screen should show the agents' calls, not a problem count, and no line a reader counts is
among them (a broken line is never read).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.demo.bundle import demo_source, load_ops
from core.demo.plan import AgentPlan, CallTruth, SessionTruth, Write

AGENT = "senpi"
HOME = "senpi"


def _usage(transcript: Path) -> dict[str, dict[str, int]]:
    """Each assistant entry's usage (Anthropic mapping), by entry id."""
    out: dict[str, dict[str, int]] = {}
    for raw in transcript.read_bytes().splitlines():
        try:
            obj: Any = json.loads(raw)
        except ValueError:  # the simulator writes a few hostile lines on purpose (its `hostile_entry_ids`)
            continue
        msg = obj.get("message") if isinstance(obj, dict) else None
        if isinstance(msg, dict) and msg.get("role") == "assistant" and isinstance(msg.get("usage"), dict):
            u = msg["usage"]
            out[obj["id"]] = {
                "input": u.get("input", 0),
                "output": u.get("output", 0),
                "cache_read": u.get("cacheRead", 0),
                "cache_write": u.get("cacheWrite", 0),
            }
    return out


def generate(seed: int = 7, source: Path | None = None) -> AgentPlan:
    """The bundled senpi history as writes under `senpi/` (the bundle is seeded already: `seed` is its own, 7)."""
    src = source or demo_source()
    manifest = json.loads((src / "manifest.json").read_text(encoding="utf-8"))
    hostile = {(p["path"], p["log"]["offset"]) for p in manifest["problems"]}
    writes: list[Write] = []
    for op in load_ops(src):
        ms, kind = op[0], op[1]
        if kind == "a":
            _, _, target, rel, offset, size = op
            if (rel, offset) in hostile:
                continue
            with open(src / rel, "rb") as handle:
                handle.seek(offset)
                writes.append(Write(ms, target, handle.read(size)))
        elif kind == "r":
            writes.append(Write(ms, op[2], op="rotate"))
        else:
            writes.append(Write(ms, op[2], (src / op[2]).read_bytes(), op="replace"))
    sessions = []
    for s in manifest["sessions"]:
        usage = _usage(src / s["transcript"])
        truth = SessionTruth(AGENT, s["session_id"], f"{HOME}/{s['transcript']}", s["cwd"])
        for turn in s["turns"]:
            truth.calls.append(
                CallTruth(
                    turn["index"],
                    turn["ts"],
                    "main",
                    turn["kind"],
                    turn["reason"] or "",
                    usage.get(turn["entry_id"], {}),
                    model=s["model"],
                    entry_id=turn["entry_id"],
                    rewritten=turn["commit"] == "rewritten",
                )
            )
        sessions.append(truth)
    return AgentPlan(AGENT, HOME, writes, sessions, start_delay=0.0)
