"""The senpi simulator (core.demo.sim), its bundled demo data and the live demo writer.

The simulator is the ground truth other tests compare the analysis against, so these tests check it against
senpi's own vectors and check that the data it wrote is self-consistent when read back the way a parser would:
from the files, not from the simulator's internals.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from core.demo import senpi as senpi_demo
from core.demo.bundle import BundleError, load_ops
from core.demo.live import apply
from core.demo.sim import scenarios
from core.demo.sim.builds import NEW_BUILD, OLD_BUILD, Build
from core.demo.sim.continuity import Continuity, Fingerprint
from core.demo.sim.digest import (
    HASH_PROJECTED,
    HASH_TIMING_STRIPPED,
    HASH_VERBATIM,
    assistant_content_hash,
    digest,
    prefix_digest,
    sent_message_hash,
)
from core.demo.sim.directives import ULTRAWORK_SPAN, ULTRAWORK_SPAN_BYTES
from core.demo.sim.generator import generate
from core.demo.sim.ids import parse_iso_ms
from core.demo.sim.jsjson import canonical_json, js_number, locale_key
from core.demo.sim.prompt import (
    HISTORY_CLOSE,
    PLACEHOLDER_NEW,
    PLACEHOLDER_OLD,
    dedupe_ultrawork,
    flatten_prompt_blocks,
    payload_bytes,
)
from core.demo.sim.scenarios import NEW_TOOLS, OLD_TOOLS

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "core" / "demo" / "data"
VECTORS = ROOT / "tests" / "data" / "senpi-digest-vectors.json"
SPAN = re.compile(r"<ultrawork-mode>[\s\S]*?</ultrawork-mode>")


# -- helpers: read the bundle back like a parser would ---------------------------------------------------------


def _json_lines(path: Path) -> list[dict[str, Any]]:
    """Every line that is valid UTF-8 JSON; the deliberately bad ones are skipped."""
    out = []
    for raw in path.read_bytes().split(b"\n"):
        try:
            out.append(json.loads(raw.decode("utf-8")))
        except (UnicodeDecodeError, ValueError):
            continue
    return out


def _log_lines() -> list[dict[str, Any]]:
    return _json_lines(DATA / "logs" / "session.log.1") + _json_lines(DATA / "logs" / "session.log")


def _manifest() -> dict[str, Any]:
    return json.loads((DATA / "manifest.json").read_text(encoding="utf-8"))


def _build_for(provider: str) -> Build:
    return OLD_BUILD if provider == "claude-sdk-oauth" else NEW_BUILD


def _tools_for(build: Build) -> frozenset[str]:
    return OLD_TOOLS if build is OLD_BUILD else NEW_TOOLS


def _contexts(entries: list[dict[str, Any]], build: Build) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """(assistant message, provider context before it) for every assistant, rebuilt from transcript entries:
    custom_message → user text, environment-context folded into the next user (new builds), failed assistants
    dropped (new builds)."""
    context: list[dict[str, Any]] = []
    env: str | None = None
    out = []
    for entry in entries:
        if entry.get("type") == "custom_message":
            if entry["customType"] == "environment-context" and build.env_context:
                env = entry["content"]
            else:
                context.append({"role": "user", "content": [{"type": "text", "text": entry["content"]}]})
        elif entry.get("type") == "message":
            message = entry["message"]
            if message["role"] == "user":
                folded = [{"type": "text", "text": env}] if env is not None else []
                env = None
                context.append({"role": "user", "content": folded + message["content"]})
            elif message["role"] == "assistant":
                out.append((message, list(context)))
                failed = message["stopReason"] in ("error", "aborted")
                if not (failed and build.drop_failed_assistants):
                    context.append(message)
            else:
                context.append(message)
    return out


def _transmitted(context: list[dict[str, Any]]) -> int:
    return sum(1 for m in context if m["role"] in ("user", "toolResult"))


def _diagnostic(message: dict[str, Any]) -> dict[str, Any]:
    (diag,) = [d for d in message["diagnostics"] if d["type"] == "claude_sdk_oauth_session_continuity"]
    return diag


# -- independence -------------------------------------------------------------------------------------------------


def test_the_simulator_imports_nothing_it_cross_checks() -> None:
    """The oracle stays independent: its modules import the standard library and each other, nothing else of core
    (a shared helper would make a bug in the analysis agree with itself)."""
    package = ROOT / "core" / "demo" / "sim"
    modules = sorted(package.glob("*.py"))
    assert len(modules) >= 10
    for path in modules:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{path.name}: relative import"
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                ok = name.startswith("core.demo.sim.") or top in sys.stdlib_module_names or top == "__future__"
                assert ok, f"{path.name} imports {name}"


# -- digest and serializer against senpi's own vectors ----------------------------------------------------------


def test_digest_vectors_and_key_order() -> None:
    vectors = json.loads(VECTORS.read_text(encoding="utf-8"))
    for case in vectors["digests"]:
        assert canonical_json(case["input"]) == case["canonical"]
        assert digest(case["input"]) == case["sha256"]
    assert sorted(vectors["keyOrder"]["keys"], key=locale_key) == vectors["keyOrder"]["sorted"]


def test_prefix_and_assistant_hash_vectors() -> None:
    user = sent_message_hash({"role": "user", "content": [{"type": "text", "text": "hello"}], "timestamp": 1})
    tool = sent_message_hash(
        {
            "role": "toolResult",
            "toolCallId": "toolu_01",
            "toolName": "bash",
            "content": [{"type": "text", "text": "ok"}],
        }
    )
    assert user == "605b2cd3bceaf2d08e7ba22785ed603b5cce260a16f3215a2b9751da809810e2"
    assert prefix_digest([user, tool]) == "4ad0220175c5862a54149567ed2412abe685c31ae8bb2ae95d9dc6b7b09e881e"
    assert prefix_digest([]) == "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
    timed = {
        "type": "thinking",
        "thinking": "t",
        "thinkingSignature": "sig",
        "startedAt": 1785819137555,
        "endedAt": 1785819137555,
    }
    message = {
        "role": "assistant",
        "api": "claude-sdk-oauth",
        "provider": "claude-sdk-oauth",
        "model": "claude-opus-4-8",
        "content": [timed, {"type": "text", "text": "hi", "index": 1}],
    }
    assert assistant_content_hash(message, HASH_VERBATIM).startswith("156486c3")
    assert assistant_content_hash(message, HASH_TIMING_STRIPPED).startswith("ecc1cba1")
    assert assistant_content_hash(message, HASH_PROJECTED).startswith("62b6a44e")
    assert assistant_content_hash({**message, "provider": "anthropic-subscription"}, HASH_PROJECTED) == (
        "4145e91c70544a588e20a5e1b1e42a5667fe659b45b06cf039fcd514c091e9d1"
    )


def test_js_number_matches_javascript() -> None:
    cases = {
        1e21: "1e+21",
        1e-7: "1e-7",
        1e-5: "0.00001",
        1.5: "1.5",
        2.0: "2",
        -0.0: "0",
        123456789.125: "123456789.125",
    }
    assert {k: js_number(k) for k in cases} == cases


def test_flatten_matches_the_reference_test() -> None:
    context = [
        {"role": "user", "content": [{"type": "text", "text": "Find it"}]},
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "call-1", "name": "repoSearch", "arguments": {"query": "needle"}}],
        },
        {
            "role": "toolResult",
            "toolCallId": "call-1",
            "toolName": "repoSearch",
            "content": [{"type": "text", "text": "match"}],
        },
        {"role": "user", "content": [{"type": "text", "text": "Explain the match"}]},
    ]
    blocks = flatten_prompt_blocks(context, frozenset({"repoSearch"}), OLD_BUILD)
    assert [b["text"] for b in blocks][:5] == [
        "<conversation_history>\n",
        "USER:\n",
        "Find it",
        "\n\nASSISTANT:\n",
        'Historical tool call (non-executable): mcp__custom-tools__repoSearch args={"query":"needle"}',
    ]
    assert payload_bytes(blocks) == 449
    single = flatten_prompt_blocks(
        [context[0] | {"content": [{"type": "text", "text": "Hello"}]}], frozenset(), OLD_BUILD
    )
    assert payload_bytes(single) == 198


def test_dedupe_rules() -> None:
    a, b = "<ultrawork-mode>A</ultrawork-mode>", "<ultrawork-mode>B</ultrawork-mode>"
    blocks = [{"type": "text", "text": t} for t in (a, a, b, a, HISTORY_CLOSE, a)]
    old, collapsed_old = dedupe_ultrawork(blocks, OLD_BUILD)
    assert collapsed_old == 4 and [x["text"] for x in old][-1] == a
    assert [x["text"] for x in old][:4] == [PLACEHOLDER_OLD] * 4
    new, collapsed_new = dedupe_ultrawork(blocks, NEW_BUILD)
    assert collapsed_new == 1  # A,A,B,A -> A,P,B,A; the final message is out of scope
    assert [x["text"] for x in new][:4] == [a, PLACEHOLDER_NEW, b, a]
    assert blocks[1]["text"] == a  # the input is never mutated
    assert len(ULTRAWORK_SPAN.encode()) == ULTRAWORK_SPAN_BYTES == 24_871


def test_decision_fork_chain_grows_from_a_fixed_boundary() -> None:
    counter = iter(range(1000))
    state = Continuity(OLD_BUILD, lambda: f"sdk-{next(counter)}")
    fp = Fingerprint("a", "m", "s", "t")
    hashes = ["h1"]
    for n, expected in ((1, "bootstrap"), (2, "delta"), (3, "delta")):
        hashes = [f"h{i}" for i in range(1, n + 1)]
        start = state.begin_call(hashes, fp, n, has_assistant=n > 1)
        assert start.observation.kind == expected
        state.finish_call(hashes, f"uuid-{n}", n)
    state.commit_rewritten(True)
    counts = []
    for n in (4, 5, 6):
        hashes = [f"h{i}" for i in range(1, n + 1)]
        start = state.begin_call(hashes, fp, n, has_assistant=True)
        assert (start.observation.kind, start.observation.reason, start.decision.start) == (
            "fork",
            "assistant_rewritten",
            2,
        )
        counts.append(start.observation.count)
        state.finish_call(hashes, f"uuid-{n}", n)
        state.commit_rewritten(True)
    assert counts == [2, 3, 4]


def _two_calls_then_thinking_switch(build: Build) -> tuple[Continuity, list[str]]:
    counter = iter(range(1000))
    state = Continuity(build, lambda: f"sdk-{next(counter)}")
    for n in (1, 2):
        hashes = [f"h{i}" for i in range(1, n + 1)]
        state.begin_call(hashes, Fingerprint("a", "m", "s", "high"), n, has_assistant=n > 1)
        state.finish_call(hashes, f"uuid-{n}", n)
    assert state.select_thinking_level() == "thinking_level_selected"
    return state, ["h1", "h2", "h3"]


#: v2026.8.4-2 with the two rules that arrive in v2026.8.18-3 switched on: what v2026.8.22-2 decides here
AUG_18_RULES = dataclasses.replace(OLD_BUILD, binding_drift_check=True, thinking_keeps_hashes=True)


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        (OLD_BUILD, ("fork", "history_rolled_back", 3, 0)),  # kept sentHashes [], no drift check on a binding
        (AUG_18_RULES, ("flatten", "options_changed", 3, 0)),  # drift check on the binding path
        (NEW_BUILD, ("fork", "toolset_changed", 1, 2)),  # 2026.9.7-2+: split reason, toolset drift reattaches
    ],
)
def test_a_thinking_level_switch_is_decided_by_the_build(build: Build, expected: tuple[Any, ...]) -> None:
    state, hashes = _two_calls_then_thinking_switch(build)
    start = state.begin_call(hashes, Fingerprint("a", "m", "s", "medium"), 10, has_assistant=True)
    obs = start.observation
    assert (obs.kind, obs.reason, obs.count, start.decision.start) == expected
    assert start.closed is None  # the switch closed the entry already: no second close at call start


# -- the generator ------------------------------------------------------------------------------------------------


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    generate(tmp_path / "a", "demo", seed=7)
    generate(tmp_path / "b", "demo", seed=7)
    generate(tmp_path / "c", "demo", seed=8)
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    assert _tree(tmp_path / "a") != _tree(tmp_path / "c")


def test_bundled_demo_is_the_generator_output(tmp_path: Path) -> None:
    """core/demo/data is regenerated, never edited: `python -m core.demo.sim --out core/demo/data`."""
    generate(tmp_path / "demo", "demo")
    assert _tree(tmp_path / "demo") == _tree(DATA)


def test_generate_refuses_a_foreign_dir(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError):
        generate(tmp_path, "demo")


def test_corpus_streams_and_rotates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scenarios, "CORPUS_SESSIONS", 12)
    manifest = generate(tmp_path, "corpus", seed=3, scale=0.3, rotate_bytes=8 * 1024)
    assert len(manifest.sessions) == 12 and manifest.replay is None
    assert len(manifest.rotations) >= 2  # more than one rotation: only the newest old generation survives
    assert (tmp_path / "logs" / "session.log.1").exists()
    lost = [t for s in manifest.sessions for t in s.turns if t.log.log_file is None]
    kept = [t for s in manifest.sessions for t in s.turns if t.log.log_file is not None]
    assert lost and kept
    for turn in kept[-20:]:
        line = (tmp_path / turn.log.log_file).read_bytes().split(b"\n")[turn.log.log_line - 1]
        logged = json.loads(line)
        assert (logged["kind"], logged["reason"], logged.get("count")) == (turn.kind, turn.reason, turn.count)


def test_the_old_demo_data_is_this_simulator_with_the_2026_8_18_3_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The data bundled before issue 20 is what the v2026.8.18-3 rules give: turn 19 flatten/options_changed/23,
    97,795 bytes after dedupe (147,369 before), as senpi v2026.8.22-2 replays it (senpi-fidelity review, item 3)."""
    monkeypatch.setattr(scenarios, "OLD_BUILD", AUG_18_RULES)
    turn = generate(tmp_path / "demo", "demo").sessions[0].turns[19]
    assert (turn.kind, turn.reason, turn.count) == ("flatten", "options_changed", 23)
    assert (turn.payload_bytes, turn.payload_bytes_raw, turn.collapsed_directives) == (97_795, 147_369, 2)


