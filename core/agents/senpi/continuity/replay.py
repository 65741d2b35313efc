"""Replay senpi's continuity decision over a transcript: what it should have logged, and what a stable
fingerprint would have logged instead.

The decision itself is pure (`core.agents.senpi.continuity.decide`: senpi's registry, `decide`, `step`); this
module feeds it the facts of each call from the transcript, entry by entry: the hashes, the events since the
previous call (compaction, invalidations, thinking-level and model switches), the thinking level in force and
the gap since the previous call's end. For the inputs that are not on disk (the account, system prompt and tool
set in the fingerprint, restarts, terminal failures, a model switch inside the provider) the logged decision is
taken as it is, the turn is marked `logged_only` with what the files lack, and the registry re-synchronized.
Nothing is guessed.

Per turn this fills `recomputed`, `agreement`, `disagreement` (the first fact that differs), `contradiction`
(the same, said against the build profile), `why`, `logged_only`, `counterfactual` (the same replay where a
commit that differs only in volatile fields counts as clean) and `avoidable` (a re-send the counterfactual
answers with a delta, or with a reattach that sends only the new messages).
Per session: `SenpiSession.verdicts` (agreement rate, disagreements),
`session.counterfactual` (re-sends logged / avoidable, re-sent messages) and `SenpiSession.sidecar_verdict`
(would a restart reattach or flatten, and why: `core.agents.senpi.continuity.sidecar`).

Incremental: the registry is an immutable record, `H` a persistent hash chain, the boundaries a persistent
list; the state before every call is kept (a few pointers), so a late fact (an event recording read after
the transcript, a profile that changed with new evidence) re-runs the replay from the turn it affects only.
The registry is chronological (process memory), the hash chain follows the active branch: navigating the
tree changes H but not what the registry remembers, exactly as in senpi.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from core.agents.senpi.commit import CommitAnalyzer
from core.agents.senpi.continuity.decide import (
    FRESH,
    CallFacts,
    Registry,
    StepResult,
    contradiction,
    first_difference,
    step,
)
from core.agents.senpi.continuity.sidecar import MARKER_DATA, AfterBinding, _after_binding, sidecar_verdict
from core.agents.senpi.facts import SenpiSession
from core.agents.senpi.fingerprint import sent_message_hash
from core.agents.senpi.profiles import API_ID, BINDING_TYPE, ProfileTracker, profile_of
from core.agents.shared.pi_family.context import ProviderContext, is_transmitted
from core.kernel.hashing import FrozenChain, HashChain, chain_length, freeze
from core.kernel.pipeline import SessionAnalyzer
from core.model import RESEND_KINDS, Decision, TranscriptEntry, Turn
from core.timeutil import any_ms, parse_iso_ms

if TYPE_CHECKING:
    from core.kernel.pipeline import Session
    from core.kernel.ports import Reread

MAX_LISTED = 200  # disagreements / avoidable turns listed per session
SIDECAR_EAGER_TAIL = 512  # re-judge the sidecar on every entry while fewer messages follow its prefix
#: take the counterfactual step from the real one while their registries are one object (the tests turn it off to
#: compare with two steps every call)
SHARE_COUNTERFACTUAL = True


# --------------------------------------------------------------------- per-turn and per-session results


@dataclass(slots=True)
class TurnResult:
    """A turn's contribution to the session summaries (kept so a re-run can subtract it)."""

    agree: bool | None = None
    logged_only: bool = False
    resend: bool = False
    avoidable: bool = False
    resent_logged: int = 0
    resent_avoidable: int = 0
    disagreement: str | None = None


@dataclass
class Totals:
    turns: int = 0
    replayed: int = 0
    agree: int = 0
    disagree: int = 0
    logged_only: int = 0
    resends: int = 0
    avoidable: int = 0
    resent_logged: int = 0
    resent_avoidable: int = 0

    def add(self, r: TurnResult, sign: int) -> None:
        self.turns += sign
        if r.agree is not None:
            self.replayed += sign
            if r.agree:
                self.agree += sign
            else:
                self.disagree += sign
        self.logged_only += sign * r.logged_only
        self.resends += sign * r.resend
        self.avoidable += sign * r.avoidable
        self.resent_logged += sign * r.resent_logged
        self.resent_avoidable += sign * r.resent_avoidable


