"""Take secrets out of a report before it leaves the machine (on by default for every format).

A report is attached to public bug reports, and the strings it carries come from transcripts: tool-call
arguments (`curl -H "Authorization: Bearer …"`), thinking text, error messages, paths. Each pattern below
matches one well-known credential shape; the generic rule only fires on a value that follows a key *named*
like a secret (`token`, `secret`, `password`, `api_key`, …, at the end of the key name, so `tokensBefore`
or `totalTokens` never match) and looks like one (8+ characters, not a number, not a placeholder).
The replacement names the kind, `[REDACTED:bearer]`, so a reader still sees what was there; the report
carries the count by kind. Everything that matches no pattern is returned unchanged, character for character.
"""

from __future__ import annotations

import base64
import re
from collections import Counter
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import orjson
from ahocorasick_rs import AhoCorasick, BytesAhoCorasick, Implementation
from msgspec import Struct, field

from core.report.stream import TurnStream
from core.sanitize import clip, display

MARK = "[REDACTED:{}]"

_SECRET_KEY_WORDS = (
    r"(?:token|secret|password|passwd|passphrase|api[_-]?key|apikey|private[_-]?key|auth[_-]?key"
    r"|(?:secret|access|signing|master|encryption|client)[_-]?key|credentials?|creds)"
)
_PLACEHOLDERS = frozenset(
    {
        "undefined",
        "null",
        "none",
        "true",
        "false",
        "redacted",
        "<redacted>",
        "[redacted]",
        "changeme",
        "password",
        "xxxxxxxx",
    }
)


def _mark(kind: str) -> str:
    return MARK.format(kind)


class _Rule(Struct, frozen=True):
    kind: str
    pattern: re.Pattern[str]
    #: lower-case substrings one of which every match contains (gitleaks' `keywords`): a string holding none of
    #: any rule's keywords is returned without running a single regex (most strings: ids, times, reasons)
    keywords: tuple[str, ...]
    #: the gitleaks rule ids (`config/gitleaks.toml`) whose shape this rule follows; () for rules of our own
    gitleaks: tuple[str, ...] = ()
    #: group index of the secret inside the match (0 = the whole match); the rest of the match is kept
    group: int = 0
    #: extra test on the secret; a rejected match is left as it is
    accept: Callable[[str], bool] | None = None
    #: kind chosen from the match (the generic key rule tells OAuth tokens and passwords apart by key name)
    classify: Callable[[re.Match[str]], str] | None = None


def _looks_secret(value: str) -> bool:
    """Reject what a secret-named key often holds that is not a secret: numbers, placeholders, references."""
    if value.startswith(("[REDACTED", "$", "%", "{", "<", "process.env", "os.environ")):
        return False
    if value.isdigit() or len(set(value)) <= 1 or value.lower() in _PLACEHOLDERS:
        return False
    return not set(value) <= set("*•x.-_")


def _looks_random(value: str) -> bool:
    """A free-text value after a secret-named key or `Bearer`: prose words ("Bearer authentication",
    "secret: patience") are not secrets; credentials mix in digits or symbols, or are long. (gitleaks' generic
    rule asks for a Shannon entropy of 3.5 bits instead; that misses `password=hunter2hunter2`, 2.8 bits.)"""
    if not _looks_secret(value):
        return False
    return len(value) >= 20 or not value.isalpha()


def _generic_kind(match: re.Match[str]) -> str:
    key = match.group("key").lower()
    if key.endswith("key"):  # `api_key`, `secret_access_key`: a key, whatever else its name says
        return "aws_secret_key" if "aws" in key else "api_key"
    if any(word in key for word in ("access", "refresh", "id_token", "idtoken", "oauth")):
        return "oauth_token"
    if "pass" in key or "cred" in key:
        return "password"
    return "secret"


#: the generic rule's keywords: its key words as they occur folded (`api_key`, `ACCESS-KEY`, `privateKey`); every
#: spelling `_SECRET_KEY_WORDS` accepts holds one of them (`passphrase`, `masterKey`, `encryptionkey` and `clientkey`
#: had none, so the gate let `passphrase=…` through unredacted)
_GENERIC_KEYWORDS = (
    "token", "secret", "passw", "passphrase", "cred",
    *(f"{word}{sep}key" for word in ("api", "private", "auth", "access", "signing", "master", "encryption", "client")
      for sep in ("", "_", "-")),
)  # fmt: skip