# -- the bundled demo data read back ----------------------------------------------------------------------------


def test_demo_shape_and_size() -> None:
    manifest = _manifest()
    total = sum(f["bytes"] for f in manifest["files"])
    assert 1_000_000 <= total <= 3_000_000
    assert len(manifest["rotations"]) == 1
    assert {f["path"] for f in manifest["files"]} >= {"logs/session.log", "logs/session.log.1", "logs/compaction.log"}
    old, new, hostile = manifest["sessions"]
    assert (old["provider"], new["provider"]) == ("claude-sdk-oauth", "anthropic-subscription")
    assert old["counts"]["flatten"] >= 5 and old["counts"]["fork"] >= 3 and old["ulw_prompts"] == 3
    assert new["counts"].get("failed") == 1 and new["sidecar"] and old["sidecar"] is None
    assert hostile["hostile_entry_ids"]
    for path in (old["events"], new["events"]):
        assert (DATA / path).exists()


def test_demo_turn_19_is_what_its_declared_build_decides() -> None:
    """Session 019fdb7e declares 2026.8.4-2: after the thinking switch senpi's own code forks from the empty binding
    at 0 and sends the 23 messages as delta blocks, 134,071 bytes (senpi-fidelity review, item 3)."""
    old = _manifest()["sessions"][0]
    assert old["build"] == "2026.8.4-2"
    turn = old["turns"][19]
    assert turn["entry_id"] == "865b7911"
    assert (turn["kind"], turn["reason"], turn["count"]) == ("fork", "history_rolled_back", 23)
    assert (turn["decision"], turn["decision_from"]) == ("fork", 0)
    assert turn["payload_bytes"] == turn["payload_bytes_raw"] == 134_071 and turn["logged_payload_bytes"] is None
    before = [c for c in old["closes"] if c["ts"] <= turn["ts"]][-1]
    assert (before["reason"], before["when"]) == ("thinking_level_selected", "thinking_level")