@dataclass(slots=True)
class BranchMark:
    """Branch-dependent state after one entry of the active branch (pointers only)."""

    chain: HashChain | FrozenChain | None  # frozen once the session is parked (`VerdictReplay.park`)
    assistant: bool  # an assistant message is in the context
    walk: HashChain | FrozenChain | None  # senpi's branch walk: message entries only (the OLD sidecar's hashes)
    compacted: bool
    binding: tuple[str, bool, str | None] | None  # (entry id, is the exact marker, invalidation reason)
    after_binding: AfterBinding | None
    binding_chain: HashChain | FrozenChain | None  # H when the newest binding entry was written
    binding_walk: HashChain | FrozenChain | None
    env: tuple[Any, ...] | None = None  # an environment-context message waiting to fold into the next user
    words: tuple[tuple[str, str], ...] = ()  # ask-user words of the current run of tool results


ENV_CONTEXT_TYPE = "environment-context"
_ENV_OPEN, _ENV_CLOSE = "<environment_context>", "</environment_context>"


def _is_env_message(msg: dict[str, Any]) -> bool:
    """A converted environment-context message (recognised by its text when the entry type is gone)."""
    content = msg.get("content")
    if msg.get("role") != "user" or not isinstance(content, list) or len(content) != 1:
        return False
    block = content[0]
    text = block.get("text") if isinstance(block, dict) else None
    return isinstance(text, str) and text.startswith(_ENV_OPEN) and text.rstrip().endswith(_ENV_CLOSE)


def _user_words(msg: dict[str, Any]) -> list[tuple[str, str]]:
    """`details.userWords` of a tool result: the ask-user words newer builds turn into a user message."""
    details = msg.get("details")
    words = details.get("userWords") if isinstance(details, dict) else None
    items = words if isinstance(words, list) else [words] if isinstance(words, dict) else []
    out = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            out.append((str(item.get("label", "")), item["text"]))
    return out


def _fold(
    chain: HashChain | None,
    assistant: bool,
    env: tuple[Any, ...] | None,
    words: tuple[tuple[str, str], ...],
    added: list[dict[str, Any]],
    entry_is_env: bool,
    entry_is_call: bool,
    hasher: Callable[[dict[str, Any]], str] = sent_message_hash,
) -> tuple[HashChain | None, bool, tuple[Any, ...] | None, tuple[tuple[str, str], ...]]:
    """Append converted messages to H with newer builds' conversion rules (senpi-newer §5.2):

    * an environment-context message directly followed by a user message becomes that user's leading
      text block(s); otherwise it stays a user message of its own;
    * after a run of tool results carrying ask-user words, one synthesized user message
      (`[<label>]` then the words, per word) follows the run;
    * errored / aborted assistants are dropped from the context, so they do not count as "an assistant in
      the context" for the first-turn rule.
    Older builds have neither message, so the rules are inert for them.
    """

    def flush_env(chain: HashChain | None) -> HashChain | None:
        if env is None:
            return chain
        return HashChain(chain, sent_message_hash({"role": "user", "content": list(env)}))

    def flush_words(chain: HashChain | None) -> HashChain | None:
        if not words:
            return chain
        blocks: list[dict[str, str]] = []
        for label, text in words:
            blocks += [{"type": "text", "text": f"[{label}]"}, {"type": "text", "text": text}]
        return HashChain(chain, sent_message_hash({"role": "user", "content": blocks}))

    for msg in added:
        role = msg.get("role")
        if role != "toolResult" and words:
            chain, words = flush_words(chain), ()
        if (entry_is_env or _is_env_message(msg)) and isinstance(msg.get("content"), list):
            chain = flush_env(chain)
            env = tuple(msg["content"])
            continue
        if env is not None:
            content = msg.get("content")
            if role == "user" and not entry_is_env:
                blocks = list(content) if isinstance(content, list) else [{"type": "text", "text": content}]
                msg = {**msg, "content": list(env) + blocks}
            else:
                chain = flush_env(chain)
            env = None
        if is_transmitted(msg):
            chain = HashChain(chain, hasher(msg))
            if role == "toolResult":
                words = words + tuple(_user_words(msg))
        elif role == "assistant" and msg.get("stopReason") not in ("error", "aborted"):
            assistant = True
    if entry_is_call:
        chain, words = flush_words(chain), ()
        chain, env = flush_env(chain), None
    return chain, assistant, env, words


