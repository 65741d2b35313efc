"""The running serialization of one session's context under one build's serializer rules (a "lane").

Each context message is rendered and scanned once, when it enters the context, and reduced to byte counts,
ultrawork spans (digest and size) and directive blocks; prefix totals over those give the size of a flatten
of any history prefix in O(1) and of a delta in O(its messages). `payload` keeps one lane per distinct
rule set, because which build wrote a session is only known from evidence that may arrive later.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from core.agents.senpi.payload.context import ENV, USER, CtxMsg
from core.agents.senpi.payload.dedupe import KEEP_IDENTICAL_PREVIOUS, KEEP_LAST, PLACEHOLDER_BYTES
from core.agents.senpi.payload.serialize import (
    ANCHOR,
    DELTA_SEPARATOR,
    ENVELOPE_CLOSE,
    ENVELOPE_OPEN,
    LABEL_SEPARATOR,
    MISSING,
    NOTE_CLOSE,
    NOTE_OPEN,
    SerializerRules,
    ToolNamer,
    WatchedExecution,
    delta_message,
    fold_environment,
    has_visible_text,
    history_body,
    history_label,
    is_failed_assistant,
    js_trim,
    tool_watch_note,
)
from core.agents.shared.pi_family.context import is_transmitted
from core.kernel.dedupe import keep_first_step, utf8_len
from core.kernel.directives import ULTRAWORK, TagBlock, TextScan, scan_text, ultrawork_depth

_ENVELOPE_BYTES = utf8_len(ENVELOPE_OPEN) + utf8_len(ENVELOPE_CLOSE)
_NOTE_BYTES = utf8_len(NOTE_OPEN) + utf8_len(NOTE_CLOSE)
_ANCHOR_BYTES = utf8_len(ANCHOR)
_SEP = utf8_len(LABEL_SEPARATOR)
DSEP = utf8_len(DELTA_SEPARATOR)


# ---------------------------------------------------------------------------------------------- running state
# `Rec` and `Cum` are immutable records made per message and lane (~45,000 `Cum`s on the 100 MB corpus): named
# tuples, whose construction is one C-level tuple build where a frozen dataclass sets each field through
# `object.__setattr__` (10 calls for a `Cum`).
class Rec(NamedTuple):
    """One context message reduced to what payload sizes need, under one lane's rules."""

    role: str
    transmitted: bool
    label: int  # UTF-8 bytes of "<LABEL>\n"; -1 when the role is skipped (no label, no body)
    body: int  # bytes of its flatten body (also its size as the final user message)
    delta: int  # bytes of its delta rendering (transmitted messages only)
    uw: tuple[tuple[int, int], ...]  # ultrawork spans of the body in order: (digest, bytes)
    uw_tokens: tuple[bool, ...]  # every ultrawork tag token of the body in order (True = opening)
    marks: tuple[tuple[int, TagBlock], ...]  # directive blocks of a transmitted message: (text index, block)


class Cum(NamedTuple):
    """Prefix totals over `recs[:i]`, so any history prefix is measured in O(1)."""

    sections: int = 0  # label + body bytes of labelled messages (separators excluded)
    labelled: int = 0
    uw_n: int = 0
    uw_bytes: int = 0
    uw_last: int = 0
    depth: int = 0  # senpi's cross-block ultrawork tag depth
    nested: bool = False
    rep_saved: int = 0  # keep-identical-previous: bytes of the spans it replaces
    rep_n: int = 0
    rep_last: int | None = None  # digest of the last span seen

    def extend(self, spans: Sequence[tuple[int, int]], tokens: Sequence[bool], label: int, body: int) -> Cum:
        if not spans and not tokens:  # most messages: only the section totals move (Cum is immutable)
            if label < 0:
                return self
            return _make_cum((self[0] + label + body, self[1] + 1, *self[2:]))  # sections, labelled, the rest
        nested, depth = self.nested, self.depth
        if tokens and not nested:
            nested, depth = ultrawork_depth(tokens, depth)
        rep_saved, rep_n, last = self.rep_saved, self.rep_n, self.rep_last
        for digest, nbytes in spans:
            if digest == last:
                rep_saved += nbytes
                rep_n += 1
            last = digest
        return Cum(
            self.sections + (label + body if label >= 0 else 0),
            self.labelled + (label >= 0),
            self.uw_n + len(spans),
            self.uw_bytes + sum(n for _, n in spans),
            spans[-1][1] if spans else self.uw_last,
            depth,
            nested,
            rep_saved,
            rep_n,
            last,
        )


