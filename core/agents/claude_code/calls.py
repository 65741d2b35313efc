"""Claude Code API calls: group the lines of one call, count it once, and judge it from the prompt cache.

Claude Code writes one line per content block, every line of a call carrying the same `message.id` and
`requestId`, with `usage` that may be a partial snapshot on the earlier lines (reference other-agents §C.4).
Sub-agent transcripts (`<session>/subagents/agent-<id>.jsonl`, and older inline `isSidechain` lines) replay
parent messages with the same `message.id` under another `requestId`. So, per call:

- the call is keyed by `message.id`; a line with a known id and the same `requestId` is another block of
  that call, its usage replaces the stored one when its token total is not smaller (keep the final usage);
  a known id under another `requestId` is a replayed copy and is not counted again; a line whose `uuid`
  was already read (a file copied into another) is skipped;
- calls live in *threads*: the main conversation, and one per sub-agent. A thread is judged against its own
  previous call (a sub-agent has its own context and cache prefix); sub-agent calls are turns of the parent
  session (`Turn.thread` says which), so the parent shows everything it spent;
- a 2.0-era sub-agent file at the top of a project (`agent-<id>.jsonl`, not under `subagents/`) is a session
  of its own, `agent-<id>` (`is_top_level_agent_file`);
- verdict (`core.kernel.cache_verdict`, the Anthropic-style rule): `delta` when the cache read covers the
  previous call's cacheable prefix (its cache read + write), `re-send` when it falls short (with the previous
  and current figures and the gap, telling a TTL expiry from a miss or a rewrite), `compaction` for the first
  call after a `compact_boundary`, `fork/rewind` for the first call after a prompt was grafted onto an older
  line (a rewind), `bootstrap` for a thread's first call, `aborted` for a call whose lines carry no usage;
- the context each call sends is tracked as counts only: messages, content bytes (the JSON of the content
  blocks as stored; the system prompt and tool schemas are not in the transcript) and the tagged blocks the
  directive ledger finds (`<system-reminder>` and any other tag), cumulative since the last compaction,
  because the Messages API re-sends all of them on every call.

Copies across sessions: a resumed (or forked) session file starts with copies of another session's lines,
same uuids, message ids and requestIds under its own sessionId. Each session keeps its whole chain as turns
(so each judges its calls against the right previous call, whichever file was read first), and which of them
made a shared call is settled when a surface reads (`settle`): the session that went on with calls of its own
after the shared ones copied them (a plain resume: the original ends where the copy begins); when both went
on (a fork), the one whose own calls started later; when neither, the one read later. The copier's copies
get `Turn.copied_from` (they count once, in the session that made them) and its first own call is judged as
the first call after a resume (`resume`, against its last copied call). For a prefix re-write the call's
evidence also says where the prompts parted (`core.kernel.prefix`) and what the call added (`new_input`:
the user messages since the previous call, e.g. `<task-notification>`).

A file that restarts (a line at offset 0 of a file already read: truncated or replaced) is forgotten and
re-read: its calls are removed first, so nothing is counted twice.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson
import xxhash

from core.agents.claude_code.facts import ClaudeCall, ClaudeSession
from core.agents.claude_code.format import ClaudeLine, agent_progress
from core.agents.shared.stateless import ContextCounter, claude_texts
from core.kernel.cache_verdict import (
    COMPACTION,
    RESUME,
    TTL_1H_MS,
    TTL_5M_MS,
    CacheVerdict,
    CallUsage,
    WhyTexts,
    decision,
    judge,
    structural,
    why,
)
from core.kernel.directives import DirectiveLedger, Seen
from core.kernel.pipeline import RecordHandler
from core.kernel.prefix import PromptHistory, PromptView
from core.model import ABORTED, LoggedDecision, Turn

if TYPE_CHECKING:
    from core.kernel.pipeline import AgentRef, Session, Store
    from core.kernel.ports import Reread
    from core.model import Record

MAIN = "main"
SYNTHETIC_MODEL = "<synthetic>"


@dataclass(slots=True)
class _Thread:
    """One conversation (the main one or a sub-agent's): what its next call is judged against."""

    key: str
    path: str
    previous: CallUsage | None = None
    pending: tuple[str, str] | None = None
    pending_meta: dict[str, Any] | None = None
    last_call_order: int = -1  # order of the first line of the latest call (a prompt older than it = rewind)
    context: ContextCounter = field(default_factory=ContextCounter)
    #: the prompt sizes of its calls since it started or was compacted (where a re-written prefix parted)
    history: PromptHistory = field(default_factory=PromptHistory)
    last: _Call | None = None  # its latest call (put into `history` when the next one starts)
    #: what the user side added since the latest call ("task-notification", "tool_result", "prompt", …)
    new_input: list[str] = field(default_factory=list)


@dataclass(slots=True, eq=False)  # (identity: `settle` keys calls by object)
class _Call:
    """One API call: its turn, the figures it was judged on, and a running fingerprint of its blocks."""

    msg_id: str
    request_id: str | None
    path: str
    session_key: str
    thread: _Thread
    turn: Turn
    usage: CallUsage
    previous: CallUsage | None
    pending: tuple[str, str] | None
    pending_meta: dict[str, Any] | None
    hasher: Any
    prompt_messages: int = 0
    new_messages: int = 0
    lines: int = 1
    #: the thread's calls before this one: where a re-written prefix parted
    history: PromptView | None = None
    new_input: tuple[str, ...] = ()
    #: the session whose copied calls precede this one (set by `ClaudeCalls.settle`)
    resumed_from: str | None = None


@dataclass(slots=True)
class _Seen:
    """A line already read: where its uuid sits in reading order, in which thread and file."""

    order: int
    thread: str
    path: str
    session: str = ""


@dataclass(slots=True)
class _Shared:
    """Calls (message ids) two sessions both hold: a resume or fork copied one session's calls into the other."""

    keys: tuple[str, str]  # the two sessions, in the order their copies were read
    msg_ids: set[str] = field(default_factory=set)


class ClaudeCalls(RecordHandler):
    """Record handler for `ClaudeLine`s; owns the Claude Code sessions in `State`."""

    handles = (ClaudeLine,)

    def __init__(self, agent: AgentRef, reread: Reread) -> None:
        super().__init__(agent, reread)
        self.calls: dict[str, _Call] = {}  # message id -> the call, in the first session that held it
        self.copies: dict[tuple[str, str], _Call] = {}  # (session key, message id) -> the call in another session
        self.shared: dict[tuple[str, str], _Shared] = {}  # sorted session keys -> what they both hold
        self.unsettled = False  # a call was copied, or a session holding copies grew, since the last `settle`
        self.marked: list[_Call] = []  # the copies `settle` marked (`Turn.copied_from`)
        self.resumed: list[_Call] = []  # the first own calls after copies `settle` judged as resumed
        self.threads: dict[tuple[str, str], _Thread] = {}
        self.seen: dict[int, _Seen] = {}  # xxh3(session key, uuid) -> where it was read
        self.file_session: dict[str, tuple[str, str]] = {}  # file path -> (session key, session id)
        self.by_session_id: dict[str, str] = {}  # sessionId -> session key of its main transcript
        self.files: set[str] = set()
        self.order = 0
        #: the call whose verdict is not made yet (`_defer`): at most one, judged before any other call is
        self.unjudged: _Call | None = None
        # what the persistent index groups sessions by (`assembly`): files per session, sessions that met
        self.touched: dict[str, set[str]] = {}
        self.links: set[tuple[str, str]] = set()

    # ------------------------------------------------------------------ entry point
    def on_record(self, state: Store, record: Record) -> None:
        if not isinstance(record, ClaudeLine):
            return
        path = record.where.path
        if record.where.offset == 0 and path in self.files:
            self._forget_file(state, path)
        self.files.add(path)
        self.order += 1
        if record.type == "progress":
            inner = agent_progress(record)
            if inner is None:
                return
            record = inner
        session = self._session(state, record)
        seen_key = _key(record.uuid, session.key) if record.uuid else None
        if seen_key is not None and seen_key in self.seen:
            return  # the same line again in this session (a progress copy, a file read twice): already counted
        thread = self._thread(session, record)
        if seen_key is not None:
            self.seen[seen_key] = _Seen(self.order, thread.key, path, session.key)
        if record.type == "assistant":
            self._assistant(state, session, thread, record)
        elif record.type == "user":
            self._user(session, thread, record)
        elif record.type == "system" and str(record.obj.get("subtype", "")).endswith("compact_boundary"):
            self._compact(session, thread, record)
        state.version += 1

    # ------------------------------------------------------------------ sessions and threads
    def _session(self, state: Store, record: ClaudeLine) -> Session:
        path = record.where.path
        known = self.file_session.get(path)
        if known is None:
            parent = parent_transcript(path)
            if parent is not None:
                known = (parent, os.path.basename(parent)[: -len(".jsonl")])
            elif is_top_level_agent_file(path):
                known = (path, _stem(path))  # its own session `agent-<id>`, whatever sessionId its lines carry
            elif record.sidechain and record.session_id in self.by_session_id:
                known = (self.by_session_id[record.session_id or ""], record.session_id or "")
            elif record.session_id is not None:
                known = (path, record.session_id)
                claimed = self.by_session_id.setdefault(record.session_id, path)
                if claimed != path:  # which file claims the id depends on which was read first
                    self.links.add((claimed, path))
            if known is not None:
                self.file_session[path] = known
        key, session_id = known if known is not None else (path, _stem(path))
        fresh = key not in state.sessions
        session = state.session_for(key, session_id, self.agent)
        if fresh:
            session.origin = record.where
        files = self.touched.get(key)
        if files is None:
            files = self.touched[key] = set()
        files.add(path)
        cwd = record.obj.get("cwd")
        if session.cwd is None and isinstance(cwd, str) and (not record.sidechain or session.key == path):
            session.cwd = cwd
        session.entries += 1
        return session

    def _thread(self, session: Session, record: ClaudeLine) -> _Thread:
        if not record.sidechain:
            name = MAIN
        elif record.agent_id:
            name = f"agent:{record.agent_id}"
        else:  # older inline sidechains carry no agentId: a sidechain joins its parent's thread
            parent = self.seen.get(_key(record.parent_uuid, session.key)) if record.parent_uuid else None
            name = parent.thread if parent is not None and parent.thread != MAIN else f"sidechain:{record.uuid}"
        thread = self.threads.get((session.key, name))
        if thread is None:
            thread = self.threads[(session.key, name)] = _Thread(name, record.where.path)
        return thread

    # ------------------------------------------------------------------ lines
    def _user(self, session: Session, thread: _Thread, record: ClaudeLine) -> None:
        msg = record.message
        if msg is None:
            return
        parent = self.seen.get(_key(record.parent_uuid, session.key)) if record.parent_uuid else None
        if parent is not None and parent.thread == thread.key and parent.order < thread.last_call_order:
            thread.pending = ("fork", "rewind")  # a prompt grafted before the latest call: the user rewound
            thread.pending_meta = None
        content = msg.get("content")
        what = input_kind(content)
        if what is not None and what not in thread.new_input and len(thread.new_input) < MAX_NEW_INPUT:
            thread.new_input.append(what)
        thread.context.add(
            content, list(claude_texts(content)), _ledger(session), record.uuid, Seen(record.timestamp, record.uuid)
        )

    def _compact(self, session: Session, thread: _Thread, record: ClaudeLine) -> None:
        meta = record.obj.get("compactMetadata")
        meta = meta if isinstance(meta, dict) else {}
        thread.pending = (COMPACTION, str(record.obj.get("subtype")))
        thread.pending_meta = {
            "trigger": meta.get("trigger"),
            "pre_tokens": meta.get("preTokens"),
            "post_tokens": meta.get("postTokens"),
            "at": record.timestamp,
        }
        thread.context.reset()
        thread.history.reset()
        thread.last = None

    def _assistant(self, state: Store, session: Session, thread: _Thread, record: ClaudeLine) -> None:
        msg = record.message or {}
        msg_id = msg.get("id")
        if msg.get("model") == SYNTHETIC_MODEL or record.obj.get("isApiErrorMessage") is True:
            _facts(session).api_errors += 1
            return
        if not isinstance(msg_id, str):
            return
        request_id = record.obj.get("requestId")
        request_id = request_id if isinstance(request_id, str) else None
        usage = usage_of(msg, record.ts_ms)
        content = msg.get("content")
        call = self.calls.get(msg_id)
        if call is not None and call.session_key != session.key:
            # another session holds this message: a copy (resume or fork) when it is the same request
            if call.request_id is not None and request_id is not None and call.request_id != request_id:
                _facts(session).replayed_copies += 1
                self.links.add((call.session_key, session.key))
                return
            self._shared(call.session_key, session.key).msg_ids.add(msg_id)
            self.unsettled = True
            call = self.copies.get((session.key, msg_id))
            if call is None:
                self._new_call(session, thread, record, msg_id, request_id, usage, copy=True)
                call = self.copies[(session.key, msg_id)]
            else:
                self._more_of(call, msg, usage)
            _hash_blocks(call, content)
            thread.context.grow(content)
            return
        if call is None:
            self._new_call(session, thread, record, msg_id, request_id, usage)
        elif (call.request_id is not None and request_id is not None and request_id != call.request_id) or (
            call.path != record.where.path
        ):
            # a sub-agent replaying a parent message under another request, or the same call in another file (a
            # progress line and the sub-agent's own file): the lines of one call are in one file, counted once
            _facts(session).replayed_copies += 1
            return
        else:
            self._more_of(call, msg, usage)
        call = self.calls[msg_id]
        _hash_blocks(call, content)
        thread.context.grow(content)

    def _new_call(
        self,
        session: Session,
        thread: _Thread,
        record: ClaudeLine,
        msg_id: str,
        request_id: str | None,
        usage: CallUsage | None,
        *,
        copy: bool = False,
    ) -> None:
        msg = record.message or {}
        current = usage or CallUsage(0, 0, 0, record.ts_ms)
        turn = Turn(
            session=session.session_id,
            index=_position(session.turns, record.ts_ms),
            entry_id=msg_id,
            ts=record.timestamp,
            ts_ms=record.ts_ms,
            where=record.where,
            model=_str(msg.get("model")),
            provider="anthropic",
            api="anthropic-messages",
            stop_reason=_str(msg.get("stop_reason")),
        )
        turn.thread = thread.key
        turn.facts = ClaudeCall(request_id, record.sidechain)
        prompt_messages, new_messages, sent, new_bytes, directives = thread.context.call(_ledger(session), turn.index)
        turn.payload_bytes_raw = turn.payload_bytes = sent
        turn.payload_new_bytes = new_bytes
        turn.payload_history_bytes = sent - new_bytes
        turn.directives = directives
        call = _Call(
            msg_id,
            request_id,
            record.where.path,
            session.key,
            thread,
            turn,
            current,
            thread.previous,
            thread.pending,
            thread.pending_meta,
            xxhash.xxh3_64(),
            prompt_messages,
            new_messages,
        )
        last = thread.last
        if last is not None and not last.usage.empty:
            # the previous call's figures are final now (its lines came before this one's): place it in history
            thread.history.record(last.msg_id, last.turn.ts, last.usage.prompt, last.usage.cache_read,
                                  last.prompt_messages)  # fmt: skip
        call.history = thread.history.view()
        call.new_input = tuple(thread.new_input)
        thread.new_input = []
        thread.last = call
        if copy:
            self.copies[(session.key, msg_id)] = call
        else:
            self.calls[msg_id] = call
        if session.key in self._sharing:
            self.unsettled = True  # a session holding copies got a call of its own: who copied may change
        self._defer(call)
        session.turns.insert(turn.index, turn)  # time order: sub-agent calls interleave with the parent's
        for index in range(turn.index + 1, len(session.turns)):
            session.turns[index].index = index
        thread.pending = None
        thread.pending_meta = None
        thread.last_call_order = self.order
        if usage is not None and not usage.empty:
            thread.previous = current

    def _more_of(self, call: _Call, msg: dict[str, Any], usage: CallUsage | None) -> None:
        """Another block line of a known call: keep the final usage, the final stop reason."""
        call.lines += 1
        if isinstance(call.turn.facts, ClaudeCall):
            call.turn.facts.lines = call.lines
        stop = msg.get("stop_reason")
        if isinstance(stop, str):
            call.turn.stop_reason = stop
        if usage is None or _total(usage) < _total(call.usage):
            return
        was_empty = call.usage.empty
        kept = call.usage
        if not was_empty and _same_prompt(kept, usage):
            # the usual later block: only the output count grew, and the verdict reads none of it (re-judging
            # every such line was half of the 15,000 judgements of a 7,900-call history)
            kept.output = usage.output
            call.turn.tokens = {**(call.turn.tokens or {}), "output": usage.output or 0}
            return
        if self.unjudged is not call:
            self.judge_deferred()  # (before this call's figures change: another call's verdict may read them)
        kept.input, kept.cache_read, kept.cache_write = usage.input, usage.cache_read, usage.cache_write
        kept.output, kept.ttl_ms = usage.output, usage.ttl_ms
        kept.write_5m, kept.write_1h = usage.write_5m, usage.write_1h
        self._defer(call)
        if was_empty and not call.usage.empty and call.thread.previous is call.previous:
            call.thread.previous = call.usage

    def _defer(self, call: _Call) -> None:
        """Judge `call` later: when another call is judged or changes, or a surface reads (`settle`).

        A call's first line carries a partial usage that a later line of the same call usually replaces
        (in the bench history ~6,400 of its 7,900 calls: 14,300 judgements); judged once its lines stopped
        changing it, each call is judged once. Exact: a verdict is a function of the call's own figures and
        of its previous call's (figures and the prefix `judge` left cached), and every call the deferred one
        could read, or that could read it, is judged or changed only after `judge_deferred` ran, so every
        judgement sees what it saw when each line was judged at once; only the deferred call's repeats go."""
        if self.unjudged is not call:
            self.judge_deferred()
            self.unjudged = call

    def polled(self, store: Store) -> None:
        self.judge_deferred()  # (a reader between polls finds every call judged)

    def judge_deferred(self) -> None:
        """Make the deferred verdict (see `_defer`); `settle` does it before any surface reads the turns."""
        call = self.unjudged
        if call is not None:
            self.unjudged = None
            _judge(call)

    # ------------------------------------------------------------------ restarts
    def _forget_file(self, state: Store, path: str) -> None:
        """A file restarted (truncated/replaced): remove what it contributed; its lines come again."""
        self.judge_deferred()
        gone: list[_Call] = [self.calls.pop(k) for k in [k for k, c in self.calls.items() if c.path == path]]
        gone += [self.copies.pop(k) for k in [k for k, c in self.copies.items() if c.path == path]]
        touched: set[str] = set()
        for call in gone:
            session = state.sessions.get(call.session_key)
            if session is not None and call.turn in session.turns:
                session.turns.remove(call.turn)
                touched.add(session.key)
        for key in touched:
            for index, turn in enumerate(state.sessions[key].turns):
                turn.index = index
        self.seen = {k: v for k, v in self.seen.items() if v.path != path}
        self.threads = {k: t for k, t in self.threads.items() if t.path != path}
        known = self.file_session.pop(path, None)
        self.files.discard(path)
        if known is not None:
            for pair in [pair for pair in self.shared if known[0] in pair]:
                del self.shared[pair]  # its copies are read again, and shared again
            self.unsettled = True

    def assembly(self, store: Store) -> Any:
        """Its sessions as the persistent index groups them (`core.agents.claude_code.assembly`)."""
        from core.agents.claude_code.assembly import assembly

        return assembly(self, store)

    # ------------------------------------------------------------------ copies across sessions
    @property
    def _sharing(self) -> set[str]:
        return {key for pair in self.shared for key in pair}

    def _shared(self, first: str, second: str) -> _Shared:
        pair = (first, second) if first <= second else (second, first)
        found = self.shared.get(pair)
        if found is None:
            found = self.shared[pair] = _Shared((first, second))
        return found

    def settle(self, store: Store) -> None:
        """Decide which session made each call two sessions hold (see the module docstring): the copier's copies
        get `copied_from`, its first own call is judged as the first after a resume. Runs when a surface is about
        to read and something changed since the last time."""
        self.judge_deferred()
        if not self.unsettled:
            return
        self.unsettled = False
        for call in self.marked:
            call.turn.copied_from = None
        self.marked = []
        copiers: dict[str, set[str]] = {}  # message id -> sessions that copied it
        for shared in self.shared.values():
            copier = self._copier(store, shared)
            for msg_id in shared.msg_ids:
                copiers.setdefault(msg_id, set()).add(copier)
        for msg_id, copied_by in copiers.items():
            first = self.calls.get(msg_id)
            holders = ([first] if first is not None else []) + [
                c for key in sorted(self._sharing) if (c := self.copies.get((key, msg_id))) is not None
            ]
            owner = next((c for c in holders if c.session_key not in copied_by), holders[0] if holders else None)
            origin = store.sessions.get(owner.session_key) if owner is not None else None
            for call in holders:
                if call is not owner and origin is not None:
                    call.turn.copied_from = origin.session_id
                    self.marked.append(call)
        targets = self._first_own_calls(store, {c.session_key for c in self.marked})
        for call in [*self.resumed, *targets]:
            source = targets.get(call)
            if call.resumed_from != source:
                call.resumed_from = source
                _judge(call)
        self.resumed = list(targets)
        store.version += 1

    def _first_own_calls(self, store: Store, copiers: set[str]) -> dict[_Call, str]:
        """Per session holding copies: its first main-thread call of its own after them, and the session the
        copies before it came from."""
        calls = {id(c.turn): c for c in (*self.calls.values(), *self.copies.values()) if c.session_key in copiers}
        out: dict[_Call, str] = {}
        for key in copiers:
            session = store.sessions.get(key)
            origin: str | None = None
            for turn in session.turns if session is not None else ():
                if turn.thread != MAIN:
                    continue
                if turn.copied_from is not None:
                    origin = turn.copied_from
                    continue
                call = calls.get(id(turn))
                if origin is not None and call is not None:
                    out[call] = origin
                    break
        return out

    def _copier(self, store: Store, shared: _Shared) -> str:
        """Which of two sessions holding the same calls copied them: the one that went on with calls of its own
        after the shared ones; both did (a fork): the one whose own calls started later; neither: the one whose
        copies were read later."""
        first, second = shared.keys
        after_first = self._own_after(store, first, shared.msg_ids)
        after_second = self._own_after(store, second, shared.msg_ids)
        if after_first is None:
            return second
        if after_second is None:
            return first
        return first if after_first > after_second else second

    @staticmethod
    def _own_after(store: Store, key: str, shared: set[str]) -> int | None:
        """When the first call of `key` after its last shared call started (None: it has none)."""
        session = store.sessions.get(key)
        if session is None:
            return None
        turns = session.turns
        last = max((i for i, t in enumerate(turns) if t.entry_id in shared), default=-1)
        for turn in turns[last + 1 :]:
            if turn.entry_id not in shared:
                return turn.ts_ms or 0
        return None


MAX_NEW_INPUT = 4
"""What the user side added before a call, named at most this many ways (tool results, a prompt, a tag)."""


def input_kind(content: Any) -> str | None:
    """What a user message added, in a word: the tag it opens with (`task-notification`, `system-reminder`,
    `command-name`), `tool_result`, `image`, or `prompt` for plain text."""
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        return None
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "tool_result":
            return "tool_result"
        if kind == "image":
            return "image"
        text = block.get("text")
        if kind == "text" and isinstance(text, str) and text.strip():
            head = text.lstrip()
            if head.startswith("<"):
                end = next((i for i, ch in enumerate(head[1:65], 1) if not (ch.isalnum() or ch in "-_:")), 0)
                if end > 1 and head[end] in "> \n":
                    return "<" + head[1:end] + ">"
            return "prompt"
    return None


def _judge(call: _Call) -> None:
    """Decide (or re-decide, once the final usage arrived) one call's verdict and put it on its turn."""
    turn, usage = call.turn, call.usage
    turn.tokens = {"input": usage.input, "cache_read": usage.cache_read, "cache_write": usage.cache_write,
                   "output": usage.output or 0}  # fmt: skip
    if usage.empty:  # (re-judged when a later line of the call brings its usage)
        turn.logged = LoggedDecision(ABORTED, "no_usage", None, ts_ms=turn.ts_ms, source="transcript")
        turn.cache = None
        turn.why = "no usage on this call's lines: the request reported no tokens (aborted or failed)"
        return
    verdict: CacheVerdict
    if call.pending is not None:
        verdict = structural(*call.pending, usage, call.previous)
        source = "transcript"
    else:
        verdict = judge(usage, call.previous, resumed_from=call.resumed_from)
        source = "cache"
    if verdict.reason in ("prefix_rewritten", "cache_miss", RESUME, "rewind") and call.history is not None:
        changed = call.history.locate(usage.cache_read)
        if changed is not None:
            verdict.evidence["changed_at"] = changed
    if call.new_input and verdict.kind != "delta":
        verdict.evidence["new_input"] = list(call.new_input)
    count = call.new_messages if verdict.kind == "delta" else call.prompt_messages
    logged: LoggedDecision = decision(verdict, count, source=source)
    logged.ts_ms = turn.ts_ms
    turn.logged = logged
    turn.why = why(verdict, WHY)  # (reads none of what is added below)
    evidence = verdict.evidence  # (made for this verdict alone: `judge` and `structural` build a fresh dict)
    if call.pending_meta:
        evidence["compaction"] = call.pending_meta
    turn.cache = evidence


WHY = WhyTexts(
    compaction="first call after a compact boundary: {prompt} prompt tokens",
    fork="first call after a rewind: cache read {read} of {prompt}{gap}",
    gap=" after {seconds:.0f}s (cache lifetime {ttl_min} min)",
)
"""How a Claude Code call's structural verdicts read (`core.kernel.cache_verdict.why`; the cache rule's own
verdicts read as the rule words them)."""


def usage_of(msg: dict[str, Any], ts_ms: int | None) -> CallUsage | None:
    """Claude Code's `message.usage` as call figures; the lifetimes of its write from `usage.cache_creation`
    (its 5-minute and 1-hour parts; `ttl_ms` the larger part's, for a reader that wants one)."""
    usage = msg.get("usage")
    if not isinstance(usage, dict):
        return None
    creation = usage.get("cache_creation")
    ttl = one_hour = five_min = None
    if isinstance(creation, dict):
        one_hour = _num(creation.get("ephemeral_1h_input_tokens"))
        five_min = _num(creation.get("ephemeral_5m_input_tokens"))
        if one_hour or five_min:
            ttl = TTL_1H_MS if one_hour >= five_min else TTL_5M_MS
        else:
            one_hour = five_min = None
    return CallUsage(
        input=_num(usage.get("input_tokens")),
        cache_read=_num(usage.get("cache_read_input_tokens")),
        cache_write=_num(usage.get("cache_creation_input_tokens")),
        ts_ms=ts_ms,
        ttl_ms=ttl,
        output=_num(usage.get("output_tokens")),
        write_5m=five_min,
        write_1h=one_hour,
    )


def is_top_level_agent_file(path: str) -> bool:
    """A 2.0-era sub-agent transcript `<project>/agent-<id>.jsonl`, beside the session files rather than in a
    session's `subagents/` folder. Its lines carry the parent's `sessionId`, but nothing links them to a call of
    the parent (fasthooks' `agent-af1ff21.jsonl`: one Warmup call), so it is a session of its own, named after
    the file as ccusage names it; it was a second session with the parent's id, which `--session` matched too."""
    name = os.path.basename(path)
    return name.startswith("agent-") and name.endswith(".jsonl") and parent_transcript(path) is None


def parent_transcript(path: str) -> str | None:
    """`<dir>/<session>/subagents/<file>.jsonl` -> `<dir>/<session>.jsonl` (the sub-agent's parent session)."""
    folder = os.path.dirname(path)
    if os.path.basename(folder) != "subagents":
        return None
    session_dir = os.path.dirname(folder)
    return session_dir + ".jsonl"


def _hash_blocks(call: _Call, content: Any) -> None:
    """Fold this line's blocks into the call's fingerprint: text, thinking + signature, tool_use id/name/input."""
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            part: Any = ["text", block.get("text")]
        elif kind == "thinking":
            part = ["thinking", block.get("thinking"), block.get("signature")]
        elif kind == "tool_use":
            part = ["tool_use", block.get("id"), block.get("name"), block.get("input")]
        else:
            part = [kind, block]
        call.hasher.update(orjson.dumps(part, option=orjson.OPT_SORT_KEYS) + b"\n")
    call.turn.fingerprints = {"stable_xxh3": call.hasher.hexdigest()}


def _position(turns: list[Turn], ts_ms: int | None) -> int:
    """Where a call starting at `ts_ms` goes among a session's turns (after those that started no later)."""
    if ts_ms is None or not turns or (turns[-1].ts_ms or 0) <= ts_ms:
        return len(turns)
    return bisect.bisect_right(turns, ts_ms, key=lambda turn: turn.ts_ms or 0)


def _key(uuid: str, session: str) -> int:
    """A line uuid within a session as a 64-bit int: the seen-lines index costs a few bytes per line, not a
    string. Per session, because a resumed session's file holds the lines of the session it copied.

    Python's own 64-bit hash of the pair (SipHash of each string, the session key's cached on its one object):
    the index lives in this process only, and the xxh3 of a joined, encoded copy cost ~0.4 µs a line more."""
    return hash((session, uuid))


def _ledger(session: Session) -> DirectiveLedger | None:
    found = session.analyzers.get(DirectiveLedger)  # (the agent's own class: one lookup, twice per call)
    return found if found is not None else session.analyzer(DirectiveLedger)


def _facts(session: Session) -> ClaudeSession:
    facts = session.facts
    if not isinstance(facts, ClaudeSession):
        facts = session.facts = ClaudeSession()
    return facts


def _same_prompt(kept: CallUsage, usage: CallUsage) -> bool:
    """Everything `_judge` reads of a call's usage is unchanged (all but the output count)."""
    return (
        kept.input == usage.input
        and kept.cache_read == usage.cache_read
        and kept.cache_write == usage.cache_write
        and kept.ttl_ms == usage.ttl_ms
        and kept.write_5m == usage.write_5m
        and kept.write_1h == usage.write_1h
    )


def _total(usage: CallUsage) -> int:
    return usage.prompt + (usage.output or 0)


def _num(value: Any) -> int:
    if type(value) is int:  # (JSON's usual case first: ~96,000 calls on the 100 MB history)
        return value
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _stem(path: str) -> str:
    name = os.path.basename(path)
    return name[: -len(".jsonl")] if name.endswith(".jsonl") else name


__all__ = ["ClaudeCall", "ClaudeCalls", "ClaudeSession", "is_top_level_agent_file", "parent_transcript", "usage_of"]
