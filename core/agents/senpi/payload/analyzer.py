"""What every provider call sent: payload bytes, their composition, and the cross-check against senpi.

senpi logs a size only for flatten and bootstrap calls (`payloadBytes` on the assistant's diagnostic) and
never says what the bytes were. This session analyzer (registered as `payload`) measures, for every call,
the prompt the agent serialized (`core.agents.senpi.payload.serialize`) after the build's own ultrawork dedupe, split
into re-sent history and new messages, with the directive copies inside it, and compares it with every
logged `payloadBytes`. A mismatch is a bug here until shown otherwise, so each one is listed in
`SenpiSession.payload_mismatches`.

Per turn it fills `payload_bytes`, `payload_bytes_raw`, `payload_history_bytes`, `payload_new_bytes`,
`directives` and `serializer`, and `turn.facts.payload` (a `PayloadInfo`) with the serializer, the build profile,
senpi's `collapsedDirectives`, what each dedupe would save, the delta a stable fingerprint would have sent and the
prompt tokens billed (input + cache read + cache write; `turn.tokens` stays as usage reported it).

It is incremental: a call costs work proportional to the messages that are new since the previous one
(`core.agents.senpi.payload.lane`). The exact blocks of any one call are rebuilt on demand by re-reading the
entries it needs (`core.agents.senpi.payload.rebuild`).

Which build's rules apply is evidence, not a version check: each call is measured under every
`SerializerEra`; a call whose logged `payloadBytes` one of them reproduces fixes the profile for the calls
that follow; otherwise the session's detected build (`core.agents.senpi.profiles`), then the assistant's
provider id and date choose. Which serializer a call used follows its decision (`call_basis`).

A turn's decision may be filled by another analyzer after this one has seen the assistant entry; the
measurement is kept for that moment and completed by a record handler that runs after every analyzer.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from core.agents.senpi.facts import PayloadInfo, SenpiSession, senpi_call
from core.agents.senpi.payload.context import CtxMsg, message_kind, reread_items
from core.agents.senpi.payload.dedupe import KEEP_IDENTICAL_PREVIOUS, KEEP_LAST
from core.agents.senpi.payload.lane import DSEP, CallFacts, Lane, Measure, delta_facts
from core.agents.senpi.payload.rebuild import simulate_turn
from core.agents.senpi.payload.rules import (
    ERAS,
    FLATTEN,
    LANE_RULES,
    SerializerEra,
    call_basis,
    default_era,
    external_era,
    prompt_tokens,
    stable_bytes,
)
from core.agents.senpi.payload.serialize import (
    TOOL_WATCH_CUSTOM_TYPE,
    WATCH_MAX_TRACKED,
    WATCH_NOTE_CHARS,
    WatchedExecution,
    execution_from_entry,
    execution_from_result,
    utf16_truncate,
)
from core.agents.shared.pi_family.context import ProviderContext, is_transmitted
from core.kernel.directives import ULTRAWORK, DirectiveLedger, Seen, TagBlock
from core.kernel.pipeline import RecordHandler, SessionAnalyzer
from core.model import TranscriptEntry, Turn, entry_key

if TYPE_CHECKING:
    from core.kernel.dedupe import DedupeResult
    from core.kernel.pipeline import Session, Store
    from core.kernel.ports import Reread
    from core.model import Record

LATE_WINDOW = 16


class PayloadAnalyzer(SessionAnalyzer):
    """Per-session payload reconstruction; see the module docstring."""

    def __init__(self, session: Session, reread: Reread) -> None:
        self.reread = reread  # a compaction or a branch switch re-reads the context; `dedupe` rebuilds a payload
        self.lanes: dict[str, Lane] = {rules.name: Lane(rules) for rules in LANE_RULES}
        self.completed: OrderedDict[str, WatchedExecution] = OrderedDict()  # the tool watch's record
        self.confirmed: SerializerEra | None = None  # the profile the last logged payloadBytes confirmed
        self.mismatches: dict[int, dict[str, Any]] = {}
        self.checked = 0
        self._pending: dict[int, tuple[Turn, CallFacts]] = {}
        #: filled turns whose `avoidable` was not known yet (the replay may set it a little later)
        self._late: deque[Turn] = deque(maxlen=LATE_WINDOW)

    # ------------------------------------------------------------------ pipeline
    def on_entry(self, session: Session, entry: TranscriptEntry, turn: Turn | None) -> None:
        self.settle(session, final=True)
        context = _context(session)
        if context is None:
            return
        if turn is not None:
            self._measure_call(session, turn)
        if context.reset is not None:
            self._rebuild(session, reread_items(context.items, self.reread))
        else:
            line_key = entry_key(entry.id, entry.where.line)
            for position, msg in enumerate(context.added):
                kind = message_kind(entry.obj, msg)
                self._append(session, CtxMsg(msg, kind, (line_key, position), entry.timestamp))
        if entry.type == "custom" and entry.obj.get("customType") == TOOL_WATCH_CUSTOM_TYPE:
            execution = execution_from_entry(entry.obj.get("data"))
            if execution is not None:
                self._track(execution)
        if turn is not None:
            for lane in self.lanes.values():
                lane.mark_call()

    def park(self, session: Session) -> None:
        """The session is done (`State.park`): fill what is still pending, then drop the lanes (the running
        serialization, the largest part of a session's analysis state) and the tool watch's record. The turns
        keep every figure they were given; `rebuild_turn` re-reads from disk and needs neither."""
        self.settle(session, final=True)
        self.lanes = {}
        self.completed = OrderedDict()
        self._pending = {}
        self.mismatches = {}  # `SenpiSession.payload_mismatches` holds the list

    def dedupe(self, session: Session, index: int) -> dict[str, DedupeResult] | None:
        """Every dedupe policy on call `index`'s raw payload, rebuilt from disk (`rebuild.simulate_turn`)."""
        return simulate_turn(session, index, self.reread)

    def on_branch(self, session: Session, keep: int) -> None:
        """The branch was cut back: start over from the (already cut) provider context, re-read from disk."""
        self.settle(session, final=True)
        context = _context(session)
        if context is not None:
            self._rebuild(session, reread_items(context.items, self.reread))

    # ------------------------------------------------------------------ ingestion
    def _measure_call(self, session: Session, turn: Turn) -> None:
        """The context in front of this call is complete: measure a flatten of it under every lane now
        (cheap), keep what a delta needs, and fill the turn as soon as its decision is known."""
        ledger = _ledger(session)
        recognized = ledger.recognized() if ledger is not None else set()
        measure = Measure()
        for lane in self.lanes.values():
            lane.flush(measure)
        facts = CallFacts(
            dict(self.lanes),
            {name: (len(ln.recs), len(ln.trans), ln.prev_len, ln.prev_trans) for name, ln in self.lanes.items()},
            {},
            self.completed,
            recognized,
        )
        self._pending[turn.index] = (turn, facts)
        # a turn whose decision is known now measures a flatten under the lanes it needs only (none for a delta)
        self.settle(session, final=False)
        if turn.index in self._pending:
            facts.complete()
        if ledger is not None:
            ledger.note_call(turn.index)

    def _append(self, session: Session, item: CtxMsg) -> None:
        measure = Measure()
        for lane in self.lanes.values():
            lane.push(item, measure)
        msg = item.msg
        if msg.get("role") == "toolResult":
            execution = execution_from_result(msg)
            if execution is not None:
                self._track(execution)
        ledger = _ledger(session)
        if ledger is not None and is_transmitted(msg):
            user_role = msg.get("role") == "user"
            blocks: list[TagBlock] = []
            unterminated: dict[str, int] = {}
            for text in _texts(msg.get("content")):
                scan = measure.scan(text, any_tag=user_role)
                blocks.extend(scan.blocks)
                for tag, n in scan.unterminated.items():
                    unterminated[tag] = unterminated.get(tag, 0) + n
            seen = Seen(item.ts, item.key[0] if item.key else None)
            ledger.record(item.key, blocks, seen, user_role=user_role, unterminated=unterminated)

    def _track(self, execution: WatchedExecution) -> None:
        # Only a note's first WATCH_NOTE_CHARS can ever be shown (`tool_watch_note`); one unit more keeps "was it
        # longer" (the note's truncation suffix). The other ~2,800 of the 4,000 tracked chars, times 256 tracked
        # results per session, were a third of all the memory analysis kept.
        content = utf16_truncate(execution.content, WATCH_NOTE_CHARS + 1, "")
        if content is not execution.content:
            execution = replace(execution, content=content)
        self.completed.pop(execution.tool_call_id, None)
        self.completed[execution.tool_call_id] = execution
        while len(self.completed) > WATCH_MAX_TRACKED:
            self.completed.popitem(last=False)

    def _rebuild(self, session: Session, items: Iterable[CtxMsg]) -> None:
        """Start the lanes over from a whole context (after a compaction or a branch switch). The tool names
        learned so far are kept: they describe the session's toolset, not one branch."""
        self.lanes = {name: Lane(lane.rules, lane.namer) for name, lane in self.lanes.items()}
        for item in items:
            self._append(session, item)
        for lane in self.lanes.values():
            lane.mark_call()

    # ------------------------------------------------------------------ filling turns
    def settle(self, session: Session, *, final: bool = True) -> None:
        """Fill the measured turns whose decision is now known. With `final`, turns still without a
        decision are given up (every analyzer has seen their entry by then)."""
        if self._late:
            known = False
            for turn in self._late:
                if turn.avoidable is not None:
                    turn.payload_bytes_if_stable = stable_bytes(turn)
                    known = True
            if known:  # settle runs twice per entry: the window is rebuilt only when a turn left it
                self._late = deque((t for t in self._late if t.avoidable is None), maxlen=LATE_WINDOW)
        if not self._pending:
            return
        for index in list(self._pending):
            turn, facts = self._pending[index]
            serializer, count, source = call_basis(turn)
            if serializer is None and not final:
                continue
            del self._pending[index]
            self._fill(session, turn, facts, serializer, count, source)

    def _fill(
        self,
        session: Session,
        turn: Turn,
        facts: CallFacts,
        serializer: str | None,
        count: int | None,
        source: str | None,
    ) -> None:
        if serializer is None:
            turn.payload_bytes = turn.payload_bytes_raw = None
            turn.payload_history_bytes = turn.payload_new_bytes = None
            turn.directives = None
            turn.serializer = None
            senpi_call(turn).payload = None
            return
        logged = turn.logged
        logged_bytes = logged.payload_bytes if logged is not None and source == "logged" else None
        profile = self._choose(session, turn, facts, serializer, logged_bytes)
        lane_name = profile.rules.name
        lane = facts.lanes[lane_name]
        _, n_trans, prev_len, prev_trans = facts.sizes[lane_name]
        info = PayloadInfo(serializer, profile.name, source, prompt_tokens(turn.tokens))
        if serializer == FLATTEN:
            ff = facts.flatten_of(lane_name)
            sent, collapsed = ff.after[profile.dedupe]
            raw, history, tags, keep_first = ff.raw, ff.history, ff.tags, ff.keep_first
            uw_sent = ff.uw_sent[profile.dedupe]
            info.collapsed = collapsed
            info.senpi_saved = {rule: ff.raw - ff.after[rule][0] for rule in (KEEP_LAST, KEEP_IDENTICAL_PREVIOUS)}
            info.recovered_tool_results = bool(ff.note)
        else:
            ledger = _ledger(session)
            recognized = ledger.recognized() if ledger is not None else set()
            df = delta_facts(lane, n_trans, prev_len, count or 0, recognized)
            sent = raw = df.raw
            history, tags, keep_first = df.history, df.tags, df.keep_first
            uw_sent = None  # a delta is sent as serialized
            info.count = df.count
            if count is not None and df.count != count:
                info.count_logged = count  # the context holds fewer transmitted messages than logged
        turn.payload_bytes = sent
        turn.payload_bytes_raw = raw
        turn.payload_history_bytes = history
        turn.payload_new_bytes = raw - history
        turn.directives = _directives(tags, uw_sent)
        saved, markers, kept = keep_first
        info.keep_first = {"bytes_after": raw - saved, "saved": saved, "markers": markers, "kept": kept}
        new_msgs = n_trans - prev_trans
        info.delta_if_stable = (
            lane.cum_delta[n_trans] - lane.cum_delta[prev_trans] + DSEP * (new_msgs - 1) if new_msgs > 0 else 0
        )
        turn.serializer = serializer
        senpi_call(turn).payload = info
        if turn.avoidable is not None:
            turn.payload_bytes_if_stable = stable_bytes(turn)
        elif all(t is not turn for t in self._late):
            self._late.append(turn)
        if logged_bytes is not None and serializer == FLATTEN:
            self._check(session, turn, sent, logged_bytes, profile, info.collapsed)

    def _choose(
        self, session: Session, turn: Turn, facts: CallFacts, serializer: str, logged_bytes: int | None
    ) -> SerializerEra:
        """The build whose rules this call followed: the one its own logged `payloadBytes` confirms, else the
        one the session's last confirmed call used, else the session's detected build, else provider + date."""
        date = turn.ts[:10] if turn.ts else None
        preferred: list[SerializerEra] = []
        for profile in (self.confirmed, external_era(session), default_era(turn.provider, date)):
            fits = profile is not None and (turn.provider is None or turn.provider in profile.providers)
            if profile is not None and fits and profile not in preferred:
                preferred.append(profile)
        order = preferred + [p for p in reversed(ERAS) if p not in preferred]
        if logged_bytes is None or serializer != FLATTEN:
            return order[0]
        for profile in order:
            if facts.flatten_of(profile.rules.name).after[profile.dedupe][0] == logged_bytes:
                self.confirmed = profile
                return profile
        return order[0]

    def _check(
        self, session: Session, turn: Turn, computed: int, logged: int, profile: SerializerEra, collapsed: int | None
    ) -> None:
        self.checked += 1
        if computed == logged:
            self.mismatches.pop(turn.index, None)
        else:
            self.mismatches[turn.index] = {
                "turn": turn.index,
                "entry_id": turn.entry_id,
                "ts": turn.ts,
                "logged": logged,
                "computed": computed,
                "difference": computed - logged,
                "profile": profile.name,
                "collapsed": collapsed,
                "collapsed_logged": turn.logged.collapsed_directives if turn.logged else None,
            }
        results = session.facts
        if isinstance(results, SenpiSession):
            results.payload_mismatches = [self.mismatches[i] for i in sorted(self.mismatches)]
            results.payload_checked = self.checked
            results.payload_profile = (self.confirmed or profile).name


def _directives(tags: dict[str, list[int]], uw_sent: tuple[int, int] | None) -> dict[str, dict[str, int]]:
    """`Turn.directives`: per tag the copies and bytes as serialized, and as sent. senpi's dedupe collapses
    `<ultrawork-mode>` spans only (flatten only), so every other tag is sent as serialized."""
    out: dict[str, dict[str, int]] = {}
    for tag, (copies, nbytes) in sorted(tags.items()):
        copies_sent, bytes_sent = uw_sent if tag == ULTRAWORK and uw_sent is not None else (copies, nbytes)
        out[tag] = {"copies": copies, "bytes": nbytes, "copies_sent": copies_sent, "bytes_sent": bytes_sent}
    return out


def _texts(content: Any) -> list[str]:
    """The text a transmitted message carries (string content, text blocks, raw string entries)."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    out: list[str] = []
    for block in content:
        if isinstance(block, str):
            out.append(block)
        elif isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            out.append(block["text"])
    return out


def _context(session: Session) -> ProviderContext | None:
    return session.analyzer(ProviderContext)


def _ledger(session: Session) -> DirectiveLedger | None:
    return session.analyzer(DirectiveLedger)


class PayloadSettler(RecordHandler):
    """Record handler: after every analyzer has seen a transcript entry, fill the turns it measured."""

    handles = (TranscriptEntry,)

    def on_record(self, store: Store, record: Record) -> None:
        assert isinstance(record, TranscriptEntry)
        session = store.sessions.get(record.where.path)
        analyzer = session.analyzer(PayloadAnalyzer) if session is not None else None
        if session is not None and analyzer is not None:
            analyzer.settle(session, final=True)
