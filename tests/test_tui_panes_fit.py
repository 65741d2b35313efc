"""The Rates and Directives panes fit every figure or name it (issue 18 items 5 and 6).

Rates dropped lines silently (the peak once `failed` appeared; at 80x24 `failed` and the streak while "of 36"
still counted them); the Directives pane wrapped at 120 columns (`saved` and every value on their own line);
choosing a session left the Rates pane on the log's figures; the zoomed "by session" block showed the top tag
under headers that read as totals.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.content import Content
from tui_fixtures import FROZEN, SID_A, SID_B, continuity_line, screen_output, wait_for, wait_loaded, write_agent

from core.engine import Engine
from core.kernel.stats import PEAK_KINDS
from core.model import ContinuityLine, Where
from tui.app import ContinuityApp
from tui.scope import TAIL, SessionRates
from tui.view import row_count, row_kind, row_reason
from tui.widgets.directives import COLUMNS, ONE_SIDE, DirectivePane, layout
from tui.widgets.rates import Item, RatesPane, arrange

SIZES = [(160, 45), (120, 36), (80, 24)]


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    root = tmp_path / "agent"
    write_agent(root)
    with open(root / "logs" / "session.log", "a", encoding="utf-8") as fh:  # the review's case: `failed` appears
        fh.write(continuity_line(1_785_800_900_000, "failed", "query_failed"))
    return root


def _app(root: Path) -> ContinuityApp:
    return ContinuityApp(Engine([root]), live=False, clock=lambda: FROZEN)


def _pane_text(app: ContinuityApp, widget_id: str) -> list[str]:
    region = app.main.query_one(f"#{widget_id}").content_region
    _raw, lines = screen_output(app)
    return [line[region.x : region.right] for line in lines[region.y : region.bottom]]


# ---------------------------------------------------------------------------------------------- rates
def _items(n: int, prefix: str) -> list[Item]:
    return [Item(Content(f"{prefix}{i}".ljust(30)), f"{prefix}{i}", i) for i in range(n)]


def test_arrange_shows_or_names_every_figure() -> None:
    for width in range(10, 130, 7):
        for height in range(1, 14):
            kinds, extras = _items(6, "k"), _items(2, "x")
            lines = arrange(kinds, kinds, extras, width, height)
            assert len(lines) <= height
            text = "\n".join(line.plain for line in lines)
            names = [item.folded for item in kinds + extras]
            assert all(name in text for name in names), (width, height, text)
            body = "\n".join(line.plain for line in lines[:-1]) if "more:" in text else text
            folded = [name for name in names if name not in body]
            if folded:
                assert lines[-1].plain.startswith(f"+{len(folded)} more: "), (width, height, text)


@pytest.mark.parametrize("size", SIZES)
async def test_rates_pane_never_drops_a_figure(agent: Path, size: tuple[int, int]) -> None:
    app = _app(agent)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot, app)
        pane = app.main.query_one(RatesPane)
        # the pane counts calls (18, every kind listed); the log's 19 lines, its `failed` among them, are named too
        assert pane.rates is not None and pane.rates.unit == "calls" and pane.rates.log_events == 19
        lines = [line.strip() for line in _pane_text(app, "rates") if line.strip()]
        more = lines[-1] if lines[-1].startswith("+") else None
        body = "\n".join(lines[:-1] if more else lines)
        shown = {kind: rf"(^|\s){kind}\s+[\d,.KMG]+\s" for kind in pane.rates.kinds}  # a row, in either column
        shown |= {"streak": r"^streak ", "peak": r"^peak "}
        hidden = [name for name, pattern in shown.items() if not re.search(pattern, body, re.MULTILINE)]
        if hidden:  # not shown: counted on the last line, which names as many as its width allows
            assert more is not None and more.startswith(f"+{len(hidden)} more: "), (size, lines)
            kinds = pane.rates.kinds  # named most telling first: kinds that happened, the streak and peak, zeros
            rank = {name: (0 if kinds.get(name) else 2 if name in kinds else 1, i) for i, name in enumerate(shown)}
            assert more.split(": ", 1)[1].startswith(min(hidden, key=rank.__getitem__)), (more, hidden)
        if size[0] >= 120:  # wide enough: only kinds nothing happened as (and the peak) may fold
            assert all(pane.rates.kinds.get(name, 0) == 0 for name in hidden if name != "peak"), hidden


@pytest.mark.parametrize("size", SIZES)
async def test_choosing_a_session_scopes_the_rates_and_says_so(agent: Path, size: tuple[int, int]) -> None:
    app = _app(agent)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot, app)
        pane = app.main.query_one(RatesPane)
        assert pane.rates is not None and pane.rates.scope is None and pane.rates.unit == "calls"
        assert str(pane.border_title) == "Rates · calls · log lines"  # senpi writes both: both are named
        await pilot.press("ctrl+p", *f"Session {SID_B[:8]}")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: pane.rates is not None and pane.rates.scope == SID_B)
        rates = pane.rates
        assert rates.unit == "calls" and rates.events == 5 and rates.resend_share == 0.0
        assert rates.kinds["bootstrap"] == 1 and rates.kinds["delta"] == 4
        _raw, lines = screen_output(app)
        top = "\n".join(lines[:12])
        assert f"session {SID_B[:8]}" in top and "calls" in top
        assert "resend 0.0% of 5 calls" in top
        await pilot.press("escape")
        await wait_for(pilot, lambda: pane.rates is not None and pane.rates.scope is None)
        assert pane.rates is not None and pane.rates.unit == "calls" and pane.rates.events == 18
        assert pane.rates.log_events == 19


def test_session_rates_equal_a_fresh_count_under_appends() -> None:
    rng = random.Random(3)
    kinds = ["delta", "delta", "delta", "fork", "flatten", "bootstrap", "failed"]
    rows: list[ContinuityLine] = []
    scoped = SessionRates("s1")
    generation = 0
    for step in range(60):
        for _ in range(rng.randint(1, 40)):
            ms = 1_000_000 + len(rows) * 1000
            rows.append(ContinuityLine(Where("log", 0, 0), "", ms, rng.choice(kinds), rng.choice("ab"),
                                       rng.choice([None, rng.randint(1, 50)]), rng.choice(["s1", "s2"])))  # fmt: skip
        if step % 13 == 12:
            generation += 1
            rows = list(rows)
        rates = scoped.update(rows, generation, rows[-1].ts_ms or 0, logs_only=True)
        mine = [r for r in rows if r.session_id == "s1"]
        assert rates.events == len(mine)
        assert {k: v for k, v in rates.kinds.items() if v} == dict(Counter(row_kind(r) for r in mine))
        peaks = [row_count(r) for r in mine if row_kind(r) in PEAK_KINDS and row_count(r) is not None]
        assert (rates.peak.value if rates.peak else None) == (max(peaks) if peaks else None)  # type: ignore[type-var]
        run = 0
        for r in reversed(mine):
            if (row_kind(r), row_reason(r)) != (row_kind(mine[-1]), row_reason(mine[-1])):
                break
            run += 1
        assert rates.run is not None and rates.run.length == run
        recent = [r for r in mine if (rows[-1].ts_ms or 0) - 600_000 <= (r.ts_ms or 0)]
        assert round(sum(rates.per_minute.values()) * 10) == len(recent)
    assert len(rows) > TAIL * 2


# ---------------------------------------------------------------------------------------------- directives
def test_directive_columns_never_overflow() -> None:
    for both in (True, False):
        pool = sorted(COLUMNS if both else ONE_SIDE, key=lambda c: c.priority)
        for width in range(10, 200):
            shape = layout(width, both=both)
            used = shape.tag_w + sum(c.width for c in shape.columns) + (shape.bar_w + 2 if shape.bar_w else 0)
            assert used <= width, width
            # the most telling first (bytes sent, their share, then the bytes serialized), shown side by side
            assert {c.key for c in shape.columns} == {c.key for c in pool[: len(shape.columns)]}
            if width >= 36:
                assert {"bytes_sent", "share_sent", "bytes" if both else "copies_sent"} <= {
                    c.key for c in shape.columns
                }
            assert shape.grouped == (both and width >= 35)


@pytest.mark.parametrize("size", SIZES)
async def test_directive_pane_rows_stay_on_one_line(agent: Path, size: tuple[int, int]) -> None:
    app = _app(agent)
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot, app)
        lines = _pane_text(app, "directives")
        assert lines[0].split()[0] == "tag" and "copies" in lines[0]
        assert lines[1].split()[0] == "ultrawork-mode"
        assert all(line.strip() for line in lines[:2])
        width = app.main.query_one(DirectivePane).content_region.width
        for line in lines:
            assert cell_len(line) <= width
        if size[0] >= 120:
            assert "saved" in lines[0]


async def test_by_session_rows_are_totals_over_every_tag(agent: Path) -> None:
    app = _app(agent)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot, app)
        pane = app.main.query_one(DirectivePane)
        summary = next(s for s in app.snapshot.sessions if s.session_id == SID_A)
        copies = sum(t.copies for t in summary.tags.values())
        await pilot.press("ctrl+p", *"Zoom directives")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.main.maximized is pane)
        text = pane.render().plain
        assert "by session: all of its tags together" in text
        row = next(line for line in text.splitlines() if line.startswith(SID_A[:8]))
        assert row.split()[2] == str(copies) and "top ultrawork-mode" in row
