"""Tagged directive blocks (`<tag>…</tag>`) in transmitted messages, and the per-session ledger of them.

Plugins inject the same multi-kilobyte directive into prompt after prompt (omo's `<ultrawork-mode>` is
~17-25 KB); every flatten then re-sends every copy. To say how much of a payload is directives, and which
dedupe would help, each transmitted message's text is scanned once, when it enters the context, and the
result (positions, sizes, xxh3 digests) is kept instead of the text.

Which tags count: the known directive tags everywhere, plus any other tag whose byte-identical block recurs
at least twice in the session. Candidates for the latter are collected from user-role messages only (user
prompts, custom messages, summaries): injected directives arrive that way, while tool results carry file
contents whose HTML/XML would otherwise be mistaken for directives whenever a file is read twice.

Pairing follows senpi's own span rule for ultrawork (non-greedy, per tag, within one text block): an opening
tag is closed by the first closing tag of the same name after it; another opening tag of that name before
the close makes the block `nested`; an opening tag never closed is `unterminated`. Blocks of different tags
may nest; a block inside another block is not `top`-level. Per-tag counts include nested blocks.

Linear: a text without `<` is skipped; known tags are located with `str.find` (no regex); the any-tag scan of
a user-role text is one regex pass for the closing tags, then `str.find` for the few names that close.
Only top-level blocks and known-tag blocks are hashed (an unknown tag nested inside another block is not a
directive candidate), so each byte is hashed a bounded number of times.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import xxhash
from msgspec import Struct, field

from core.kernel.pipeline import SessionAnalyzer

if TYPE_CHECKING:
    from core.kernel.pipeline import Session
    from core.kernel.ports import Reread
    from core.model import Turn

ULTRAWORK = "ultrawork-mode"
KNOWN_TAGS: tuple[str, ...] = (
    ULTRAWORK,
    "omo-ultrawork-reminder",
    "omo-senpi-task",
    "omo-fallback-architect",
    "omo-fallback-architect-reminder",
    "system-reminder",
)
KNOWN_TAG_SET = frozenset(KNOWN_TAGS)
_TAG_TOKEN = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9_.:-]*)>")
_CLOSING_NAME = re.compile(r"</([A-Za-z][A-Za-z0-9_.:-]*)>")
#: above this many distinct closed tag names in one text, one regex pass beats a `str.find` pass per name
MAX_FIND_NAMES = 24
#: bounds on what one session remembers (the ledger must not grow with the bytes read)
MAX_CANDIDATE_TAGS = 512
MAX_VARIANTS_PER_TAG = 1024


class TagBlock(Struct, frozen=True):
    """One `<tag>…</tag>` span inside one text: where, how big, and a digest to compare copies."""

    tag: str
    start: int  # str index of `<tag>`
    end: int  # str index just after `</tag>`
    nbytes: int  # UTF-8 bytes of the span, tags included
    digest: int  # xxh3-128 of the span's UTF-8 bytes: equal digests = byte-identical copies
    nested: bool = False  # another `<tag>` of the same name sits inside (senpi's dedupe fails closed on it)
    top: bool = True  # not inside another block


class TextScan(Struct):
    """Everything the analyses need from one text, so the text itself can be dropped."""

    blocks: list[TagBlock] = field(default_factory=list)
    unterminated: dict[str, int] = field(default_factory=dict)
    #: the `<ultrawork-mode>` / `</ultrawork-mode>` tokens in order (True = opening), for senpi's
    #: cross-block nesting check
    ultrawork_tokens: tuple[bool, ...] = ()

    @property
    def ultrawork(self) -> list[TagBlock]:
        return [b for b in self.blocks if b.tag == ULTRAWORK]


EMPTY_SCAN = TextScan()


def span_digest(data: bytes) -> int:
    return xxhash.xxh3_128_intdigest(data)


def variant_id(digest: int) -> str:
    """A short printable id of a variant (the first 16 hex digits of its xxh3-128)."""
    return f"{digest:032x}"[:16]


def _find_tokens(text: str, tags: Iterable[str]) -> list[tuple[int, int, bool, str]]:
    """(start, end, is_open, tag) of every `<tag>` / `</tag>` of the given names, by `str.find` (no regex)."""
    tokens: list[tuple[int, int, bool, str]] = []
    for tag in tags:
        for is_open, token in ((True, f"<{tag}>"), (False, f"</{tag}>")):
            pos = text.find(token)
            while pos != -1:
                tokens.append((pos, pos + len(token), is_open, tag))
                pos = text.find(token, pos + len(token))
    tokens.sort()
    return tokens


def _any_tokens(text: str) -> list[tuple[int, int, bool, str]]:
    """Tokens of the known tags and of every other tag name that is closed somewhere in the text. Only a
    closed name can form a block, so tag soup (`a<b` comparisons, unclosed HTML) costs one C-level pass."""
    closed = set(_CLOSING_NAME.findall(text)) - KNOWN_TAG_SET
    if len(closed) > MAX_FIND_NAMES:
        return [(m.start(), m.end(), not m.group(1), m.group(2)) for m in _TAG_TOKEN.finditer(text)]
    return _find_tokens(text, (*KNOWN_TAGS, *sorted(closed)))


def scan_text(text: str, *, any_tag: bool = False) -> TextScan:
    """Scan one text block for tagged blocks: known tags only, or (`any_tag`) every well-formed tag name."""
    if "<" not in text:
        return EMPTY_SCAN
    tokens = _any_tokens(text) if any_tag else _find_tokens(text, KNOWN_TAGS)
    if not tokens:
        return EMPTY_SCAN
    open_at: dict[str, tuple[int, bool]] = {}  # tag -> (start of the pending opening tag, nested seen)
    spans: list[tuple[int, int, str, bool]] = []
    uw_tokens: list[bool] = []
    for start, end, is_open, tag in tokens:
        if tag == ULTRAWORK:
            uw_tokens.append(is_open)
        pending = open_at.get(tag)
        if is_open:
            if pending is None:
                open_at[tag] = (start, False)
            elif not pending[1]:
                open_at[tag] = (pending[0], True)
        elif pending is not None:
            spans.append((pending[0], end, tag, pending[1]))
            del open_at[tag]
    scan = TextScan(ultrawork_tokens=tuple(uw_tokens))
    for tag in open_at:
        scan.unterminated[tag] = scan.unterminated.get(tag, 0) + 1
    spans.sort()
    top_end = -1
    for start, end, tag, nested in spans:
        top = start >= top_end
        if top:
            top_end = end
        elif tag not in KNOWN_TAG_SET:
            continue  # an unknown tag inside another block: hashing every level of such nesting is quadratic
        data = text[start:end].encode("utf-8", "surrogatepass")
        scan.blocks.append(TagBlock(tag, start, end, len(data), span_digest(data), nested, top))
    return scan


def ultrawork_depth(tokens: Iterable[bool], depth: int) -> tuple[bool, int]:
    """senpi's `hasNestedDirective` step over one text: (nested found, depth after), from `depth` (0 or 1)."""
    for is_open in tokens:
        if is_open:
            depth += 1
            if depth > 1:
                return True, depth
        elif depth > 0:
            depth -= 1
    return False, depth


