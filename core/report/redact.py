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

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import orjson

from core.report.stream import TurnStream

MARK = "[REDACTED:{}]"

_SECRET_KEY_WORDS = r"(?:token|secret|password|passwd|passphrase|api[_-]?key|apikey|private[_-]?key|auth[_-]?key)"
#: a dict key whose string value is a secret as a whole (`"refreshToken": "…"`)
_SECRET_KEY = re.compile(rf"(?i)^[A-Za-z0-9_.-]{{0,40}}{_SECRET_KEY_WORDS}$")
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

#: the gate, stated as a regex: a string that contains none of these cannot match any pattern (most strings:
#: ids, times). `_may_hold_secret` runs it as a faster superset (tests/test_redact.py checks that it is one).
_TRIGGER = re.compile(
    r"(?i)sk-|bearer|basic|akia|asia|abia|acca|aida|aroa|token|secret|passw|passphrase|api.?key|auth.?key"
    r"|private|eyj|gh[pousr]_|github_pat|xox|ya29|1//|://"
)


#: `_TRIGGER` as plain substrings of the case-folded text (`in` is a C memchr scan; the regex's 25-way
#: alternation cost ~100 µs per kilobyte): a superset of its matches, so a text that has none of them cannot
#: match any rule. `api.?key` and `auth.?key` become "has `key` and `api` or `auth`".
_TRIGGER_WORDS = (
    "sk-", "bearer", "basic", "akia", "asia", "abia", "acca", "aida", "aroa", "token", "secret", "passw",
    "passphrase", "private", "eyj", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat", "xox", "ya29", "1//",
    "://",
)  # fmt: skip
#: every turn has the key `"tokens":`; it ends in `s`, so it is never a secret's key, and it is dropped from a
#: turn's JSON before the gate (a JSON string cannot hold an unescaped `"`, so these bytes are only that key)
_TOKENS_KEY = b'"tokens":'


def _may_hold_secret(text: str) -> bool:
    """False only when `_TRIGGER` cannot match `text`. Case folding is what `(?i)` matches, plus the two `re`
    also takes for `i`: dotless `ı`, and `İ`, which folds to `i` and a combining dot (every code point that
    `(?i)` matches to an ASCII letter is one of ſ, K, ı, İ)."""
    folded = text.casefold().replace("\u0131", "i").replace("i\u0307", "i")  # ı, and İ (folds to i + dot)
    if any(word in folded for word in _TRIGGER_WORDS):
        return True
    return "key" in folded and ("api" in folded or "auth" in folded)


def _mark(kind: str) -> str:
    return MARK.format(kind)


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
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
    "secret: patience") are not secrets; credentials mix in digits or symbols, or are long."""
    if not _looks_secret(value):
        return False
    return len(value) >= 20 or not value.isalpha()


def _generic_kind(match: re.Match[str]) -> str:
    key = match.group("key").lower()
    if any(word in key for word in ("access", "refresh", "id_token", "idtoken", "oauth")):
        return "oauth_token"
    if "pass" in key:
        return "password"
    if "key" in key:
        return "api_key"
    return "secret"


RULES: tuple[_Rule, ...] = (
    _Rule(
        "private_key",
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:.*?-----END [A-Z0-9 ]*PRIVATE KEY-----|[A-Za-z0-9+/=\s\u23ce]*)",
            re.S,
        ),
    ),
    # Anthropic OAuth access (oat) and refresh (ort) tokens, then every other Anthropic key
    _Rule("oauth_token", re.compile(r"sk-ant-o[ar]t\d*-[A-Za-z0-9_-]{8,}")),
    _Rule("anthropic_key", re.compile(r"sk-ant-[A-Za-z0-9_-]{8,}")),
    _Rule("api_key", re.compile(r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    _Rule("github_token", re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,})")),
    _Rule("slack_token", re.compile(r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}")),
    _Rule("aws_access_key", re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA)[0-9A-Z]{16}(?![A-Z0-9])")),
    _Rule(
        "aws_secret_key",
        re.compile(
            r"(?i)(aws_?secret_?(?:access_?)?key|secret_?access_?key)(\\?[\"']?\s*[:=]\s*\\?[\"']?)"
            r"([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        group=3,
    ),
    _Rule("oauth_token", re.compile(r"(?<![A-Za-z0-9])(?:ya29\.[0-9A-Za-z_-]{20,}|1//0[0-9A-Za-z_-]{20,})")),
    _Rule("jwt", re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    _Rule("bearer", re.compile(r"(?i)\b(bearer)(\s+)([A-Za-z0-9._~+/-]{8,}=*)"), group=3, accept=_looks_random),
    _Rule(
        "basic_auth",
        re.compile(r"(?i)(authorization\\?[\"']?\s*[:=]\s*\\?[\"']?basic\s+)([A-Za-z0-9+/]{8,}={0,2})"),
        group=2,
    ),
    _Rule(
        "url_password",
        re.compile(r"(?i)\b([a-z][a-z0-9+.-]{1,20}://[^\s:/@]{1,64}:)([^\s@/]{3,})(?=@)"),
        group=2,
        accept=lambda v: not v.startswith("[REDACTED"),
    ),
    _Rule(
        "secret",
        re.compile(
            rf"(?i)(?<![A-Za-z0-9_.-])(?P<key>[A-Za-z0-9_.-]{{0,40}}{_SECRET_KEY_WORDS})"
            r"(?P<sep>\\?[\"']?\s*[:=]\s*(?P<q>\\?[\"'])?)"
            r"(?P<val>(?(q)[^\"'\\\n\u23ce]{8,}|[^\s\"'\\<>,;&)\]}]{8,}))"
        ),
        group=4,
        accept=_looks_random,
        classify=_generic_kind,
    ),
)


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


#: the report's own time stamps: the most frequent strings of a big report, and never a secret
_ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
#: strings up to this length are memoized (kinds, reasons, tags and ids repeat thousands of times)
_CACHED_LEN = 256


def _redact(text: str) -> tuple[str, tuple[str, ...]]:
    if not _may_hold_secret(text):
        return text, ()
    hits: list[str] = []
    for rule in RULES:
        text = _apply(rule, text, hits)
    return text, tuple(hits)


_redact_short = lru_cache(maxsize=65_536)(_redact)


def redact_text(text: str) -> tuple[str, list[str]]:
    """One string -> (the string with every secret replaced, the kinds replaced in order)."""
    if len(text) < 8 or (len(text) == 24 and _ISO_TIME.fullmatch(text)):
        return text, []
    out, hits = _redact_short(text) if len(text) <= _CACHED_LEN else _redact(text)
    return out, list(hits)


@dataclass
class Redactor:
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
            if key is not None and _SECRET_KEY.match(key) and len(obj) >= 8 and _looks_secret(obj):
                kind = "oauth_token" if any(w in key.lower() for w in ("access", "refresh", "oauth")) else "secret"
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
            data = orjson.dumps(obj).replace(_TOKENS_KEY, b"").decode("utf-8")
        except (TypeError, orjson.JSONEncodeError):  # not plain JSON (a lone surrogate): walk it
            data = None
        return obj if data is not None and not _may_hold_secret(data) else self.value(obj)

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


@dataclass(frozen=True, slots=True)
class _Redacted:
    """A value already redacted: `Redactor.value` hands it back as it is (the key `turns` has no secret)."""

    value: Any
