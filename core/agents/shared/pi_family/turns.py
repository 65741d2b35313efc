"""Per-call verdicts for pi-family transcript turns that carry no continuity diagnostic of their own.

pi (and senpi on any lane but `claude-sdk-oauth`) sends the whole context to a stateless API on every call;
nothing on disk says whether the history was processed again. The provider's cache figures do
(`core.kernel.cache_verdict`), and the transcript's structure adds what the cache cannot know:

- the first call after a `compaction` entry is `compaction/compaction_entry` (the prompt was rebuilt from a
  summary by design);
- the first call after the active branch moved (a new child of an older entry, pi's `/tree` navigation or a
  `branch_summary`) is `fork/branch`;
- in a branched session file (header `parentSession`), pi copies the root-to-leaf path of the parent with the
  same entry ids and their old timestamps: those turns were calls of the parent session, so they get no
  verdict here (`Turn.copied_from`), and the first new call is `fork/branched_session`;
- a call with no usage at all (pi writes an aborted or failed request's message with every figure 0) is
  `aborted`, with the stop reason; it says nothing about the cache, so the next call is judged against the
  last call that had usage, and a compaction waiting for its first call waits past it.

Every other call is judged from its usage against the previous call (the previous in time: the cache holds
what was sent last, whichever branch it was on). The verdict becomes `Turn.logged` with `source` `cache`
(numbers) or `transcript` (structure), and the figures go to `Turn.cache`. A senpi turn whose
continuity diagnostic was persisted is left alone: the agent's own decision wins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from core.agents.shared.pi_family.calls import RESIDENT_API
from core.agents.shared.pi_family.context import ProviderContext
from core.agents.shared.pi_family.payload import PiPayload, ledger_of
from core.kernel.cache_verdict import COMPACTION, CacheVerdict, CallUsage, WhyTexts, decision, judge, structural, why
from core.kernel.pipeline import SessionAnalyzer
from core.kernel.prefix import PromptHistory
from core.model import ABORTED, LoggedDecision, TranscriptEntry, Turn
from core.timeutil import any_ms, parse_iso_ms

if TYPE_CHECKING:
    from core.kernel.pipeline import Session
    from core.kernel.ports import Reread


def usage_of(msg: dict[str, object], ts_ms: int | None) -> CallUsage | None:
    """pi's `usage` (`input`, `cacheRead`, `cacheWrite`, `output`) as call figures; None when absent."""
    usage = msg.get("usage")
    if not isinstance(usage, dict):
        return None

    def num(key: str) -> int:
        value = usage.get(key)
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0

    return CallUsage(num("input"), num("cacheRead"), num("cacheWrite"), ts_ms, None, num("output"))