_make_cum = Cum._make
_EMPTY_CUM = Cum()
"""Every lane's totals before its first message: one object, so lanes that render their messages alike share
their `Cum`s (`Measure.extend`)."""


class Lane:
    """The running serialization of the current context under one set of serializer rules."""

    def __init__(self, rules: SerializerRules, namer: ToolNamer | None = None) -> None:
        self.rules = rules
        self.namer = namer if namer is not None else ToolNamer(rules)
        self.recs: list[Rec] = []
        self.cum: list[Cum] = [_EMPTY_CUM]
        self.trans: list[int] = []  # positions of transmitted recs
        self.cum_delta: list[int] = [0]  # delta bytes of trans[:k]
        self.tag_totals: dict[str, list[int]] = {}  # over transmitted recs: tag -> [copies, bytes]
        self.kf_seen: set[tuple[str, int]] = set()
        self.kf_saved = 0
        self.kf_markers = 0
        self.kf_kept = 0
        self.open_calls: dict[str, tuple[Any, float]] = {}
        self.answered: set[str] = set()
        self.prev_len = 0  # len(recs) right after the previous call's assistant
        self.prev_trans = 0
        self.pending_env: CtxMsg | None = None  # an environment message waiting to see what follows it

    def push(self, item: CtxMsg, measure: Measure) -> None:
        """Add one context message, folding an environment message into the user prompt right after it
        when these rules do (2026.9.24-3+)."""
        if self.rules.fold_environment:
            env = self.pending_env
            if env is not None:
                self.pending_env = None
                if item.kind == USER:
                    self.append(measure.fold(env.msg, item.msg), measure)
                    return
                self.append(env.msg, measure)
            if item.kind == ENV:
                self.pending_env = item
                return
        self.append(item.msg, measure)

    def flush(self, measure: Measure) -> None:
        """A call is made now: an environment message with no user prompt after it stays a message."""
        if self.pending_env is not None:
            env, self.pending_env = self.pending_env, None
            self.append(env.msg, measure)

    def append(self, msg: Mapping[str, Any], measure: Measure) -> Rec | None:
        rules = self.rules
        if rules.drop_failed_assistants and is_failed_assistant(msg):
            return None
        namer = self.namer
        namer.observe_message(msg)
        # The other lanes usually render this very message identically (see `_rec_inputs`): share their Rec.
        inputs = _rec_inputs(measure.shape(msg), rules, namer)
        rec = measure.rec(msg, inputs)
        if rec is None:
            rec = measure.keep_rec(msg, inputs, self._render(msg, measure))
        self.recs.append(rec)
        self.cum.append(measure.extend(self.cum[-1], rec))
        if rec.transmitted:
            marks = rec.marks
            self.trans.append(len(self.recs) - 1)
            self.cum_delta.append(self.cum_delta[-1] + rec.delta)
            for _index, tb in marks:
                totals = self.tag_totals.setdefault(tb.tag, [0, 0])
                totals[0] += 1
                totals[1] += tb.nbytes
            saved, markers, kept = keep_first_step(marks, self.kf_seen)
            self.kf_saved += saved
            self.kf_markers += markers
            self.kf_kept += kept
        self._track_calls(msg, rec.role)
        return rec

    def _render(self, msg: Mapping[str, Any], measure: Measure) -> Rec:
        """Render one message under this lane's rules and reduce it to its Rec (labels, bodies, delta, spans)."""
        rules, namer = self.rules, self.namer
        role = str(msg.get("role"))
        transmitted = is_transmitted(msg)
        label_text = history_label(msg, rules, namer)
        body_texts: list[str] = []
        if label_text is not None:
            body_texts = [b["text"] for b in history_body(msg, rules, namer) if b.get("type") == "text"]
        any_tag = transmitted and role == "user"
        spans: list[tuple[int, int]] = []
        tokens: list[bool] = []
        marks: list[tuple[int, TagBlock]] = []
        body = 0
        for index, text in enumerate(body_texts):
            body += measure.nbytes(text)
            scan = measure.scan(text, any_tag=any_tag)
            tokens.extend(scan.ultrawork_tokens)
            for tb in scan.blocks:
                if tb.tag == ULTRAWORK:
                    spans.append((tb.digest, tb.nbytes))
                if transmitted:
                    marks.append((index, tb))
        delta = 0
        if transmitted:
            delta = sum(measure.nbytes(b["text"]) for b in delta_message(msg, rules, namer) if b.get("type") == "text")
        label = utf8_len(label_text) + 1 if label_text is not None else -1
        return Rec(role, transmitted, label, body, delta, tuple(spans), tuple(tokens), tuple(marks))

    def _track_calls(self, msg: Mapping[str, Any], role: str) -> None:
        if role == "toolResult":
            call_id = msg.get("toolCallId")
            if isinstance(call_id, str):
                self.answered.add(call_id)
                self.open_calls.pop(call_id, None)
        elif role == "assistant" and isinstance(msg.get("content"), list):
            ts = msg.get("timestamp")
            when = float(ts) if isinstance(ts, int | float) and not isinstance(ts, bool) else 0.0
            for block in msg["content"]:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    call_id = block.get("id")
                    if isinstance(call_id, str) and call_id not in self.answered:
                        self.open_calls[call_id] = (block.get("name"), when)

    def mark_call(self) -> None:
        self.prev_len = len(self.recs)
        self.prev_trans = len(self.trans)


