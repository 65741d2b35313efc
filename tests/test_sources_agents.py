"""Every agent's home (`Agent.homes`): where `continuity-tui` with no PATH looks, each as its agent resolves it."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.agents import AGENTS, default_roots, home_candidates
from tui.commands import resolve_paths

HOME_VARS = ("SENPI_CODING_AGENT_DIR", "PI_CODING_AGENT_DIR", "CLAUDE_CONFIG_DIR", "XUM_ROOT", "MUX_ROOT")


def test_defaults_under_home_in_agent_order(tmp_path: Path) -> None:
    for sub in (".mux/sessions", ".claude/projects", ".pi/agent/sessions", ".xum/sessions", ".senpi/agent/logs"):
        (tmp_path / sub).mkdir(parents=True)
    assert default_roots({}, tmp_path) == [
        tmp_path / ".pi/agent/sessions",
        tmp_path / ".senpi/agent/logs",
        tmp_path / ".claude/projects",
        tmp_path / ".xum/sessions",
        tmp_path / ".mux/sessions",
    ]
    assert default_roots({}, tmp_path / "nowhere") == []


def test_environment_overrides_each_agent_home(tmp_path: Path) -> None:
    pi, c1, c2, xum, senpi = tmp_path / "pi", tmp_path / "c1", tmp_path / "c2", tmp_path / "xum", tmp_path / "s"
    for path in (pi / "sessions", c1 / "projects", c2 / "projects", xum / "sessions", tmp_path / ".claude/projects",
                 senpi / "logs", tmp_path / ".senpi/agent/logs"):  # fmt: skip
        path.mkdir(parents=True)
    env = {"PI_CODING_AGENT_DIR": str(pi), "CLAUDE_CONFIG_DIR": f"{c1}, {c2}", "MUX_ROOT": str(xum),
           "SENPI_CODING_AGENT_DIR": str(senpi)}  # fmt: skip
    assert default_roots(env, tmp_path) == [pi / "sessions", senpi / "logs", c1 / "projects", c2 / "projects",
                                            xum / "sessions"]  # fmt: skip
    assert default_roots({"CLAUDE_CONFIG_DIR": " , "}, tmp_path)[1:] == [
        tmp_path / ".claude/projects"
    ]  # blank: default


def test_every_agent_declares_a_home_and_the_candidates_follow_the_list(tmp_path: Path) -> None:
    assert all(agent.homes for agent in AGENTS)
    candidates = home_candidates({}, tmp_path)
    assert candidates[0] == tmp_path / ".pi/agent/sessions" and tmp_path / ".senpi/agent/logs" in candidates


def test_no_path_reads_every_home_that_exists_else_says_where_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from tui.cli import main

    for name in HOME_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_paths(argparse.Namespace(paths=[])) == []
    assert main(["report"]) == 2
    err = capsys.readouterr().err
    assert "no agent data found" in err and "~/.senpi/agent/logs" in err
    (tmp_path / ".claude/projects").mkdir(parents=True)
    assert resolve_paths(argparse.Namespace(paths=[])) == [tmp_path / ".claude/projects"]
    (tmp_path / ".senpi/agent/logs").mkdir(parents=True)
    assert resolve_paths(argparse.Namespace(paths=[])) == [
        tmp_path / ".senpi/agent/logs",
        tmp_path / ".claude/projects",
    ]
    assert resolve_paths(argparse.Namespace(paths=[Path("x")])) == [Path("x")]


def test_report_without_path_opens_every_agent_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No PATH: pi, Claude Code and Xum dirs under HOME are found, and each file by its content."""
    import json

    import test_agent_claude_code as claude
    import test_agent_mux as mux
    import test_agent_pi as pi

    from tui.cli import main

    for name in HOME_VARS:
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