def _session_lines(session: dict[str, Any], build: Build) -> list[dict[str, Any]]:
    """The session.log lines of one session as a parser sees them: by sessionId where the build writes it, else
    by time (the demo's old-build session is alone in its time range)."""
    lines = [x for x in _log_lines() if x.get("event", "").startswith("claude_sdk_oauth_session_")]
    if build.session_id_on_log:
        return [x for x in lines if x.get("sessionId") == session["session_id"]]
    return [x for x in lines if "sessionId" not in x and session["started"] <= x["ts"] <= session["ended"]]


def test_close_lines_pair_with_the_calls_senpi_writes_them_for() -> None:
    """senpi closes a live entry inside the call that replaces it: `assistant_rewritten` before each flatten of a
    live entry (session-stream.ts), `other` (raw "reattach") before each fork that resumes one
    (session-reattach.ts), the pump error before a failed call. Reaper, thinking-switch and shutdown closes fall
    outside any call. Read from the log: a close pairs with the next continuity line when it lies inside that
    call (at or after the assistant's start)."""
    pairs: Counter[tuple[str, str, str]] = Counter()
    unpaired: Counter[str] = Counter()
    manifest = _manifest()
    for session in manifest["sessions"]:
        lines = _session_lines(session, _build_for(session["provider"]))
        continuity = [x for x in lines if x["event"].endswith("_continuity")]
        assert len(continuity) == len(session["turns"])
        starts = iter(turn["ts"] for turn in session["turns"])
        pending: dict[str, Any] | None = None
        for line in lines:
            if line["event"].endswith("_close"):
                if pending is not None:
                    unpaired[pending["reason"]] += 1
                pending = line
                continue
            start = next(starts)
            if pending is not None and pending["ts"] >= start:
                pairs[(pending["reason"], line["kind"], line["reason"])] += 1
            elif pending is not None:
                unpaired[pending["reason"]] += 1
            pending = None
        if pending is not None:
            unpaired[pending["reason"]] += 1
    assert pairs == {
        ("assistant_rewritten", "flatten", "assistant_rewritten"): 10,
        ("other", "fork", "assistant_rewritten"): 6,
        ("query_failed", "failed", "query_failed"): 1,
    }
    assert unpaired == {"idle_ttl": 1, "thinking_level_selected": 1, "other": 3}  # the 3 "other" are shutdowns
    turns = [t for s in manifest["sessions"] for t in s["turns"]]
    assert sum(1 for t in turns if t["close_before"]) == 16  # the manifest agrees on the call-start closes


