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
from pathlib import Path

__all__ = ["agent_session_dirs"]


def _candidates(env: Mapping[str, str], home: Path) -> list[Path]:
    out: list[Path] = []
    pi_dir = env.get("PI_CODING_AGENT_DIR")
    out.append((Path(pi_dir).expanduser() if pi_dir else home / ".pi" / "agent") / "sessions")
    claude = [part.strip() for part in env.get("CLAUDE_CONFIG_DIR", "").split(",") if part.strip()]
    if claude:
        out.extend(Path(part).expanduser() / "projects" for part in claude)
    else:
        out.extend([home / ".claude" / "projects", home / ".config" / "claude" / "projects"])
    xum = env.get("XUM_ROOT") or env.get("MUX_ROOT")
    if xum:
        out.append(Path(xum).expanduser() / "sessions")
    else:
        out.extend(home / name / "sessions" for name in (".xum", ".mux", ".cmux"))
    return out


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
