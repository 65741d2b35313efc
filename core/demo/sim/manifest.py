"""The manifest: the true values of everything the simulator wrote, per session, turn, close line and problem.

Tests and the bench compare the analysis against these values; ``manifest.json`` is also the demo writer's
replay plan (``replay``).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.demo.sim.directives import ULTRAWORK_SPAN_BYTES
from core.demo.sim.jsjson import JsonObj
from core.demo.sim.sink import DEFAULT_ROTATE_BYTES, Located

GENERATOR_VERSION = "3"
"""Bumped whenever the same arguments write different bytes: the bench corpus cache is keyed by it."""


@dataclass
class TurnTruth:
    """One provider call (= one assistant message) and what senpi decided, logged and sent for it."""

    index: int  # assistant messages of the session from 0, in file order
    prompt: int  # user prompt this call answers, from 0
    entry_id: str = ""
    ts: str = ""  # assistant message.timestamp (call start)
    log: Located = field(default_factory=Located)  # the continuity line in session.log
    log_ts: str = ""
    kind: str = ""  # logged kind
    reason: str = ""
    count: int | None = None
    decision: str = ""  # internal decision: bootstrap | delta | reattach | fork | flatten
    decision_from: int = 0
    decision_reason: str | None = None
    first_turn: bool = False
    sent_messages: int = 0  # |H|: transmitted messages in the provider context
    logged_payload_bytes: int | None = None  # payloadBytes in the diagnostic (flatten/bootstrap only)
    collapsed_directives: int | None = None  # collapsedDirectives in the diagnostic
    payload_bytes: int = 0  # UTF-8 text bytes actually sent (flatten after dedupe, or the delta)
    payload_bytes_raw: int = 0  # the same before the dedupe
    directive_copies: int = 0  # <ultrawork-mode> spans in the serialized prompt, before the dedupe
    directive_bytes: int = 0
    commit: str = ""  # clean | rewritten | failed
    volatile_only_rewrite: bool = False  # rewritten only because thinking startedAt/endedAt were stamped late
    resend_from_volatile: bool = False  # this call re-sent history because of a volatile-only rewrite
    close_before: str | None = None  # reason of a close line logged at this call's start
    stable_kind: str = ""  # what a build with a stable fingerprint would have logged
    stable_reason: str = ""
    stable_count: int | None = None
    stable_payload_bytes: int = 0
    stop_reason: str = ""
    thinking: bool = False
    tool_calls: int = 0
    marker: bool = False
    invalidation: bool = False
    capture_hash: str = ""  # assistantContentHash of the last message_update partial (build rule)
    commit_hash: str = ""  # assistantContentHash of the committed message (build rule)
    hash_verbatim: str = ""
    hash_timing_stripped: str = ""
    hash_projected: str = ""


@dataclass
class CloseTruth:
    """One ``claude_sdk_oauth_session_close`` line."""

    ts: str
    reason: str
    raw: str
    when: str  # call_start | idle_reaper | thinking_level | failure | shutdown
    log: Located = field(default_factory=Located)


@dataclass
class SessionTruth:
    """A simulated senpi session and its files (paths relative to the agent dir)."""

    session_id: str
    build: str
    provider: str
    model: str
    cwd: str
    transcript: str
    events: str | None
    sidecar: str | None
    started: str
    ended: str = ""
    prompts: int = 0
    ulw_prompts: int = 0
    turns: list[TurnTruth] = field(default_factory=list)
    closes: list[CloseTruth] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    hostile_entry_ids: list[str] = field(default_factory=list)


@dataclass
class ProblemTruth:
    """A deliberately bad line: where it is and what is wrong with it."""

    path: str
    kind: str  # bad_json | truncated | invalid_utf8 | torn
    log: Located = field(default_factory=Located)


@dataclass
class FileTruth:
    path: str
    bytes: int
    lines: int


@dataclass
class Manifest:
    """The true values behind a generated agent dir. JSON-dumpable with :meth:`to_json`."""

    scenario: str
    seed: int
    scale: float
    generator_version: str = GENERATOR_VERSION
    agent_dir_virtual: str = ""  # the agent dir senpi "ran" in (sidecar sessionPath values point inside it)
    rotate_bytes: int = DEFAULT_ROTATE_BYTES
    rotations: list[str] = field(default_factory=list)
    ultrawork_span_bytes: int = ULTRAWORK_SPAN_BYTES
    started: str = ""
    ended: str = ""
    sessions: list[SessionTruth] = field(default_factory=list)
    problems: list[ProblemTruth] = field(default_factory=list)
    files: list[FileTruth] = field(default_factory=list)
    replay: list[list[Any]] | None = None  # the writes in time order, for the live demo (core.demo.bundle.load_ops)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), ensure_ascii=False, separators=(",", ":"))

    @staticmethod
    def load(path: Path) -> JsonObj:
        """The manifest as plain JSON (tests and the writer only need dict access)."""
        return json.loads(path.read_text(encoding="utf-8"))
