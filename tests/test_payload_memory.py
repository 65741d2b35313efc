"""What the payload analysis keeps of a tracked tool result is enough to write the same recovery note.

The analysis keeps only the first WATCH_NOTE_CHARS + 1 UTF-16 units of each tracked result (memory: 256 tracked
results per session). The note it writes for an unanswered call must be byte-identical to the note written
from the whole tracked text, whatever the text's length or its characters around the cut (astral characters
are two UTF-16 units, and the cut may fall between them).
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from core.agents.senpi.payload.serialize import (
    RULES_NEW,
    WATCH_NOTE_CHARS,
    WATCH_TRACKED_CHARS,
    ToolNamer,
    WatchedExecution,
    tool_watch_note,
    utf16_truncate,
)

_PIECES = st.sampled_from(["a", "é", "😀", "\n", "x" * 50, "日本", "😀" * 7])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=200), st.integers(0, 40), st.booleans())
def test_the_kept_prefix_writes_the_same_note(pieces: list[str], pad: int, is_error: bool) -> None:
    text = "y" * (WATCH_NOTE_CHARS - 20 + pad) + "".join(pieces)  # lengths around the note's limit
    tracked = WatchedExecution("toolu_1", "bash", utf16_truncate(text, WATCH_TRACKED_CHARS, "…"), is_error)
    kept = replace(tracked, content=utf16_truncate(tracked.content, WATCH_NOTE_CHARS + 1, ""))
    pending = {"toolu_1": ("bash", 1.0)}
    namer = ToolNamer(RULES_NEW)
    assert tool_watch_note(pending, {"toolu_1": kept}, namer) == tool_watch_note(pending, {"toolu_1": tracked}, namer)


def test_an_empty_result_stays_empty() -> None:
    tracked = WatchedExecution("toolu_1", "bash", "", False)
    kept = replace(tracked, content=utf16_truncate(tracked.content, WATCH_NOTE_CHARS + 1, ""))
    namer = ToolNamer(RULES_NEW)
    pending = {"toolu_1": ("bash", 1.0)}
    note = tool_watch_note(pending, {"toolu_1": kept}, namer)
    assert note == tool_watch_note(pending, {"toolu_1": tracked}, namer)
    assert note is not None and "(empty tool result)" in note