def _rec_inputs(shape: tuple[Any, tuple[Any, ...], bool], rules: SerializerRules, namer: ToolNamer) -> tuple[Any, ...]:
    """Everything of a lane that its Rec of a message depends on, besides the message itself.

    A Rec is a function of the message, the content mapper (only when the content holds something other
    than string `text` entries, and never for an assistant, whose body is `contentToText` and which is not
    transmitted), whether the role is skipped, and the SDK names this lane's namer gives the tool names the
    message mentions. Lanes with equal inputs render the message byte for byte alike, so one Rec serves them.
    `shape` is the lane-independent part (`_shape`).
    """
    role, names, mapped = shape
    return (
        rules.content_mapper if mapped else None,
        role in rules.skip_roles,
        tuple(namer.sdk_name(name) for name in names) if names else (),
    )


def _shape(msg: Mapping[str, Any]) -> tuple[Any, tuple[Any, ...], bool]:
    """(role, the tool names the message mentions, whether its content needs a content mapper)."""
    role = msg.get("role")
    content = msg.get("content")
    if role == "assistant":
        names: tuple[Any, ...] = ()
        if isinstance(content, list):
            names = tuple(
                block.get("name", MISSING)
                for block in content
                if isinstance(block, dict) and block.get("type", MISSING) == "toolCall"
            )
        return role, names, False
    mapped = isinstance(content, list) and not all(
        isinstance(entry, dict) and entry.get("type") == "text" and isinstance(entry.get("text"), str)
        for entry in content
    )
    return role, (() if role == "user" else (msg.get("toolName", MISSING),)), mapped


class Measure:
    """Per-message cache: the lanes render the same strings; each is measured and scanned once, and a message
    they render alike (`_rec_inputs`) is reduced to its Rec once."""

    __slots__ = ("_bytes", "_cums", "_folds", "_recs", "_scans", "_shapes")

    def __init__(self) -> None:
        self._bytes: dict[str, int] = {}
        self._scans: dict[tuple[str, bool], TextScan] = {}
        # keyed by id(); the value holds the keyed objects, so an id cannot be reused while it is cached
        self._recs: dict[tuple[int, tuple[Any, ...]], tuple[Mapping[str, Any], Rec]] = {}
        self._folds: dict[tuple[int, int], tuple[Mapping[str, Any], Mapping[str, Any], dict[str, Any]]] = {}
        self._shapes: dict[int, tuple[Mapping[str, Any], tuple[Any, tuple[Any, ...], bool]]] = {}
        self._cums: dict[tuple[int, int], tuple[Cum, Rec, Cum]] = {}

    def shape(self, msg: Mapping[str, Any]) -> tuple[Any, tuple[Any, ...], bool]:
        hit = self._shapes.get(id(msg))
        if hit is not None and hit[0] is msg:
            return hit[1]
        shape = _shape(msg)
        self._shapes[id(msg)] = (msg, shape)
        return shape

    def rec(self, msg: Mapping[str, Any], inputs: tuple[Any, ...]) -> Rec | None:
        hit = self._recs.get((id(msg), inputs))
        return hit[1] if hit is not None and hit[0] is msg else None

    def keep_rec(self, msg: Mapping[str, Any], inputs: tuple[Any, ...], rec: Rec) -> Rec:
        self._recs[(id(msg), inputs)] = (msg, rec)
        return rec

    def extend(self, cum: Cum, rec: Rec) -> Cum:
        """`cum.extend` by `rec`, once for every lane standing at the same totals with the same Rec: lanes whose
        rules render a session's messages alike (most of them, most of the time: `_rec_inputs`) share both, as
        they start from one `_EMPTY_CUM`. Keyed by id(); the value holds the keyed objects."""
        key = (id(cum), id(rec))
        hit = self._cums.get(key)
        if hit is not None and hit[0] is cum and hit[1] is rec:
            return hit[2]
        out = cum.extend(rec.uw, rec.uw_tokens, rec.label, rec.body)
        self._cums[key] = (cum, rec, out)
        return out

    def fold(self, env: Mapping[str, Any], user: Mapping[str, Any]) -> dict[str, Any]:
        """`fold_environment(env, user)`, one object for every lane that folds (so they can share its Rec)."""
        key = (id(env), id(user))
        hit = self._folds.get(key)
        if hit is not None and hit[0] is env and hit[1] is user:
            return hit[2]
        folded = fold_environment(env, user)
        self._folds[key] = (env, user, folded)
        return folded

    def nbytes(self, text: str) -> int:
        n = self._bytes.get(text)
        if n is None:
            n = self._bytes[text] = utf8_len(text)
        return n

    def scan(self, text: str, *, any_tag: bool) -> TextScan:
        key = (text, any_tag)
        scan = self._scans.get(key)
        if scan is None:
            scan = self._scans[key] = scan_text(text, any_tag=any_tag)
        return scan


