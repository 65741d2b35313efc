"""The turn table's size column: payload bytes where the agent's files rebuild the prompt byte for byte (senpi),
prompt tokens marked `t` where they hold no system prompt or tools (a Claude Code call of 106,060 prompt tokens
showed "204K" bytes of messages under a column that said "payload bytes sent")."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from realdata import SETS
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
    src = SETS["cc-oneryalcin-fasthooks"]
    if not src.exists():
        pytest.skip(f"{src} is not here (the realdata set ships beside the checkout as ../shared)")
    shutil.copytree(src, tmp_path / "cc")
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
