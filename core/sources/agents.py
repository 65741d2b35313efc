"""Where other coding agents keep their sessions: the roots to open when no PATH is given and senpi has no dir.

Each agent's own rule for its home, in its own precedence (reference other-agents §A.1, §B.1, §C.1):

- pi: `$PI_CODING_AGENT_DIR/sessions`, else `~/.pi/agent/sessions`;
- Claude Code: `<dir>/projects` for each comma-separated `$CLAUDE_CONFIG_DIR`, else `~/.claude/projects` and
  `~/.config/claude/projects`;
- mux / Xum: `$XUM_ROOT/sessions` (or its legacy alias `$MUX_ROOT`), else `~/.xum/sessions`, then the legacy
  `~/.mux/sessions` and `~/.cmux/sessions`.

Only directories that exist are returned: the files inside are recognised by content, so a root is just a
place to look. Pure stdlib; nothing here reads a file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Home", "agent_homes", "agent_session_dirs"]


@dataclass(frozen=True, slots=True)
class Home:
    """One place an agent keeps its sessions: the agent, the path, and the variable that moves it."""

    agent: str
    path: Path
    env: str


def agent_homes(env: Mapping[str, str] | None = None, home: Path | None = None) -> list[Home]:
    """Every place looked in, whether or not it exists (what the "nothing found" message lists)."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    out: list[Home] = []
    pi_dir = env.get("PI_CODING_AGENT_DIR")
    out.append(Home("pi", (Path(pi_dir).expanduser() if pi_dir else home / ".pi" / "agent") / "sessions",
                    "PI_CODING_AGENT_DIR"))  # fmt: skip
    claude = [part.strip() for part in env.get("CLAUDE_CONFIG_DIR", "").split(",") if part.strip()]
    if claude:
        out.extend(Home("Claude Code", Path(part).expanduser() / "projects", "CLAUDE_CONFIG_DIR") for part in claude)
    else:
        out.extend(Home("Claude Code", p, "CLAUDE_CONFIG_DIR")
                   for p in (home / ".claude" / "projects", home / ".config" / "claude" / "projects"))  # fmt: skip
    xum = env.get("XUM_ROOT") or env.get("MUX_ROOT")
    if xum:
        out.append(Home("mux/Xum", Path(xum).expanduser() / "sessions", "XUM_ROOT"))
    else:
        out.extend(Home("mux/Xum", home / name / "sessions", "XUM_ROOT") for name in (".xum", ".mux", ".cmux"))
    return out


def _candidates(env: Mapping[str, str], home: Path) -> list[Path]:
    return [found.path for found in agent_homes(env, home)]


def agent_session_dirs(env: Mapping[str, str] | None = None, home: Path | None = None) -> list[Path]:
    """The session roots of pi, Claude Code and mux/Xum that exist here, in that order, without duplicates."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    seen: set[str] = set()
    found: list[Path] = []
    for path in _candidates(env, home):
        key = os.path.realpath(path)
        if key not in seen and path.is_dir():
            seen.add(key)
            found.append(path)
    return found
