"""Capture vs commit of every assistant message: was it committed `clean` or `rewritten`, and what changed.

senpi hashes each assistant message twice: at the last `message_update` (the capture) and at
`message_end` (the commit). If the hashes differ the turn is `rewritten`, and the next call re-sends
history (senpi-formats §3.6–3.7). This module answers, per turn:

* the outcome, from the best evidence available, in this order:
  1. the transcript: a binding marker written just before the assistant entry means `clean`, an
     invalidation with `reason: assistant_rewritten` means `rewritten` (builds >= 2026.8.18-3). This is
     the agent's own judgment, so it wins;
  2. an event recording (`message_update` / `message_end` lines): both hashes recomputed under every hash
     rule, the outcome taken under the rule of the session's build profile;
  3. inferred: the capture is the commit minus the fields agent-core stamps after the last update
     (thinking `startedAt` / `endedAt`), outcome under the profile's rule, and the source says "inferred";
* the field-level diff (capture vs commit) with a volatile flag per change, and its class;
* pointers (`capture_where`, `commit_where`) so the drill-down can re-read both bodies: state keeps none.

Recordings and transcripts may be read in either order: `RecordingMatcher` keeps unmatched commits of
either side, indexed by the verbatim hash of the committed message (and its `timestamp`), and attaches a
recording to its turn whenever the second side arrives. When that changes an outcome the verdict replay
re-runs from the next turn.

It also feeds the build-profile detection: a turn whose outcome differs by hash rule, followed by a
logged `delta` or `assistant_rewritten`, tells which rule the build used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.agents.senpi.fingerprint import (
    FINGERPRINT_KEYS,
    HASH_RULES,
    VERBATIM,
    assistant_content_hash,
    fingerprints,
    hashed_fields,
)
from core.agents.senpi.profiles import API_ID, BINDING_TYPE, ProfileTracker
from core.kernel.diff import _Differ, classify, describe, diff_with_count
from core.kernel.pipeline import NotKept, RecordHandler, SessionAnalyzer
from core.kernel.volatility import VolatilityPolicy, policy
from core.model import AgentEvent, CommitInfo, DiffChange, LoggedDecision, TranscriptEntry, Turn, Where, entry_key
from core.timeutil import any_ms

if TYPE_CHECKING:
    from core.kernel.pipeline import AgentRef, Session, Store
    from core.kernel.ports import Reread

TIMING_FIELDS = ("startedAt", "endedAt")
TERMINAL_STOPS = frozenset({"error", "aborted"})
#: entries that may sit between a binding marker and its assistant without breaking the link
_LEDGER_TYPES = frozenset({"custom", "label", "session_info"})
#: entries between two calls after which the next logged decision says nothing about the previous commit
_DISTURBING = frozenset({"compaction", "model_change", "thinking_level_change", "branch_summary", "context_edit"})
MAX_PENDING_RECORDINGS = 50_000


def strip_timing(message: dict[str, Any]) -> dict[str, Any]:
    """The inferred capture: the commit without the thinking timing agent-core stamps after the stream."""
    content = message.get("content")
    if not isinstance(content, list):
        return message
    blocks = [
        {k: v for k, v in b.items() if k not in TIMING_FIELDS}
        if isinstance(b, dict) and b.get("type") == "thinking"
        else b
        for b in content
    ]
    return {**message, "content": blocks}


def has_timing(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "thinking" and any(k in b for k in TIMING_FIELDS) for b in content
    )


def timing_diff(message: dict[str, Any], volatility: VolatilityPolicy) -> list[DiffChange]:
    """`diff_with_count(hashed_fields(strip_timing(message)), hashed_fields(message), volatility)[0]` (the inferred
    capture against the commit), walking only the content blocks `strip_timing` copied.

    Every other value of the two objects is the very same object on both sides, and one object differs from
    itself only where it holds a NaN, which a transcript line cannot (orjson, the only parser of its lines,
    refuses NaN and infinities): the walk of the rest found nothing, at ~60 % of the diff's work (1,227 timed
    messages in 60 transcripts of the 100 MB corpus). The copied blocks are walked by the same differ, with the
    same roots and paths, so their changes, volatility and cap are the full diff's; `tests/test_commit_events.py`
    compares both."""
    capture, commit = hashed_fields(strip_timing(message)), hashed_fields(message)
    differ = _Differ(capture, commit, volatility)
    a_blocks, b_blocks = capture["content"], commit["content"]
    if not isinstance(a_blocks, list) or not isinstance(b_blocks, list) or len(a_blocks) != len(b_blocks):
        return diff_with_count(capture, commit, volatility)[0]
    path: list[Any] = ["content", 0]
    for i, (a, b) in enumerate(zip(a_blocks, b_blocks, strict=True)):
        if a is not b:
            path[1] = i
            differ.walk(a, b, path)
    return differ.changes


def compare(capture: dict[str, Any] | None, commit: dict[str, Any]) -> dict[str, str]:
    """senpi's commit check under every hash rule: {rule: clean | rewritten} (no capture -> clean).

    Equal hashes <=> equal hashed objects, so the objects are compared directly (Python's `==` treats 1 and
    1.0 as JavaScript does; only a bool swapped for 0/1 between capture and commit would be missed).
    """
    if capture is None:
        return dict.fromkeys(HASH_RULES, "clean")
    return {
        rule: "clean" if hashed_fields(capture, rule) == hashed_fields(commit, rule) else "rewritten"
        for rule in HASH_RULES
    }


_OUTCOMES: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}


def _shared_outcomes(outcomes: dict[str, str]) -> dict[str, str]:
    """`CommitInfo.outcomes`: one of the few distinct {rule: outcome} dicts, shared by every turn
    that has it (a dict per turn was ~180 bytes of every turn kept). Readers copy it; nothing mutates it."""
    key = tuple(outcomes.items())
    shared = _OUTCOMES.get(key)
    if shared is None:
        shared = _OUTCOMES[key] = dict(outcomes) if len(_OUTCOMES) < 1024 else None
    return shared if shared is not None else dict(outcomes)


@dataclass(slots=True)
class RecordedCommit:
    """One assistant message of an event recording: both hashes judged, the diff, and where both lines are."""

    session_id: str | None
    commit_where: Where
    capture_where: Where | None
    start_where: Where | None
    capture_kind: str | None  # message | partial | reconstructed | None (no message_update: result-only)
    outcomes: dict[str, str]
    diff: list[DiffChange]
    diff_truncated: int
    verbatim: str  # verbatim assistantContentHash of the commit: the matching key
    timestamp: int | None
    terminal: bool
    matched: bool = False


@dataclass(slots=True)
class TurnCommitFacts:
    """What the commit analysis remembers of one turn (no bodies)."""

    index: int
    resident: bool
    terminal: bool
    timing: bool  # the commit carries thinking startedAt/endedAt
    inferred_diff: list[DiffChange]
    transcript: str | None = None  # clean | rewritten from a marker / invalidation
    transcript_where: Where | None = None
    recording: RecordedCommit | None = None
    logged: LoggedDecision | None = None
    disturbed_before: bool = False
    message_ts: int | None = None  # the assistant's `timestamp` (call start): a recording must carry the same

    def outcomes(self) -> dict[str, str]:
        """Per hash rule, what the commit check gives from the best capture known."""
        if self.recording is not None:
            return self.recording.outcomes
        return {rule: ("rewritten" if self.timing and rule == VERBATIM else "clean") for rule in HASH_RULES}


class CommitAnalyzer(SessionAnalyzer):
    """Per-session: commit outcome, diff and fingerprints of every assistant turn."""

    def __init__(self, session: Session, reread: Reread) -> None:
        self.session = session
        self.policy: VolatilityPolicy = policy()
        self.facts: list[TurnCommitFacts] = []
        #: a parked session's recorded commits by turn (its facts are gone; the drill-down still rebuilds a
        #: delta-only capture from one)
        self.recordings: dict[int, RecordedCommit] = {}
        self._binding: tuple[str, str | None, Where] | None = None  # (marker|invalidation, reason, where)
        self._last_line = 0
        self._disturbed = False
        self._profile_version = -1

    # ----------------------------------------------------------------- entries
    def on_entry(self, session: Session, entry: TranscriptEntry, turn: Turn | None) -> None:
        if entry.where.line <= self._last_line:
            return  # re-delivered after a branch switch: its turn was judged when it was first read
        self._last_line = entry.where.line
        etype = entry.type
        if etype == "custom" and entry.obj.get("customType") == BINDING_TYPE:
            data = entry.obj.get("data")
            if isinstance(data, dict) and data.get("marker"):
                self._binding = ("marker", None, entry.where)
            elif isinstance(data, dict) and data.get("invalidated"):
                reason = data.get("reason") if isinstance(data.get("reason"), str) else None
                self._binding = ("invalidation", reason, entry.where)
                if reason != "assistant_rewritten":
                    self._disturbed = True
            return
        if etype in _DISTURBING:
            self._disturbed = True
        if etype in _LEDGER_TYPES:
            return
        if etype == "message" and turn is not None and entry.message is not None:
            self._on_assistant(entry, entry.message, turn)
        if etype == "message" or etype == "custom_message":
            self._binding = None

    def on_branch(self, session: Session, keep: int) -> None:
        self._binding = None
        self._disturbed = True

    def park(self, session: Session) -> None:
        """The session is done (`State.park`): `turn.commit` and the profile's hash votes hold the judgments.
        Only the recordings stay (the drill-down rebuilds a delta-only capture from one, `_find_recording`); a
        recording that arrives later wakes the session instead (`RecordingMatcher._offer`)."""
        self.recordings = {f.index: f.recording for f in self.facts if f.recording is not None}
        self.facts = []

    def keep(self, session: Session) -> None:
        """A stored session (`core.index`) has no recordings: a recording's diff is message content, and the
        recording files are read again at every start (a matching one wakes the session, `restored`)."""
        if self.recordings:
            raise NotKept("event recordings are attached to its calls")

    def _on_assistant(self, entry: TranscriptEntry, msg: dict[str, Any], turn: Turn) -> None:
        turn.fingerprints = fingerprints(msg, self.policy)
        resident = msg.get("api") == API_ID
        terminal = msg.get("stopReason") in TERMINAL_STOPS
        timing = has_timing(msg)
        inferred: list[DiffChange] = []
        if timing:
            inferred = timing_diff(msg, self.policy)
        facts = TurnCommitFacts(turn.index, resident, terminal, timing, inferred, logged=turn.logged)
        facts.message_ts = any_ms(msg.get("timestamp"))
        facts.disturbed_before = self._disturbed
        self._disturbed = False
        if self._binding is not None:
            kind, reason, where = self._binding
            if kind == "marker":
                facts.transcript, facts.transcript_where = "clean", where
            elif reason == "assistant_rewritten":
                facts.transcript, facts.transcript_where = "rewritten", where
        while len(self.facts) < turn.index:  # turns of other branches never seen here keep their slots
            self.facts.append(TurnCommitFacts(len(self.facts), False, True, False, []))
        if len(self.facts) == turn.index:
            self.facts.append(facts)
        else:
            self.facts[turn.index] = facts
        self._resolve(facts)
        self._vote(facts)
        if turn.index > 0:
            self._vote_next(self.facts[turn.index - 1], facts)

    # ----------------------------------------------------------------- outcome
    def _turn(self, index: int) -> Turn | None:
        return self.session.turns[index] if index < len(self.session.turns) else None

    def _rule(self) -> str:
        tracker = self.session.analyzer(ProfileTracker)
        return tracker.profile.hash_rule if tracker is not None else VERBATIM

    def _resolve(self, facts: TurnCommitFacts) -> str:
        """(Re)build `turn.commit` from the facts and the current profile; returns the outcome."""
        turn = self._turn(facts.index)
        rule = self._rule()
        rec = facts.recording
        outcomes = facts.outcomes()
        if not facts.resident:
            outcome = "not-resident"
        elif facts.terminal:
            outcome = "unknown"  # senpi forgets the capture of a failed turn: no commit check
        elif facts.transcript is not None:
            outcome = facts.transcript
        else:
            outcome = outcomes[rule]
        source = "events" if rec is not None else ("transcript" if facts.transcript is not None else "inferred")
        diff = rec.diff if rec is not None else facts.inferred_diff
        diff_source = ("events-" + (rec.capture_kind or "none")) if rec is not None else "inferred"
        klass: str | None = None
        if outcome == "rewritten":
            if rec is None and outcomes[rule] != "rewritten":
                diff, klass = [], None  # the transcript says rewritten, but not in the fields a capture lacks
                diff_source = "unknown"
            else:
                klass = classify(diff)
        info = CommitInfo(
            outcome=outcome,
            source=source,
            klass=klass,
            diff=list(diff) if outcome == "rewritten" or rec is not None else [],
            variant=rule,
            capture_where=rec.capture_where if rec is not None else None,
            commit_where=rec.commit_where if rec is not None else (turn.where if turn is not None else None),
        )
        info.outcomes = _shared_outcomes(outcomes)
        info.diff_source = diff_source
        if rec is not None and rec.diff_truncated:
            info.diff_truncated = rec.diff_truncated
        if rec is not None and facts.transcript is not None and outcomes[rule] != facts.transcript:
            info.conflict = (
                f"the transcript says {facts.transcript}; the recording gives {outcomes[rule]} under the {rule} rule"
            )
        info.evidence_where = facts.transcript_where
        if turn is not None:
            turn.commit = info
        return outcome

    def outcome(self, index: int) -> str | None:
        turn = self._turn(index)
        return turn.commit.outcome if turn is not None and turn.commit is not None else None

    def volatile_only(self, index: int) -> bool:
        """The turn was rewritten and every change between capture and commit is volatile."""
        turn = self._turn(index)
        return bool(
            turn and turn.commit and turn.commit.outcome == "rewritten" and turn.commit.klass == "volatile-only"
        )

    def explain(self, index: int) -> str:
        """One phrase about a rewritten commit, for verdict explanations."""
        turn = self._turn(index)
        if turn is None or turn.commit is None:
            return "commit unknown"
        info = turn.commit
        if info.outcome != "rewritten":
            return f"commit {info.outcome}"
        sides = "capture and commit" if info.source == "events" else "inferred capture and commit"
        if info.source == "transcript":
            sides = "rewritten per the transcript; inferred capture and commit"
        if info.klass == "volatile-only":
            return f"{sides} differ only in volatile fields {describe(info.diff)}"
        if info.klass == "semantic":
            semantic = [c for c in info.diff if not c.volatile]
            return f"{sides} differ in {describe(semantic)}"
        return "rewritten per the transcript; which fields changed is unknown without an event recording"

    def refresh_profile(self, version: int) -> int | None:
        """Re-resolve every turn after the profile changed; the first turn whose outcome changed, or None."""
        if version == self._profile_version:
            return None
        self._profile_version = version
        first: int | None = None
        for facts in self.facts:
            before = self.outcome(facts.index)
            if self._resolve(facts) != before and first is None:
                first = facts.index
        return first

    # ----------------------------------------------------------------- recordings
    def attach_recording(self, index: int, rec: RecordedCommit) -> None:
        """An event recording of this turn arrived: re-judge it and re-run what depends on it."""
        if index >= len(self.facts):
            return
        facts = self.facts[index]
        facts.recording = rec
        before = (self.outcome(index), self.volatile_only(index))
        self._resolve(facts)
        after = (self.outcome(index), self.volatile_only(index))
        self._vote(facts)
        if index + 1 < len(self.facts):
            self._vote_next(facts, self.facts[index + 1])
        for analyzer in self.session.each_analyzer():  # the replay re-runs the calls after it
            analyzer.commit_changed(index, outcome_changed=after != before)

    # ----------------------------------------------------------------- profile evidence
    def _vote(self, facts: TurnCommitFacts) -> None:
        """A marker / invalidation judged a recorded capture: which hash rules reproduce the judgment."""
        tracker = self.session.analyzer(ProfileTracker)
        if tracker is None:
            return
        votes = None
        if facts.transcript is not None and facts.recording is not None and not facts.terminal:
            outcomes = facts.recording.outcomes
            if len(set(outcomes.values())) > 1:
                votes = {rule: 1 if o == facts.transcript else -1 for rule, o in outcomes.items()}
        tracker.set_hash_votes(2 * facts.index, votes)

    def _vote_next(self, prev: TurnCommitFacts, nxt: TurnCommitFacts) -> None:
        """The decision logged for the next call says whether `prev` was committed clean or rewritten."""
        tracker = self.session.analyzer(ProfileTracker)
        if tracker is None:
            return
        votes = None
        logged = nxt.logged
        if logged is not None and prev.resident and not prev.terminal and not nxt.disturbed_before:
            outcomes = prev.outcomes()
            if prev.transcript is None and len(set(outcomes.values())) > 1:
                expect = None
                if logged.reason == "assistant_rewritten":
                    expect = "rewritten"
                elif logged.kind == "delta":
                    expect = "clean"
                if expect is not None:
                    votes = {rule: 1 if o == expect else -1 for rule, o in outcomes.items()}
        tracker.set_hash_votes(2 * prev.index + 1, votes)


# --------------------------------------------------------------------- event recordings


@dataclass
class _Recorder:
    """Reading state of one recording file: the assistant message in flight and nothing else."""

    session_id: str | None = None
    start_where: Where | None = None
    start_message: dict[str, Any] | None = None
    capture: dict[str, Any] | None = None
    capture_where: Where | None = None
    capture_kind: str | None = None
    blocks: list[dict[str, Any]] = field(default_factory=list)  # reconstruction of delta-only updates


def _reconstruct(blocks: list[dict[str, Any]], event: dict[str, Any]) -> None:
    """Apply one delta-only `assistantMessageEvent` (senpi's newer `--mode json`) to the rebuilt content."""
    etype = event.get("type")
    index = event.get("contentIndex")
    if not isinstance(etype, str) or not isinstance(index, int) or index < 0 or index > 10_000:
        return
    while len(blocks) <= index:
        blocks.append({})
    block = blocks[index]
    if etype == "text_start":
        blocks[index] = {"type": "text", "text": ""}
    elif etype == "thinking_start":
        blocks[index] = {"type": "thinking", "thinking": "", "thinkingSignature": ""}
    elif etype == "toolcall_start":
        blocks[index] = {"type": "toolCall", "id": event.get("id"), "name": event.get("toolName"), "arguments": {}}
    elif etype in ("text_delta", "thinking_delta") and isinstance(event.get("delta"), str):
        key = "text" if etype == "text_delta" else "thinking"
        block[key] = str(block.get(key, "")) + event["delta"]
    elif etype == "toolcall_delta" and isinstance(event.get("delta"), str):
        block["partialJson"] = str(block.get("partialJson", "")) + event["delta"]
    elif etype in ("text_end", "thinking_end") and isinstance(event.get("content"), str):
        block["text" if etype == "text_end" else "thinking"] = event["content"]
    elif etype == "toolcall_end" and isinstance(event.get("toolCall"), dict):
        blocks[index] = dict(event["toolCall"])


def _fill_unsent_fields(capture: dict[str, Any], commit: dict[str, Any]) -> dict[str, Any]:
    """Signatures never travel in delta-only updates: take them from the commit rather than call them rewritten."""
    content = capture.get("content")
    final = commit.get("content")
    if not isinstance(content, list) or not isinstance(final, list):
        return capture
    out = []
    for i, block in enumerate(content):
        other = final[i] if i < len(final) and isinstance(final[i], dict) else None
        if other is not None and block.get("type") == other.get("type"):
            block = dict(block)
            for key in ("thinkingSignature", "textSignature", "redacted"):
                if key in other and not block.get(key):
                    block[key] = other[key]
        out.append(block)
    return {**capture, "content": out}


class RecordingMatcher(RecordHandler):
    """Record handler: turns event recordings into `RecordedCommit`s and attaches them to transcript turns."""

    handles = (AgentEvent, TranscriptEntry)
    #: recordings waiting for their turn are kept up to this many (`core.session_pool` reads a history apart
    #: only when its recordings could never reach it: then no drain, in any order, drops one)
    pending_limit = MAX_PENDING_RECORDINGS

    def __init__(self, agent: AgentRef, reread: Reread) -> None:
        super().__init__(agent, reread)
        self.policy = policy()
        self.recorders: dict[str, _Recorder] = {}
        self.pending: dict[str, list[RecordedCommit]] = {}  # verbatim hash -> recordings without a turn
        self.pending_total = 0
        self.waiting: dict[str, list[tuple[str, int]]] = {}  # verbatim hash -> (session key, turn index)
        self.recorded = 0
        self.matched = 0

    def on_record(self, state: Store, record: Any) -> None:
        if isinstance(record, AgentEvent):
            self._on_event(state, record)
        elif isinstance(record, TranscriptEntry) and record.type == "message" and record.role == "assistant":
            self._on_turn(state, record)

    # ----------------------------------------------------------------- recordings
    def _on_event(self, state: Store, record: AgentEvent) -> None:
        rec = self.recorders.setdefault(record.where.path, _Recorder())
        obj = record.obj
        etype = record.type
        if etype == "session":
            rec.session_id = obj.get("id") if isinstance(obj.get("id"), str) else None
            return
        message = obj.get("message")
        if etype == "message_start" and isinstance(message, dict) and message.get("role") == "assistant":
            rec.start_where, rec.start_message = record.where, message
            rec.capture, rec.capture_where, rec.capture_kind, rec.blocks = None, None, None, []
        elif etype == "message_update":
            event = obj.get("assistantMessageEvent")
            partial = event.get("partial") if isinstance(event, dict) else None
            if isinstance(message, dict):
                rec.capture, rec.capture_kind = message, "message"
            elif isinstance(partial, dict):
                rec.capture, rec.capture_kind = partial, "partial"
            elif isinstance(event, dict):
                _reconstruct(rec.blocks, event)
                base = rec.start_message or {"role": "assistant"}
                rec.capture = {**base, "content": [dict(b) for b in rec.blocks]}
                rec.capture_kind = "reconstructed"
            rec.capture_where = record.where
        elif etype == "message_end" and isinstance(message, dict) and message.get("role") == "assistant":
            committed = self._judge(rec, record.where, message)
            rec.capture, rec.capture_where, rec.capture_kind, rec.blocks = None, None, None, []
            rec.start_where, rec.start_message = None, None
            self._offer(state, committed)

    def _judge(self, rec: _Recorder, where: Where, commit: dict[str, Any]) -> RecordedCommit:
        capture = rec.capture
        if capture is not None and rec.capture_kind == "reconstructed":
            capture = _fill_unsent_fields(capture, commit)
        outcomes = compare(capture, commit)
        changes: list[DiffChange] = []
        truncated = 0
        if capture is not None:
            changes, truncated = diff_with_count(hashed_fields(capture), hashed_fields(commit), self.policy)
        self.recorded += 1
        return RecordedCommit(
            session_id=rec.session_id,
            commit_where=where,
            capture_where=rec.capture_where,
            start_where=rec.start_where,
            capture_kind=rec.capture_kind,
            outcomes=outcomes,
            diff=changes,
            diff_truncated=truncated,
            verbatim=assistant_content_hash(commit, VERBATIM),
            timestamp=any_ms(commit.get("timestamp")),
            terminal=commit.get("stopReason") in TERMINAL_STOPS,
        )

    def _offer(self, state: Store, committed: RecordedCommit) -> None:
        waiting = self.waiting.get(committed.verbatim)
        if waiting:
            for i, (key, index) in enumerate(waiting):
                session = state.sessions.get(key)
                if session is None or index >= len(session.turns):
                    continue
                if session.parked is not None:
                    # its commit facts and replay are gone: rebuild it (`State.wake`); the recording waits in
                    # `pending`, where the re-read turn finds it as if the recording had been read first. A
                    # recording of another session (the same content, "ok" twice) would not fit the re-read
                    # turn either: no rebuild for it
                    if committed.session_id is None or committed.session_id == session.session_id:
                        state.wake(key)
                    continue
                if self._fits(session, session.turns[index], committed):
                    del waiting[i]
                    self._attach(session, index, committed)
                    return
        if self.pending_total < MAX_PENDING_RECORDINGS:
            self.pending.setdefault(committed.verbatim, []).append(committed)
            self.pending_total += 1

    # ----------------------------------------------------------------- transcript side
    def _on_turn(self, state: Store, entry: TranscriptEntry) -> None:
        session = state.sessions.get(entry.where.path)
        if session is None:
            return
        node = session.nodes.get(entry_key(entry.id, entry.where.line))
        if node is None or node.turn_index is None or node.where is not entry.where:
            return
        turn = session.turns[node.turn_index]
        key = (turn.fingerprints or {}).get(FINGERPRINT_KEYS[VERBATIM])
        if key is None:
            return
        candidates = self.pending.get(key)
        if candidates:
            for i, committed in enumerate(candidates):
                if self._fits(session, turn, committed):
                    del candidates[i]
                    self.pending_total -= 1
                    self._attach(session, turn.index, committed)
                    return
        self.waiting.setdefault(key, []).append((session.key, turn.index))

    def restored(self, store: Store, session: Session) -> None:
        """A parked session loaded from the index: its calls wait for their recordings as if its transcript had
        just been read (`_on_turn`); one that arrives wakes it (`_offer`), and the rebuilt turn takes it."""
        for node in session.nodes.values():
            if node.turn_index is None or node.turn_index >= len(session.turns):
                continue
            turn = session.turns[node.turn_index]
            key = (turn.fingerprints or {}).get(FINGERPRINT_KEYS[VERBATIM])
            if key is not None and node.where == turn.where:
                self.waiting.setdefault(key, []).append((session.key, turn.index))

    def forget_session(self, session: Session) -> None:
        """A session is forgotten (`State.reset_session`): its turns no longer wait for recordings, and the
        recordings attached to them wait again, as if never matched (a re-read of its file matches them anew)."""
        key = session.key
        analyzer = session.analyzer(CommitAnalyzer)
        if analyzer is not None:
            attached = [f.recording for f in analyzer.facts if f.recording is not None]
            attached += list(analyzer.recordings.values())
            for committed in attached:
                if committed.matched:
                    committed.matched = False
                    self.matched -= 1
                    self.pending.setdefault(committed.verbatim, []).append(committed)
                    self.pending_total += 1
        for hash_key in [k for k, turns in self.waiting.items() if any(t[0] == key for t in turns)]:
            left = [t for t in self.waiting[hash_key] if t[0] != key]
            if left:
                self.waiting[hash_key] = left
            else:
                del self.waiting[hash_key]

    @staticmethod
    def _fits(session: Session, turn: Turn, committed: RecordedCommit) -> bool:
        """Same content is not enough ("ok" twice): the session id and the call's start time must agree too."""
        if committed.session_id is not None and committed.session_id != session.session_id:
            return False
        analyzer = session.analyzer(CommitAnalyzer)
        if committed.timestamp is not None and analyzer is not None and turn.index < len(analyzer.facts):
            message_ts = analyzer.facts[turn.index].message_ts
            if message_ts is not None and message_ts != committed.timestamp:
                return False
        return True

    def _attach(self, session: Session, index: int, committed: RecordedCommit) -> None:
        committed.matched = True
        self.matched += 1
        analyzer = session.analyzer(CommitAnalyzer)
        if analyzer is not None:
            analyzer.attach_recording(index, committed)