class PiTurns(SessionAnalyzer):
    """Session analyzer; see the module docstring. Keeps figures of one call, never message bodies.

    In a senpi session it judges the calls of every lane but the resident one; senpi's payload reconstruction
    owns the payload fields there. An agent whose sessions have no other payload analysis lists the subclass
    that fills them from the context counts (`owns_payload`)."""

    #: fill `payload_bytes`, `directives` … from the context counts, and feed the directive ledger
    owns_payload: ClassVar[bool] = False

    def __init__(self, session: Session, reread: Reread) -> None:
        self.previous: CallUsage | None = None
        self.pending: tuple[str, str] | None = None  # a structural verdict waiting for the next new call
        self.judged: set[int] = set()  # turn indices already decided (a branch replay re-delivers them)
        self.payload = PiPayload(reread)
        self.history = PromptHistory()  # prompt sizes since the context was last replaced: where a rewrite parted

    def on_entry(self, session: Session, entry: TranscriptEntry, turn: Turn | None) -> None:
        context = session.analyzer(ProviderContext)
        if context is None:
            return
        replay = turn is not None and turn.index in self.judged
        pi = self.owns_payload
        if not replay:
            self.payload.entry(entry, context, ledger_of(session) if pi else None)
        if entry.type == "compaction":
            self.pending = (COMPACTION, "compaction_entry")
            self.history.reset()
        if turn is None or replay:
            return
        self.judged.add(turn.index)
        prompt_messages, new_messages, sent, new_bytes, directives = self.payload.call(
            entry, turn, context, ledger_of(session) if pi else None
        )
        if pi:  # senpi's payload reconstruction owns these fields in senpi sessions
            turn.payload_bytes_raw = turn.payload_bytes = sent
            turn.payload_new_bytes, turn.payload_history_bytes = new_bytes, sent - new_bytes
            turn.directives = directives
        msg = entry.message or {}
        copied_from = _copied_from(session, entry)
        if copied_from is not None:
            turn.copied_from = copied_from
            self.pending = ("fork", "branched_session")
        current = usage_of(msg, turn.ts_ms)
        judged = turn.logged is None and msg.get("api") != RESIDENT_API
        if copied_from is None and (current is None or current.empty):
            if judged:  # an aborted or failed request: a call, but it says nothing about the cache
                turn.logged = aborted(msg, turn.ts_ms)
                turn.why = f"no usage: the request ended ({turn.stop_reason}) before the provider reported any"
            return  # a structural verdict waiting (a compaction) goes to the next call that has usage
        if copied_from is not None or current is None:
            if current is not None and not current.empty:
                self.previous = current
            return
        if judged:
            structural_pending = self.pending is not None
            verdict = self._verdict(current)
            if verdict.reason in ("prefix_rewritten", "cache_miss"):
                changed = self.history.view().locate(current.cache_read)
                if changed is not None:
                    verdict.evidence["changed_at"] = changed
            cost = agent_cost(msg)
            if cost is not None:
                verdict.evidence["agent_cost_usd"] = cost
            count = new_messages if verdict.kind == "delta" else prompt_messages
            turn.logged = decision(verdict, count, source="transcript" if structural_pending else "cache")
            turn.logged.ts_ms = turn.ts_ms
            turn.cache = verdict.evidence
            turn.why = why(verdict, WHY)
        self.pending = None
        self.previous = current
        self.history.record(turn.entry_id or f"#{turn.index}", turn.ts, current.prompt, current.cache_read,
                            prompt_messages)  # fmt: skip

    def park(self, session: Session) -> None:
        """The session is done (`State.park`): the running context counts and the judged set only serve the
        next entry, which a parked session never sees (it is rebuilt from its file first)."""
        self.judged = set()
        self.payload = PiPayload(self.payload.reread)

    def on_branch(self, session: Session, keep: int) -> None:
        self.pending = ("fork", "branch")
        self.payload.stale = True
        self.history.reset()

    def _verdict(self, current: CallUsage) -> CacheVerdict:
        if self.pending is not None:
            return structural(*self.pending, current, self.previous)
        return judge(current, self.previous)


#: how a pi-family call's structural verdicts read (the cache rule's own verdicts read as the rule words them)
WHY = WhyTexts(
    compaction="first call after a compaction: {prompt} prompt tokens{gap}",
    fork="first call on another branch ({reason}): cache read {read} of {prompt}{gap}",
    gap=", {seconds:.0f}s after the previous call",
)

#: pi's `stopReason` of a call that got no usage -> the reason of its `aborted` verdict
_ABORT_REASONS = {"aborted": "request_aborted", "error": "request_failed"}


def aborted(msg: dict[str, object], ts_ms: int | None) -> LoggedDecision:
    """The verdict of a call with no usage: pi writes the assistant message of an aborted (Esc) or failed request
    with every usage figure 0 (27 such calls in the two real pi sessions)."""
    stop = msg.get("stopReason")
    reason = _ABORT_REASONS.get(stop, "no_usage") if isinstance(stop, str) else "no_usage"
    return LoggedDecision(ABORTED, reason, None, ts_ms=ts_ms, source="transcript")


def agent_cost(msg: dict[str, object]) -> float | None:
    """What pi itself says the call cost (`usage.cost.total`, USD, from its own model registry's prices): the
    actual spend where the agent writes it (schema: waste.cost_usd.actual)."""
    usage = msg.get("usage")
    cost = usage.get("cost") if isinstance(usage, dict) else None
    total = cost.get("total") if isinstance(cost, dict) else None
    if isinstance(total, int | float) and not isinstance(total, bool) and total >= 0:
        return float(total)
    return None


def _copied_from(session: Session, entry: TranscriptEntry) -> str | None:
    """The parent session path when this entry is a copy made by pi's branched-session export.

    The copy keeps the parent's entry timestamps, so it predates the file's own header.
    """
    header = session.header
    if header is None or header.parent_session is None:
        return None
    created = parse_iso_ms(header.timestamp)
    written = parse_iso_ms(entry.timestamp) or any_ms((entry.message or {}).get("timestamp"))
    if created is None or written is None or written >= created:
        return None
    return header.parent_session
