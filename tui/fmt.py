"""Small formatting helpers shared by the panes: sizes, shares, times, and the colour of each kind.

Colours are Textual theme variables (`$success`, `$error`, ...) rather than fixed colours, so every pane
follows the theme the user picks in the command palette. Numbers are formatted here once so the panes,
the table and the drill-down all spell the same value the same way.
"""

from __future__ import annotations

import time

from rich.cells import cell_len, set_cell_size
from textual.content import Content

from core.report.redact import shown

#: Style of each kind of call. Re-sends (fork, flatten, re-send) are the warm colours a user reads first; a
#: compaction (rebuilt on purpose) is a lighter shade of bootstrap's; an aborted call, which did nothing, recedes.
KIND_STYLES: dict[str, str] = {
    "bootstrap": "$primary",
    "delta": "$success",
    "fork": "$warning",
    "flatten": "$error",
    "disabled": "$text-muted",
    "failed": "$error italic",
    "re-send": "$error-lighten-2",
    "compaction": "$primary-lighten-2",
    "aborted": "$text-disabled",
}
OTHER_KIND_STYLE = "$secondary"
MUTED = "$text-muted"


def kind_style(kind: str | None) -> str:
    """The theme style of a kind; unknown kinds get one neutral accent instead of failing."""
    if kind is None:
        return MUTED
    return KIND_STYLES.get(kind, OTHER_KIND_STYLE)


def share_style(share: float | None) -> str:
    """Resend shares: green when history is rarely re-sent, amber past 20 %, red past half."""
    if share is None:
        return MUTED
    if share >= 0.5:
        return "$error bold"
    if share >= 0.2:
        return "$warning"
    return "$success"


def human_bytes(value: int | float | None) -> str:
    """1234567 -> '1.2 MB' (decimal units, like the report); None -> '—'."""
    if value is None:
        return "—"
    size = float(value)
    for unit in ("B", "KB", "MB", "GB"):
        if abs(size) < 1000 or unit == "GB":
            if unit == "B":
                return f"{int(size)} B"
            return f"{size:.1f} {unit}" if abs(size) < 100 else f"{size:.0f} {unit}"
        size /= 1000
    return f"{size:.0f} TB"  # pragma: no cover - loop always returns


def short_bytes(value: int | float | None) -> str:
    """Compact size for narrow columns and axis labels: 1234567 -> '1.2M'."""
    if value is None:
        return "—"
    size = float(value)
    for unit in ("", "K", "M", "G"):
        if abs(size) < 1000 or unit == "G":
            if unit == "":
                return f"{int(size)}"
            return f"{size:.1f}{unit}" if abs(size) < 10 else f"{size:.0f}{unit}"
        size /= 1000
    return f"{size:.0f}T"  # pragma: no cover


def fit_count(value: int | None, width: int) -> str:
    """A count in fewer than `width` cells, so a right-aligned column always keeps a space before it:
    `1,234` while that fits, else `12K`, `1.2M` (a count clipped to `1,23…` reads as a different number)."""
    if value is None:
        return "—"
    text = f"{value:,}"
    if len(text) < width:
        return text
    size = float(value)
    for unit in ("K", "M", "G", "T"):
        size /= 1000
        if abs(size) < 999.5 or unit == "T":
            return f"{size:.1f}{unit}" if abs(size) < 9.95 else f"{size:.0f}{unit}"
    return text  # pragma: no cover - the loop returns


def num_cell(text: str, width: int) -> str:
    """A right-aligned numeric cell that never touches the column before it: clipped to `width - 1` cells."""
    return cell(text, width - 1, right=True).rjust(width) if width > 1 else cell(text, width)


def pct(share: float | None, digits: int = 1) -> str:
    """0.6823 -> '68.2%'; None -> '—' (a share of nothing is not 0 %)."""
    if share is None:
        return "—"
    return f"{share * 100:.{digits}f}%"


def count(value: int | None) -> str:
    """Thousands separators keep big counters readable at a glance."""
    return "—" if value is None else f"{value:,}"


def clock_time(ms: int | None) -> str:
    """Epoch ms -> 'HH:MM:SS' in UTC (the data's own zone, and the report's)."""
    if ms is None:
        return "--:--:--"
    return time.strftime("%H:%M:%S", time.gmtime(ms / 1000))


def date_time(ms: int | None) -> str:
    """Epoch ms -> 'YYYY-MM-DD HH:MM:SS UTC' for headers where the date matters."""
    if ms is None:
        return "unknown time"
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ms / 1000))


def short_id(session_id: str, width: int = 8) -> str:
    """The head of a session id: it is what users see in transcript file names and grep for."""
    return shown(session_id, width + 1)[:width]


def cell(text: str, width: int, *, right: bool = False) -> str:
    """Pad or clip text to exactly `width` terminal cells (an ellipsis marks clipping).

    Measured in cells, not characters: session cwd names and reasons may hold wide (CJK, emoji) characters,
    and a column counted in characters would push every later column out of line.
    """
    if width <= 0:
        return ""
    size = cell_len(text)
    if size > width:
        return set_cell_size(text, width - 1) + "…" if width > 1 else set_cell_size(text, 1)
    pad = " " * (width - size)
    return pad + text if right else text + pad


def data(text: object, limit: int = 2000) -> Content:
    """Data from a file as inert `Content`: sanitized, one line, never parsed as markup."""
    return Content(shown(text, limit))
