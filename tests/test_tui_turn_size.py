"""The turn table's size column: payload bytes where the agent's files rebuild the prompt byte for byte (senpi),
prompt tokens marked `t` where they hold no system prompt or tools (a Claude Code call of 106,060 prompt tokens
showed "204K" bytes of messages under a column that said "payload bytes sent")."""

from __future__ import annotations

from pathlib import Path

from realdata import copy_set
from tui_fixtures import FROZEN, wait_loaded, write_agent

from core.engine import Engine
from core.model import Turn
from tui.app import ContinuityApp
from tui.fmt import short_bytes
from tui.view import payload_bytes, prompt_tokens
from tui.widgets.turn_table import TurnHeader, TurnTable


def _cells(table: TurnTable) -> list[tuple[Turn, str]]:
    out = []
    for index in range(table.row_count):
        row = table.row_at(index)
        if isinstance(row, Turn):
            out.append((row, table.render_row(index, table.size.width).plain))
    return out


async def test_claude_code_rows_show_prompt_tokens(tmp_path: Path) -> None:
    copy_set("cc-oneryalcin-fasthooks", tmp_path / "cc")
    app = ContinuityApp(Engine([tmp_path / "cc"]), live=False, clock=lambda: FROZEN)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_loaded(pilot, app, timeout=30)
        table = app.query_one(TurnTable)
        header = str(app.query_one(TurnHeader).render())
        rows = _cells(table)
        assert rows
        shown = [(turn, text) for turn, text in rows if prompt_tokens(turn)]
        assert shown
        for turn, text in shown:
            assert f" {short_bytes(prompt_tokens(turn))}t " in text, text
        assert " size " in header and " bytes " not in header


async def test_senpi_rows_show_payload_bytes(tmp_path: Path) -> None:
    root = tmp_path / "agent"
    write_agent(root)
    app = ContinuityApp(Engine([root]), live=False, clock=lambda: FROZEN)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_loaded(pilot, app)
        rows = [(turn, text) for turn, text in _cells(app.query_one(TurnTable)) if payload_bytes(turn)]
        assert rows
        for turn, text in rows:
            size = short_bytes(payload_bytes(turn))
            assert f" {size} " in text and f" {size}t " not in text, text


async def test_a_copied_call_reads_as_a_copy_not_as_an_unjudged_call(tmp_path: Path) -> None:
    """A branched pi session starts with copies of its parent's calls: counted there, so they have no verdict
    here. Their row said `?` and `—`, as if the tool had failed to judge them; it says what they are."""
    from test_agent_pi import T0, assistant, header_v3, usage, user, write

    root = tmp_path / "sessions"
    parent = root / "--p--" / "2025-12-08T22-40-00-000Z_parent.jsonl"
    child = root / "--p--" / "2025-12-09T00-00-00-000Z_child.jsonl"
    copied = [user("u1", None, T0 + 1_000), assistant("a1", "u1", T0 + 2_000, usage(10, 0, 20_000))]
    write(parent, [header_v3(), *copied])
    header = {"type": "session", "version": 3, "id": "5f0c2a1e-0d4b-4e5f-9a6b-7c8d9e0f1a2b",
              "timestamp": "2025-12-08T23:40:00.000Z", "cwd": "/p", "parentSession": str(parent)}  # fmt: skip
    write(child, [header, *copied, user("u2", "a1", T0 + 3_601_000),
                  assistant("a2", "u2", T0 + 3_602_000, usage(10, 0, 20_300))])  # fmt: skip
    app = ContinuityApp(Engine([root]), live=False, clock=lambda: FROZEN)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_loaded(pilot, app)
        rows = _cells(app.query_one(TurnTable))
        copies = [text for turn, text in rows if turn.copied_from is not None]
        assert len(copies) == 1 and len(rows) == 3
        assert " copy " in copies[0] and " ? " not in copies[0]
        assert "copied: counted in parent" in copies[0]  # the parent's id, as its session column
        (fork,) = [text for turn, text in rows if turn.copied_from is None and turn.kind == "fork"]
        assert " fork " in fork and "branched_session" in fork