# ---------------------------------------------------------------------------------------------- per-call facts
@dataclass(slots=True)
class FlattenFacts:
    """A flatten of the current context under one lane: sizes under both senpi rules, and composition."""

    raw: int
    after: dict[str, tuple[int, int]]  # senpi rule -> (bytes after dedupe, collapsedDirectives)
    history: int  # bytes of messages already in the context at the previous call (labels included)
    tags: dict[str, list[int]]
    keep_first: tuple[int, int, int]  # (bytes saved, markers, kept)
    note: bool
    #: senpi rule -> (copies, bytes) of the `<ultrawork-mode>` blocks of transmitted messages that rule leaves
    #: in full: `tags[ULTRAWORK]` as sent (the other tags are sent as serialized)
    uw_sent: dict[str, tuple[int, int]]


@dataclass(slots=True)
class CallFacts:
    """Everything needed to fill one Turn once its decision is known (cheap to keep for a moment).

    A flatten of the context is measured only under the lanes that are asked for (`flatten_of`) while the
    lanes still stand where the call left them; `complete` measures the rest before they move on, so a
    turn whose decision comes later sees exactly what an eager measurement would have given.
    """

    lanes: dict[str, Lane]  # rules name -> the lane object at the time (its prefix arrays stay valid)
    sizes: dict[str, tuple[int, int, int, int]]  # rules name -> (len(recs), len(trans), prev_len, prev_trans)
    flatten: dict[str, FlattenFacts]
    completed: Mapping[str, WatchedExecution] | None = None  # the tool watch's record at the call
    recognized: set[str] | None = None  # the directive tags recognized at the call

    def flatten_of(self, name: str) -> FlattenFacts:
        ff = self.flatten.get(name)
        if ff is None:
            assert self.completed is not None and self.recognized is not None, "measured after the lanes moved"
            ff = self.flatten[name] = flatten_facts(self.lanes[name], self.completed, self.recognized)
        return ff

    def complete(self) -> None:
        """Measure every lane now (the lanes are about to move on) and drop what measuring needed."""
        for name in self.lanes:
            self.flatten_of(name)
        self.completed = self.recognized = None


def flatten_facts(lane: Lane, completed: Mapping[str, WatchedExecution], recognized: set[str]) -> FlattenFacts:
    recs = lane.recs
    n = len(recs)
    final = recs[-1] if n and recs[-1].role == "user" else None
    h = n - 1 if final is not None else n
    c = lane.cum[h]
    raw = _ENVELOPE_BYTES + c.sections + _SEP * max(c.labelled - 1, 0) if h else 0
    everything = c
    note_text: str | None = None
    note_spans: list[tuple[int, int]] = []
    if lane.open_calls:
        note = tool_watch_note(lane.open_calls, completed, lane.namer)
        if note is not None and has_visible_text(note):
            note_text = js_trim(note)
            raw += _NOTE_BYTES + utf8_len(note_text)
            scan = scan_text(note_text)
            note_spans = [(tb.digest, tb.nbytes) for tb in scan.ultrawork]
            everything = everything.extend(note_spans, scan.ultrawork_tokens, -1, 0)
    raw += _ANCHOR_BYTES
    if final is not None:
        raw += final.body
        everything = everything.extend(final.uw, final.uw_tokens, -1, 0)
    after: dict[str, tuple[int, int]] = {}
    if everything.nested or everything.uw_n <= 1:
        after[KEEP_LAST] = (raw, 0)
    else:
        removed = everything.uw_bytes - everything.uw_last
        after[KEEP_LAST] = (raw - removed + (everything.uw_n - 1) * PLACEHOLDER_BYTES[KEEP_LAST], everything.uw_n - 1)
    if everything.nested or not h:
        after[KEEP_IDENTICAL_PREVIOUS] = (raw, 0)
    else:
        after[KEEP_IDENTICAL_PREVIOUS] = (
            raw - c.rep_saved + c.rep_n * PLACEHOLDER_BYTES[KEEP_IDENTICAL_PREVIOUS],
            c.rep_n,
        )
    m = min(lane.prev_len, h)
    old = lane.cum[m]
    history = old.sections + _SEP * max(old.labelled - 1, 0) if m else 0
    if final is not None and n - 1 < lane.prev_len:
        history += final.body
    tags = {t: list(v) for t, v in lane.tag_totals.items() if v[0] and t in recognized}
    uw_sent = _ultrawork_sent(lane, h, c, everything, note_spans, final)
    return FlattenFacts(
        raw, after, history, tags, (lane.kf_saved, lane.kf_markers, lane.kf_kept), note_text is not None, uw_sent
    )


