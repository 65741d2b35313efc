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


def test_report_without_path_opens_every_agent_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No PATH, no senpi dir: pi, Claude Code and Xum dirs under HOME are found, and each file by its content."""
    import json

    import test_agent_claude_code as claude
    import test_agent_mux as mux
    import test_agent_pi as pi

    from tui.cli import main

    for name in ("SENPI_CODING_AGENT_DIR", "PI_CODING_AGENT_DIR", "CLAUDE_CONFIG_DIR", "XUM_ROOT", "MUX_ROOT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    claude.build(tmp_path)  # ~/.claude/projects
    pi_file = tmp_path / ".pi/agent/sessions/--Users-dev-pi-mono--/2025-12-08T22-40-00-000Z_x.jsonl"
    pi.write(
        pi_file, [pi.header_v3(), pi.user("u1", None, pi.T0), pi.assistant("a1", "u1", pi.T0, pi.usage(9, 0, 900))]
    )
    chat = tmp_path / ".xum/sessions" / mux.WS / "chat.jsonl"
    chat.parent.mkdir(parents=True)
    mux.rewrite(chat, [mux.user(0, "hi"), mux.assistant(1, [mux.text("hello")], total=1400, read=0, write=1300)])
    assert main(["report", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert sorted(s["agent"] for s in report["sessions"]) == ["claude-code", "mux", "pi"]
    assert {s["format"] for s in report["sources"]} == {"claude-code", "pi-transcript", "mux-chat"}
    assert all(t["logged"] is not None for t in report["turns"])
