"""Per-turn payload reconstruction over built transcripts, run through the real engine.

The logged `payloadBytes` written into the diagnostics are computed independently of the incremental
analysis: by hand arithmetic for the ultrawork scenario, and by a full re-serialization of the whole
context (`flatten_blocks` + `senpi_dedupe`, themselves checked against hand-computed blocks in
`test_serialize.py`) for the rest. The analysis must agree on every turn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.agents.senpi.payload.analyzer import PayloadAnalyzer
from core.agents.senpi.payload.dedupe import KEEP_IDENTICAL_PREVIOUS, KEEP_LAST, PLACEHOLDER_SUPERSEDED, senpi_dedupe
from core.agents.senpi.payload.rebuild import context_before, rebuild_turn, simulate_turn
from core.agents.senpi.payload.rules import prompt_tokens, stable_bytes
from core.agents.senpi.payload.serialize import (
    ANCHOR,
    RULES_NEW,
    RULES_OLD,
    SerializerRules,
    ToolNamer,
    WatchedExecution,
    delta_blocks,
    flatten_blocks,
    fold_context,
    open_tool_calls,
    present_messages,
    tool_watch_note,
)
from core.agents.shared.pi_family.context import is_transmitted
from core.demo.sim.generator import generate
from core.kernel.dedupe import payload_bytes, utf8_len
from core.kernel.directives import ULTRAWORK, DirectiveLedger, scan_text
from core.report import sections
from core.sources.reread import FileReread
from tests.payload_support import Transcript, ingest, only_session, text

READ = FileReread()  # the re-read port the engine hands the analyses

ULTRAWORK_BYTES = 24_871
FLATTEN_KINDS = ("bootstrap", "flatten", "disabled")


def ultrawork_block(size: int = ULTRAWORK_BYTES) -> str:
    """A `<ultrawork-mode>` block of exactly `size` UTF-8 bytes (with some multi-byte text inside)."""
    head = "<ultrawork-mode>\n\n**MANDATORY**: First user-visible line this turn MUST be exactly:\n✓ "
    tail = "\n\nWhen the plan is clear and verified, stop exploring and act.\n\n</ultrawork-mode>"
    body = "x" * (size - utf8_len(head) - utf8_len(tail))
    block = head + body + tail
    assert utf8_len(block) == size
    return block


class Conversation:
    """A transcript plus the provider context senpi would have built from it, for reference payloads."""

    def __init__(self, directory: Path, *, provider: str = "claude-sdk-oauth", date: str = "2026-08-22",
                 rules: SerializerRules = RULES_OLD, dedupe: str = KEEP_LAST) -> None:  # fmt: skip
        self.t = Transcript(directory, provider=provider, date=date)
        self.context: list[dict[str, Any]] = []
        self.kinds: list[str] = []  # per context message: env | user | other (the newer builds' fold)
        self.rules = rules
        self.dedupe = dedupe
        self.completed: dict[str, WatchedExecution] = {}
        self.expected: list[tuple[str, int, int]] = []  # per call: (serializer, bytes sent, raw bytes)

    def user(self, *blocks: Any) -> str:
        entry = self.t.user(*blocks)
        self._add(self._msg(entry), "user")
        return entry

    def custom(self, content: Any, custom_type: str = "omo-ultrawork:directive") -> str:
        entry = self.t.custom_message(content, custom_type)
        body = [text(content)] if isinstance(content, str) else content
        self._add({"role": "user", "content": body}, "env" if custom_type == "environment-context" else "other")
        return entry

    def result(self, call_id: str, name: str, *blocks: Any) -> str:
        entry = self.t.tool_result(call_id, name, *blocks)
        self._add(self._msg(entry), "other")
        return entry

    def _add(self, msg: dict[str, Any], kind: str) -> None:
        self.context.append(msg)
        self.kinds.append(kind)

    def _msg(self, entry_id: str) -> dict[str, Any]:
        return next(line["message"] for line in self.t.lines if line.get("id") == entry_id)

    def reference(self, kind: str, count: int | None) -> tuple[str, int, int, int]:
        """(serializer, bytes after senpi's dedupe, raw bytes, collapsedDirectives) by full re-serialization."""
        namer = ToolNamer(self.rules)
        context = fold_context(self.context, self.kinds, self.rules)
        for msg in context:
            namer.observe_message(msg)
        if kind in FLATTEN_KINDS:
            present = present_messages(context, self.rules)
            pending = open_tool_calls(present)
            note = tool_watch_note(pending, self.completed, namer) if pending else None
            result = senpi_dedupe(flatten_blocks(present, self.rules, namer, note), self.dedupe)
            return "flatten", result.bytes_after, result.bytes_before, result.collapsed
        sent = [m for m in context if is_transmitted(m)]
        size = payload_bytes(delta_blocks(sent[len(sent) - (count or 0) :], self.rules, namer))
        return "delta", size, size, 0

    def call(self, *content: dict[str, Any], kind: str, count: int | None = None, log_bytes: bool = True,
             wrong_by: int = 0, stop: str = "stop", usage: dict[str, int] | None = None) -> str:  # fmt: skip
        """An assistant message (one call) whose diagnostic logs what senpi would have logged."""
        if count is None and kind != "disabled":
            context = fold_context(self.context, self.kinds, self.rules)
            count = sum(1 for m in context if is_transmitted(m))
        serializer, sent, raw, collapsed = self.reference(kind, count)
        logged = sent + wrong_by if (serializer == "flatten" and kind != "disabled" and log_bytes) else None
        entry = self.t.assistant(*content, kind=kind, count=count, payload_bytes=logged, collapsed=collapsed,
                                 stop=stop, usage=usage)  # fmt: skip
        self.expected.append((serializer, sent, raw))
        self._add(self._msg(entry), "other")
        return entry

    def run(self) -> Any:
        return only_session(ingest(self.t.write()))


def assert_matches_reference(conv: Conversation, session: Any) -> None:
    assert session.facts.payload_mismatches == []
    assert len(session.turns) == len(conv.expected)
    for turn, (serializer, sent, raw) in zip(session.turns, conv.expected, strict=True):
        assert turn.facts.payload.serializer == serializer, turn.index
        assert (turn.payload_bytes, turn.payload_bytes_raw) == (sent, raw), turn.index
        rebuilt = rebuild_turn(session, turn.index, READ)
        assert rebuilt is not None
        assert (rebuilt.bytes, rebuilt.bytes_raw) == (sent, raw), turn.index
        assert turn.payload_history_bytes is not None and turn.payload_new_bytes is not None
        assert turn.payload_history_bytes + turn.payload_new_bytes == raw
        # the ultrawork copies on each side are the spans of the transmitted messages' blocks, serialized and sent
        ulw = (turn.directives or {}).get(ULTRAWORK)
        serialized = ultrawork_in(rebuilt.blocks_raw, rebuilt.scope())
        sent_copies = ultrawork_in(rebuilt.blocks, rebuilt.scope())
        if ulw is None:
            assert serialized == (0, 0), turn.index
        else:
            assert ((ulw["copies"], ulw["bytes"]), (ulw["copies_sent"], ulw["bytes_sent"])) == (
                serialized, sent_copies), turn.index  # fmt: skip
        for tag, values in (turn.directives or {}).items():
            if tag != ULTRAWORK:  # senpi's dedupe collapses ultrawork only
                assert (values["copies"], values["bytes"]) == (values["copies_sent"], values["bytes_sent"])


def ultrawork_in(blocks: list[dict[str, Any]], scope: list[str | None]) -> tuple[int, int]:
    """(copies, bytes) of the `<ultrawork-mode>` spans in the blocks of transmitted messages, by a fresh scan."""
    spans = [tb for block, mode in zip(blocks, scope, strict=True) if mode is not None and block.get("type") == "text"
             for tb in scan_text(block["text"], any_tag=mode == "any").ultrawork]  # fmt: skip
    return len(spans), sum(tb.nbytes for tb in spans)


# ---------------------------------------------------------------------------------------------- the done criterion
def test_ultrawork_prompts_n_copies_and_keep_first_leaves_one(tmp_path: Path) -> None:
    """Every user prompt carries a 24,871-byte `<ultrawork-mode>` block (old omo: inside the prompt text) and
    every call flattens. After n prompts the payload holds n copies and n × 24,871 directive bytes,
    keep-first leaves 1 copy and n − 1 markers, and the reconstructed bytes equal the logged ones."""
    block = ultrawork_block()
    t = Transcript(tmp_path)
    prompts = [f"{block}\nprompt {i} ✓" for i in range(1, 8)]
    replies = [f"reply {i}" for i in range(1, 8)]
    placeholder = utf8_len(PLACEHOLDER_SUPERSEDED)
    logged: list[int] = []
    for n in range(1, len(prompts) + 1):
        t.user(prompts[n - 1])
        # hand arithmetic: envelope, labels, history, anchor, final; then senpi keeps only the last copy
        if n == 1:
            raw = 193 + utf8_len(prompts[0])
        else:
            history = sum(utf8_len(p) + utf8_len(r) for p, r in zip(prompts[: n - 1], replies, strict=False))
            labels = 6 + 8 * (n - 2) + 13 * (n - 1)
            raw = 23 + labels + history + 24 + 193 + utf8_len(prompts[n - 1])
        sent = raw - (n - 1) * (ULTRAWORK_BYTES - placeholder)
        logged.append(sent)
        t.assistant(text(replies[n - 1]), kind="bootstrap" if n == 1 else "flatten", count=n, payload_bytes=sent,
                    collapsed=n - 1, reason="assistant_rewritten")  # fmt: skip
    session = only_session(ingest(t.write()))
    assert session.facts.payload_mismatches == []
    assert session.facts.payload_checked == len(prompts)
    for n, turn in enumerate(session.turns, start=1):
        assert turn.payload_bytes == logged[n - 1]
        # serialized: every copy; sent: keep-last leaves one, inside `payload_bytes` (issue 22)
        assert turn.directives == {"ultrawork-mode": {"copies": n, "bytes": n * ULTRAWORK_BYTES, "copies_sent": 1,
                                                      "bytes_sent": ULTRAWORK_BYTES}}  # fmt: skip
        assert turn.payload_bytes >= ULTRAWORK_BYTES
        keep_first = turn.facts.payload.keep_first
        assert (keep_first["kept"], keep_first["markers"]) == (1, n - 1)
        assert turn.facts.payload.collapsed == n - 1
    ledger = session.analyzer(DirectiveLedger)
    assert isinstance(ledger, DirectiveLedger)
    assert ledger.injections == {"ultrawork-mode": len(prompts)}
    assert ledger.tags["ultrawork-mode"].bytes_per_copy == ULTRAWORK_BYTES
    # the report's section: the largest payload and every dedupe simulated on it
    section = sections.directives([(session, session.turns)])
    assert section is not None
    assert section["largest_payload"]["index"] == len(prompts) - 1
    n = len(prompts)
    serialized = sum(turn.payload_bytes_raw for turn in session.turns)
    chain = n * (n + 1) // 2  # copies serialized over the chain: 1 + 2 + ... + n
    assert section["tags"]["ultrawork-mode"] == {
        "injections": n, "variants": 1, "bytes_per_copy": ULTRAWORK_BYTES,
        "copies_in_largest_payload": n, "bytes_in_largest_payload": n * ULTRAWORK_BYTES,
        "copies_sent_in_largest_payload": 1, "bytes_sent_in_largest_payload": ULTRAWORK_BYTES,
        "all_payloads": {
            "copies": chain, "bytes": chain * ULTRAWORK_BYTES, "copies_sent": n, "bytes_sent": n * ULTRAWORK_BYTES,
            "share": round(chain * ULTRAWORK_BYTES / serialized, 4),
            "share_sent": round(n * ULTRAWORK_BYTES / sum(logged), 4),
        },
    }  # fmt: skip
    assert section["payloads"] == {"calls": n, "payload_bytes_raw": serialized, "payload_bytes": sum(logged)}
    dedupe = section["dedupe"]
    assert dedupe["keep_last_ultrawork"]["bytes_after"] == logged[-1]
    assert dedupe["keep_last_ultrawork"]["collapsed"] == n - 1
    keep_first = dedupe["keep_first_identical_all_tags"]
    assert (keep_first["kept"], keep_first["markers"]) == (1, n - 1)
    assert keep_first["bytes_before"] == session.turns[-1].payload_bytes_raw


def test_new_omo_directive_as_custom_message_then_reminders(tmp_path: Path) -> None:
    """New omo: the directive once as a hidden custom message, then short reminders (senpi-formats §7.1)."""
    conv = Conversation(tmp_path)
    block = ultrawork_block(17_000)
    reminder = ("<omo-ultrawork-reminder>ultrawork mode is already armed for this session - the ultrawork directive "
                "above remains binding; re-read it and continue.</omo-ultrawork-reminder>")  # fmt: skip
    conv.custom(block)
    conv.user("ulw do it")
    conv.call(text("ok"), kind="flatten")
    conv.custom(reminder, "omo-ultrawork:reminder")
    conv.user("ulw again")
    conv.call(text("ok"), kind="delta", count=2)
    conv.custom(reminder, "omo-ultrawork:reminder")
    conv.user("ulw third")
    conv.call(text("ok"), kind="flatten")
    session = conv.run()
    assert_matches_reference(conv, session)
    last = session.turns[-1].directives
    assert last == {"omo-ultrawork-reminder": {"copies": 2, "bytes": 2 * len(reminder), "copies_sent": 2,
                                               "bytes_sent": 2 * len(reminder)},
                    "ultrawork-mode": {"copies": 1, "bytes": 17_000, "copies_sent": 1, "bytes_sent": 17_000}}  # fmt: skip
    assert session.turns[1].directives == {
        "omo-ultrawork-reminder": {"copies": 1, "bytes": len(reminder), "copies_sent": 1, "bytes_sent": len(reminder)}
    }


# ---------------------------------------------------------------------------------------------- agreement
def test_every_turn_matches_a_full_rebuild_on_a_rich_transcript(tmp_path: Path) -> None:
    conv = Conversation(tmp_path)
    image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    conv.custom("<omo-senpi-task>\nYou can delegate work to background subagents.\n</omo-senpi-task>",
                "senpi-task.usage")  # fmt: skip
    conv.user(f"{ultrawork_block(3000)}\nFix the bug in ✓ parser.py", image)
    conv.call(
        {"type": "thinking", "thinking": "Let me look.", "thinkingSignature": "sig", "startedAt": 1, "endedAt": 2},
        {"type": "toolCall", "id": "toolu_01", "name": "read", "arguments": {"path": "parser.py", "limit": 2.0}},
        {"type": "toolCall", "id": "toolu_02", "name": "repoSearch", "arguments": {"query": "needle", "k": 3}},
        kind="flatten", stop="toolUse",
    )  # fmt: skip
    conv.result("toolu_01", "read", "def parse(): ...")
    conv.result(
        "toolu_02", "repoSearch", "match at 3\n<system-reminder>\nNew todo tasks were added\n</system-reminder>"
    )
    conv.call({"type": "toolCall", "id": "toolu_03", "name": "bash", "arguments": {"command": "pytest -q"}},
              kind="delta", count=2, stop="toolUse")  # fmt: skip
    conv.result("toolu_03", "bash", "1 failed")
    conv.call(text("Found it."), kind="fork", count=3)
    conv.user({"type": "image", "data": "R0lGOD", "mimeType": "image/gif"})
    conv.call(text("A screenshot."), kind="flatten")
    conv.user(f"{ultrawork_block(3000)}\nnow the tests")
    conv.call(text("On it."), kind="flatten")
    conv.user("and the docs")
    conv.call(text("Done."), kind="delta", count=1)
    session = conv.run()
    assert_matches_reference(conv, session)
    assert session.facts.payload_checked == 3
    # the custom tool's name comes out as an MCP tool in the rebuilt blocks
    rebuilt = rebuild_turn(session, 3, READ)
    assert rebuilt is not None
    assert any("mcp__custom-tools__repoSearch" in b.get("text", "") for b in rebuilt.blocks)
    assert [b["type"] for b in rebuilt.blocks[-2:]] == ["image", "text"]
    assert rebuilt.blocks[-1]["text"] == "(see attached image)"
    # a delta call: history bytes are 0 for the messages that were new
    delta = session.turns[1]
    assert (delta.payload_history_bytes, delta.payload_new_bytes) == (0, delta.payload_bytes)


def test_flatten_split_into_history_and_new(tmp_path: Path) -> None:
    conv = Conversation(tmp_path)
    conv.user("Find it")
    conv.call(text("ok"), kind="bootstrap")
    conv.user("Explain the match")
    conv.call(text("done"), kind="flatten")
    session = conv.run()
    assert_matches_reference(conv, session)
    second = session.turns[1]
    # re-sent: "USER:\n" + "Find it" + "\n\nASSISTANT:\n" + "ok"
    assert second.payload_history_bytes == 6 + 7 + 13 + 2
    assert second.payload_new_bytes == 23 + 24 + 193 + len("Explain the match")


def test_newer_build_rules_are_picked_by_the_logged_bytes(tmp_path: Path) -> None:
    """A 2026.10.10-10 session: keep-identical-previous dedupe and `mcp__custom-tools__write`."""
    a, b = ultrawork_block(5000), ultrawork_block(6000)
    conv = Conversation(tmp_path, provider="anthropic-subscription", date="2026-10-12", rules=RULES_NEW,
                        dedupe=KEEP_IDENTICAL_PREVIOUS)  # fmt: skip
    for prompt in (a, a, b, a):
        conv.user(f"{prompt}\nwork")
        conv.call({"type": "toolCall", "id": f"w{len(conv.expected)}", "name": "write", "arguments": {"path": "f"}},
                  kind="flatten", stop="toolUse")  # fmt: skip
        conv.result(f"w{len(conv.expected) - 1}", "write", "ok")
        conv.call(text("ok"), kind="delta", count=1)
    session = conv.run()
    assert_matches_reference(conv, session)
    assert session.facts.payload_profile == "2026.10.10-10"
    assert session.turns[-2].facts.payload.collapsed == 1  # A, A → the second A; B, A kept
    rebuilt = rebuild_turn(session, len(session.turns) - 1, READ)
    assert rebuilt is not None
    assert rebuilt.blocks == [{"type": "text", "text": "Tool result (mcp__custom-tools__write, id=w6):\n"},
                              {"type": "text", "text": "ok"}]  # fmt: skip


@pytest.mark.parametrize("newer", [False, True])
def test_a_directive_quoted_by_the_assistant_is_not_counted_as_sent(tmp_path: Path, newer: bool) -> None:
    """senpi's dedupe sees every ultrawork span of the prompt, the directive counts only the transmitted
    messages': an assistant that quoted the whole block moves which span keep-last keeps (the quote, last) and
    which keep-identical-previous collapses. The sent counts follow the spans actually left (`_ultrawork_sent`'s
    walk; without a quote the prefix totals answer)."""
    a = ultrawork_block(3000)
    if newer:
        conv = Conversation(tmp_path, provider="anthropic-subscription", date="2026-10-12", rules=RULES_NEW,
                            dedupe=KEEP_IDENTICAL_PREVIOUS)  # fmt: skip
    else:
        conv = Conversation(tmp_path)
    conv.user(f"{a}\none")
    conv.call(text("ok"), kind="bootstrap")
    conv.user(f"{a}\ntwo")
    conv.call(text(f"You sent me this:\n{a}"), kind="flatten")  # the assistant quotes the directive
    conv.user("three")
    conv.call(text("ok"), kind="flatten")
    conv.user(f"{a}\nfour")
    conv.call(text("ok"), kind="flatten")
    session = conv.run()
    assert_matches_reference(conv, session)  # both sides against a fresh scan of the rebuilt blocks
    third, last = (session.turns[i].directives[ULTRAWORK] for i in (2, 3))
    assert (third["copies"], third["bytes"]) == (2, 2 * 3000)
    # keep-last keeps the quote (the last span, not a transmitted message's): no user copy is sent;
    # keep-identical-previous keeps the first and collapses the second and the quote (each equal to the one before)
    assert (third["copies_sent"], third["bytes_sent"]) == ((1, 3000) if newer else (0, 0))
    # then a new prompt's copy is the last span (keep-last: sent alone) or in the final message, which
    # keep-identical-previous never touches (sent beside the first)
    assert (last["copies"], last["copies_sent"]) == (3, 2 if newer else 1)


def test_newer_builds_fold_the_environment_message_into_the_prompt(tmp_path: Path) -> None:
    """2026.9.24-3+: a hidden environment-context message directly before a user prompt becomes that prompt's
    leading text block (one `USER:` section, one transmitted message); one with no prompt after it stays."""
    env = ("<environment_context>\n  <cwd>/home/dev/p</cwd>\n  <current_date>2026-10-12</current_date>\n"
           "</environment_context>")  # fmt: skip
    conv = Conversation(tmp_path, provider="anthropic-subscription", date="2026-10-12", rules=RULES_NEW,
                        dedupe=KEEP_IDENTICAL_PREVIOUS)  # fmt: skip
    conv.custom(env, "environment-context")
    conv.user("hello")
    conv.custom("<omo-senpi-task>\nuse tasks\n</omo-senpi-task>", "senpi-task.usage")
    conv.call(text("hi"), kind="bootstrap")
    conv.user("more")
    conv.call(text("ok"), kind="flatten")
    conv.custom(env.replace("12", "13"), "environment-context")
    conv.call(text("date changed"), kind="delta", count=1)
    session = conv.run()
    assert_matches_reference(conv, session)
    assert conv.t.lines[-1]["message"]["diagnostics"][0]["details"]["deltaMessages"] == 1
    rebuilt = rebuild_turn(session, 1, READ)
    assert rebuilt is not None
    texts_ = [b["text"] for b in rebuilt.blocks]
    assert texts_[1:4] == ["USER:\n", env, "hello"]


def test_same_data_logged_by_an_older_build_is_recognized(tmp_path: Path) -> None:
    """The provider id says "newer", the logged bytes say keep-last: the evidence wins."""
    a = ultrawork_block(4000)
    conv = Conversation(tmp_path, provider="anthropic-subscription", date="2026-10-12", rules=RULES_NEW)
    for i in range(3):
        conv.user(f"{a}\nprompt {i}")
        conv.call(text("ok"), kind="flatten")
    session = conv.run()
    assert_matches_reference(conv, session)
    assert session.facts.payload_profile == "2026.9.30"


def test_a_wrong_logged_value_is_listed_as_a_mismatch(tmp_path: Path) -> None:
    conv = Conversation(tmp_path)
    conv.user("hello")
    conv.call(text("hi"), kind="bootstrap")
    conv.user("again")
    conv.call(text("ok"), kind="flatten", wrong_by=7)
    session = conv.run()
    mismatches = session.facts.payload_mismatches
    assert len(mismatches) == 1
    row = mismatches[0]
    assert (row["turn"], row["computed"], row["logged"], row["difference"]) == (
        1, conv.expected[1][1], conv.expected[1][1] + 7, -7,
    )  # fmt: skip


def test_recovered_tool_results_note_is_part_of_the_flatten(tmp_path: Path) -> None:
    """A tool call left without a result (an aborted turn): the next flatten carries senpi's tool-watch note."""
    conv = Conversation(tmp_path)
    conv.user("run it")
    conv.call({"type": "toolCall", "id": "toolu_X", "name": "bash", "arguments": {"command": "sleep 99"}},
              kind="bootstrap", stop="toolUse")  # fmt: skip
    data = {"type": "tool_execution_end", "toolCallId": "toolu_X", "toolName": "bash", "content": "partial output",
            "isError": True, "timestamp": 5}  # fmt: skip
    conv.t.add({"type": "custom", "customType": "claude-sdk-oauth-tool-watch", "data": data})
    conv.completed["toolu_X"] = WatchedExecution("toolu_X", "bash", "partial output", True)
    conv.user("what happened?")
    conv.call(text("it was interrupted"), kind="flatten")
    session = conv.run()
    assert_matches_reference(conv, session)
    assert session.turns[1].facts.payload.recovered_tool_results is True
    rebuilt = rebuild_turn(session, 1, READ)
    assert rebuilt is not None
    assert "TOOL RESULT (recovered Bash, id=toolu_X, status=error):\npartial output" in [
        b["text"] for b in rebuilt.blocks
    ]


# ---------------------------------------------------------------------------------------------- context changes
def test_compaction_resets_the_running_history(tmp_path: Path) -> None:
    conv = Conversation(tmp_path)
    conv.user("one")
    conv.call(text("a"), kind="bootstrap")
    kept = conv.user("two")
    conv.call(text("b"), kind="delta", count=1)
    conv.t.compaction("we did one and two", kept)
    summary = ("The conversation history before this point was compacted into the following summary:\n\n"
               "<summary>\nwe did one and two\n</summary>")  # fmt: skip
    conv.context = [{"role": "user", "content": [text(summary)]}, *conv.context[2:]]
    conv.kinds = ["other", *conv.kinds[2:]]
    conv.user("three")
    conv.call(text("c"), kind="flatten", count=None)
    session = conv.run()
    assert_matches_reference(conv, session)
    context = context_before(session, session.turns[2], READ)
    assert context is not None and context[0]["content"][0]["text"] == summary


def test_branch_switch_measures_the_new_branch(tmp_path: Path) -> None:
    conv = Conversation(tmp_path)
    conv.user("start")
    first_answer = conv.call(text("first"), kind="bootstrap")
    conv.user("abandoned path " * 50)
    conv.call(text("x"), kind="delta", count=1)
    # the user goes back to the first answer and asks something else
    conv.t.leaf = first_answer
    conv.context, conv.kinds = conv.context[:2], conv.kinds[:2]
    conv.user("other question")
    conv.call(text("y"), kind="flatten")
    session = conv.run()
    assert_matches_reference(conv, session)


def test_decisions_without_a_payload_and_disabled_calls(tmp_path: Path) -> None:
    t = Transcript(tmp_path)
    t.user("hi")
    t.assistant(text("a"), kind="disabled")
    t.user("again")
    t.assistant(text(""), kind="failed", reason="query_failed", stop="error")
    t.user("once more")
    t.assistant(text("b"), kind="flatten", reason="query_failed")  # old terminal flatten: no count
    session = only_session(ingest(t.write()))
    disabled, failed, terminal = session.turns
    assert disabled.facts.payload.serializer == "flatten"
    assert disabled.payload_bytes == 193 + 2
    assert failed.payload_bytes is None and failed.directives is None
    assert terminal.payload_bytes is None


def test_prompt_tokens_are_input_plus_cache_read_and_write(tmp_path: Path) -> None:
    t = Transcript(tmp_path)
    t.user("hi")
    t.assistant(text("a"), kind="bootstrap", count=1,
                usage={"input": 6, "output": 180, "cacheRead": 1000, "cacheWrite": 6274})  # fmt: skip
    turn = only_session(ingest(t.write())).turns[0]
    assert turn.tokens is not None
    assert {k: turn.tokens[k] for k in ("input", "cache_read", "cache_write", "output")} == {
        "input": 6, "cache_read": 1000, "cache_write": 6274, "output": 180,
    }  # fmt: skip
    assert turn.facts.payload.prompt_tokens == 7280 == prompt_tokens(turn.tokens)


def test_the_report_sections_on_a_payload_session(tmp_path: Path) -> None:
    """What the report builds from these turns (`core.report.sections`): the largest payload, the dedupe
    simulated on its rebuilt payload, and the counterfactual bytes of the re-send a stable fingerprint avoids."""
    conv = Conversation(tmp_path)
    block = ultrawork_block(2000)
    conv.user(f"{block}\none")
    conv.call(text("a"), kind="bootstrap")
    conv.user(f"{block}\ntwo")
    conv.call(text("b"), kind="flatten")
    conv.user("three")
    conv.call(text("c"), kind="delta", count=1)
    session = conv.run()
    selected = [(session, session.turns)]
    best = sections.largest_payload(selected)
    assert best is not None and best[1].index == 1
    sims = simulate_turn(session, 1, READ)
    assert sims is not None and sims["keep_last_ultrawork"].bytes_after == session.turns[1].payload_bytes
    assert sims == session.dedupe(1)  # what the section and the dashboard simulate, through the analyzer
    flatten = session.turns[1]
    flatten.avoidable = True  # as the replay marks an avoidable re-send, which the payload analysis then prices
    flatten.payload_bytes_if_stable = stable_bytes(flatten)
    assert flatten.payload_bytes_if_stable == flatten.facts.payload.delta_if_stable == utf8_len(f"{block}\ntwo")
    counter = sections.counterfactual(session.turns, selected)
    assert counter is not None
    assert (counter["resends_logged"], counter["resends_avoidable"]) == (1, 1)
    assert counter["bytes_logged"] == flatten.payload_bytes
    assert counter["bytes_if_stable"] == flatten.payload_bytes_if_stable
    analyzer = session.analyzer(PayloadAnalyzer)
    assert isinstance(analyzer, PayloadAnalyzer)


def test_anchor_is_the_last_block_without_a_final_user_message(tmp_path: Path) -> None:
    conv = Conversation(tmp_path)
    conv.user("go")
    conv.call({"type": "toolCall", "id": "t1", "name": "bash", "arguments": {}}, kind="bootstrap", stop="toolUse")
    conv.result("t1", "bash", "ok")
    conv.call(text("done"), kind="flatten")
    session = conv.run()
    assert_matches_reference(conv, session)
    rebuilt = rebuild_turn(session, 1, READ)
    assert rebuilt is not None and rebuilt.blocks[-1]["text"] == ANCHOR


def test_simulator_manifest_agrees(tmp_path: Path) -> None:
    """The independent senpi simulator (`core.demo.sim`) knows the true bytes of every call it made."""
    manifest = generate(tmp_path / "agent", "demo")
    engine = ingest(tmp_path / "agent")
    sessions = {s.session_id: s for s in engine.state.sessions.values()}
    compared = checked = stable = 0
    for truth in manifest.sessions:
        session = sessions[truth.session_id]
        assert session.facts.payload_mismatches == [], truth.session_id
        checked += session.facts.payload_checked
        for row in truth.turns:
            turn = session.turns[row.index]
            if row.kind in ("failed",) or (row.kind == "flatten" and row.count is None):
                continue
            assert (turn.payload_bytes, turn.payload_bytes_raw) == (row.payload_bytes, row.payload_bytes_raw), (
                truth.session_id, row.index, row.kind,
            )  # fmt: skip
            copies = (turn.directives or {}).get("ultrawork-mode", {"copies": 0, "bytes": 0})
            assert (copies["copies"], copies["bytes"]) == (row.directive_copies, row.directive_bytes)
            if row.resend_from_volatile and turn.avoidable:
                # the counterfactual: a delta of the messages new since the previous call
                assert turn.payload_bytes_if_stable == row.stable_payload_bytes, (truth.session_id, row.index)
                stable += 1
            compared += 1
    assert compared > 0 and checked > 0
    if any(t.avoidable is not None for s in sessions.values() for t in s.turns):
        assert stable > 0  # the replay judged the re-sends: their counterfactual bytes were compared