def test_every_transcribed_assistant_has_its_hash_under_every_rule() -> None:
    """hash_verbatim / hash_timing_stripped / hash_projected are the transcribed message's assistantContentHash,
    failed calls included (36/36; the failed call of 01a1306c had an empty hash_projected before)."""
    checked = 0
    for session in _manifest()["sessions"]:
        entries = _json_lines(DATA / session["transcript"])
        assistants = [
            e["message"] for e in entries if e.get("type") == "message" and e["message"]["role"] == "assistant"
        ]
        for message, turn in zip(assistants, session["turns"], strict=True):
            for rule, key in (
                (HASH_VERBATIM, "hash_verbatim"),
                (HASH_TIMING_STRIPPED, "hash_timing_stripped"),
                (HASH_PROJECTED, "hash_projected"),
            ):
                assert turn[key] == assistant_content_hash(message, rule), (session["session_id"], turn["index"])
            checked += 1
    assert checked == 36


def test_every_diagnostic_matches_one_log_line() -> None:
    manifest = _manifest()
    lines = [x for x in _log_lines() if x.get("event") == "claude_sdk_oauth_session_continuity"]
    used: set[int] = set()
    for session in manifest["sessions"]:
        entries = _json_lines(DATA / session["transcript"])
        assistants = [
            e["message"] for e in entries if e.get("type") == "message" and e["message"]["role"] == "assistant"
        ]
        assert len(assistants) == len(session["turns"])
        for message, turn in zip(assistants, session["turns"], strict=True):
            diag = _diagnostic(message)
            details = diag["details"]
            matches = [
                i
                for i, line in enumerate(lines)
                if i not in used
                and line["kind"] == details["kind"]
                and line["reason"] == details["reason"]
                and line.get("count") == details.get("deltaMessages")
                and abs(parse_iso_ms(line["ts"]) - diag["timestamp"]) <= 3_000
                and line.get("sessionId", session["session_id"]) == session["session_id"]
            ]
            assert matches, f"no log line for {session['session_id']} turn {turn['index']}"
            used.add(matches[0])
            assert (details["kind"], details["reason"], details.get("deltaMessages")) == (
                turn["kind"],
                turn["reason"],
                turn["count"],
            )
    assert len(used) == len(lines)


