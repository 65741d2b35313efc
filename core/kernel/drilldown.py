"""What the drill-down (Enter on a call) shows of a call, re-read from disk: the agent's own rule, or this one.

An agent that records a streamed capture beside the persisted message (senpi: `message_update` and
`message_end`, or the transcript with thinking timing) declares its own loader (`Analysis.drilldown`) and the
screen diffs the two sides. Every other agent (pi, Claude Code, mux, Codex) writes only what it persisted:
`recorded_line` re-reads the line the call was read from and shows it as the one side there is, saying so,
instead of applying senpi's capture rule to a file that has no capture (a Codex call used to read "the
transcript line changed since it was read", a pi call "inferred: the commit minus thinking timing").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson
from msgspec import Struct

if TYPE_CHECKING:
    from core.kernel.pipeline import Session
    from core.kernel.ports import Reread
    from core.model import Turn


class CaptureCommit(Struct):
    """Both sides of a call as re-read for the drill-down; `capture` is None where the agent records none."""

    capture: dict[str, Any] | None
    commit: dict[str, Any] | None
    note: str
    #: what the commit side is: the persisted message (senpi), or the whole line the call was read from
    commit_label: str = "commit · persisted message"


Drilldown = Callable[["Turn", "Session | None", "Reread"], CaptureCommit]
"""An agent's drill-down loader: the call, its session (None when the screen has no engine), the re-read port."""


def recorded_line(turn: Turn, session: Session | None, reread: Reread) -> CaptureCommit:
    """The line the call was read from, as the only side (agents that persist no streamed capture)."""
    raw = reread.line(turn.where)
    obj: Any = None
    if raw is not None:
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            obj = None
    agent = session.agent.name if session is not None else "this agent"
    where = f"line {turn.where.line:,}"
    if not isinstance(obj, dict):
        return CaptureCommit(None, None, f"{where} changed since it was read", f"call · {where}")
    return CaptureCommit(
        None,
        obj,
        f"{agent} records no streamed capture: the call as written is beside",
        f"call · {where} as written",
    )
