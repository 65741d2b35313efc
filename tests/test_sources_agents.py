"""Discovery of other agents' session dirs, and the default PATH when senpi has no agent dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.sources.agents import agent_session_dirs
from tui.cli import default_paths


def test_defaults_under_home_in_agent_order(tmp_path: Path) -> None:
    for sub in (".mux/sessions", ".claude/projects", ".pi/agent/sessions", ".xum/sessions"):
        (tmp_path / sub).mkdir(parents=True)
    assert agent_session_dirs({}, tmp_path) == [
        tmp_path / ".pi/agent/sessions",
        tmp_path / ".claude/projects",
        tmp_path / ".xum/sessions",
        tmp_path / ".mux/sessions",
    ]
    assert agent_session_dirs({}, tmp_path / "nowhere") == []


def test_environment_overrides_each_agent_home(tmp_path: Path) -> None:
    pi, c1, c2, xum = tmp_path / "pi", tmp_path / "c1", tmp_path / "c2", tmp_path / "xum"
    for path in (pi / "sessions", c1 / "projects", c2 / "projects", xum / "sessions", tmp_path / ".claude/projects"):
        path.mkdir(parents=True)
    env = {"PI_CODING_AGENT_DIR": str(pi), "CLAUDE_CONFIG_DIR": f"{c1}, {c2}", "MUX_ROOT": str(xum)}
    assert agent_session_dirs(env, tmp_path) == [pi / "sessions", c1 / "projects", c2 / "projects", xum / "sessions"]


def test_default_paths_fall_back_to_other_agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SENPI_CODING_AGENT_DIR", "PI_CODING_AGENT_DIR", "CLAUDE_CONFIG_DIR", "XUM_ROOT", "MUX_ROOT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_paths() == [tmp_path / ".senpi/agent/logs"]  # nothing anywhere: senpi's path, for the error
    (tmp_path / ".claude/projects").mkdir(parents=True)
    assert default_paths() == [tmp_path / ".claude/projects"]
    (tmp_path / ".senpi/agent").mkdir(parents=True)
    assert default_paths() == [tmp_path / ".senpi/agent/logs"]  # a senpi dir wins
