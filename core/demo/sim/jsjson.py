"""JavaScript JSON: ``JSON.stringify`` output and the canonical JSON senpi's digest hashes.

senpi writes every file with ``JSON.stringify`` and hashes ``JSON.stringify(canonical(value))`` with keys in
``localeCompare`` order, so a byte-faithful simulator needs JavaScript's number formatting, string escaping
and collation, not Python's ``json`` defaults.
"""

from __future__ import annotations

from decimal import Decimal
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

JsonObj = dict[str, Any]


def js_number(value: int | float) -> str:
    """Format a number as JavaScript's ``Number.prototype.toString`` does (JSON.stringify uses it).

    Python and JavaScript agree on the shortest round-trip digits but not on where they switch to
    exponent notation (``1e-07`` vs ``1e-7``, ``1e-05`` vs ``0.00001``), so we re-place the digits.
    """
    if isinstance(value, bool):
        raise TypeError("booleans are not numbers here")
    if isinstance(value, int):
        return str(value)
    if value != value or value in (float("inf"), float("-inf")):
        return "null"
    if value == 0:
        return "0"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    sign = "-" if value < 0 else ""
    dec = Decimal(repr(abs(value)))
    _, digit_tuple, exponent = dec.as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    k = len(digits)
    n = len(digit_tuple) + exponent  # value = 0.<digits> * 10**n
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        body = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + body


def js_dumps(value: Any) -> str:
    """``JSON.stringify(value)``: compact, keys in insertion order, JavaScript number and string rules."""
    parts: list[str] = []
    _dump(value, parts, sort=False)
    return "".join(parts)


def canonical_json(value: Any) -> str:
    """senpi's ``JSON.stringify(canonical(value))``: keys sorted in JavaScript ``localeCompare`` order."""
    parts: list[str] = []
    _dump(value, parts, sort=True)
    return "".join(parts)


def _dump(value: Any, out: list[str], *, sort: bool) -> None:
    """Append the JSON text of ``value`` to ``out``; one recursive walk shared by both serializations."""
    if isinstance(value, str):
        out.append(encode_basestring(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int | float):
        out.append(js_number(value))
    elif isinstance(value, dict):
        keys = sorted(value, key=locale_key) if sort else list(value)
        out.append("{")
        for i, key in enumerate(keys):
            if i:
                out.append(",")
            out.append(encode_basestring(key))
            out.append(":")
            _dump(value[key], out, sort=sort)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _dump(item, out, sort=sort)
        out.append("]")
    else:
        raise TypeError(f"not JSON-serializable: {type(value).__name__}")


# ICU root collation, primary level, for ASCII: whitespace, then punctuation in CLDR order, then symbols,
# then digits, then letters (case-insensitive). Case is a tertiary difference, lowercase first.
_PUNCT_ORDER = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
_PRIMARY: dict[str, int] = {ch: i for i, ch in enumerate(_PUNCT_ORDER)}
_PRIMARY.update({d: 100 + int(d) for d in "0123456789"})
_PRIMARY.update({c: 200 + ord(c) - ord("a") for c in "abcdefghijklmnopqrstuvwxyz"})


def locale_key(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Sort key emulating ``String.prototype.localeCompare`` (ICU, en-US) for the keys senpi hashes.

    Full primary strings are compared first (so ``file_path`` < ``filePath``: ``_`` sorts before letters),
    then the case of each character (``ab`` < ``aB`` < ``Ab``). Non-ASCII characters sort after letters by
    code point, which is enough for the key sets this simulator generates.
    """
    primary = tuple(_PRIMARY.get(ch.lower(), 1000 + ord(ch)) for ch in text)
    tertiary = tuple(1 if ch.isupper() else 0 for ch in text)
    return primary, tertiary
