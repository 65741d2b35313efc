"""mux / Xum workspaces: rows kept by history sequence, per-turn verdicts, capture vs commit, thinking-replay audit.

A workspace's history is `chat-archive.jsonl` followed by `chat.jsonl`, and chat.jsonl is rewritten whole at
every stream end (reference other-agents §B.2). So a row is identified by `metadata.historySequence`, not by
its line: a row read again unchanged (same raw-line digest) is skipped, a changed one (the placeholder that
became the finished turn) updates its turn in place, and a row that a rewrite dropped (history truncated by an
edit) is removed. A file restarting is recognised by a row at offset 0 of a file already read; rows of the
previous pass that the new pass skips over are gone from that file (rows are written in sequence order), and a
row gone from every file is removed. The next turn after such a removal is a `fork/history_edited`.

One assistant row = one user turn, possibly several provider steps (the tool loop runs inside one stream).
Its verdict comes from the cache figures (`core.kernel.cache_verdict`): the aggregate `usage` and
`providerMetadata.anthropic.cacheCreationInputTokens` over the steps, and `contextUsage` for the last step
(its input = the context size). For a one-step turn those are exact. For a multi-step turn the first step's
cache read is not stored; it is estimated as the last prompt minus everything written and sent uncached
during the turn (`Turn.cache["estimated"]`), because later steps read what the first one wrote and the
aggregate read alone would make every re-send look like a delta. A compaction summary row is `compaction`
(the call that re-sent the history to summarize it), and the turn after it is `bootstrap/after_compaction`.

Capture vs commit: the last `partial.json` version read (the message while it streamed) against the committed
row with the same id, both with their per-delta parts merged (`merge_parts`). Streaming progress is not a
rewrite (text that only grew, a tool call that finished, parts appended); anything else is, and the diff says
what (the store-time demotion of server tools, stripped signatures or ciphertext, dropped reasoning).

Thinking-replay audit (coder/xum, §B.5): on an Anthropic row, reasoning that follows a *demoted* server tool
(a server tool not stored in its natively replayable form: `providerExecuted`, successful `web_search`, an
array of `web_search_result`) binds thinking to blocks that later requests cannot replay, so the row must carry
the receipt `metadata.anthropicThinkingReplay: "off"`, and the rest of its context segment sends no thinking.
Flags per row (`MuxTurn.audit`): `receipt_missing` (the row needed the receipt and lacks it: later requests
replay that thinking, a signature 400 risk), `at_risk` (a later Anthropic row with reasoning in a segment whose
receipt is missing), `strip_without_need` (the receipt on a row whose segment needs none, or on a non-Anthropic
row: thinking dropped, and the prompt cache with it, for nothing). The two flags that need action are also
reported as problems, once per row, so they surface wherever problems are shown.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.agents.mux.facts import MuxSession, MuxTurn
from core.agents.mux.formats.chat import MuxRow, merge_parts
from core.agents.mux.formats.partial import MuxPartial
from core.agents.mux.rules import (
    RECEIPT_KEY,
    ReplayFacts,
    capture_vs_commit,
    is_compaction_summary,
    mux_usage,
    replay_facts,
)
from core.agents.shared.stateless import ContextCounter, content_size
from core.kernel.assembly import Assembly
from core.kernel.cache_verdict import COMPACTION, CacheVerdict, CallUsage, decision, explain, judge, structural
from core.kernel.diff import classify
from core.kernel.directives import DirectiveLedger, Seen
from core.kernel.hashing import stable_xxh3
from core.kernel.pipeline import RecordHandler
from core.model import ABORTED, CommitInfo, LoggedDecision, Problem, Turn, Where
from core.timeutil import iso_ms, now_ms

if TYPE_CHECKING:
    from core.kernel.pipeline import AgentRef, Session, Store
    from core.kernel.ports import Reread
    from core.model import Record

ACTION_FLAGS = frozenset({"receipt_missing", "strip_without_need"})


# ---------------------------------------------------------------------------------------------- state
@dataclass(slots=True)
class _Row:
    sequence: int
    row_id: str
    role: str
    digest: int
    where: Where
    files: dict[str, int] = field(default_factory=dict)  # path -> pass in which it was last read there
    turn: Turn | None = None
    usage: CallUsage | None = None
    basis: dict[str, Any] = field(default_factory=dict)
    boundary: bool = False
    facts: ReplayFacts | None = None
    placeholder: bool = False
    partial: bool = False
    flag: str | None = None
    size: int = 0
    after: tuple[bool, bool] = (False, False)  # audit carry: (segment needs the receipt, receipt missing in it)


@dataclass
class _Workspace:
    key: str
    rows: dict[int, _Row] = field(default_factory=dict)
    assistants: list[int] = field(default_factory=list)  # sequences of assistant rows, sorted
    passes: dict[str, int] = field(default_factory=dict)
    sweep: dict[str, tuple[list[int], int]] = field(default_factory=dict)  # path -> (previous pass seqs, cursor)
    context: ContextCounter = field(default_factory=ContextCounter)
    capture: tuple[str, list[dict[str, Any]], Where] | None = None
    last_commit: tuple[str, list[dict[str, Any]], Where] | None = None
    edited: bool = False
    reported: set[tuple[str, str]] = field(default_factory=set)


class MuxAudit(RecordHandler):
    """Record handler for `MuxRow` and `MuxPartial`; owns the mux sessions in `State`."""

    handles = (MuxRow, MuxPartial)

    def __init__(self, agent: AgentRef, reread: Reread) -> None:
        super().__init__(agent, reread)
        self.workspaces: dict[str, _Workspace] = {}
        self.touched: dict[str, set[str]] = {}  # workspace key -> files read into it (the index's groups)

    def on_record(self, state: Store, record: Record) -> None:
        if isinstance(record, MuxRow):
            self._row(state, record)
        elif isinstance(record, MuxPartial):
            self._partial(state, record)

    # ------------------------------------------------------------------ rows
    def assembly(self, store: Store) -> Assembly:
        """Its sessions as the persistent index groups them: a workspace is read from the files of its folder
        alone (`core.kernel.assembly`)."""
        return Assembly({key: set(files) for key, files in self.touched.items()})

    def _workspace(self, state: Store, path: str, workspace_id: str | None, where: Where) -> tuple[_Workspace, Session]:
        key = os.path.join(os.path.dirname(path), "chat.jsonl")
        ws = self.workspaces.get(key)
        if ws is None:
            ws = self.workspaces[key] = _Workspace(key)
        fresh = key not in state.sessions
        session = state.session_for(key, workspace_id or os.path.basename(os.path.dirname(path)), self.agent)
        if fresh:
            session.origin = where
        self.touched.setdefault(key, set()).add(path)
        if workspace_id and session.session_id != workspace_id:
            session.session_id = workspace_id
        return ws, session

    def _row(self, state: Store, rec: MuxRow) -> None:
        ws, session = self._workspace(state, rec.where.path, rec.workspace, rec.where)
        path = rec.where.path
        if rec.where.offset == 0 or path not in ws.passes:
            self._new_pass(ws, path)
        seq = rec.sequence if rec.sequence is not None else (max(ws.rows) + 1 if ws.rows else 0)
        self._sweep(state, ws, session, path, seq)
        row = ws.rows.get(seq)
        if row is not None and row.digest == rec.digest and row.row_id == rec.row_id:
            row.files[path] = ws.passes[path]
            row.where = rec.where
            if row.turn is not None:
                row.turn.where = rec.where
            return
        state.version += 1
        if row is None or row.row_id != rec.row_id:
            if row is not None:
                self._remove(state, ws, session, seq)
            row = ws.rows[seq] = _Row(seq, rec.row_id, rec.role, rec.digest, rec.where)
            fresh = True
        else:
            fresh = False
        row.digest, row.where = rec.digest, rec.where
        row.files[path] = ws.passes[path]
        session.entries += 1
        if rec.role == "assistant":
            self._assistant(state, ws, session, row, rec, fresh)
        elif fresh:
            self._user(ws, session, row, rec)

    def _user(self, ws: _Workspace, session: Session, row: _Row, rec: MuxRow) -> None:
        texts = [
            (p["text"], True)
            for p in rec.parts
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        ]
        ts = rec.metadata.get("timestamp")
        seen = Seen(iso_ms(ts) if isinstance(ts, int | float) else None, rec.row_id)
        ws.context.add(rec.parts, texts, _ledger(session), rec.row_id, seen)

    def _assistant(self, state: Store, ws: _Workspace, session: Session, row: _Row, rec: MuxRow, fresh: bool) -> None:
        meta = rec.metadata
        merged = merge_parts(rec.parts)
        row.boundary = is_compaction_summary(meta)
        row.placeholder, row.partial = not merged, meta.get("partial") is True
        row.usage, row.basis = mux_usage(meta)
        row.facts = replay_facts(merged, meta)
        if fresh:
            if row.boundary:
                ws.context.reset()
            turn = self._new_turn(ws, session, row, rec)
            if ws.edited:
                _turn_facts(turn).after_edit = True
                ws.edited = False
        turn = row.turn
        assert turn is not None
        turn.where = rec.where
        turn.model = meta.get("model") if isinstance(meta.get("model"), str) else turn.model
        turn.provider = _provider(turn.model)
        reason = meta.get("finishReason")
        turn.stop_reason = reason if isinstance(reason, str) else turn.stop_reason
        size = content_size(merged)
        ws.context.resize(size - row.size)
        row.size = size
        if row.usage is not None:
            turn.tokens = {
                "input": row.usage.input,
                "cache_read": row.usage.cache_read,
                "cache_write": row.usage.cache_write,
                "output": row.usage.output or 0,
            }
        if merged:
            turn.fingerprints = {
                "stable_xxh3": stable_xxh3({"role": "assistant", "model": turn.model, "content": merged})
            }
            self._commit(ws, row, merged, rec.where)
        position = bisect.bisect_left(ws.assistants, row.sequence)
        self._refresh(state, ws, session, position)

    def _new_turn(self, ws: _Workspace, session: Session, row: _Row, rec: MuxRow) -> Turn:
        ts = rec.metadata.get("timestamp")
        ts_ms = int(ts) if isinstance(ts, int | float) and not isinstance(ts, bool) else None
        position = bisect.bisect_left(ws.assistants, row.sequence)
        ws.assistants.insert(position, row.sequence)
        turn = Turn(
            session=session.session_id,
            index=position,
            entry_id=row.row_id,
            ts=iso_ms(ts_ms),
            ts_ms=ts_ms,
            where=rec.where,
        )
        prompt, new, sent, new_bytes, directives = ws.context.call(_ledger(session), position)
        turn.payload_bytes_raw = turn.payload_bytes = sent
        turn.payload_new_bytes, turn.payload_history_bytes = new_bytes, sent - new_bytes
        turn.directives = directives
        request = rec.metadata.get("requestHistorySequence")
        turn.facts = MuxTurn(row.sequence, prompt, new, request if isinstance(request, int) else None)
        session.turns.insert(position, turn)
        for index in range(position, len(session.turns)):
            session.turns[index].index = index
        row.turn = turn
        return turn

    # ------------------------------------------------------------------ verdicts and the audit
    def _refresh(self, state: Store, ws: _Workspace, session: Session, start: int) -> None:
        """Re-decide verdicts and audit flags from assistant position `start` on (appends: just the last)."""
        carry = ws.rows[ws.assistants[start - 1]].after if start > 0 else (False, False)
        for position in range(start, len(ws.assistants)):
            row = ws.rows[ws.assistants[position]]
            previous = ws.rows[ws.assistants[position - 1]] if position > 0 else None
            if position <= start + 1:
                self._judge(row, previous)
            carry = self._audit(state, ws, session, row, carry)

    def _judge(self, row: _Row, previous: _Row | None) -> None:
        turn = row.turn
        if turn is None:
            return
        usage = row.usage
        if usage is None or usage.empty:  # no usage: `aborted` (re-judged when the row is rewritten with usage)
            reason, turn.why = (
                ("stream_in_progress", "stream in progress (placeholder row)")
                if row.placeholder
                else ("stream_interrupted", "interrupted stream (partial row)")
                if row.partial
                else ("no_usage", "no usage recorded on this row")
            )
            turn.logged = LoggedDecision(ABORTED, reason, None, ts_ms=turn.ts_ms, source="transcript")
            turn.cache = None
            return
        prev_usage = previous.usage if previous is not None and previous.usage and not previous.usage.empty else None
        verdict: CacheVerdict
        source = "transcript"
        if row.boundary:
            verdict = structural(COMPACTION, "compaction_summary", usage, prev_usage)
        elif _turn_facts(turn).after_edit:  # the most recent structural event wins
            verdict = structural("fork", "history_edited", usage, prev_usage)
        elif previous is not None and previous.boundary:
            verdict = structural("bootstrap", "after_compaction", usage, prev_usage)
        else:
            verdict = judge(usage, prev_usage)
            source = "cache"
        facts = _turn_facts(turn)
        count = facts.new_messages if verdict.kind == "delta" else facts.messages
        turn.logged = decision(verdict, count, source=source)
        turn.logged.ts_ms = turn.ts_ms
        turn.cache = {**verdict.evidence, **row.basis}
        turn.why = explain(verdict) if source == "cache" else (
            f"{verdict.kind}/{verdict.reason}: cache read {usage.cache_read} of {usage.prompt} prompt tokens, "
            f"write {usage.cache_write}")  # fmt: skip

    def _audit(
        self, state: Store, ws: _Workspace, session: Session, row: _Row, carry: tuple[bool, bool]
    ) -> tuple[bool, bool]:
        facts = row.facts
        needed, missing = (False, False) if row.boundary else carry
        if facts is None or row.turn is None:
            row.after = (needed, missing)
            return row.after
        flag: str | None = None
        if facts.needs_receipt and not facts.receipt:
            flag, missing = "receipt_missing", True
        elif facts.receipt and (not facts.anthropic or not (needed or facts.needs_receipt)):
            flag = "strip_without_need"
        elif missing and facts.anthropic and facts.reasoning and not facts.receipt:
            flag = "at_risk"
        needed = needed or facts.needs_receipt
        row.after = (needed, missing)
        _turn_facts(row.turn).audit = {
            "thinking_replay": flag or "ok",
            "needs_receipt": facts.needs_receipt,
            "receipt": "off" if facts.receipt else None,
            "segment_needs_receipt": needed,
            "server_tools": len(facts.server_tools),
            "demoted_server_tools": list(facts.demoted),
            "reasoning": facts.reasoning,
            "anthropic": facts.anthropic,
        }
        _count_flag(session, row.flag, -1)
        _count_flag(session, flag, 1)
        row.flag = flag
        if flag in ACTION_FLAGS and (row.row_id, flag) not in ws.reported:
            ws.reported.add((row.row_id, flag))
            state.add_problem(
                Problem(row.where.path, row.where.line, row.where.offset, _audit_text(flag, facts, row), now_ms())
            )
        return row.after

    # ------------------------------------------------------------------ capture vs commit
    def _partial(self, state: Store, rec: MuxPartial) -> None:
        ws, _ = self._workspace(state, rec.where.path, None, rec.where)
        parts = rec.obj.get("parts")
        capture = merge_parts(parts if isinstance(parts, list) else [])
        if ws.last_commit is not None and ws.last_commit[0] == rec.row_id:
            self._compare(ws, rec.row_id, capture, rec.where, ws.last_commit[1], ws.last_commit[2])
        else:
            ws.capture = (rec.row_id, capture, rec.where)
        state.version += 1

    def _commit(self, ws: _Workspace, row: _Row, merged: list[dict[str, Any]], where: Where) -> None:
        ws.last_commit = (row.row_id, merged, where)
        if ws.capture is not None and ws.capture[0] == row.row_id:
            self._compare(ws, row.row_id, ws.capture[1], ws.capture[2], merged, where)
            ws.capture = None

    def _compare(
        self,
        ws: _Workspace,
        row_id: str,
        capture: list[dict[str, Any]],
        capture_where: Where,
        commit: list[dict[str, Any]],
        commit_where: Where,
    ) -> None:
        row = next((r for r in ws.rows.values() if r.row_id == row_id and r.turn is not None), None)
        if row is None or row.turn is None:
            return
        changes = capture_vs_commit(capture, commit)
        outcome = "rewritten" if changes else "clean"
        row.turn.commit = CommitInfo(
            outcome=outcome,
            source="events",
            klass=classify(changes),
            diff=changes,
            variant="merged-parts",
            capture_where=capture_where,
            commit_where=commit_where,
        )

    # ------------------------------------------------------------------ rewrites
    def _new_pass(self, ws: _Workspace, path: str) -> None:
        ws.passes[path] = ws.passes.get(path, 0) + 1
        previous = sorted(seq for seq, row in ws.rows.items() if path in row.files)
        ws.sweep[path] = (previous, 0)

    def _sweep(self, state: Store, ws: _Workspace, session: Session, path: str, seq: int) -> None:
        """Rows of the previous pass of `path` that this pass skipped over are gone from that file."""
        previous, cursor = ws.sweep.get(path, ([], 0))
        current = ws.passes[path]
        while cursor < len(previous) and previous[cursor] <= seq:
            gone = previous[cursor]
            cursor += 1
            row = ws.rows.get(gone)
            if gone == seq or row is None or row.files.get(path) == current:
                continue
            row.files.pop(path, None)
            if not row.files:
                self._remove(state, ws, session, gone)
                ws.edited = True
        ws.sweep[path] = (previous, cursor)

    def _remove(self, state: Store, ws: _Workspace, session: Session, seq: int) -> None:
        row = ws.rows.pop(seq, None)
        state.version += 1
        if row is None or row.turn is None:
            return
        _count_flag(session, row.flag, -1)
        position = bisect.bisect_left(ws.assistants, seq)
        if position < len(ws.assistants) and ws.assistants[position] == seq:
            del ws.assistants[position]
        if row.turn in session.turns:
            session.turns.remove(row.turn)
        for index, turn in enumerate(session.turns):
            turn.index = index
        if ws.assistants and position < len(ws.assistants):
            self._refresh(state, ws, session, position)


def _count_flag(session: Session, flag: str | None, step: int) -> None:
    """Keep `MuxSession.audit` (flag -> rows) current as rows are judged again."""
    if flag is None or flag == "ok":
        return
    facts = session.facts
    if not isinstance(facts, MuxSession):
        facts = session.facts = MuxSession()
    if facts.audit is None:
        facts.audit = {}
    counts = facts.audit
    counts[flag] = counts.get(flag, 0) + step
    if counts[flag] <= 0:
        del counts[flag]


def _audit_text(flag: str, facts: ReplayFacts, row: _Row) -> str:
    if flag == "receipt_missing":
        return (
            f"mux audit: row {row.row_id} (history {row.sequence}) has reasoning after demoted server tool(s) "
            f'{", ".join(facts.demoted)} but no metadata.{RECEIPT_KEY}: "off"; later requests in its context '
            "segment replay that thinking (signature 400 risk)"
        )
    return (
        f'mux audit: row {row.row_id} (history {row.sequence}) carries metadata.{RECEIPT_KEY}: "off" '
        "although its context segment needs no receipt; thinking is stripped without need"
    )


def _provider(model: str | None) -> str | None:
    if not model:
        return None
    return model.split(":", 1)[0] if ":" in model else None


def _ledger(session: Session) -> DirectiveLedger | None:
    return session.analyzer(DirectiveLedger)


def _turn_facts(turn: Turn) -> MuxTurn:
    """The mux record of a turn this handler made (every mux turn has one)."""
    facts = turn.facts
    assert isinstance(facts, MuxTurn)
    return facts