def test_ordering_invariant() -> None:
    """assistant.timestamp <= diagnostic.timestamp ~ log.ts <= marker.timestamp <= assistant entry.timestamp"""
    for session in _manifest()["sessions"]:
        entries = [e for e in _json_lines(DATA / session["transcript"]) if "timestamp" in e]
        turns = iter(session["turns"])
        for previous, entry in zip([None, *entries], entries, strict=False):
            if entry.get("type") != "message" or entry["message"]["role"] != "assistant":
                continue
            turn = next(turns)
            message, written = entry["message"], parse_iso_ms(entry["timestamp"])
            diag = _diagnostic(message)["timestamp"]
            logged = parse_iso_ms(turn["log_ts"])
            assert message["timestamp"] <= diag <= logged + 1 and logged <= written
            if turn["marker"]:
                assert previous is not None and previous["data"] == {"schemaVersion": 2, "marker": True}
                assert logged <= parse_iso_ms(previous["timestamp"]) <= written
            for block in message["content"]:
                if block["type"] == "thinking":
                    assert block["startedAt"] <= block["endedAt"] <= written


def test_flatten_payload_bytes_and_counts_match_the_transcript() -> None:
    """The transcript alone determines |H|, the flatten payload and its bytes; they equal what was logged."""
    for session in _manifest()["sessions"]:
        build = _build_for(session["provider"])
        entries = _json_lines(DATA / session["transcript"])
        for (message, context), turn in zip(_contexts(entries, build), session["turns"], strict=True):
            assert _transmitted(context) == turn["sent_messages"]
            details = _diagnostic(message)["details"]
            if details["kind"] not in ("flatten", "bootstrap") or "payloadBytes" not in details:
                continue
            assert details["deltaMessages"] == _transmitted(context)
            blocks = flatten_prompt_blocks(context, _tools_for(build), build)
            deduped, collapsed = dedupe_ultrawork(blocks, build)
            assert payload_bytes(deduped) == details["payloadBytes"] == turn["payload_bytes"]
            assert collapsed == details["collapsedDirectives"]


