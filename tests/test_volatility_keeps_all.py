"""`VolatilityPolicy.keeps_all(doc)` is True only where `strip(doc)` drops nothing, so `fingerprints` may hash the
message itself instead of its stripped copy: checked against `strip` on every assistant message of the
simulator's corpus and senpi-live, on hand-made documents with volatile keys at every depth, and under policies
with user patterns (a key anywhere: `keeps_all` gives up); the fingerprints equal the ones the stripped copy
gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import core.kernel.volatility as volatility
from core.agents.senpi.fingerprint import fingerprints, hashed_fields
from core.demo.sim.generator import generate
from core.demo.sim.sink import DEFAULT_ROTATE_BYTES
from core.kernel.volatility import DEFAULT_POLICY, VolatilityPolicy
from tests.realdata import messages as transcript_messages

REPO = Path(__file__).resolve().parent.parent
SENPI_LIVE = REPO.parent / "shared" / "realdata" / "senpi-live" / "agent"


def _assistants(root: Path) -> list[dict[str, Any]]:
    return [msg for msg in transcript_messages(sorted(root.rglob("*.jsonl"))) if msg.get("role") == "assistant"]


@pytest.fixture(scope="module")
def messages(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    out = tmp_path_factory.mktemp("corpus") / "agent"
    generate(out, "corpus", seed=7, scale=1.0, rotate_bytes=DEFAULT_ROTATE_BYTES, sessions=21)
    found = _assistants(out) + (_assistants(SENPI_LIVE) if SENPI_LIVE.is_dir() else [])
    assert len(found) > 200
    return found


POLICIES = [
    DEFAULT_POLICY,
    DEFAULT_POLICY.with_patterns(["textSignature"]),
    DEFAULT_POLICY.with_patterns([".usage.cost"]),
    VolatilityPolicy(()),
]


@pytest.mark.parametrize("policy", POLICIES, ids=["default", "any-depth", "usage", "none"])
def test_keeps_all_only_where_strip_drops_nothing(messages: list[dict[str, Any]], policy: VolatilityPolicy) -> None:
    kept = 0
    for msg in messages:
        doc = hashed_fields(msg)
        if policy.keeps_all(doc):
            kept += 1
            assert policy.strip(doc) == doc
    # a rule that may name a key at any depth (a bare key pattern): keeps_all always gives up
    assert kept > 0 if policy.depth is not None else kept == 0


HAND_MADE = [
    {"content": [{"type": "thinking", "thinking": "t", "startedAt": 1}]},
    {"content": [{"type": "toolCall", "partialJson": "{"}]},
    {"content": [{"type": "text", "text": "x", "index": 0}]},
    {"content": [[{"index": 0}]]},  # a key at depth 2 inside a list of lists
    {"index": 0, "content": []},  # a rule's last key at the top: strip keeps it, keeps_all gives up (safe)
    {"content": [{"type": "text", "text": "x", "nested": {"index": 1}}]},  # below the deepest rule: kept by both
]


@pytest.mark.parametrize("doc", HAND_MADE)
def test_hand_made_documents(doc: dict[str, Any]) -> None:
    if DEFAULT_POLICY.keeps_all(doc):
        assert DEFAULT_POLICY.strip(doc) == doc
    elif DEFAULT_POLICY.strip(doc) == doc:
        assert "index" in doc or doc["content"] == [[{"index": 0}]]  # a conservative no, never a wrong yes
    assert not DEFAULT_POLICY.keeps_all(HAND_MADE[0]) and DEFAULT_POLICY.strip(HAND_MADE[0]) != HAND_MADE[0]
    assert DEFAULT_POLICY.keeps_all(HAND_MADE[-1])


def test_fingerprints_equal_the_stripped_copys(messages: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    fast = [fingerprints(msg) for msg in messages]
    monkeypatch.setattr(volatility.VolatilityPolicy, "keeps_all", lambda self, doc: False)
    assert fast == [fingerprints(msg) for msg in messages]


TIMED = [
    {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "startedAt": 1, "endedAt": 2}]},
    {"role": "assistant", "content": [{"type": "thinking", "startedAt": 1, "index": 0}, {"type": "text"}]},
    {"role": "assistant", "content": [{"type": "thinking", "endedAt": 1}, {"type": "toolCall", "partialJson": ""}]},
    {"role": "assistant", "content": [{"type": "thinking", "endedAt": 1}, {"type": "text", "startedAt": 5}]},
    {"role": "assistant", "content": [{"type": "thinking", "endedAt": 1}, [{"type": "thinking", "startedAt": 2}]]},
    {"role": "assistant", "content": [{"type": "thinking", "endedAt": 1, "x": {"startedAt": 2, "index": 3}}]},
]


def test_the_timing_stripped_projection_stands_for_the_stripped_copy(messages: list[dict[str, Any]]) -> None:
    """Where `fingerprints` hashes the timing-stripped projection in place of `strip(verbatim)`, the two are
    equal: every assistant message of the corpus and senpi-live, and hand-made ones with other volatile keys."""
    from core.agents.senpi.fingerprint import TIMING_STRIPPED, _stripped

    taken = 0
    for msg in messages + TIMED:
        verbatim, projected = hashed_fields(msg), hashed_fields(msg, TIMING_STRIPPED)
        for policy in POLICIES:
            got = _stripped(verbatim, projected, policy)
            assert got == policy.strip(verbatim)
            taken += got is projected and projected != verbatim
    assert taken > 0
