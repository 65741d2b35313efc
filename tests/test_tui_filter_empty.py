"""A filter that matches nothing says so, and how to clear it (issue 18 item 2).

It used to say "no turns yet — waiting for transcripts or session.log lines" (the help's own example
`session:0198` on the demo, whose ids start 019f/01a1), which reads as a reading bug.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_fixtures import FROZEN, screen_output, wait_loaded, write_agent

from core.engine import Engine
from tui.app import ContinuityApp
from tui.filters import parse
from tui.widgets.turn_table import TurnTable


@pytest.fixture
def app(tmp_path: Path) -> ContinuityApp:
    root = tmp_path / "agent"
    write_agent(root)
    return ContinuityApp(Engine([root]), live=False, clock=lambda: FROZEN)


def test_doubtful_terms_are_named() -> None:
    assert parse("kind:flatten session:01").doubtful() == []
    assert parse("foo:bar").doubtful() == ["foo: is not a field (kind:, reason:, session:, is:): searched as text"]
    assert parse("is:bogus").doubtful()[0].startswith("is:bogus is not a flag (avoidable, disagree, rewritten")
    assert parse("http://x").doubtful()  # a URL is searched as text too, and the user is told
    assert parse("12:30").doubtful()


@pytest.mark.parametrize("size", [(160, 45), (120, 36), (80, 24)])
async def test_nothing_matches_says_so_and_esc_clears(app: ContinuityApp, size: tuple[int, int]) -> None:
    async with app.run_test(size=size) as pilot:
        await wait_loaded(pilot, app)
        table = app.main.query_one(TurnTable)
        await pilot.press("slash", *"session:zzzz foo:bar", "enter")
        await pilot.pause(0.3)
        assert table.row_count == 0
        text = "\n".join(screen_output(app)[1])
        assert "waiting for transcripts" not in text
        assert "nothing matches the filter (18 turns hidden)" in text
        assert "session:zzzz foo:bar" in text
        assert "foo: is not a field" in text
        assert "Esc clears the filter" in text
        assert "0/18 turns" in text
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert table.row_count == 18
        assert "nothing matches" not in "\n".join(screen_output(app)[1])


async def test_an_empty_dashboard_still_says_it_is_waiting(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    app = ContinuityApp(Engine([empty]), live=False, clock=lambda: FROZEN)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause(0.5)
        await pilot.press("slash", *"kind:flatten", "enter")
        await pilot.pause(0.3)
        text = "\n".join(screen_output(app)[1])
        assert "no turns yet — waiting for transcripts" in text


async def test_keys_typed_fast_after_slash_are_the_filter_text(app: ContinuityApp) -> None:
    """A burst ("/session:0198⏎" pasted, or typed from tmux) reached the table before the bar had the focus
    (Textual moves it on its next turn): `s` opened the sessions, `e` exported. Now the burst is the bar's."""
    from textual import events

    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot, app)
        burst = [events.Key("slash", "/"), *(events.Key(c if c.isalnum() else "colon", c) for c in "session:zzzz"),
                 events.Key("enter", "\r")]  # fmt: skip
        for key in burst:
            app.post_message(key)
        await pilot.pause(0.5)
        assert app.row_filter.text == "session:zzzz"
        assert app.main.query_one(TurnTable).row_count == 0
        assert app.last_export is None and not app.main.query_one("#sessions").has_focus
