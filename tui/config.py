"""The settings file: the theme the user picked, remembered, and remapped keys.

    $XDG_CONFIG_HOME/continuity-tui/config.toml     (default ~/.config/continuity-tui/config.toml;
                                                     $CONTINUITY_TUI_CONFIG names another file)

    theme = "gruvbox"            # any theme of the command palette's "Theme" list

    [keys]                       # action id = "key" or "key1,key2" (Textual key names: ctrl+f, question_mark)
    filter = "slash,ctrl+l"
    search = "ctrl+f"

TOML because it is what Python reads without a dependency (`tomllib`) and what harlequin and posting's users
write; the anchors that remember a theme (posting's `theme:`, btop's `color_theme`) keep it in such a file.
Picking a theme in the palette writes `theme = …` into the file, changing only that line, so comments and the
keys a user wrote stay as they are. A file that cannot be read or parsed, an unknown theme or action id, are
said once on screen (with the file and line) and the defaults are used: a settings file never stops the tool.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

FILE_ENV = "CONTINUITY_TUI_CONFIG"
TEMPLATE = """\
# continuity-tui settings: written when you pick a theme (ctrl+p → Theme); edit freely.
theme = {theme}

# [keys]
# Remap a key: action id = "key" or "key1,key2" (Textual's key names: ctrl+f, question_mark, slash).
# The ids are listed in the help screen (?), e.g.:
# filter = "slash,ctrl+l"
# copy = "c,y"
"""
_THEME_LINE = re.compile(r"(?m)^[ \t]*theme[ \t]*=.*$")
_TABLE = re.compile(r"(?m)^[ \t]*\[")


def config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get(FILE_ENV):
        return Path(env[FILE_ENV]).expanduser()
    base = Path(env["XDG_CONFIG_HOME"]).expanduser() if env.get("XDG_CONFIG_HOME") else Path.home() / ".config"
    return base / "continuity-tui" / "config.toml"


@dataclass
class Config:
    path: Path | None = None
    """Where the settings live (None: nothing is read or written, as in tests and screenshots)."""
    theme: str | None = None
    keys: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    """What was wrong with the file, each a line for the user."""


def load(path: Path) -> Config:
    """The settings in `path`; a missing file is the defaults, a bad one the defaults plus its problems."""
    config = Config(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return config
    except (OSError, UnicodeDecodeError) as err:
        config.problems.append(f"{path}: cannot be read ({type(err).__name__}: {err}); using the defaults")
        return config
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        config.problems.append(f"{path}: not TOML ({err}); using the defaults")
        return config
    theme = data.pop("theme", None)
    if theme is not None and not isinstance(theme, str):
        config.problems.append(f"{path}: theme must be a string, got {type(theme).__name__}")
    elif theme:
        config.theme = theme
    keys = data.pop("keys", {})
    if not isinstance(keys, dict):
        config.problems.append(f'{path}: [keys] must be a table of action id = "key"')
        keys = {}
    for action, value in keys.items():
        if isinstance(value, str) and value.strip():
            config.keys[str(action)] = ",".join(part.strip() for part in value.split(",") if part.strip())
        else:
            config.problems.append(f'{path}: keys.{action} must be a string such as "ctrl+f" or "a,b"')
    for unknown in data:
        config.problems.append(f"{path}: {unknown} is not a setting (theme, [keys])")
    return config


def save_theme(path: Path, theme: str) -> str | None:
    """Write `theme = "…"` into the file, leaving every other line as it is; the error text, or None."""
    value = _toml_string(theme)
    try:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            text = None
        if text is None:
            new = TEMPLATE.format(theme=value)
        elif _THEME_LINE.search(text):
            new = _THEME_LINE.sub(lambda _m: f"theme = {value}", text, count=1)
        else:  # before the first table, where a top-level key must be
            table = _TABLE.search(text)
            at = table.start() if table else len(text)
            head = text[:at]
            if head and not head.endswith("\n"):
                head += "\n"
            new = f"{head}theme = {value}\n{text[at:]}"
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(new, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as err:
        return f"{path}: the theme could not be saved ({type(err).__name__}: {err})"
    return None


def _toml_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(ch if ch.isprintable() else f"\\u{ord(ch):04x}" for ch in escaped) + '"'