#: no letter, digit, `_` or `-` right before a token: `xsk-…` or `my_ghp_…` is not the token's start
_B = r"(?<![A-Za-z0-9_-])"
#: nor right after it: a token is never the first part of a longer word
_E = r"(?![A-Za-z0-9_-])"


class _Lazy:
    """A pattern compiled the first time it is used: the rules are ~40 patterns, and a run whose strings hold
    none of their keywords (most) never needs one (they cost a one-line report ~10 ms of start-up)."""

    __slots__ = ("_args", "_compiled")

    def __init__(self, pattern: str, flags: int) -> None:
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(*self._args)
        return getattr(compiled, name)


def _r(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return _Lazy(pattern, flags)  # type: ignore[return-value]


#: a dict key whose string value is a secret as a whole (`"refreshToken": "…"`); only a key holding a keyword of the
#: generic rule can match (each of its key words holds one), so most reports never compile it
_SECRET_KEY = _r(rf"(?i)^[A-Za-z0-9_.-]{{0,40}}{_SECRET_KEY_WORDS}$")


RULES: tuple[_Rule, ...] = (
    _Rule(
        "private_key",
        _r(
            # lazy name parts: a greedy one runs on past the first END into the next key's BEGIN line
            r"(?i)-----BEGIN[ A-Z0-9_-]{0,100}?PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.*?-----END[ A-Z0-9_-]{0,100}?PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s\u23ce]*)",
            re.S,
        ),
        ("private key",),
        ("private-key",),
    ),
    # Anthropic OAuth access (oat) and refresh (ort) tokens, then every other Anthropic key
    _Rule("oauth_token", _r(r"sk-ant-o[ar]t\d*-[A-Za-z0-9_-]{8,}"), ("sk-ant-",)),
    _Rule(
        "anthropic_key", _r(r"sk-ant-[A-Za-z0-9_-]{8,}"), ("sk-ant-",), ("anthropic-api-key", "anthropic-admin-api-key")
    ),
    _Rule("api_key", _r(_B + r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"), ("sk-",), ("openai-api-key",)),
    _Rule(
        "github_token",
        _r(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,})"),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        ("github-pat", "github-oauth", "github-app-token", "github-refresh-token", "github-fine-grained-pat"),
    ),
    _Rule(
        "gitlab_token",
        _r(_B + r"(?:gl(?:pat|ptt|dt|rt|ft|imt|agent|oas|soat|cbt|ffct)-[0-9A-Za-z_.-]{20,}|GR1348941[\w-]{20,})"),
        (
            "glpat-",
            "glptt-",
            "gldt-",
            "glrt-",
            "glft-",
            "glimt-",
            "glagent-",
            "gloas-",
            "glsoat-",
            "glcbt-",
            "glffct-",
            "gr1348941",
        ),
        (
            "gitlab-pat",
            "gitlab-pat-routable",
            "gitlab-ptt",
            "gitlab-deploy-token",
            "gitlab-runner-authentication-token",
            "gitlab-feed-token",
            "gitlab-incoming-mail-token",
            "gitlab-kubernetes-agent-token",
            "gitlab-oauth-app-secret",
            "gitlab-scim-token",
            "gitlab-cicd-job-token",
            "gitlab-feature-flag-client-token",
            "gitlab-rrt",
        ),
    ),
    _Rule(
        "slack_token",
        _r(r"(?<![A-Za-z0-9])(?:xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})"),
        ("xox", "xapp-"),
        ("slack-bot-token", "slack-user-token", "slack-app-token", "slack-legacy-token", "slack-config-access-token"),
    ),
    _Rule(
        "slack_webhook",
        _r(r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}"),
        ("hooks.slack.com",),
        ("slack-webhook-url",),
    ),
    _Rule(
        "aws_access_key",
        _r(r"(?<![A-Z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AIDA|AROA)[0-9A-Z]{16}(?![A-Z0-9])"),
        ("a3t", "akia", "asia", "abia", "acca", "aida", "aroa"),
        ("aws-access-token",),
    ),
    _Rule(
        "aws_secret_key",
        _r(
            r"(?i)(aws_?secret_?(?:access_?)?key|secret_?access_?key)(\\?[\"']?\s*[:=]\s*\\?[\"']?)"
            r"([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        ("secret",),
        group=3,
    ),
    # a `-` may follow (a senpi session dir `--…-AIza…--`): the key's own alphabet has it, so a longer run keeps
    # its tail, and the 39 characters that are the key are replaced
    _Rule("google_api_key", _r(r"(?<![A-Za-z0-9_])AIza[\w-]{35}(?![A-Za-z0-9_])"), ("aiza",), ("gcp-api-key",)),
    _Rule("oauth_token", _r(r"(?<![A-Za-z0-9])(?:ya29\.[0-9A-Za-z_-]{20,}|1//0[0-9A-Za-z_-]{20,})"), ("ya29", "1//")),
    _Rule(
        "stripe_key",
        _r(_B + r"(?:sk|rk|pk)_(?:test|live|prod)_[A-Za-z0-9]{10,99}(?![A-Za-z0-9])"),
        ("sk_live", "sk_test", "sk_prod", "rk_live", "rk_test", "rk_prod", "pk_live"),
        ("stripe-access-token",),
    ),
    _Rule(
        "huggingface_token",
        _r(r"(?<![A-Za-z0-9_])(?:hf_|api_org_)[A-Za-z0-9]{30,}(?![A-Za-z0-9])"),
        ("hf_", "api_org_"),
        ("huggingface-access-token", "huggingface-organization-api-token"),
    ),
    _Rule(
        "npm_token", _r(r"(?i)(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"), ("npm_",), ("npm-access-token",)
    ),
    _Rule("pypi_token", _r(r"pypi-AgEIcHlwaS5vcmc[\w-]{50,}"), ("pypi-",), ("pypi-upload-token",)),
    _Rule(
        "api_key",
        _r(
            r"(?<![A-Za-z0-9_])(?:SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}|do[opr]_v1_[a-f0-9]{64}"
            r"|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}|lin_api_[A-Za-z0-9]{40}|dp\.pt\.[A-Za-z0-9]{43}"
            r"|glc_[A-Za-z0-9+/]{32,400}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|PMAK-[a-f0-9]{24}-[a-f0-9]{34}"
            r"|hv[sb]\.[\w-]{90,120}|AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}|dapi[a-f0-9]{32})"
            r"(?![A-Za-z0-9])"
        ),
        (
            "sg.",
            "_v1_",
            "shpat_",
            "shpss_",
            "shpca_",
            "shppa_",
            "lin_api_",
            "dp.pt.",
            "glc_",
            "glsa_",
            "pmak-",
            "hvs.",
            "hvb.",
            "age-secret-key-1",
            "dapi",
        ),
        (
            "sendgrid-api-token",
            "digitalocean-pat",
            "digitalocean-access-token",
            "digitalocean-refresh-token",
            "shopify-access-token",
            "shopify-shared-secret",
            "shopify-custom-access-token",
            "shopify-private-app-access-token",
            "linear-api-key",
            "doppler-api-token",
            "grafana-cloud-api-token",
            "grafana-service-account-token",
            "postman-api-token",
            "vault-service-token",
            "vault-batch-token",
            "age-secret-key",
            "databricks-api-token",
        ),
    ),
    _Rule(
        "jwt",
        _r(_B + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.(?:[A-Za-z0-9_-]{8,}={0,2})?"),
        ("eyj",),
        ("jwt",),
    ),
    _Rule(
        "bearer",
        _r(r"(?i)\b(bearer)(\s+)([A-Za-z0-9._~+/-]{8,}=*)"),
        ("bearer",),
        ("curl-auth-header",),
        group=3,
        accept=_looks_random,
    ),
    _Rule(
        "basic_auth",
        _r(r"(?i)(authorization\\?[\"']?\s*[:=]\s*\\?[\"']?basic\s+)([A-Za-z0-9+/]{8,}={0,2})"),
        ("basic",),
        ("curl-auth-header",),
        group=2,
    ),
    _Rule(
        "password",
        _r(r"\bcurl\b[^\n\u23ce]{0,200}?\s(?:-u|--user)(?:=|\s+)(['\"]?)[^\s:'\"]{1,64}:([^\s'\"]{3,})\1"),
        ("curl",),
        ("curl-auth-user",),
        group=2,
        accept=_looks_secret,
    ),
    _Rule(
        "url_password",
        # one slash too: a path holding a URL (`Path` folds `//`)
        _r(r"(?i)\b([a-z][a-z0-9+.-]{1,20}:/{1,2}[^\s:/@]{1,64}:)([^\s@/]{3,})(?=@)"),
        (":/",),
        group=2,
        accept=lambda v: not v.startswith("[REDACTED"),
    ),
    _Rule(
        "secret",
        _r(
            rf"(?i)(?<![A-Za-z0-9_.-])(?P<key>[A-Za-z0-9_.-]{{0,40}}{_SECRET_KEY_WORDS})"
            r"(?P<sep>\\?[\"']?\s*[:=]\s*(?P<q>\\?[\"'])?)"
            # an unquoted value ends before a path's next part that is a secret key of its own (a file named
            # like its directory): swallowing that key would leave the next value with none
            r"(?P<val>(?(q)[^\"'\\\n\u23ce]{8,}|(?:(?!/[A-Za-z0-9_.-]{0,40}"
            rf"{_SECRET_KEY_WORDS}\s*[:=])[^\s\"'\\<>,;&)\]}}]){{8,}}))"
        ),
        _GENERIC_KEYWORDS,
        ("generic-api-key",),
        group=4,
        accept=_looks_random,
        classify=_generic_kind,
    ),
)


def _folded(text: str) -> str:
    """What `(?i)` matches, as plain lower case: `casefold`, plus the two folds `re` also takes for `i` (dotless
    `ı`, and `İ`, which folds to `i` and a combining dot). Every code point that `(?i)` matches to an ASCII
    letter is one of ſ, K, ı, İ, and casefold maps the first two."""
    return text.casefold().replace("\u0131", "i").replace("i\u0307", "i")


_URLSAFE = str.maketrans("+/", "-_")
_FROM_URLSAFE = str.maketrans("-_", "+/")


def _b64_fragments(prefix: bytes) -> set[str]:
    """The base64 characters that any encoding of a text holding `prefix` contains, whatever its byte offset:
    at offset k (0, 1 or 2 within a 3-byte group) the characters whose 6 bits all come from `prefix`."""
    out: set[str] = set()
    for k in range(3):
        encoded = base64.b64encode(b"\0" * k + prefix + b"\0\0").decode("ascii")
        first = -(-8 * k // 6)  # ceil: the first character past the filler's bits
        last = (8 * (k + len(prefix))) // 6  # the first character that needs a bit after the prefix
        fragment = encoded[first:last]
        if len(fragment) >= 4:
            out.add(fragment)
            out.add(fragment.translate(_URLSAFE))
    return out


#: secrets also looked for when base64-wrapped (a Kubernetes or Docker secret, a token pasted encoded;
#: gitleaks' `jwt-base64` does this for JWTs): what the prefixed rules above start with, and the generic
#: rule's commonest key names
_B64_PREFIXES = (
    b"sk-ant-", b"sk-proj-", b"ghp_", b"gho_", b"ghs_", b"github_pat_", b"glpat-", b"AKIA", b"ASIA", b"xoxb-",
    b"xoxp-", b"AIza", b"sk_live_", b"rk_live_", b"sk_test_", b"hf_", b"npm_", b"pypi-", b"-----BEGIN", b"eyJ",
    b"Bearer ", b"password", b"PASSWORD", b"Password", b"secret", b"SECRET", b"token", b"TOKEN", b"ya29.",
)  # fmt: skip
_B64_WORDS = tuple(sorted({_folded(f) for prefix in _B64_PREFIXES for f in _b64_fragments(prefix)}))
#: a base64 run long enough to hold a secret (standard or URL-safe alphabet, its padding kept with it)
_B64_RUN = _r(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}")

#: every rule's keywords, and the base64 fragments: a string that contains none of them is not looked at
_TRIGGER_WORDS = tuple(sorted({k for rule in RULES for k in rule.keywords} | set(_B64_WORDS)))
_RULES_OF: dict[str, list[int]] = {}
for _i, _rule in enumerate(RULES):
    for _word in dict.fromkeys(_rule.keywords):
        _RULES_OF.setdefault(_word, []).append(_i)
_B64_SET = frozenset(_B64_WORDS)
#: which rules (indexes into `RULES`, in order; -1: the base64 pass) each keyword calls for (built from each rule's
#: keywords: testing every keyword against every rule's tuple took 2.1 ms of a one-line report's start-up)
_CALLS: tuple[tuple[int, ...], ...] = tuple(
    (*_RULES_OF.get(word, ()), *((-1,) if word in _B64_SET else ())) for word in _TRIGGER_WORDS
)
del _i, _rule, _word
#: every keyword in one automaton, as gitleaks prefilters with its keyword trie: one pass over a string finds
#: them all (2.6 µs for 250 characters; `in` for each of the 172 keywords took 40 µs, the regex 130 µs)
_KEYWORDS = AhoCorasick(list(_TRIGGER_WORDS))
#: the gate as a regex (the tests check that `_may_hold_secret` is a superset of it)
_TRIGGER = _r("(?i)" + "|".join(re.escape(w) for w in _TRIGGER_WORDS))
#: the keyword `token`, which calls the generic rule alone (no other keyword is part of `tokens`)
_TOKEN = _TRIGGER_WORDS.index("token")


def _called(text: str) -> set[int]:
    """The rules whose keywords `text` holds (-1 for the base64 pass); empty: no rule can match."""
    found = _KEYWORDS.find_matches_as_indexes(_folded(text), overlapping=True)
    return {rule for word, _start, _end in found for rule in _CALLS[word]}


def _may_hold_secret(text: str) -> bool:
    """False only when no rule can match `text`: it holds none of the keywords."""
    return bool(_KEYWORDS.find_matches_as_indexes(_folded(text)))


def _json_may_hold_secret(data: bytes) -> bool:
    """`_may_hold_secret` for a value's JSON text (UTF-8), where the word `tokens` does not count: every report
    turn has the key `"tokens"`, Claude Code's compactions `pre_tokens`/`post_tokens`, and its verdicts say "N
    prompt tokens" (they opened the walk of 760 of a 7,900-call history's turns, 18 % of writing it, for nothing).

    Exact: `token` calls only the generic rule, whose match ends its key with a key word and goes straight on to
    the separator (a quote, a space, `:` or `=`); a key that ends in `token` is a secret's key as a whole
    (`field_secret`), and is likewise followed by its closing `"` in JSON. A `token` followed by `s` (folded: `s`,
    `S`, `ſ`, `ß`) is neither, and JSON writes letters as they are, so the same holds for every string in it.
    Any other keyword, or a `token` followed by anything else, opens the walk as before.

    ASCII text (nearly every turn) is folded by `bytes.lower` and searched as bytes by a DFA of the other
    keywords, `token` by two counts (equal exactly when every `token` goes on with `s`): 13 µs a 1.5 KB turn
    against 31 µs for the general path, which the rest takes (`_json_text_may_hold_secret`)."""
    if not data.isascii():
        return _json_text_may_hold_secret(data.decode("utf-8"))
    low = data.lower()  # what `_folded` gives for ASCII
    return low.count(b"token") != low.count(b"tokens") or bool(_ascii_keywords().find_matches_as_indexes(low))


def _json_text_may_hold_secret(data: str) -> bool:
    """`_json_may_hold_secret` for any text: each keyword found (overlapping), a `token` followed by `s` passed."""
    folded = _folded(data)
    for word, _start, end in _KEYWORDS.find_matches_as_indexes(folded, overlapping=True):
        if word != _TOKEN or folded[end : end + 1] != "s":
            return True
    return False


_ASCII_KEYWORDS: list[BytesAhoCorasick] = []


def _ascii_keywords() -> BytesAhoCorasick:
    """Every keyword but `token` as one bytes DFA, built on first use (1.2 ms: a one-line report has no turn)."""
    if not _ASCII_KEYWORDS:
        words = [w.encode("ascii") for w in _TRIGGER_WORDS if w != "token" and w.isascii()]
        _ASCII_KEYWORDS.append(BytesAhoCorasick(words, implementation=Implementation.DFA))
    return _ASCII_KEYWORDS[0]


def _apply(rule: _Rule, text: str, hits: list[str]) -> str:
    def replace(match: re.Match[str]) -> str:
        secret = match.group(rule.group)
        if rule.accept is not None and not rule.accept(secret):
            return match.group(0)
        kind = rule.classify(match) if rule.classify is not None else rule.kind
        hits.append(kind)
        if rule.group == 0:
            return _mark(kind)
        start, end = match.span(rule.group)
        base = match.start(0)
        whole = match.group(0)
        return whole[: start - base] + _mark(kind) + whole[end - base :]

    return rule.pattern.sub(replace, text)


def _unwrap(run: str) -> str | None:
    """The text a base64 run encodes, or None when it is not base64 of (mostly) text."""
    body = run.rstrip("=").translate(_FROM_URLSAFE)
    if len(body) % 4 == 1:
        body = body[:-1]
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
    except ValueError:
        return None
    text = raw.decode("utf-8", "replace")
    return text if text.count("\ufffd") * 10 <= len(text) else None


def _apply_base64(text: str, hits: list[str]) -> str:
    """Replace a base64 run whole when the text it encodes holds a secret, named by the first secret's kind."""

    def replace(match: re.Match[str]) -> str:
        run = match.group(0)
        if -1 not in _called(run):
            return run
        inner = _unwrap(run)
        if inner is None:
            return run
        found: list[str] = []
        _rules(inner, _called(inner) - {-1}, found)
        if not found:
            return run
        hits.extend(found)
        return _mark(found[0])

    return _B64_RUN.sub(replace, text)


def _rules(text: str, called: set[int], hits: list[str]) -> str:
    """The rules a keyword called for, in their order (gitleaks' keyword prefilter, per rule)."""
    for i, rule in enumerate(RULES):
        if i in called:
            text = _apply(rule, text, hits)
    return text


#: the report's own time stamps: the most frequent strings of a big report, and never a secret
_ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
#: strings up to this length are memoized (kinds, reasons, tags and ids repeat thousands of times)
_CACHED_LEN = 256


def _redact(text: str) -> tuple[str, tuple[str, ...]]:
    called = _called(text)
    if not called:
        return text, ()
    hits: list[str] = []
    if -1 in called:
        text = _apply_base64(text, hits)
    text = _rules(text, called, hits)
    return text, tuple(hits)


_redact_short = lru_cache(maxsize=65_536)(_redact)


def redact_text(text: str) -> tuple[str, list[str]]:
    """One string -> (the string with every secret replaced, the kinds replaced in order)."""
    if len(text) < 8 or (len(text) == 24 and _ISO_TIME.fullmatch(text)):
        return text, []
    out, hits = _redact_short(text) if len(text) <= _CACHED_LEN else _redact(text)
    return out, list(hits)


#: characters past a screen's clip that are redacted with what is shown: a secret cut where the text is cut
#: may no longer match its rule (`AIza` + 20 of its 35), so the cut is kept this far past the clip, beyond
#: the longest shape a rule needs to see whole (a Hugging Face or Slack token, ~100; a PEM key matches cut)
_SCREEN_MARGIN = 512


def field_secret(key: str, value: str) -> str | None:
    """The kind of secret a string is as a whole because of the key it is under (`"refreshToken": "…"`), or None."""
    if len(value) >= 8 and _may_hold_secret(key) and _SECRET_KEY.match(key) and _looks_secret(value):
        return "oauth_token" if any(w in key.lower() for w in ("access", "refresh", "oauth")) else "secret"
    return None


def shown(value: object, limit: int = 2000, *, key: str | None = None) -> str:
    """What a screen shows of a data value: `core.sanitize.display` (inert, one line, clipped to `limit`) with
    every secret replaced as in the reports, by the same rules. The TUI shows data only through this.

    Redaction runs on the text made inert and single-line, before the clip: stripping an escape or folding a
    line break moves characters into view, and a secret cut by the clip would leak its first part. A giant
    value (a tool output) is redacted only as far as `limit` plus a margin, grown while redaction shortens it.
    `key`: the JSON key the value is under (a string under a secret-named key is a secret whole)."""
    if key is not None and isinstance(value, str) and (kind := field_secret(key, value)) is not None:
        return _mark(kind)
    if isinstance(value, str) and len(value) < 8 and value.isprintable():
        return value  # too short for any rule (`redact_text` returns these as they are)
    text = value if isinstance(value, str) else str(value)
    keep = limit + _SCREEN_MARGIN
    size = keep
    while True:
        head = display(text[:size], size)  # never clipped: one_line and sanitize only shorten
        out = redact_text(head)[0]
        if size >= len(text) or len(out) >= keep:
            return clip(out, limit)
        size *= 2


class Redactor(Struct, dict=True):
    """Walks a JSON-like value, replacing secrets in every string (keys included) and counting them."""

    counts: Counter[str] = field(default_factory=Counter)

    def text(self, value: str) -> str:
        out, hits = redact_text(value)
        if hits:
            self.counts.update(hits)
        return out

    def value(self, obj: Any, key: str | None = None) -> Any:
        """A copy of `obj` with secrets replaced; a string under a secret-named key is replaced whole."""
        if isinstance(obj, _Redacted):
            return obj.value
        if isinstance(obj, str):
            kind = None if key is None else field_secret(key, obj)
            if kind is not None:
                self.counts[kind] += 1
                return _mark(kind)
            return self.text(obj)
        if isinstance(obj, dict):
            out: dict[Any, Any] = {}
            for k, v in obj.items():
                new_key = self.text(k) if isinstance(k, str) else k
                new_value = self.value(v, k if isinstance(k, str) else None)
                out[new_key] = _merge(out[new_key], new_value) if new_key in out else new_value
            return out
        if isinstance(obj, list):
            return [self.value(v) for v in obj]
        if isinstance(obj, tuple):
            return tuple(self.value(v) for v in obj)
        return obj

    def turn(self, obj: dict[str, Any]) -> dict[str, Any]:
        """`value` for one report turn, with a gate: a turn none of whose strings could match (almost all of
        them) is returned as it is, without walking its ~60 values. The gate is the per-string gate run over
        the turn's JSON text, which holds every key and string of the turn."""
        try:
            data = orjson.dumps(obj)
        except (TypeError, orjson.JSONEncodeError):  # not plain JSON (a lone surrogate): walk it
            data = None
        return obj if data is not None and not _json_may_hold_secret(data) else self.value(obj)

    def summary(self, *, enabled: bool = True) -> dict[str, Any]:
        """The report's `redactions` field: whether redaction ran, how many strings, by kind."""
        return {"enabled": enabled, "total": sum(self.counts.values()), "by_kind": dict(sorted(self.counts.items()))}


def _merge(a: Any, b: Any) -> Any:
    """Two keys that redact to the same text (two secrets used as names): counts add up, maps merge,
    anything else keeps the first value, so totals such as `by_kind` still add up to `events`."""
    if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool) and not isinstance(b, bool):
        return a + b
    if isinstance(a, dict) and isinstance(b, dict):
        merged = dict(a)
        for key, value in b.items():
            merged[key] = _merge(merged[key], value) if key in merged else value
        return merged
    return a


def redact_report(report: dict[str, Any], *, consume: bool = False) -> dict[str, Any]:
    """A redacted copy of a built report with its `redactions` summary set.

    With `consume` (the report builder, whose report is thrown away right after), the `turns` list is redacted
    in place, one turn at a time: turns are most of a big report (67 MB of JSON for 46 000 turns), and a copy
    of the whole report would keep both versions alive at the peak. The result is the same either way."""
    redactor = Redactor()
    body = {k: v for k, v in report.items() if k != "redactions"}
    turns = body.get("turns")
    summary: dict[str, Any] = {}

    def settle() -> None:  # the summary object stays the same: a streamed report's writer reads it at the end
        summary.clear()
        summary.update(redactor.summary())

    if isinstance(turns, TurnStream):  # redacted as they are written; the summary is final after the last
        body["turns"] = _Redacted(turns.map(redactor.turn, settle))
    elif consume and isinstance(turns, list):
        for i, turn in enumerate(turns):
            turns[i] = redactor.turn(turn)
        body["turns"] = _Redacted(turns)
    out: dict[str, Any] = redactor.value(body)
    settle()
    out["redactions"] = summary
    return out


def holds_no_secret(value: Any) -> bool:
    """True when no string of a JSON-like value (keys included) can hold a secret: its JSON text holds no keyword
    of any rule (the gate `Redactor.turn` uses, `tokens` left out as there), so the walk would give it back
    unchanged and count nothing. The big log's 1,000 sessions only its lines name: walked, ~0.15 s; gated,
    ~5 ms."""
    try:
        data = orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        return False
    return not _json_may_hold_secret(data)


def already_redacted(value: Any) -> Any:
    """Mark a part of a report its builder has checked itself (every string in it passed `redact_text` with no
    hit): the walk takes it as it is. The continuity section of a big log is ~50,000 streaks made of a few
    distinct kinds and reasons; walking it string by string took longer than reading the log."""
    return _Redacted(value)


class _Redacted(Struct, frozen=True):
    """A value already redacted: `Redactor.value` hands it back as it is (the key `turns` has no secret)."""

    value: Any
