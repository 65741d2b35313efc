"""Log-line attribution (`State`): the time-indexed matcher picks exactly what a scan of everything would.

The reference below is the plain scan the state used before it indexed waiting lines and turns by time: for
a new turn, the unmatched line of the same (kind, reason, count) with the smallest time gap within the
window, skipping lines of another session, ties to the line that waited longest; the same, mirrored, for a
new line and the turns waiting for one. Random interleavings of lines and turns (and transcript resets) must
give the same links.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from core.agents.senpi import AGENT as SENPI
from core.model import CONTINUITY_EVENT, ContinuityLine, SessionHeader, TranscriptEntry, Where
from core.sources.reread import FileReread
from core.state import ATTRIBUTION_WINDOW_MS, State
from core.timeutil import iso_ms

KINDS = (("delta", "prefix_matched"), ("fork", "assistant_rewritten"))
BASE_MS = 1_790_000_000_000


@dataclass
class Reference:
    """The original O(n) scan, kept as the specification."""

    lines: list[tuple[str, str, int | None, int | None, str | None]] = field(default_factory=list)
    line_links: dict[int, tuple[str, int]] = field(default_factory=dict)
    unmatched_lines: dict[tuple[str, str, int | None], list[int]] = field(default_factory=dict)
    unmatched_turns: dict[tuple[str, str, int | None], list[tuple[str, int]]] = field(default_factory=dict)
    turns: dict[str, list[int | None]] = field(default_factory=dict)  # session -> turn times
    sids: dict[str, str] = field(default_factory=dict)

    def line(self, kind: str, reason: str, count: int | None, ms: int | None, sid: str | None) -> None:
        index = len(self.lines)
        self.lines.append((kind, reason, count, ms, sid))
        key = (kind, reason, count)
        best, best_gap = None, None
        for skey, tindex in self.unmatched_turns.get(key, []):
            if skey not in self.turns or tindex >= len(self.turns[skey]):
                continue
            if sid is not None and sid != self.sids[skey]:
                continue
            at = self.turns[skey][tindex]
            gap = None if ms is None or at is None else abs(ms - at)
            if gap is not None and gap <= ATTRIBUTION_WINDOW_MS and (best_gap is None or gap < best_gap):
                best, best_gap = (skey, tindex), gap
        if best is not None:
            self.unmatched_turns[key].remove(best)
            self.line_links[index] = best
            return
        self.unmatched_lines.setdefault(key, []).append(index)

    def turn(self, skey: str, kind: str, reason: str, count: int | None, ms: int | None) -> None:
        times = self.turns.setdefault(skey, [])
        tindex = len(times)
        times.append(ms)
        key = (kind, reason, count)
        best, best_gap = None, None
        for i in self.unmatched_lines.get(key, []):
            _, _, _, lms, sid = self.lines[i]
            if sid is not None and sid != self.sids[skey]:
                continue
            gap = None if lms is None or ms is None else abs(lms - ms)
            if gap is not None and gap <= ATTRIBUTION_WINDOW_MS and (best_gap is None or gap < best_gap):
                best, best_gap = i, gap
        if best is not None:
            self.unmatched_lines[key].remove(best)
            self.line_links[best] = (skey, tindex)
            return
        self.unmatched_turns.setdefault(key, []).append((skey, tindex))

    def reset(self, skey: str) -> None:
        if skey not in self.turns:
            return
        del self.turns[skey]
        for turns in self.unmatched_turns.values():
            turns[:] = [t for t in turns if t[0] != skey]
        for index in sorted(i for i, link in self.line_links.items() if link[0] == skey):
            del self.line_links[index]
            kind, reason, count, _, _ = self.lines[index]
            self.unmatched_lines.setdefault((kind, reason, count), []).append(index)


def _assistant(skey: str, n: int, kind: str, reason: str, count: int | None, ms: int | None) -> TranscriptEntry:
    details = {"kind": kind, "reason": reason, "deltaMessages": count}
    diagnostic = {"type": CONTINUITY_EVENT, "details": details, "timestamp": ms}
    message = {"role": "assistant", "content": [], "diagnostics": [diagnostic]}
    obj = {"type": "message", "id": f"a{n}", "parentId": None, "timestamp": None, "message": message}
    return TranscriptEntry(Where(skey, n + 2, 0), "message", f"a{n}", None, None, obj)


events = st.lists(
    st.one_of(
        st.tuples(st.just("line"), st.integers(0, 1), st.sampled_from([1, 2, None]),
                  st.one_of(st.none(), st.integers(0, 40_000)), st.sampled_from([None, None, "s0", "s1"])),
        st.tuples(st.just("turn"), st.integers(0, 1), st.sampled_from([1, 2, None]),
                  st.one_of(st.none(), st.integers(0, 40_000)), st.sampled_from(["s0", "s1", "s2"])),
        st.tuples(st.just("reset"), st.just(0), st.just(None), st.just(None), st.sampled_from(["s0", "s1"])),
    ),
    max_size=120,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(events)
def test_indexed_attribution_matches_the_scan(evs: list[tuple[str, int, int | None, int | None, str | None]]) -> None:
    state = State(FileReread())
    ref = Reference()
    counters: dict[str, int] = {}
    for what, k, count, offset, who in evs:
        kind, reason = KINDS[k]
        ms = None if offset is None else BASE_MS + offset
        if what == "line":
            ts = iso_ms(ms) if ms is not None else "not a time"
            state.apply(
                ContinuityLine(Where("session.log", len(ref.lines) + 1, 0), ts, ms, kind, reason, count, who), SENPI
            )
            ref.line(kind, reason, count, ms, who)
        elif what == "turn":
            assert who is not None
            skey = f"/t/{who}.jsonl"
            if skey not in state.sessions:
                state.apply(SessionHeader(Where(skey, 1, 0), who, 3, None, "/w", None), SENPI)
                ref.sids[skey] = who
            n = counters.get(skey, 0)
            counters[skey] = n + 1
            state.apply(_assistant(skey, n, kind, reason, count, ms), SENPI)
            ref.turn(skey, kind, reason, count, ms)
        else:
            skey = f"/t/{who}.jsonl"
            state.reset_session(skey)
            ref.reset(skey)
            counters.pop(skey, None)
    got = {
        i: (line.matched_session, line.matched_turn)
        for i, line in enumerate(state.log.continuity)
        if line.matched_session is not None
    }
    want = {i: (ref.sids[skey], tindex) for i, (skey, tindex) in ref.line_links.items()}
    assert got == want
    for skey, session in state.sessions.items():
        linked = {t.index: t.log_line for t in session.turns if t.log_line is not None}
        assert linked == {t: i for i, (s, t) in ref.line_links.items() if s == skey}
