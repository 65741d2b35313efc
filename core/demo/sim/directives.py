"""Directive texts injected by the omo plugin (``senpi-formats.md`` §7) and senpi's environment context.

The ultrawork span is padded to the measured size of a real one (24,871 bytes) because its size is what makes
flatten re-sends expensive; the texts themselves are the simulated omo version's.
"""

from __future__ import annotations

import re

ULTRAWORK_SPAN_BYTES = 24_871
"""Size of one ``<ultrawork-mode>…</ultrawork-mode>`` span of the simulated omo version, tags included."""

_ULW_HEAD = (
    "<ultrawork-mode>\n\n**MANDATORY**: First user-visible line this turn MUST be exactly:\n"
    "`ULTRAWORK MODE ENABLED!`\n\n[CODE RED] Maximum precision. "
)
_ULW_TAIL = "\n\nWhen the plan is clear and verified, stop exploring and act.\n\n</ultrawork-mode>"
_ULW_RULES = (
    "Read every file you are about to change before you change it, and read its callers too.",
    "Never guess an API: open its definition, its tests and one real call site first.",
    "Split the work into independent parts and run the independent parts in parallel.",
    "Keep a todo list for anything with more than two steps and keep it current.",
    "After each edit run the narrowest test that proves it, then the wider suite.",
    "A failing test is information: read the whole failure before touching code.",
    "Do not stop at the first plausible cause; confirm it with a reproduction.",
    "Prefer the smallest change that fixes the cause, not the symptom.",
    "Report what you verified and how, and say plainly what you did not verify.",
    "Delegate exploration to background tasks when it does not block the next step.",
)


def _build_ultrawork_span() -> str:
    """The old-omo directive span, padded deterministically to exactly ``ULTRAWORK_SPAN_BYTES`` bytes."""
    lines: list[str] = []
    size = len(_ULW_HEAD) + len(_ULW_TAIL)
    section = 0
    while size < ULTRAWORK_SPAN_BYTES:
        section += 1
        rule = _ULW_RULES[section % len(_ULW_RULES)]
        line = f"\n\n## Rule {section}\n{rule} This applies to every step of this turn without exception."
        lines.append(line)
        size += len(line)
    body = "".join(lines)
    overshoot = len(_ULW_HEAD) + len(body) + len(_ULW_TAIL) - ULTRAWORK_SPAN_BYTES
    body = body[: len(body) - overshoot]
    span = _ULW_HEAD + body + _ULW_TAIL
    assert len(span.encode("utf-8")) == ULTRAWORK_SPAN_BYTES
    return span


ULTRAWORK_SPAN = _build_ultrawork_span()
ULTRAWORK_DIRECTIVE = ULTRAWORK_SPAN + "\n"  # SENPI_ULTRAWORK_DIRECTIVE ends with a newline
ULTRAWORK_REMINDER = (
    "<omo-ultrawork-reminder>ultrawork mode is already armed for this session - the ultrawork directive above "
    "remains binding; re-read it and continue.</omo-ultrawork-reminder>"
)
TASK_USAGE_OLD = "\n".join(
    (
        "<omo-senpi-task>",
        "You can delegate work to background subagents with the task tool family: task_create starts one,",
        "task_status reports progress and task_result collects its final answer. Give each task a",
        "self-contained brief; subagents do not see this conversation.",
        "</omo-senpi-task>",
    )
)
TASK_USAGE_NEW = "\n".join(
    (
        "<omo-senpi-task>",
        "Background task results are automatically delivered: start a task with task(category, prompt) and keep",
        "working; its result arrives as a message when it finishes. Do not poll.",
        "</omo-senpi-task>",
    )
)
ULTRAWORK_TRIGGER = re.compile(r"ultrawork|ulw(?!-)", re.IGNORECASE)


def is_ulw_prompt(text: str) -> bool:
    """omo's trigger (§7.1): ``ultrawork``, or ``ulw`` not directly followed by ``-``, case-insensitive."""
    return bool(ULTRAWORK_TRIGGER.search(text)) and not ("<ultrawork-mode>" in text and "</ultrawork-mode>" in text)


def environment_context(cwd: str, date: str) -> str:
    """The hidden environment-context text of newer builds (newer §5.2)."""
    return f"<environment_context>\n  <cwd>{cwd}</cwd>\n  <current_date>{date}</current_date>\n</environment_context>"
