"""Every key of the dashboard in one table: the help screen, the README and the tests read it from here.

Bindings themselves live on the widgets that own them (the table owns the cursor keys, the app owns the
global ones); `tests/test_tui_keys.py` checks that each binding appears here so help never goes stale.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class KeyHelp:
    keys: str  # as shown to the user
    what: str
    group: str
    ids: tuple[str, ...] = ()  # the bindings' ids (the names `[keys]` in the settings file remaps)


KEYS: tuple[KeyHelp, ...] = (
    KeyHelp("↑ ↓  j k", "move through the turns (or sessions, problems)", "Move", ("up", "down")),
    KeyHelp("PgUp PgDn", "move a page", "Move", ("page_up", "page_down")),
    KeyHelp("Home g", "first turn", "Move", ("first",)),
    KeyHelp("End G", "last turn, and follow the live tail again", "Move", ("last",)),
    KeyHelp("Enter", "open the selected turn: capture vs commit diff, fingerprints, why, payload", "Turns", ("open",)),
    KeyHelp(
        "Esc",
        "back: close a view, the filter bar, the sessions pane or a zoom; then clear the filter",
        "Turns",
        ("back",),
    ),
    KeyHelp("r", "next rewritten turn", "Turns", ("next_rewritten",)),
    KeyHelp("R", "previous rewritten turn", "Turns", ("previous_rewritten",)),
    KeyHelp(
        "ctrl+f",
        "search: matches are highlighted (nothing is hidden); Enter goes to the first, Esc clears",
        "Turns",
        ("search",),
    ),
    KeyHelp("n N", "next / previous search match", "Turns", ("next_match", "previous_match")),
    KeyHelp("l L", "next / previous flatten", "Turns", ("next_flatten", "previous_flatten")),
    KeyHelp("w W", "next / previous re-send (fork, flatten, re-send)", "Turns", ("next_resend", "previous_resend")),
    KeyHelp(
        "x X",
        "next / previous call with a bad line after it in its file (the toast names the line)",
        "Turns",
        ("next_problem", "previous_problem"),
    ),
    KeyHelp(
        "/",
        "filter turns: kind:flatten  reason:rewritten  session:0198  is:rewritten  -kind:delta  text",
        "Turns",
        ("filter",),
    ),
    KeyHelp("s", "sessions: show all sessions or one, with per-session resend share", "Views", ("sessions",)),
    KeyHelp("p", "problems: bad lines with file:line, offset and reason, newest first", "Views", ("problems",)),
    KeyHelp("b", "payload graph: bytes or prompt tokens", "Views", ("metric",)),
    KeyHelp("m", "zoom the focused pane (turns, sessions) full screen; m or Esc restores", "Views", ("zoom",)),
    KeyHelp(
        "c",
        "copy: the selected call's summary and why, its field diff or JSON, the export path, the data dir",
        "Live",
        ("copy",),
    ),
    KeyHelp("f", "follow / pause the live tail (scrolling up pauses too)", "Live", ("follow",)),
    KeyHelp(
        "e", "export a snapshot of what the table shows (session, filter): JSON + Markdown + HTML", "Live", ("export",)
    ),
    KeyHelp("?", "this help", "App", ("help",)),
    KeyHelp("ctrl+p", "command palette: every action by name, zoom a pane, pick a session, themes", "App"),
    KeyHelp("q", "quit", "App", ("quit",)),
)

FLAGS_HELP: tuple[tuple[str, str], ...] = (
    ("R", "rewritten: the message committed differs from the one streamed (the agent re-sends history next)"),
    ("A", "avoidable: a fingerprint that ignores volatile fields would have kept the delta"),
    ("≠", "the decision the agent logged differs from the one replayed from the transcript"),
)