# ---------------------------------------------------------------------------------------------- the ledger
class Seen(Struct):
    """When something was first or last seen: the transcript entry's time and id, and the call index."""

    ts: str | None
    entry_id: str | None
    turn: int | None = None


class VariantStat(Struct):
    """One byte-identical form of a tag's block."""

    id: str
    nbytes: int
    copies: int = 0
    first: Seen | None = None
    last: Seen | None = None


class TagLedger(Struct):
    """Every injection of one tag in one session."""

    tag: str
    known: bool
    injections: int = 0
    bytes_total: int = 0
    nested: int = 0
    unterminated: int = 0
    variants: dict[int, VariantStat] = field(default_factory=dict)
    variants_dropped: int = 0  # variants beyond MAX_VARIANTS_PER_TAG are counted, not kept
    first: Seen | None = None
    last: Seen | None = None
    recurring: bool = False  # some variant was injected at least twice

    @property
    def recognized(self) -> bool:
        return self.known or self.recurring

    @property
    def bytes_per_copy(self) -> int | None:
        """Size of the most injected variant (the newest among equals): what one copy usually costs."""
        best: VariantStat | None = None
        for variant in self.variants.values():
            if best is None or variant.copies >= best.copies:
                best = variant
        return best.nbytes if best is not None else None

    @property
    def variant_count(self) -> int:
        return len(self.variants) + self.variants_dropped


