"""senpi's digest: every vector of the fixture file and of the reference tables, plus the JS rules behind them."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from core.agents.senpi.fingerprint import (
    PROJECTED,
    TIMING_STRIPPED,
    VERBATIM,
    assistant_content_hash,
    fingerprints,
    sent_message_hash,
)
from core.kernel.canonical import UNDEFINED, canonical_json, digest, js_number, js_string
from core.kernel.collation import collation_key, locale_compare
from core.kernel.hashing import HashChain, chain_digest, chain_extend, chain_prefix_len, prefix_digest, stable_xxh3

# Node-computed vectors (the team's shared fixture, copied into the repo so the tests never skip)
VECTORS = Path(__file__).resolve().parent / "data" / "senpi-digest-vectors.json"
DATA = json.loads(VECTORS.read_text())


@pytest.mark.parametrize("index", range(len(DATA["digests"]) if DATA else 0))
def test_fixture_digest_vectors(index: int) -> None:
    vector = DATA["digests"][index]
    assert canonical_json(vector["input"]) == vector["canonical"]
    assert digest(vector["input"]) == vector["sha256"]


def test_fixture_key_order() -> None:
    keys, expected = DATA["keyOrder"]["keys"], DATA["keyOrder"]["sorted"]
    assert sorted(keys, key=collation_key) == expected
    # and in an object, through the serializer
    obj = {key: i for i, key in enumerate(keys)}
    assert list(json.loads(canonical_json(obj))) == expected


def test_reference_key_order_examples() -> None:
    # senpi-formats §3.2
    keys = ["file_path", "filePath", "Zeta", "alpha", "_x", "a1", "A2"]
    assert sorted(keys, key=collation_key) == ["_x", "a1", "A2", "alpha", "file_path", "filePath", "Zeta"]
    assert locale_compare("a", "B") == -1 and locale_compare("b", "A") == 1 and locale_compare("x", "x") == 0


USER = {"role": "user", "content": [{"type": "text", "text": "hello"}]}
TOOL = {"role": "toolResult", "toolCallId": "toolu_01", "toolName": "bash", "content": [{"type": "text", "text": "ok"}]}
H_USER = "605b2cd3bceaf2d08e7ba22785ed603b5cce260a16f3215a2b9751da809810e2"
H_TOOL = "b7ff945a45fea3d9bfdbe5c7bcf434d606227974a6b585c44e42596389f93990"


def test_reference_sent_message_vectors() -> None:
    # senpi-formats §3.3: fields outside the hashed set (timestamp, isError, details) do not count
    assert sent_message_hash({**USER, "timestamp": 1785819137555}) == H_USER
    assert sent_message_hash({**TOOL, "isError": False, "details": {"x": 1}, "timestamp": 5}) == H_TOOL
    assert prefix_digest([H_USER, H_TOOL]) == "4ad0220175c5862a54149567ed2412abe685c31ae8bb2ae95d9dc6b7b09e881e"
    assert prefix_digest([H_USER]) == "9a60591987f437dd57ca903c8471d99999f550180f048dc0fa5bf0248613c245"
    assert prefix_digest([]) == "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
    assert sent_message_hash({"role": "user", "content": "hello"}) == (
        "f4f7e767b9a1966921d93f1818bb0238c1633ed715f29a789b4e3a624ab16512"
    )
    assert digest({"file_path": 1, "filePath": 2, "Zeta": 3, "alpha": 4, "_x": 5, "a1": 6, "A2": 7}) == (
        "113e25518a7804937dac5a98ad0818de97deee2e0d0a4670fd9d9547bfd5acde"
    )


def test_reference_environment_context_vectors() -> None:
    # senpi-newer §5.2
    env = (
        "<environment_context>\n  <cwd>/home/alice/proj</cwd>\n  <current_date>2026-10-10</current_date>\n"
        "</environment_context>"
    )
    folded = {"role": "user", "content": [{"type": "text", "text": env}, {"type": "text", "text": "hello"}]}
    alone = {"role": "user", "content": [{"type": "text", "text": env}]}
    assert sent_message_hash(folded) == "e0f9cb3d5ab8204926db0b831e90036f49283956a77fbbdeace4b4c9cea27f4c"
    assert sent_message_hash(alone) == "5493eb2dbdd859c1b28b7aa2eae0dc508e8e19866f23f9bda8b3b1598a92ee56"


BASE = {"role": "assistant", "api": "claude-sdk-oauth", "provider": "claude-sdk-oauth", "model": "claude-opus-4-8"}
THINK = {"type": "thinking", "thinking": "t", "thinkingSignature": "sig"}
TIMED = {**THINK, "startedAt": 1785819137555, "endedAt": 1785819137555}
HI = {"type": "text", "text": "hi"}
CALL = {"type": "toolCall", "id": "toolu_01", "name": "bash", "arguments": {"command": "ls", "timeout": 10}}
SUB = "anthropic-subscription"
A = "62b6a44e209c0ba7ff1e5c7627a381a2babf5fc18d8fe998da412d202351f138"

ASSISTANT_VECTORS = [
    # senpi-formats §3.5
    ([THINK, HI], None, VERBATIM, A),
    ([THINK, HI], None, TIMING_STRIPPED, A),
    ([TIMED, HI], None, TIMING_STRIPPED, A),
    ([TIMED, HI], None, VERBATIM, "e1ed41dc099f9c33ad42bd860232df7a9059433af4bc4603eeebff5179c7f808"),
    ([TIMED, {**HI, "index": 1}], None, TIMING_STRIPPED, "ecc1cba16239dd9fd765e8b9d7996fca5f0651f3c892803ed88c6126288e5954"),
    ([TIMED, {**HI, "index": 1}], None, VERBATIM, "156486c33a667d9606c1e7004281c450948967051261fc18312b5a7fafd6dfda"),
    ([CALL], None, VERBATIM, "56f94444a659b9b42243fdd1bf06e1d4441fdb87a27dfa9a2a998d34520c5c49"),
    # senpi-newer §5.1
    ([THINK, HI], None, PROJECTED, A),
    ([THINK, HI], SUB, PROJECTED, "4145e91c70544a588e20a5e1b1e42a5667fe659b45b06cf039fcd514c091e9d1"),
    ([TIMED, {**HI, "index": 1}], None, PROJECTED, A),
    ([THINK, {**HI, "textSignature": "ts1"}], None, TIMING_STRIPPED,
     "4581af8c2e28d734ced1813b9b66636dc12b224d67113b4f3a61e9174ae33160"),
    ([THINK, {**HI, "textSignature": "ts1"}], None, PROJECTED, A),
    ([{**THINK, "redacted": True}, HI], None, TIMING_STRIPPED,
     "bebb6e462273d3b135121472fe6e5a75eaf2ee71ede48071db636181992a8ea4"),
    ([{**THINK, "redacted": True}, HI], None, PROJECTED, A),
    ([{**CALL, "partialJson": "{}"}], None, TIMING_STRIPPED,
     "e6c059116a1d0ffc04c30ee926f297178b2da11b755618fced37b9c426f75e9f"),
    ([{**CALL, "partialJson": "{}"}], None, PROJECTED, "56f94444a659b9b42243fdd1bf06e1d4441fdb87a27dfa9a2a998d34520c5c49"),
    ([CALL], SUB, PROJECTED, "b14990f134122d213d7eeb4a64aa1a024c805c9a0ef4b7482c79bb933e502fa3"),
]  # fmt: skip


@pytest.mark.parametrize(("content", "provider", "rule", "expected"), ASSISTANT_VECTORS)
def test_reference_assistant_vectors(content: list, provider: str | None, rule: str, expected: str) -> None:
    message = {**BASE, "content": content, "usage": {"input": 1}, "stopReason": "stop", "timestamp": 1}
    if provider:
        message["provider"] = provider
    assert assistant_content_hash(message, rule) == expected


def test_reference_assistant_canonical_text() -> None:
    from core.agents.senpi.fingerprint import hashed_fields

    message = {**BASE, "provider": SUB, "content": [THINK, HI]}
    assert canonical_json(hashed_fields(message, PROJECTED)) == (
        '{"api":"claude-sdk-oauth","content":[{"thinking":"t","thinkingSignature":"sig","type":"thinking"},'
        '{"text":"hi","type":"text"}],"model":"claude-opus-4-8","provider":"anthropic-subscription","role":"assistant"}'
    )


def test_undefined_and_missing_fields() -> None:
    assert canonical_json({"a": UNDEFINED, "b": 1}) == '{"b":1}'
    assert canonical_json([UNDEFINED, None]) == "[null,null]"
    # a message without `api`: senpi reads undefined, which the digest drops
    msg = {"role": "assistant", "provider": "p", "model": "m", "content": []}
    assert canonical_json(__import__("core.agents.senpi.fingerprint", fromlist=["x"]).hashed_fields(msg)) == (
        '{"content":[],"model":"m","provider":"p","role":"assistant"}'
    )
    with pytest.raises(ValueError):
        canonical_json(UNDEFINED)


@pytest.mark.parametrize(
    ("value", "text"),
    [(1.0, "1"), (-0.0, "0"), (1e21, "1e+21"), (1e-7, "1e-7"), (1.5, "1.5"), (1e-6, "0.000001"),
     (123456789012345680000.0, "123456789012345680000"), (2**53 + 1, "9007199254740992"), (1e20, "100000000000000000000"),
     (-1.5e-10, "-1.5e-10"), (float("nan"), "null"), (float("inf"), "null"), (5e-324, "5e-324"), (True, "true")],
)  # fmt: skip
def test_js_numbers(value: float, text: str) -> None:
    assert canonical_json(value) == text
    if not isinstance(value, bool):
        assert js_number(value) == text


def test_js_strings() -> None:
    assert js_string("a\u0000\u001f\u007f") == '"a\\u0000\\u001f\u007f"'
    assert js_string('\b\f\n\r\t"\\') == '"\\b\\f\\n\\r\\t\\"\\\\"'
    assert js_string("\u2028\u2029é😀") == '"\u2028\u2029é😀"'
    assert js_string("x\ud800y") == '"x\\ud800y"'


def test_array_index_keys_come_first() -> None:
    # Object.fromEntries puts integer-like keys first, ascending, whatever localeCompare said
    assert canonical_json({"b": 1, "10": 2, "2": 3, "_": 4, "01": 5}) == '{"2":3,"10":2,"_":4,"01":5,"b":1}'


def test_circular_and_repeated_values() -> None:
    shared = {"x": 1}
    assert canonical_json({"a": shared, "b": shared}) == '{"a":{"x":1},"b":{"x":1}}'
    loop: dict = {"k": 1}
    loop["self"] = loop
    assert canonical_json(loop) == '{"k":1,"self":"[circular]"}'


def test_hash_chain_prefix_digests_and_lengths() -> None:
    hashes = [sent_message_hash({"role": "user", "content": f"m{i}"}) for i in range(6)]
    chain = chain_extend(None, hashes)
    assert isinstance(chain, HashChain) and chain.length == 6
    for n in range(7):
        assert chain_digest(chain, n) == prefix_digest(hashes, n)
    other = chain_extend(chain_extend(None, hashes[:3]), ["0" * 64, *hashes[4:]])
    assert chain_prefix_len(chain, other) == 3
    assert chain_prefix_len(chain, chain.ancestor(4)) == 4
    assert chain_prefix_len(None, chain) == 0


def test_stable_fingerprint_ignores_volatile_fields_only() -> None:
    plain = {**BASE, "content": [THINK, HI]}
    noisy = {**BASE, "content": [TIMED, {**HI, "index": 1}]}
    assert stable_xxh3(plain) == stable_xxh3(noisy)
    assert len(stable_xxh3(plain)) == 16
    changed = {**BASE, "content": [THINK, {"type": "text", "text": "hi!"}]}
    assert stable_xxh3(plain) != stable_xxh3(changed)
    prints = fingerprints(noisy)
    assert prints["senpi_sha256"] == "ecc1cba16239dd9fd765e8b9d7996fca5f0651f3c892803ed88c6126288e5954"
    assert prints["senpi_sha256_verbatim"] == "156486c33a667d9606c1e7004281c450948967051261fc18312b5a7fafd6dfda"
    assert prints["senpi_sha256_projected"] == A


NODE = shutil.which("node")


def _node_compare(pairs: list[tuple[str, str]]) -> list[int]:
    script = (
        "const a=JSON.parse(require('fs').readFileSync(0,'utf8'));"
        "console.log(JSON.stringify(a.map(([x,y])=>Math.sign(x.localeCompare(y)))))"
    )
    out = subprocess.run([NODE or "node", "-e", script], input=json.dumps(pairs), capture_output=True, text=True,
                         check=True, timeout=60).stdout  # fmt: skip
    return json.loads(out)


@pytest.mark.skipif(NODE is None, reason="Node.js not installed: the ICU oracle is optional")
def test_collation_matches_node_for_latin() -> None:
    """Every pair of characters U+0000–U+017F, and random identifier-like strings, order as Node orders them."""
    chars = [chr(i) for i in range(0x180)]
    pairs = [(a, b) for a in chars for b in chars]
    rng = random.Random(7)
    alphabet = list("aAbBzZ_-. $@0192\t") + list("éÉèøæßſłðþıĳ\u0301\u0308")
    words = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))) for _ in range(2000)]
    pairs += [(rng.choice(words), rng.choice(words)) for _ in range(20000)]
    expected = _node_compare(pairs)
    wrong = [(a, b) for (a, b), e in zip(pairs, expected, strict=True) if locale_compare(a, b) != e]
    assert wrong == []


@pytest.mark.skipif(NODE is None, reason="Node.js not installed: the JSON oracle is optional")
def test_canonical_json_matches_node_stringify() -> None:
    rng = random.Random(11)
    values = [
        rng.choice([0.1, 1e21, 1e-7, 2.5e-8, 123.456, -7.0, 1e300, 2**60, 3, "é\u2028\x01", "x"]) for _ in range(40)
    ]
    obj = {f"{rng.choice(['a', 'B', '_', '1', '$'])}{i}": v for i, v in enumerate(values)}
    script = (
        "const v=JSON.parse(require('fs').readFileSync(0,'utf8'));"
        "const s=(x)=>x===null||typeof x!=='object'?x:Array.isArray(x)?x.map(s):"
        "Object.fromEntries(Object.entries(x).sort(([a],[b])=>a.localeCompare(b)).map(([k,y])=>[k,s(y)]));"
        "process.stdout.write(JSON.stringify(s(v)))"
    )
    out = subprocess.run([NODE or "node", "-e", script], input=json.dumps(obj), capture_output=True, text=True,
                         check=True, timeout=60).stdout  # fmt: skip
    assert canonical_json(obj) == out
