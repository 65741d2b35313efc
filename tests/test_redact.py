"""Redaction: each credential shape is replaced and counted; everything else is left exactly as it was."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from report_helpers import T0, enrich, write_agent

from core.engine import Engine
from core.report import ReportOptions, build_report, render
from core.report.redact import Redactor, redact_report, redact_text
from core.report.schema import validate
from tui.cli import main

ANTHROPIC = "sk-ant-api03-Zx9QwErTyUiOp_AsDfGhJkL-0123456789abcdefGHIJ"


@pytest.mark.parametrize(
    ("text", "expected", "kinds"),
    [
        (f"key {ANTHROPIC} end", "key [REDACTED:anthropic_key] end", ["anthropic_key"]),
        ("sk-ant-oat01-AbCdEf0123456789xyz", "[REDACTED:oauth_token]", ["oauth_token"]),
        ("refresh sk-ant-ort01-AbCdEf0123456789", "refresh [REDACTED:oauth_token]", ["oauth_token"]),
        ("curl -H 'Authorization: Bearer abc.DEF-123_xyz'", "curl -H 'Authorization: Bearer [REDACTED:bearer]'",
         ["bearer"]),
        ('{"access_token":"ya29.a0AfH6SMBx-verylongtoken_value"}', '{"access_token":"[REDACTED:oauth_token]"}',
         ["oauth_token"]),
        ('"refreshToken": "r3fr3sh-T0ken-value"', '"refreshToken": "[REDACTED:oauth_token]"', ["oauth_token"]),
        ("AKIAIOSFODNN7EXAMPLE", "[REDACTED:aws_access_key]", ["aws_access_key"]),
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
         "aws_secret_access_key = [REDACTED:aws_secret_key]", ["aws_secret_key"]),
        ("password=hunter2hunter2", "password=[REDACTED:password]", ["password"]),
        ("client_secret: 'abc123def456ghi'", "client_secret: '[REDACTED:secret]'", ["secret"]),
        ('API_KEY="correct horse battery staple"', 'API_KEY="[REDACTED:api_key]"', ["api_key"]),
        ('{\\"apiKey\\": \\"abcd1234efgh5678\\"}', '{\\"apiKey\\": \\"[REDACTED:api_key]\\"}', ["api_key"]),
        ("ghp_" + "a1" * 18, "[REDACTED:github_token]", ["github_token"]),
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
         "[REDACTED:jwt]", ["jwt"]),
        ("postgres://app:s3cretpw@db/x", "postgres://app:[REDACTED:url_password]@db/x", ["url_password"]),
        ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [REDACTED:basic_auth]", ["basic_auth"]),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "[REDACTED:private_key]",
         ["private_key"]),
        # a key inside a Bearer header is counted once, as what it is
        (f"Authorization: Bearer {ANTHROPIC}", "Authorization: Bearer [REDACTED:anthropic_key]", ["anthropic_key"]),
    ],
)  # fmt: skip
def test_secret_shapes_are_replaced_and_named(text: str, expected: str, kinds: list[str]) -> None:
    assert redact_text(text) == (expected, kinds)


@pytest.mark.parametrize(
    "text",
    [
        "2026-08-04T03:10:00.000Z",
        "assistant_rewritten",
        "0198f0a1-aaaa-7bbb-8ccc-000000000001",
        "sessions/--home-dev-shop--/2026-08-04T02-00-00-000Z_0198f0a1.jsonl",
        "tokensBefore=123456789 totalTokens: 99999999 max_tokens=4096 token_count: 12345678",
        "the token is stale; a secret: patience; Bearer authentication scheme",
        "password: undefined; api_key=$API_KEY; secret: ********; token=${{ secrets.TOKEN }}",
        "Basic configuration steps for the AKIA prefix",
        "sk-short and ask-ant-free text",
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "https://example.com/path?q=1 and user@example.com",
        "<ultrawork-mode>\n**MANDATORY**\n</ultrawork-mode>",
        "",
    ],
)
def test_everything_else_is_left_exactly_as_it_was(text: str) -> None:
    assert redact_text(text) == (text, [])


def test_walk_replaces_values_under_secret_keys_and_counts() -> None:
    redactor = Redactor()
    data = {
        "refreshToken": "abcdefghijkl",
        "password": "pass1234",
        "tokens": {"input": 5, "cache_read": 0},
        "payload_bytes": 123,
        "x": ["Bearer abcdefghijklmnop1", None, 1.5, True],
        f"{ANTHROPIC}": "key as a key",
        "token": "short",
    }
    out = redactor.value(data)
    assert out == {
        "refreshToken": "[REDACTED:oauth_token]",
        "password": "[REDACTED:secret]",
        "tokens": {"input": 5, "cache_read": 0},
        "payload_bytes": 123,
        "x": ["Bearer [REDACTED:bearer]", None, 1.5, True],
        "[REDACTED:anthropic_key]": "key as a key",
        "token": "short",
    }
    assert redactor.counts == {"oauth_token": 1, "secret": 1, "bearer": 1, "anthropic_key": 1}
    assert data["refreshToken"] == "abcdefghijkl"  # the input is not modified


def test_redact_report_counts_and_keeps_numbers() -> None:
    report = {"a": 1, "b": [f"k={ANTHROPIC}"], "redactions": {"stale": True}}
    out = redact_report(report)
    assert out["b"] == ["k=[REDACTED:anthropic_key]"] and out["a"] == 1
    assert out["redactions"] == {"enabled": True, "total": 1, "by_kind": {"anthropic_key": 1}}


def built(agent: Path, options: ReportOptions) -> dict:
    engine = Engine([agent])
    engine.drain()
    enrich(engine, diff_value=f"Authorization: Bearer {ANTHROPIC}", long_text=f"x-api-key: {ANTHROPIC} " * 5)
    try:
        return build_report(engine, options)
    finally:
        engine.close()


def test_no_secret_from_the_transcripts_reaches_any_format(tmp_path: Path) -> None:
    agent = write_agent(tmp_path, secret=ANTHROPIC, extra=" password=hunter2hunter2")
    report = built(agent, ReportOptions(include_text=True, now_ms=T0))
    validate(report)
    rendered = {fmt: render(report, fmt) for fmt in ("json", "md", "html")}
    for fmt, text in rendered.items():
        assert ANTHROPIC not in text and ANTHROPIC[:20] not in text, fmt
        assert "hunter2hunter2" not in text, fmt
    assert report["redactions"]["enabled"] is True
    by_kind = report["redactions"]["by_kind"]
    assert by_kind["anthropic_key"] >= 3 and by_kind["password"] >= 2  # diff sides, message text, cwd, model
    assert "[REDACTED:anthropic_key]" in rendered["md"] and "[REDACTED:anthropic_key]" in rendered["html"]
    # the rewritten turn's message text is included (--include-text) and redacted
    assert "rewritten answer [REDACTED:anthropic_key]" in report["turns"][2]["content"]["text"]


def test_no_redact_keeps_the_data_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = write_agent(tmp_path, extra=" password=hunter2hunter2")
    assert main(["report", str(agent), "--no-redact", "--format", "json"]) == 0
    report = orjson.loads(capsys.readouterr().out)
    assert report["redactions"] == {"enabled": False, "total": 0, "by_kind": {}}
    assert report["sessions"][0]["cwd"] == "/home/dev/shop password=hunter2hunter2"
    assert main(["report", str(agent), "--format", "json"]) == 0
    redacted = orjson.loads(capsys.readouterr().out)
    assert redacted["sessions"][0]["cwd"] == "/home/dev/shop password=[REDACTED:password]"
    assert redacted["redactions"]["total"] >= 1


def test_keys_that_redact_alike_merge_so_totals_still_add_up() -> None:
    other = ANTHROPIC.replace("Zx9", "Qq1")
    counts = {"by_kind": {"delta": 1, f"fork {ANTHROPIC}": 2, f"fork {other}": 3}}
    out = Redactor().value(counts)
    assert out == {"by_kind": {"delta": 1, "fork [REDACTED:anthropic_key]": 5}}


def test_redact_report_consuming_the_turns_gives_the_same_report() -> None:
    """The builder's in-place path (no second copy of the turns at the peak) is the copying path's twin."""

    def report() -> dict:
        return {
            "schema": "continuity.report/1",
            "turns": [{"id": f"t{i}", "why": f"k={ANTHROPIC}", "n": i} for i in range(3)],
            "sessions": [{"title": f"Bearer {ANTHROPIC}"}],
            "redactions": {},
        }

    copied, consumed = redact_report(report()), redact_report(report(), consume=True)
    assert consumed == copied and list(consumed) == list(copied)
    assert consumed["turns"][0]["why"] == "k=[REDACTED:anthropic_key]"
    assert consumed["redactions"]["total"] == 4


_pieces = st.sampled_from(
    [ANTHROPIC, "Bearer abcdefgh12345678", "api\"key=hunter2hunter2", "api\\key: s3cr3tvalue99", "tokens",
     "password", "ſecret", "\u212a", "\n", "\x00", "é", "x", " ", "token=", "://u:pw12345@h", "eyJ", "acca",
     " prompt tokens", "pre_tokens", "tokenſ", "tokenß", "TOKENS", "token\"", "passphrase=", "masterKey: "]
)  # fmt: skip
_strings = st.lists(_pieces | st.text(max_size=8), max_size=6).map("".join)
_values = st.recursive(
    st.none() | st.integers() | _strings,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_strings, inner, max_size=3),
    max_leaves=10,
)


@settings(max_examples=400, deadline=None)
@given(turn=st.dictionaries(_strings | st.sampled_from(["tokens", "pre_tokens", "api_token"]), _values, max_size=4))
def test_the_turn_gate_never_skips_what_the_walk_would_redact(turn: dict) -> None:
    gated, walked = Redactor(), Redactor()
    assert gated.turn(turn) == walked.value(turn)
    assert gated.counts == walked.counts


@settings(max_examples=600, deadline=None)
@given(text=_strings)
def test_the_fast_gate_is_a_superset_of_the_trigger_regex(text: str) -> None:
    from core.report.redact import _TRIGGER, _may_hold_secret

    if _TRIGGER.search(text):
        assert _may_hold_secret(text)


def test_every_key_word_of_the_generic_rule_opens_the_gate() -> None:
    """Each spelling the generic rule takes as a secret's key holds one of its keywords: `passphrase`, `masterkey`,
    `encryptionkey` and `clientkey` held none, and `passphrase=…` left every report unredacted."""
    from core.report.redact import _SECRET_KEY

    words = ["token", "secret", "password", "passwd", "passphrase", "apikey", "credential", "credentials", "creds"]
    words += [f"{w}{sep}key" for w in ("api", "private", "auth", "secret", "access", "signing", "master",
                                       "encryption", "client") for sep in ("", "_", "-")]  # fmt: skip
    for word in words:
        for spelled in (word, word.upper(), word.title()):
            assert _SECRET_KEY.match(spelled), spelled
            out, hits = redact_text(f"{spelled}=hunter2hunter2")
            assert "hunter2hunter2" not in out and len(hits) == 1, (spelled, out)
            walker = Redactor()
            assert walker.turn({spelled: "hunter2hunter2"})[spelled].startswith("[REDACTED:"), spelled


def test_the_turn_gate_passes_token_counts_and_stops_at_a_token_key() -> None:
    """The words `tokens` (a count's key, a verdict's "N prompt tokens") open no walk; a key or a value that
    ends in `token` still does, and so does any other keyword beside them."""
    from core.report.redact import _json_may_hold_secret

    why = {"why": "first call after a compact boundary: 1200 prompt tokens", "tokens": {"input": 3},
           "cache": {"compaction": {"pre_tokens": 5, "post_tokens": None}}, "x": "TOKENS ſ Tokenſ"}  # fmt: skip
    assert not _json_may_hold_secret(orjson.dumps(why))
    for opened in ({"api_token": "x"}, {"why": "token: abcdefgh1234"}, {"why": "tokens and a secret"},
                   {"why": "tokensAKIA"}, {"why": "token"}):  # fmt: skip
        assert _json_may_hold_secret(orjson.dumps({**why, **opened})), opened
    gated = Redactor()
    leak = {**why, "why": "token=abcdefgh1234 then 3 tokens"}
    assert gated.turn(leak)["why"] == "token=[REDACTED:secret] then 3 tokens" and gated.counts["secret"] == 1


@settings(max_examples=600, deadline=None)
@given(value=_values)
def test_the_ascii_turn_gate_decides_as_the_general_one(value: object) -> None:
    """The bytes DFA and the two `token` counts (ASCII text) say what the overlapping search over the folded text
    says; non-ASCII text takes the general path itself."""
    from core.report.redact import _json_may_hold_secret, _json_text_may_hold_secret

    try:
        data = orjson.dumps(value)
    except orjson.JSONEncodeError:
        return
    assert _json_may_hold_secret(data) == _json_text_may_hold_secret(data.decode())


def test_the_fast_gate_knows_what_ignorecase_folds() -> None:
    from core.report.redact import _TRIGGER, _may_hold_secret

    for text in ("paſſword", "\u212aey api", "aıda", "AİDA", "Sk-", "BEARER", "api-KEY", "ghS_"):
        assert bool(_TRIGGER.search(text)) <= _may_hold_secret(text), text


def test_a_google_key_before_a_dash_and_a_secret_key_repeated_in_a_path_are_replaced() -> None:
    """A senpi session dir ends in `--`, a dash the Google key's own alphabet has; a file named like its
    directory repeats `key = value`: the first value stops before the second key, so both are replaced."""
    google = "AIzaSyD9tSrke72PouQMnMXa7eZSW0jkFMBWY_x"
    out, hits = redact_text(f"sessions/--home-{google}--/{google}.jsonl")
    assert google not in out and hits == ["google_api_key", "google_api_key"], out
    aws = "aws_secret_access_key = wJalrXUtnFEMIzK7MDENGzbPxRfiCYzEXAMPLEKEY"
    out, hits = redact_text(f"sessions/--k {aws}--/{aws}.jsonl")
    assert "wJalrXUtnFEMIzK7" not in out and len(hits) == 2, out


def test_each_keyword_calls_exactly_the_rules_that_name_it() -> None:
    """`_CALLS` (built from each rule's keywords, for start-up) is the plain definition: per keyword, every rule
    whose keywords hold it, in rule order, then the base64 pass when it is a base64 fragment."""
    from core.report.redact import _B64_WORDS, _CALLS, _TRIGGER_WORDS, RULES

    plain = tuple(
        tuple(i for i, rule in enumerate(RULES) if word in rule.keywords) + ((-1,) if word in _B64_WORDS else ())
        for word in _TRIGGER_WORDS
    )
    assert plain == _CALLS


@settings(max_examples=600, deadline=None)
@given(key=_strings | st.sampled_from(["refreshToken", "ſecret", "API_\u212aEY", "aws_secret_access_key", "x" * 41]))
def test_the_secret_key_gate_decides_as_the_key_pattern(key: str) -> None:
    """`field_secret` asks the keyword automaton before the key pattern (so a report whose keys hold no keyword
    never compiles it): the same kinds as the pattern alone, folds included."""
    from core.report.redact import _SECRET_KEY, _looks_secret, field_secret

    value = "hunter2hunter2"
    plain = None
    if _SECRET_KEY.match(key) and _looks_secret(value):
        plain = "oauth_token" if any(w in key.lower() for w in ("access", "refresh", "oauth")) else "secret"
    assert field_secret(key, value) == plain