class DirectiveLedger(SessionAnalyzer):
    """Per-session directive ledger, listed by every agent; fed by the agent's payload or context analysis,
    which scans each message once (so `on_entry` has nothing to do)."""

    def __init__(self, session: Session, reread: Reread) -> None:
        self.tags: dict[str, TagLedger] = {}
        self._counted: set[tuple[str, int]] = set()  # (entry id, message position) already counted
        self._since_turn: set[str] = set()  # tags injected since the last call

    def park(self, session: Session) -> None:
        """The session is done (`State.park`): the ledger stays; which messages were counted only guards
        against counting a re-delivered message twice."""
        self._counted = set()

    def keep(self, session: Session) -> Any:
        """The ledger of a parked session (the report's and the dashboard's directive figures read it)."""
        import msgspec  # (on first use: msgspec and the decimal module it loads are ~10 ms of every start-up)

        return msgspec.to_builtins(self.tags)

    def resume(self, session: Session, kept: Any) -> None:
        import msgspec

        self.tags = msgspec.convert(kept, dict[str, TagLedger])

    def record(
        self,
        key: tuple[str, int] | None,
        blocks: Iterable[TagBlock],
        seen: Seen,
        *,
        user_role: bool,
        unterminated: dict[str, int] | None = None,
    ) -> bool:
        """Count the blocks of one transmitted message entering the context, once per transcript message
        (`key` = entry id and position; a branch replay or a compaction re-delivers old messages).
        Returns whether the message was new to the ledger."""
        if key is not None:
            if key in self._counted:
                return False
            self._counted.add(key)
        for block in blocks:
            ledger = self.tags.get(block.tag)
            if ledger is None:
                known = block.tag in KNOWN_TAG_SET
                if not known and (not user_role or len(self.tags) >= MAX_CANDIDATE_TAGS + len(KNOWN_TAGS)):
                    continue
                ledger = self.tags[block.tag] = TagLedger(block.tag, known)
            ledger.injections += 1
            ledger.bytes_total += block.nbytes
            ledger.nested += int(block.nested)
            if ledger.first is None:
                ledger.first = Seen(seen.ts, seen.entry_id)
            ledger.last = Seen(seen.ts, seen.entry_id)
            variant = ledger.variants.get(block.digest)
            if variant is None:
                if len(ledger.variants) >= MAX_VARIANTS_PER_TAG:
                    ledger.variants_dropped += 1
                    continue
                variant = ledger.variants[block.digest] = VariantStat(variant_id(block.digest), block.nbytes)
                variant.first = Seen(seen.ts, seen.entry_id)
            variant.copies += 1
            variant.last = Seen(seen.ts, seen.entry_id)
            if variant.copies >= 2:
                ledger.recurring = True
            self._since_turn.add(block.tag)
        for tag, n in (unterminated or {}).items():
            ledger = self.tags.get(tag)
            if ledger is None and tag in KNOWN_TAG_SET:
                ledger = self.tags[tag] = TagLedger(tag, True)
            if ledger is not None:
                ledger.unterminated += n
        return True

    def note_call(self, turn_index: int) -> None:
        """A provider call happened: tags injected since the previous one were first/last carried by it."""
        for tag in self._since_turn:
            ledger = self.tags.get(tag)
            if ledger is None:
                continue
            if ledger.first is not None and ledger.first.turn is None:
                ledger.first.turn = turn_index
            if ledger.last is not None:
                ledger.last.turn = turn_index
            for variant in ledger.variants.values():
                if variant.first is not None and variant.first.turn is None:
                    variant.first.turn = turn_index
                if variant.last is not None and variant.last.turn is None:
                    variant.last.turn = turn_index
        self._since_turn.clear()

    def recognized(self) -> set[str]:
        """Tags that count as directives now: known ones, and others whose identical block recurred."""
        return {tag for tag, ledger in self.tags.items() if ledger.recognized}

    def is_recognized(self, tag: str) -> bool:
        ledger = self.tags.get(tag)
        return tag in KNOWN_TAG_SET or (ledger is not None and ledger.recurring)

    @property
    def injections(self) -> dict[str, int]:
        """Copies injected so far, per recognized tag (what the TUI's directive pane shows)."""
        return {tag: ledger.injections for tag, ledger in self.tags.items() if ledger.recognized}

    def summary(self) -> list[dict[str, Any]]:
        """The ledger as plain data, recognized tags only, most bytes first."""
        out: list[dict[str, Any]] = []
        for ledger in sorted(self.tags.values(), key=lambda t: (-t.bytes_total, t.tag)):
            if not ledger.recognized:
                continue
            out.append(
                {
                    "tag": ledger.tag,
                    "known": ledger.known,
                    "injections": ledger.injections,
                    "variants": ledger.variant_count,
                    "bytes_per_copy": ledger.bytes_per_copy,
                    "bytes_total": ledger.bytes_total,
                    "nested": ledger.nested,
                    "unterminated": ledger.unterminated,
                    "first_seen": _seen(ledger.first),
                    "last_seen": _seen(ledger.last),
                    "variant_list": [
                        {
                            "id": v.id,
                            "bytes": v.nbytes,
                            "copies": v.copies,
                            "first_seen": _seen(v.first),
                            "last_seen": _seen(v.last),
                        }
                        for v in ledger.variants.values()
                    ],
                }
            )
        return out


