"""The directive pane's running totals (`Combiner`) always equal a fresh `combine` of the same sessions, as
summaries are replaced, added, dropped and filtered down to one."""

from __future__ import annotations

import random

from tui.view import SessionSummary, TagTotals
from tui.widgets.directives import Combiner, combine


def _summary(rng: random.Random, key: str) -> SessionSummary:
    tags = {}
    for tag in rng.sample(["<a>", "<b>", "<c>", "<d>"], rng.randint(0, 3)):
        copies, nbytes = rng.randint(0, 9), rng.randint(0, 999)
        tags[tag] = TagTotals(
            copies=copies,
            bytes=nbytes,
            turns=rng.randint(0, 5),
            injections=rng.choice([None, rng.randint(0, 4)]),
            saved_bytes=rng.choice([None, rng.randint(0, 300)]),
            copies_sent=rng.randint(0, copies),
            bytes_sent=rng.randint(0, nbytes),
        )
    raw = rng.randint(0, 5000)
    return SessionSummary(key, key, None, payload_total=rng.randint(0, 5000), tags=tags, measured_raw=raw,
                          measured_sent=rng.randint(0, raw))  # fmt: skip


def test_running_totals_equal_a_fresh_combine() -> None:
    rng = random.Random(7)
    combiner = Combiner()
    sessions = [_summary(rng, f"k{i}") for i in range(12)]
    for step in range(300):
        action = rng.random()
        if action < 0.5 and sessions:
            i = rng.randrange(len(sessions))
            sessions[i] = _summary(rng, sessions[i].key)  # the session changed: a new summary object
        elif action < 0.7:
            sessions.append(_summary(rng, f"k{12 + step}"))
        elif action < 0.85 and sessions:
            sessions.pop(rng.randrange(len(sessions)))
        view = [rng.choice(sessions)] if sessions and step % 17 == 0 else list(sessions)  # one session picked
        assert combiner.update(view) == combine(view)


def test_session_order_kept_by_moves_equals_a_stable_sort() -> None:
    from dataclasses import replace

    from tui.widgets.sessions import SessionList

    rng = random.Random(11)
    pane = SessionList()
    sessions = [
        SessionSummary(f"k{i}", f"s{i}", None, last_ms=rng.choice([None, rng.randint(0, 20)])) for i in range(30)
    ]
    for step in range(300):
        action = rng.random()
        if action < 0.8:
            for _ in range(rng.randint(1, 3)):
                i = rng.randrange(len(sessions))  # a session changed: a new summary, maybe newer activity
                sessions[i] = replace(sessions[i], last_ms=rng.choice([None, rng.randint(0, 25)]))
        elif action < 0.9:
            sessions.append(SessionSummary(f"k{100 + step}", "x", None, last_ms=rng.randint(0, 25)))
        elif len(sessions) > 2:
            sessions.pop(rng.randrange(len(sessions)))
        pane.set_sessions(tuple(sessions))
        assert pane.sessions == sorted(sessions, key=lambda s: -(s.last_ms or 0))
        assert all(
            a is b for a, b in zip(pane.sessions, sorted(sessions, key=lambda s: -(s.last_ms or 0)), strict=True)
        )