def _copy_result(result: StepResult) -> StepResult:
    """`result` as a second `step` with the same inputs would have returned it: an equal object of its own, so the
    turn's `counterfactual` is not the very `Decision` object of its `recomputed` (as before the sharing)."""
    d = result.decision
    return replace(result, decision=Decision(d.kind, d.reason, d.count) if d is not None else None)


def _discard(items: list[int], value: int) -> None:
    """Remove `value` from a sorted list if present (O(log n) to find it)."""
    i = bisect.bisect_left(items, value)
    if i < len(items) and items[i] == value:
        del items[i]


class VerdictReplay(SessionAnalyzer):
    """Per-session replay of the continuity decision (see the module docstring)."""

    def __init__(self, session: Session, reread: Reread) -> None:
        self.session = session
        self.marks: list[BranchMark] = []
        self.calls: list[CallFacts | None] = []
        self.before: list[tuple[Registry, Registry]] = []
        self.results: list[TurnResult | None] = []
        self.reg = FRESH
        self.cf = FRESH
        self.totals = Totals()
        self.disagreements: dict[int, str] = {}
        self._disagreeing: list[int] = []  # sorted keys of `disagreements`: summaries list the first ones
        self.avoidable_turns: list[int] = []  # sorted
        self._events: list[str] = []
        self._last_line = 0
        self._prev_call: int | None = None
        self._prev_end_ms: int | None = None
        self._thinking: str | None = None  # the thinking level in force (the newest thinking_level_change)
        self._profile_version = -1

    # ----------------------------------------------------------------- branch state
    def _mark(self) -> BranchMark:
        if self.marks:
            return self.marks[-1]
        return BranchMark(None, False, None, False, None, None, None, None)

    def on_branch(self, session: Session, keep: int) -> None:
        del self.marks[keep:]

    def park(self, session: Session) -> None:
        """The session is done (`State.park`): keep the summaries already written (the session's, the turns')
        and the newest branch mark (a restart binding read later is judged against it); drop the other marks
        (only a branch switch reads them) and the per-call facts, registries and results only a re-run needs
        (a parked session never re-runs: an event recording for one of its turns rebuilds it). The hash lists
        left never grow again: they are kept as blobs of raw digests (`freeze`)."""
        last = self.marks[-1] if self.marks else None
        self.marks = []
        if last is not None:
            self.marks = [
                replace(
                    last,
                    chain=freeze(last.chain),
                    walk=freeze(last.walk),
                    binding_chain=freeze(last.binding_chain),
                    binding_walk=freeze(last.binding_walk),
                )
            ]
        self.calls = []
        self.before = []
        self.results = []
        self._events = []
        self.reg = self.cf = FRESH  # the registries after the last call: only a re-run reads them

    def on_entry(self, session: Session, entry: TranscriptEntry, turn: Turn | None) -> None:
        replayed = entry.where.line <= self._last_line
        if not replayed:
            self._last_line = entry.where.line
        prev = self._mark()
        mark = self._advance(prev, entry)
        if not replayed:
            self._chronological(entry, turn, prev, mark)
        self.marks.append(mark)
        if not replayed and session.sidecar is not None:
            # O(messages since the anchored prefix) each: on every entry while that tail is short, else per call
            count = session.sidecar.data.get("sentCount")
            tail = chain_length(mark.chain) - count if isinstance(count, int) else 0
            if turn is not None or entry.type == "custom" or tail < SIDECAR_EAGER_TAIL:
                self.update_sidecar_verdict()

    def _advance(self, prev: BranchMark, entry: TranscriptEntry) -> BranchMark:
        memo: dict[int, str] = {}

        def hasher(msg: dict[str, Any]) -> str:
            """Each message is hashed once even when H and the branch walk both need it."""
            value = memo.get(id(msg))
            if value is None:
                value = memo[id(msg)] = sent_message_hash(msg)
            return value

        ctx = self.session.analyzer(ProviderContext)
        chain, assistant, env, words = prev.chain, prev.assistant, prev.env, prev.words
        if ctx is not None:
            if ctx.reset is not None:
                chain, assistant, env, words = None, False, None, ()
                added = ctx.reset
            else:
                added = ctx.added
            is_env = entry.type == "custom_message" and entry.obj.get("customType") == ENV_CONTEXT_TYPE
            is_call = entry.type == "message" and entry.role == "assistant"
            chain, assistant, env, words = _fold(chain, assistant, env, words, added, is_env, is_call, hasher)
        walk, compacted = prev.walk, prev.compacted
        if entry.type == "compaction":
            compacted, walk = True, None
        elif entry.type == "message" and not compacted:
            msg = entry.message
            if msg is not None and msg.get("role") in ("user", "toolResult") and is_transmitted(msg):
                walk = HashChain(walk, hasher(msg))
        binding, after, b_chain, b_walk = prev.binding, prev.after_binding, prev.binding_chain, prev.binding_walk
        if entry.type == "custom" and entry.obj.get("customType") == BINDING_TYPE:
            data = entry.obj.get("data")
            reason = data.get("reason") if isinstance(data, dict) and isinstance(data.get("reason"), str) else None
            binding = (entry.id or "", data == MARKER_DATA, reason)
            after, b_chain, b_walk = None, chain, walk
        elif binding is not None:
            after = _after_binding(after, entry, self.session)
        return BranchMark(chain, assistant, walk, compacted, binding, after, b_chain, b_walk, env, words)

    # ----------------------------------------------------------------- chronological state
    def _chronological(self, entry: TranscriptEntry, turn: Turn | None, prev: BranchMark, mark: BranchMark) -> None:
        etype = entry.type
        if etype == "compaction":
            self._events.append("compaction")
        elif etype == "custom" and entry.obj.get("customType") == BINDING_TYPE:
            data = entry.obj.get("data")
            if isinstance(data, dict) and data.get("invalidated"):
                reason = data.get("reason")
                if reason not in ("assistant_rewritten", "compaction"):  # the commit / compaction entry say these
                    self._events.append(f"invalidation:{reason}")
        elif etype in ("thinking_level_change", "model_change"):
            arg = entry.obj.get("thinkingLevel") if etype == "thinking_level_change" else entry.obj.get("modelId")
            if etype == "thinking_level_change" and isinstance(arg, str):
                self._thinking = arg
            # senpi writes the entry and fires thinking_level_select together, only for a real change
            # (`_setThinkingLevel`): an entry is the switch even when the level the replay tracked looks the same
            if self._prev_call is not None:
                self._events.append(f"{etype}:{arg}" if isinstance(arg, str) else etype)
        if turn is None or entry.message is None:
            return
        msg = entry.message
        while len(self.calls) < turn.index:
            self.calls.append(None)
            self.before.append((self.reg, self.cf))
            self.results.append(None)
        if msg.get("api") != API_ID:
            self._store(turn.index, None)  # another lane or agent: its own analysis explains it
            return
        start = any_ms(msg.get("timestamp"))
        events = list(self._events)
        gap = start - self._prev_end_ms if start is not None and self._prev_end_ms is not None else None
        facts = CallFacts(
            index=turn.index,
            n=chain_length(mark.chain),
            chain=mark.chain,
            assistant_before=prev.assistant,
            events=tuple(events),
            prev_turn=self._prev_call,
            start_ms=start,
            stop_reason=msg.get("stopReason") if isinstance(msg.get("stopReason"), str) else None,
            logged=turn.logged,
            thinking=self._thinking,
            gap_ms=gap,
        )
        self._events.clear()
        self._prev_call = turn.index
        self._prev_end_ms = parse_iso_ms(entry.timestamp) or start
        self._store(turn.index, facts)
        if self._profile_moved():
            self.rerun(0)
        else:
            self.rerun(turn.index)

    def _profile_moved(self) -> bool:
        """True (after re-judging every commit) when the build profile changed since the last replay."""
        tracker = self.session.analyzer(ProfileTracker)
        if tracker is None:
            return False
        _ = tracker.profile  # re-detects if the evidence changed
        if tracker.version == self._profile_version:
            return False
        self._profile_version = tracker.version
        commit = self.session.analyzer(CommitAnalyzer)
        if commit is not None:
            commit.refresh_profile(tracker.version)
        return True

    def _store(self, index: int, facts: CallFacts | None) -> None:
        if index < len(self.calls):
            self.calls[index] = facts
        else:
            self.calls.append(facts)
            self.before.append((self.reg, self.cf))
            self.results.append(None)

    # ----------------------------------------------------------------- replay
    def commit_changed(self, index: int, *, outcome_changed: bool) -> None:
        """A turn's commit outcome or class changed (a recording arrived): re-run the calls after it."""
        if self.session.parked is not None:
            return  # not reached: a recording for a parked session rebuilds it first (`RecordingMatcher`)
        if self._profile_moved():
            self.rerun(0)
            return
        nxt = next((i for i in range(index + 1, len(self.calls)) if self.calls[i] is not None), None)
        if nxt is not None:
            # same outcome and class: only the next call's explanation changes (O(1), not O(turns))
            self.rerun(nxt, only=not outcome_changed)

    def rerun(self, start: int, *, only: bool = False) -> None:
        """Replay every call from turn `start` on (just that call when `only`), from the registry saved before it."""
        if start >= len(self.calls):
            return
        reg, cf = self.before[start]
        profile = profile_of(self.session)
        judged = self.session.analyzer(CommitAnalyzer)
        for index in range(start, start + 1 if only else len(self.calls)):
            self.before[index] = (reg, cf)
            facts = self.calls[index]
            if facts is None:
                continue
            prev = facts.prev_turn
            outcome = judged.outcome(prev) if judged is not None and prev is not None else None
            volatile = judged.volatile_only(prev) if judged is not None and prev is not None else False
            rewritten, cf_rewritten = outcome == "rewritten", outcome == "rewritten" and not volatile
            same = cf is reg and cf_rewritten == rewritten  # the counterfactual has not diverged (most sessions)
            result, reg_after = step(reg, facts, profile, rewritten)
            if same and SHARE_COUNTERFACTUAL:
                # `step` is pure over immutable registries: equal inputs give equal outputs, so the second step
                # is the first one again (half the replay's steps; `tests/test_replay_share.py` checks it)
                cf_result, cf = _copy_result(result), reg_after
            else:
                cf_result, cf = step(cf, facts, profile, cf_rewritten)
            reg = reg_after
            self._record(facts, result, cf_result, volatile)
        if not only:
            self.reg, self.cf = reg, cf
        self._summarize()

    def _record(self, f: CallFacts, result: StepResult, cf_result: StepResult, prev_volatile: bool) -> None:
        turn = self.session.turns[f.index]
        old = self.results[f.index]
        if old is not None:
            self.totals.add(old, -1)
        r = TurnResult(logged_only=result.logged_only)
        turn.recomputed = result.decision
        turn.logged_only = result.logged_only
        turn.counterfactual = cf_result.decision
        logged = f.logged
        turn.agreement, turn.disagreement, turn.contradiction = None, None, None
        if self.disagreements.pop(f.index, None) is not None:
            _discard(self._disagreeing, f.index)
        if logged is not None and result.decision is not None and not result.logged_only:
            diff = first_difference(logged, result.decision)
            turn.agreement = diff is None
            turn.disagreement = diff
            r.agree = diff is None
            if diff is not None:
                r.disagreement = diff
                turn.contradiction = contradiction(logged, result.decision, profile_of(self.session))
                self.disagreements[f.index] = diff
                bisect.insort(self._disagreeing, f.index)
        actual = logged if logged is not None else result.decision
        turn.avoidable = None
        _discard(self.avoidable_turns, f.index)
        why = result.why
        if actual is not None and actual.kind in RESEND_KINDS:
            r.resend = True
            new = f.n - self._sent_before(f.index)
            r.resent_logged = max(0, (actual.count if actual.count is not None else f.n) - max(new, 0))
            cf = cf_result.decision
            # a reattach (a fork whose count is just the messages new since the previous call) re-sends nothing:
            # a re-send the stable build would have answered with one is avoidable too
            reattach = cf is not None and cf.kind == "fork" and cf.count == new
            resent_old = not (actual.kind == "fork" and actual.count == new)
            avoidable = cf is not None and (cf.kind not in RESEND_KINDS or (reattach and resent_old))
            turn.avoidable = avoidable
            if avoidable:
                r.avoidable = True
                bisect.insort(self.avoidable_turns, f.index)
                assert cf is not None
                r.resent_avoidable = max(0, (actual.count or 0) - (cf.count or 0))
        commit = self.session.analyzer(CommitAnalyzer)
        if result.pending_turn is not None and not result.logged_only and result.cause.startswith("pending fork"):
            explain = commit.explain(result.pending_turn) if commit is not None else ""
            d = result.decision
            step_note = ""
            if d is not None and d.kind == "flatten":
                step_note = ", no boundary below it -> flatten"
            elif d is not None and d.kind == "fork":
                step_note = f" -> fork at boundary {result.frm}"
            verdict = ": avoidable" if turn.avoidable else (": not avoidable" if turn.avoidable is False else "")
            why = f"{result.cause}{step_note}; {explain}{verdict}"
        elif turn.avoidable:
            why += "; avoidable with a stable fingerprint"
        why += result.note
        if turn.contradiction is not None:
            why = f"{turn.contradiction}; {why}"
        turn.why = why
        self.results[f.index] = r
        self.totals.add(r, 1)

    def _sent_before(self, index: int) -> int:
        reg, _ = self.before[index]
        return reg.sent_count if reg.known and reg.live else 0

    def _summarize(self) -> None:
        t = self.totals
        profile = profile_of(self.session)
        tracker = self.session.analyzer(ProfileTracker)
        rate = round(t.agree / t.replayed, 4) if t.replayed else None
        self._facts().verdicts = {
            "profile": profile.id,
            "profile_why": tracker.why if tracker is not None else "",
            "turns": t.turns,
            "replayed": t.replayed,
            "agree": t.agree,
            "disagree": t.disagree,
            "logged_only": t.logged_only,
            "agreement_rate": rate,
            "disagreements": [{"index": i, "fact": self.disagreements[i]} for i in self._disagreeing[:MAX_LISTED]],
        }
        self.session.counterfactual = {
            "resends_logged": t.resends,
            "resends_avoidable": t.avoidable,
            "messages_resent_logged": t.resent_logged,
            "messages_resent_avoidable": t.resent_avoidable,
            "avoidable_turns": self.avoidable_turns[:MAX_LISTED],
        }

    # ----------------------------------------------------------------- sidecar
    def update_sidecar_verdict(self) -> None:
        sidecar = self.session.sidecar
        if sidecar is None:
            return
        self._facts().sidecar_verdict = sidecar_verdict(sidecar.data, self._mark(), profile_of(self.session))

    def rebuilt(self, session: Session) -> None:
        """Rebuilt from its file after parking: its restart binding (carried over) is judged again, as when it was
        first read after its transcript."""
        self.update_sidecar_verdict()

    def _facts(self) -> SenpiSession:
        facts = self.session.facts
        if not isinstance(facts, SenpiSession):
            facts = self.session.facts = SenpiSession()
        return facts