def _seen(seen: Seen | None) -> dict[str, Any] | None:
    if seen is None:
        return None
    return {"ts": seen.ts, "entry_id": seen.entry_id, "turn": seen.turn}


def sent_counts(values: Mapping[str, int]) -> tuple[int, int]:
    """(copies, bytes) of one tag's blocks in a call's payload as sent, from a `Turn.directives` entry.

    An entry counts the payload as serialized (`copies`, `bytes`: before the agent's own dedupe, the side of
    `payload_bytes_raw`); an agent that dedupes adds what survived it (`copies_sent`, `bytes_sent`: the side of
    `payload_bytes`). An entry without them was sent as serialized (pi, Claude Code and mux dedupe nothing)."""
    copies = int(values.get("copies", 0))
    nbytes = int(values.get("bytes", 0))
    return int(values.get("copies_sent", copies)), int(values.get("bytes_sent", nbytes))


def composition(turn: Turn) -> list[dict[str, Any]]:
    """A turn's directive copies per tag with their share of the payload, all as serialized (before the
    agent's own dedupe: copies and bytes over `payload_bytes_raw`)."""
    if not turn.directives:
        return []
    raw = turn.payload_bytes_raw
    rows = []
    for tag, values in sorted(turn.directives.items(), key=lambda kv: (-kv[1].get("bytes", 0), kv[0])):
        nbytes = int(values.get("bytes", 0))
        rows.append(
            {
                "tag": tag,
                "copies": int(values.get("copies", 0)),
                "bytes": nbytes,
                "share": round(nbytes / raw, 4) if raw else None,
            }
        )
    return rows