def test_ulw_prompts_compound_in_flattens() -> None:
    """n ulw prompts so far -> n copies of the 24,871-byte directive in the flatten, n-1 of them collapsed."""
    old = _manifest()["sessions"][0]
    entries = _json_lines(DATA / old["transcript"])
    flattens = 0
    for message, context in _contexts(entries, OLD_BUILD):
        ulw = sum(1 for m in context if m["role"] == "user" and "<ultrawork-mode>" in m["content"][0]["text"])
        details = _diagnostic(message)["details"]
        if details["kind"] != "flatten":
            continue
        flattens += 1
        blocks = flatten_prompt_blocks(context, OLD_TOOLS, OLD_BUILD)
        spans = [s for b in blocks for s in SPAN.findall(b["text"])]
        assert len(spans) == ulw >= 1
        assert {len(s.encode()) for s in spans} == {24_871}
        assert details["collapsedDirectives"] == ulw - 1
    assert flattens >= 10


def test_rewritten_turns_are_visible_in_the_event_recording() -> None:
    """The last message_update lacks the thinking timing that message_end carries: old builds see a rewrite."""
    old = _manifest()["sessions"][0]
    events = _json_lines(DATA / old["events"])
    last_partial: dict[str, Any] | None = None
    commits = []
    for event in events:
        if event["type"] == "message_update":
            last_partial = event["assistantMessageEvent"]["partial"]
        elif event["type"] == "message_end" and event["message"]["role"] == "assistant":
            assert last_partial is not None
            final = event["message"]
            capture = assistant_content_hash(last_partial, HASH_VERBATIM)
            stripped = assistant_content_hash(last_partial, HASH_TIMING_STRIPPED)
            commits.append((capture, stripped, final))
            last_partial = None
    assert len(commits) == len(old["turns"])
    for (capture, stripped, final), turn in zip(commits, old["turns"], strict=True):
        assert capture == turn["capture_hash"]
        assert (capture != assistant_content_hash(final, HASH_VERBATIM)) == (turn["commit"] == "rewritten")
        assert stripped == assistant_content_hash(final, HASH_TIMING_STRIPPED)
        assert turn["volatile_only_rewrite"] == (turn["commit"] == "rewritten")