def _ultrawork_sent(
    lane: Lane, h: int, c: Cum, everything: Cum, note_spans: list[tuple[int, int]], final: Rec | None
) -> dict[str, tuple[int, int]]:
    """Per senpi rule, (copies, bytes) of the ultrawork blocks of transmitted messages the rule keeps in full.

    senpi's dedupe sees every span of the prompt; the directive counts see the transmitted messages' only
    (user prompts, custom messages, tool results: not assistant text or the tool-watch note). When the two
    are the same spans (always, unless an assistant quoted a whole directive) the prefix totals answer in
    O(1); otherwise the spans are walked once in serialization order.
    """
    copies, nbytes = lane.tag_totals.get(ULTRAWORK, (0, 0))
    if everything.nested:
        return {KEEP_LAST: (copies, nbytes), KEEP_IDENTICAL_PREVIOUS: (copies, nbytes)}
    if (copies, nbytes) == (everything.uw_n, everything.uw_bytes):
        last = (1, everything.uw_last) if everything.uw_n > 1 else (copies, nbytes)
        previous = (copies - c.rep_n, nbytes - c.rep_saved) if h else (copies, nbytes)
        return {KEEP_LAST: last, KEEP_IDENTICAL_PREVIOUS: previous}
    # (digest, bytes, transmitted, in the replayed history) of every span, in serialization order
    spans = [(d, n, rec.transmitted, True) for rec in lane.recs[:h] for d, n in rec.uw]
    spans += [(d, n, False, False) for d, n in note_spans]
    spans += [(d, n, True, False) for d, n in final.uw] if final is not None else []
    kept_last = spans[-1:] if len(spans) > 1 else spans
    kept_previous = []
    prev: int | None = None
    for span in spans:
        if not (span[3] and h and span[0] == prev):
            kept_previous.append(span)
        if span[3]:
            prev = span[0]
    return {
        rule: (sum(1 for s in kept if s[2]), sum(s[1] for s in kept if s[2]))
        for rule, kept in ((KEEP_LAST, kept_last), (KEEP_IDENTICAL_PREVIOUS, kept_previous))
    }


@dataclass(slots=True)
class DeltaFacts:
    raw: int
    history: int
    tags: dict[str, list[int]]
    keep_first: tuple[int, int, int]
    count: int  # messages actually sent (the logged count, capped at what the context holds)


def delta_facts(lane: Lane, n_trans: int, prev_len: int, count: int, recognized: set[str]) -> DeltaFacts:
    k = max(min(count, n_trans), 0)
    start = n_trans - k
    cum = lane.cum_delta
    raw = cum[n_trans] - cum[start] + DSEP * max(k - 1, 0)
    old_end = min(max(start, bisect.bisect_left(lane.trans, prev_len, 0, n_trans)), n_trans)
    n_old = old_end - start
    history = cum[old_end] - cum[start] + DSEP * max(n_old - 1, 0)
    tags: dict[str, list[int]] = {}
    seen: set[tuple[str, int]] = set()
    saved = markers = kept = 0
    for pos in lane.trans[start:n_trans]:
        marks = lane.recs[pos].marks
        for _index, tb in marks:
            if tb.tag in recognized:
                totals = tags.setdefault(tb.tag, [0, 0])
                totals[0] += 1
                totals[1] += tb.nbytes
        s, mk, kp = keep_first_step(marks, seen)
        saved, markers, kept = saved + s, markers + mk, kept + kp
    return DeltaFacts(raw, history, tags, (saved, markers, kept), k)
