"""No PATH and no data: the message lists every place looked in and suggests --demo (issue 18 item 10).

It named one senpi path, so a pi or Claude Code user could not tell their dirs had been looked in.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.cli import main

VARS = ("SENPI_CODING_AGENT_DIR", "PI_CODING_AGENT_DIR", "CLAUDE_CONFIG_DIR", "XUM_ROOT", "MUX_ROOT")


@pytest.fixture
def empty_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in VARS:
        monkeypatch.delenv(name, raising=False)
    return tmp_path


@pytest.mark.parametrize("argv", [[], ["report"], ["check"]])
def test_every_place_looked_in_is_named(empty_home: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    for place in ("~/.senpi/agent/logs", "~/.pi/agent/sessions", "~/.claude/projects", "~/.config/claude/projects",
                  "~/.xum/sessions", "~/.mux/sessions", "~/.cmux/sessions"):  # fmt: skip
        assert place in err, place
    for variable in ("$SENPI_CODING_AGENT_DIR", "$PI_CODING_AGENT_DIR", "$CLAUDE_CONFIG_DIR", "$XUM_ROOT"):
        assert variable in err
    assert "continuity-tui --demo" in err
    assert "Traceback" not in err and "⏎" not in err
    assert err.startswith("continuity-tui: no agent data found") and len(err.splitlines()) >= 9


def test_the_variables_move_the_places(
    empty_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "/nowhere/a,/nowhere/b")
    monkeypatch.setenv("SENPI_CODING_AGENT_DIR", "/nowhere/senpi")
    assert main([]) == 2
    err = capsys.readouterr().err
    assert "/nowhere/a/projects" in err and "/nowhere/b/projects" in err and "/nowhere/senpi/logs" in err
    assert "~/.claude/projects" not in err


def test_a_given_path_that_is_missing_is_still_one_line(empty_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "/nonexistent/path"]) == 2
    assert capsys.readouterr().err == "continuity-tui: /nonexistent/path: no such file or directory\n"