def test_manifest_locates_log_lines_and_problems() -> None:
    manifest = _manifest()
    for session in manifest["sessions"]:
        for item in [*session["turns"], *session["closes"]]:
            loc = item["log"]
            line = (DATA / loc["log_file"]).read_bytes()[loc["offset"] :].split(b"\n", 1)[0]
            assert json.loads(line)["ts"] == item.get("log_ts", item.get("ts"))
    kinds = {(p["path"].split("/")[0], p["kind"]) for p in manifest["problems"]}
    assert kinds == {
        ("logs", "bad_json"),
        ("logs", "invalid_utf8"),
        ("logs", "torn"),
        ("sessions", "bad_json"),
        ("sessions", "invalid_utf8"),
        ("sessions", "truncated"),
    }
    for problem in manifest["problems"]:
        data = (DATA / problem["path"]).read_bytes()
        line = data[problem["log"]["offset"] :].split(b"\n", 1)[0]
        with pytest.raises((UnicodeDecodeError, ValueError)):
            json.loads(line.decode("utf-8"))
    hostile = manifest["sessions"][2]
    texts = [
        e["message"]["content"][0]["text"]
        for e in _json_lines(DATA / hostile["transcript"])
        if e.get("id") in hostile["hostile_entry_ids"]
    ]
    assert texts and all(s in texts[0] for s in ("[bold red]x[/]", "[link=http://x]", "\x1b]0;pwned\x07", "\u202e"))


def test_sidecar_matches_the_last_marker() -> None:
    new = _manifest()["sessions"][1]
    sidecar = json.loads((DATA / new["sidecar"]).read_text(encoding="utf-8"))
    entries = _json_lines(DATA / new["transcript"])
    markers = [e for e in entries if e.get("customType") == "claude-sdk-oauth-binding"]
    assert sidecar["markerEntryId"] == markers[-1]["id"]
    index = entries.index(markers[-1])
    assistant = entries[index + 1]["message"]
    assert sidecar["assistantContentHash"] == assistant_content_hash(assistant, HASH_PROJECTED)
    last = [t for t in new["turns"] if t["marker"]][-1]
    assert sidecar["sentCount"] == last["sent_messages"]


# -- the live demo's senpi writes ---------------------------------------------------------------------------------


def test_the_recorded_writes_rebuild_the_bundle_but_its_hostile_lines(tmp_path: Path) -> None:
    """The live demo plays the simulator's record of writes: applied in order they give every file of the bundle
    (session.log rotated into session.log.1 at the recorded moment, the sidecars replaced), minus the lines the
    bundle carries on purpose as problems (the live demo's screen starts clean)."""
    manifest = json.loads((DATA / "manifest.json").read_text(encoding="utf-8"))
    hostile = {(p["path"], p["log"]["offset"]) for p in manifest["problems"]}
    plan = senpi_demo.generate()
    times = [w.ms for w in plan.writes]
    assert times == sorted(times) and any(w.op == "rotate" for w in plan.writes)
    for write in plan.writes:
        apply(tmp_path, write.path, write)
    expected: dict[str, bytes] = {}
    for rel, data in _tree(DATA).items():
        if rel == "manifest.json":
            continue
        kept, offset = [], 0
        for line in data.splitlines(keepends=True):
            if (rel, offset) not in hostile:
                kept.append(line)
            offset += len(line)
        expected[rel] = b"".join(kept)
    assert hostile and _tree(tmp_path) == expected


def test_a_bundle_without_its_record_of_writes_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match=r"manifest\.json"):
        load_ops(tmp_path)
    (tmp_path / "manifest.json").write_text("{}")
    with pytest.raises(BundleError, match="no `replay`"):
        load_ops(tmp_path)
