"""Scenarios: the bundled demo's three sessions and the benchmark corpus's hundreds, built from tool blocks.

The demo is written by hand to show every verdict the dashboard explains (flatten and fork chains, idle,
a thinking-level change, a failed call, hostile text); the corpus is random but seeded.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

from core.demo.sim.builds import NEW_BUILD, OLD_BUILD
from core.demo.sim.ids import parse_iso_ms
from core.demo.sim.specs import CallSpec, PromptSpec, SessionSpec, ToolSpec
from core.demo.sim.texts import WORDS, Texts


def _read(tx: Texts, path: str, lines: int) -> ToolSpec:
    return ToolSpec("read", {"path": path}, tx.source_file(path, lines), tx.rng.randint(15, 120))


def _bash(tx: Texts, command: str, output: str, ms: int) -> ToolSpec:
    return ToolSpec("bash", {"command": command, "timeout": 300}, output, ms + tx.rng.randint(0, 900))


def _grep(tx: Texts, pattern: str, lines: int) -> ToolSpec:
    return ToolSpec(
        "grep",
        {"pattern": pattern, "path": "src", "ignoreCase": False},
        tx.grep_output(pattern, lines),
        tx.rng.randint(40, 300),
    )


def _edit(tx: Texts, path: str) -> ToolSpec:
    old = f"rows = {tx.ident()}(session).all()"
    new = f"rows = {tx.ident()}(session, batch_size={tx.rng.choice((500, 1000, 5000))})"
    return ToolSpec(
        "edit",
        {"path": path, "edits": [{"oldText": old, "newText": new}]},
        f"Successfully replaced 1 block(s) in {path}.",
        tx.rng.randint(10, 60),
    )


def _write(tx: Texts, path: str, lines: int) -> ToolSpec:
    return ToolSpec(
        "write",
        {"path": path, "content": tx.source_file(path, lines)},
        f"Successfully wrote {path}.",
        tx.rng.randint(10, 60),
    )


def _lsp(tx: Texts, path: str, lines: int) -> ToolSpec:
    return ToolSpec(
        "lsp_diagnostics", {"filePath": path, "severity": "all"}, tx.diagnostics(lines), tx.rng.randint(400, 2_500)
    )


def _ast(tx: Texts, pattern: str, lines: int) -> ToolSpec:
    return ToolSpec(
        "ast_grep_search",
        {"pattern": pattern, "lang": "python", "paths": ["src/"]},
        tx.ast_matches(lines),
        tx.rng.randint(200, 1_200),
    )


def _answer(tx: Texts, lead: str, sentences: int = 3) -> str:
    return f"{lead}\n\n{tx.sentences(sentences)}"


OLD_TOOLS = frozenset(
    {
        "read",
        "bash",
        "edit",
        "write",
        "grep",
        "find",
        "ls",
        "lsp_diagnostics",
        "ast_grep_search",
        "task_create",
        "task_status",
        "task_result",
    }
)
NEW_TOOLS = frozenset(
    {"read", "bash", "edit", "write", "grep", "find", "ls", "lsp_diagnostics", "ast_grep_search", "task"}
)
HOSTILE_TEXT = (
    "The log viewer breaks on this line, can you see why? [bold red]x[/] then [link=http://x]click me[/link] "
    "then a title change \x1b]0;pwned\x07 then \x1b[2J\x1b[31mred\x1b[0m and a bidi override "
    "\u202egnp.exe\u202c here."
)


def _old_session_prompts(tx: Texts) -> Iterator[PromptSpec]:
    """Old build, thinking on: flatten chain after a rewritten first turn, a fork chain, idle, level change."""
    c, enabled = CallSpec, "ULTRAWORK MODE ENABLED!"
    yield PromptSpec(
        "ulw refactor the ledger reconciliation job so it streams rows instead of loading the table",
        (
            c(
                True,
                f"{enabled}\n\nReading the reconciliation job first.",
                (_read(tx, "src/ledger/reconcile.py", 240),),
            ),
            c(True, None, (_grep(tx, "fetch_all_rows", 70), _ast(tx, "for $ROW in $Q.all()", 45))),
            c(True, None, (_edit(tx, "src/ledger/reconcile.py"),)),
            c(True, None, (_bash(tx, "uv run pytest tests/ledger -q", tx.pytest_output(130), 9_000),)),
            c(True, _answer(tx, "The job now streams rows in batches of 1000.")),
        ),
        gap_ms=14_000,
    )
    yield PromptSpec(
        "ulw also make the retry loop idempotent and add a regression test for a crash mid-batch",
        (
            c(
                True,
                f"{enabled}\n\nChecking how retries re-enter the batch loop.",
                (_read(tx, "src/ledger/retry.py", 160),),
            ),
            c(True, None, (_edit(tx, "src/ledger/retry.py"), _write(tx, "tests/ledger/test_retry_crash.py", 40))),
            c(
                True,
                None,
                (_bash(tx, "uv run pytest tests/ledger/test_retry_crash.py -q", tx.pytest_output(25), 4_000),),
            ),
            c(True, _answer(tx, "Retries are idempotent now; the regression test kills the worker mid-batch.")),
        ),
        gap_ms=95_000,
    )
    yield PromptSpec(
        "what does the language server say about the ledger package now?",
        (
            c(False, "Asking the language server.", (_lsp(tx, "src/ledger", 35),)),
            c(False, None, (_read(tx, "src/ledger/cursor.py", 120),)),
            c(True, None, (_edit(tx, "src/ledger/cursor.py"),)),
            c(True, None, (_lsp(tx, "src/ledger", 8),)),
            c(True, None, (_read(tx, "src/ledger/__init__.py", 60),)),
            c(True, _answer(tx, "Two real issues were left; both are fixed and the remaining hints are noise.")),
        ),
        gap_ms=140_000,
    )
    yield PromptSpec(
        "ok, run the full suite and fix whatever breaks",
        (
            c(True, None, (_bash(tx, "uv run pytest -q", tx.pytest_output(260, failed=2), 38_000),)),
            c(True, None, (_edit(tx, "src/ledger/statement.py"),)),
            c(False, _answer(tx, "Both failures came from the old eager loader; the suite is green now.")),
        ),
        gap_ms=70_000,
    )
    yield PromptSpec(
        "back. summarize what changed, for the PR description",
        (c(False, _answer(tx, "## Summary\n- reconciliation streams rows\n- idempotent retries\n- lint fixes", 4)),),
        gap_ms=42 * 60_000,
    )
    yield PromptSpec(
        "ulw write the migration note and double-check the rollback path",
        (
            c(True, f"{enabled}\n\nReading the migration first.", (_read(tx, "migrations/0042_stream_rows.py", 90),)),
            c(True, _answer(tx, "The note is in docs/migrations.md; rollback restores the eager loader flag.")),
        ),
        gap_ms=50_000,
        thinking_level="medium",
    )


def _new_session_prompts(tx: Texts) -> Iterator[PromptSpec]:
    """New build, healthy: bootstrap, deltas, one failed call and the fork that resumes after it."""
    c, enabled = CallSpec, "ULTRAWORK MODE ENABLED!"
    yield PromptSpec(
        "ulw add cursor pagination to the /accounts endpoint",
        (
            c(
                True,
                f"{enabled}\n\nLocating the endpoint.",
                (_bash(tx, "rg -n 'def list_accounts' src", tx.grep_output("list_accounts", 6), 300),),
            ),
            c(True, None, (_read(tx, "src/api/accounts.py", 180), _read(tx, "src/api/pagination.py", 90))),
            c(True, None, (_edit(tx, "src/api/accounts.py"), _edit(tx, "src/api/pagination.py"))),
            c(True, None, (_bash(tx, "uv run pytest tests/api -q", tx.pytest_output(80), 7_000),)),
            c(False, _answer(tx, "Pagination is in; `next_cursor` is returned when more rows exist.")),
        ),
        gap_ms=9_000,
    )
    yield PromptSpec(
        "ulw the cursor must be opaque: base64 it and reject tampered values",
        (
            c(True, f"{enabled}\n\nMaking the cursor opaque.", (_edit(tx, "src/api/pagination.py"),)),
            c(True, None, (_bash(tx, "uv run pytest tests/api -q", tx.pytest_output(84), 7_500),)),
            c(False, _answer(tx, "Cursors are base64 JSON with an HMAC; tampered cursors get a 400.")),
        ),
        gap_ms=120_000,
    )
    yield PromptSpec(
        "run the integration suite against the staging snapshot",
        (c(error="Anthropic Subscription query ended before a result was received (exit code 1)"),),
        gap_ms=80_000,
    )
    yield PromptSpec(
        "try again",
        (
            c(True, None, (_bash(tx, "make integration", tx.pytest_output(150), 21_000),)),
            c(False, _answer(tx, "Integration suite passed against the snapshot.")),
        ),
        gap_ms=25_000,
    )
    yield PromptSpec(
        "thanks, commit it with a conventional message",
        (
            c(
                False,
                None,
                (
                    _bash(
                        tx,
                        "git commit -am 'feat(api): opaque cursor pagination for /accounts'",
                        "[main 4f2a9c1] feat(api): opaque cursor pagination\n 3 files changed",
                        400,
                    ),
                ),
            ),
            c(False, "Committed as 4f2a9c1."),
        ),
        gap_ms=40_000,
    )


def _hostile_session_prompts(tx: Texts) -> Iterator[PromptSpec]:
    """A short new-build session whose first prompt carries markup, escape sequences and a bidi override."""
    yield PromptSpec(
        HOSTILE_TEXT,
        (CallSpec(False, _answer(tx, "Those are terminal escape sequences.")),),
        gap_ms=6_000,
        hostile=True,
    )
    yield PromptSpec("thanks", (CallSpec(False, "You're welcome."),), gap_ms=30_000)


def demo_specs() -> list[SessionSpec]:
    b_start = parse_iso_ms("2026-10-12T14:03:10.517Z")
    return [
        SessionSpec(
            OLD_BUILD,
            "/home/mika/work/ledger-api",
            "claude-opus-4-8",
            parse_iso_ms("2026-08-07T09:12:04.311Z"),
            _old_session_prompts,
            OLD_TOOLS,
            record_events=True,
        ),
        SessionSpec(
            NEW_BUILD,
            "/home/mika/work/ledger-api",
            "claude-opus-4-8",
            b_start,
            _new_session_prompts,
            NEW_TOOLS,
            record_events=True,
        ),
        SessionSpec(
            NEW_BUILD,
            "/home/mika/scratch/log-viewer",
            "claude-opus-4-8",
            b_start + 401_233,
            _hostile_session_prompts,
            NEW_TOOLS,
            bad_transcript_lines=True,
            compaction_log=False,
        ),
    ]


_CORPUS_TASKS = (
    "fix the flaky test in the {w} module",
    "add a {w} endpoint with validation",
    "profile the {w} import job",
    "rename {w} to {x} across the codebase",
    "why is the {w} {x} slow?",
    "write docs for the {w} {x}",
    "review the diff of the {w} branch",
    "migrate the {w} table to the new {x} schema",
)


def _corpus_prompts(old: bool) -> Callable[[Texts], Iterator[PromptSpec]]:
    """A random session script; content is generated only when the session reaches it."""

    def prompts(tx: Texts) -> Iterator[PromptSpec]:
        rng = tx.rng
        for _ in range(rng.randint(3, 8)):
            w, x = rng.sample(WORDS, 2)
            text = rng.choice(_CORPUS_TASKS).format(w=w, x=x)
            if rng.random() < 0.3:
                text = "ulw " + text
            calls: list[CallSpec] = []
            if not old and rng.random() < 0.05:
                calls.append(CallSpec(error="Anthropic Subscription query ended before a result was received"))
            else:
                for _ in range(rng.randint(1, 5)):
                    tools = tuple(_corpus_tool(tx) for _ in range(rng.choice((1, 1, 1, 2, 3))))
                    calls.append(CallSpec(rng.random() < 0.65, None, tools))
                calls.append(CallSpec(rng.random() < 0.5, _answer(tx, "Done.")))
            gap = rng.randint(35, 50) * 60_000 if rng.random() < 0.07 else rng.randint(10_000, 300_000)
            level = rng.choice(("low", "medium", "high")) if rng.random() < 0.05 else None
            yield PromptSpec(text, tuple(calls), gap_ms=gap, thinking_level=level)

    return prompts


def _corpus_tool(tx: Texts) -> ToolSpec:
    rng = tx.rng
    kind = rng.choice(("read", "read", "bash", "grep", "edit", "lsp", "ast"))
    path = f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.py"
    if kind == "read":
        return _read(tx, path, rng.randint(80, 700))
    if kind == "bash":
        return _bash(tx, "uv run pytest -q", tx.pytest_output(rng.randint(40, 400)), rng.randint(2_000, 40_000))
    if kind == "grep":
        return _grep(tx, tx.ident(), rng.randint(10, 200))
    if kind == "lsp":
        return _lsp(tx, path, rng.randint(5, 120))
    if kind == "ast":
        return _ast(tx, "for $X in $Y.all()", rng.randint(5, 150))
    return _edit(tx, path)


CORPUS_SESSIONS = 240


def corpus_specs(seed: int, sessions: int | None = None) -> Iterator[SessionSpec]:
    """Hundreds of sessions, a few overlapping at any time; half on the old build, every 8th recorded.

    ``sessions`` overrides ``CORPUS_SESSIONS``: a benchmark grows a corpus the way history grows, with more
    sessions rather than only longer tool outputs (``bench/corpus.py``)."""
    count = CORPUS_SESSIONS if sessions is None else sessions
    rng = random.Random(f"{seed}/corpus/plan")
    t = parse_iso_ms("2026-08-05T08:00:00.000Z")
    for index in range(count):
        old = index < count // 2
        if index == count // 2:
            t = parse_iso_ms("2026-10-11T08:00:00.000Z")
        t += rng.randint(60_000, 14 * 60_000)
        cwd = f"/home/mika/work/{rng.choice(WORDS)}-{rng.choice(('api', 'svc', 'web', 'cli'))}"
        build, tools = (OLD_BUILD, OLD_TOOLS) if old else (NEW_BUILD, NEW_TOOLS)
        yield SessionSpec(
            build,
            cwd,
            rng.choice(("claude-opus-4-8", "claude-sonnet-4-6")),
            t,
            _corpus_prompts(old),
            tools,
            record_events=index % 8 == 0,
        )
