"""JavaScript `String.prototype.localeCompare` order (ICU root / `en-US`, default strength) without ICU.

senpi sorts object keys with `localeCompare` before hashing (senpi-formats §3.1–3.2), so a key order that
differs from ICU's changes every digest. PyICU is not a dependency; this module emulates the ICU root
collation (CLDR root, "non-ignorable" punctuation, tertiary strength, lowercase first) the way the
Unicode Collation Algorithm builds sort keys: every character becomes collation elements
(primary, secondary, tertiary); strings compare by all primaries first, then all secondaries, then all
tertiaries; a shorter sequence that is a prefix sorts first.

Where the weights come from (why the tables look like this):

* ASCII and Latin-1 punctuation, symbols and digits: `_NONLETTER_ORDER`, the order Node 20 (its bundled ICU)
  produces for these characters (spaces < `_` < `-` < `,` … `~` < currency < digits), which is also the
  order of the reference vectors (senpi-formats §3.2, the fixture's `keyOrder`).
* Letters: Latin letters by their base letter (a < b < …), case only at the tertiary level (lowercase
  first), accents as secondary elements after NFD decomposition, with the mark order `_MARK_ORDER` taken
  from ICU. Letters ICU does not decompose are spelled out in `_SPECIAL` (ø = o + U+0338, æ = a·e, …) or
  get their own primary in `_LATIN_ORDER` (ı, ŋ, ĸ, ŧ, þ).
* Compatibility characters (ª, ¹, ½, ĳ, fullwidth forms, …) sort as their NFKD expansion, differing at
  the tertiary level.
* Completely ignorable characters (most controls, soft hyphen, CGJ) contribute nothing, like in ICU.

Exact for everything in U+0000–U+017F (checked against Node's ICU by `tests/test_canonical.py` when
Node is installed). Other scripts are ordered by script (Latin < Greek < Cyrillic < … < Hangul < Kana <
Han, as in CLDR root) and by code point within a script: an approximation, documented as such; keys in
agent data are overwhelmingly ASCII identifiers.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

Element = tuple[int, int, int]

#: ASCII + Latin-1 non-letters in ICU root order (one character per rank).
_NONLETTER_ORDER: tuple[str, ...] = tuple(
    "\t\n\x0b\x0c\r\x85\x20\xa0_-,;:!\xa1?\xbf.\xb7'\"\xab\xbb()[]{}\xa7\xb6@*/\\&#%`\xb4^\xaf\xa8\xb8\xb0"
    "\xa9\xae+\xb1\xf7\xd7<=>\xac|\xa6~\xa4\xa2$\xa3\xa5"
)

#: Latin letters with their own primary weight, in order (accented forms are base + secondary marks).
_LATIN_ORDER = "abcdefghiıjklmnŋopqĸrstŧuvwxyzþʼ"

#: Combining marks in ICU's secondary order; marks in one group share a weight.
_MARK_ORDER: tuple[str, ...] = (
    "332", "313=343", "314", "301=341", "300=340", "306", "302", "30c", "30a", "342", "308", "344", "30b",
    "303", "307", "338", "327", "328", "304",
    "30d=30e=312=315=31a=33d=33e=33f=346=34a=34b=34c=350=351=352=357=35b=35d=35e",
    "316=317=318=319=31c=31d=31e=31f=320=329=32a=32b=32c=32f=333=33a=33b=33c=347=348=349=34d=34e=353=354=355"
    "=356=359=35a=35c=35f=362",
    "336=337", "335", "305", "309", "30f", "310", "311", "31b", "321", "322", "323", "324", "325", "326",
    "32d", "32e", "330", "331", "334", "339", "345", "358", "360", "361", "363", "368", "369", "364", "36a",
    "365", "36b", "366", "36c", "36d", "367", "36e", "36f",
)  # fmt: skip

# weight bases: primaries are grouped in zones so that unknown characters land in the right region
_P_SPACE_EXTRA = 150  # other spaces without a compatibility decomposition
_P_NONLETTER = 200  # + 4 * rank in _NONLETTER_ORDER (gaps leave room for unknown characters)
_P_DIGIT = 2000
_P_LATIN = 3000
_P_LATIN_OTHER = 4000  # Latin letters not in the table (ƀ, ɓ, …): after þ, by code point
_P_SCRIPT = 1 << 21  # + rank << 21 + code point
_P_IMPLICIT = 1 << 28  # Han, unassigned, private use: last, by code point

_S_COMMON = 5
_S_MARK = 100  # + rank in _MARK_ORDER
_S_MARK_OTHER = 1000  # unknown marks: after the known ones, by code point
_S_LIGATURE = 1900  # the secondary marker of æ, œ, ß, ſ (ICU: they differ from "ae", "oe", "ss", "s" at level 2)
_S_ETH = 1950  # ð / Ð: d with a secondary after every mark

_T_LOWER, _T_UPPER, _T_COMPAT = 0, 1, 2

_IGNORABLE_FORMAT = frozenset({"\u00ad", "\u034f", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"})
_WHITESPACE_CONTROLS = frozenset({"\t", "\n", "\x0b", "\x0c", "\r", "\x85"})

_NONLETTER_RANK: dict[str, int] = {ch: rank for rank, ch in enumerate(_NONLETTER_ORDER)}

_MARK_RANK: dict[int, int] = {}
for _rank, _group in enumerate(_MARK_ORDER):
    for _hex in _group.split("="):
        _MARK_RANK[int(_hex, 16)] = _rank

_LATIN_RANK = {ch: i for i, ch in enumerate(_LATIN_ORDER)}

#: Letters ICU treats as base + secondary (or as a two-letter expansion) although NFD leaves them alone.
_SPECIAL: dict[str, tuple[Element, ...]] = {}


def _latin(ch: str, tertiary: int) -> Element:
    return (_P_LATIN + _LATIN_RANK[ch], _S_COMMON, tertiary)


def _build_special() -> None:
    for lower, upper, base, mark in (("ø", "Ø", "o", 0x338), ("đ", "Đ", "d", 0x335), ("ł", "Ł", "l", 0x335),
                                     ("ħ", "Ħ", "h", 0x335)):  # fmt: skip
        sec = _S_MARK + _MARK_RANK[mark]
        _SPECIAL[lower] = (_latin(base, _T_LOWER), (0, sec, _T_LOWER))
        _SPECIAL[upper] = (_latin(base, _T_UPPER), (0, sec, _T_LOWER))
    _SPECIAL["ð"] = (_latin("d", _T_LOWER), (0, _S_ETH, _T_LOWER))
    _SPECIAL["Ð"] = (_latin("d", _T_UPPER), (0, _S_ETH, _T_LOWER))
    lig = (0, _S_LIGATURE, _T_LOWER)
    for lower, upper, first, second in (("æ", "Æ", "a", "e"), ("œ", "Œ", "o", "e")):
        _SPECIAL[lower] = (_latin(first, _T_LOWER), lig, _latin(second, _T_LOWER))
        _SPECIAL[upper] = (_latin(first, _T_UPPER), lig, _latin(second, _T_UPPER))
    _SPECIAL["ß"] = (_latin("s", _T_LOWER), lig, _latin("s", _T_LOWER))
    _SPECIAL["ẞ"] = (_latin("s", _T_UPPER), lig, _latin("s", _T_UPPER))
    _SPECIAL["ſ"] = (_latin("s", _T_LOWER), lig)
    for lower, upper in (("ŋ", "Ŋ"), ("ŧ", "Ŧ"), ("þ", "Þ")):
        _SPECIAL[lower] = (_latin(lower, _T_LOWER),)
        _SPECIAL[upper] = (_latin(lower, _T_UPPER),)
    _SPECIAL["ı"] = (_latin("ı", _T_LOWER),)
    _SPECIAL["ĸ"] = (_latin("ĸ", _T_LOWER),)
    _SPECIAL["ʼ"] = (_latin("ʼ", _T_LOWER),)


_build_special()

#: Script order of CLDR root for letters outside Latin: (first, last, rank). Code point order within.
_SCRIPTS: tuple[tuple[int, int, int], ...] = (
    (0x0370, 0x03FF, 1), (0x1F00, 0x1FFF, 1), (0x2C80, 0x2CFF, 2), (0x0400, 0x052F, 3), (0x1C80, 0x1C8F, 3),
    (0x2DE0, 0x2DFF, 3), (0xA640, 0xA69F, 3), (0x2C00, 0x2C5F, 4), (0x10A0, 0x10FF, 5), (0x2D00, 0x2D2F, 5),
    (0x0530, 0x058F, 6), (0x0590, 0x05FF, 7), (0x0700, 0x074F, 8), (0x0600, 0x06FF, 9), (0x0750, 0x077F, 9),
    (0x08A0, 0x08FF, 9), (0x0780, 0x07BF, 10), (0x0900, 0x0DFF, 11), (0x0E00, 0x0E7F, 12),
    (0x0E80, 0x0EFF, 13), (0x0F00, 0x0FFF, 14), (0x1000, 0x109F, 15), (0x1100, 0x11FF, 20),
    (0x3130, 0x318F, 20), (0xA960, 0xA97F, 20), (0xD7B0, 0xD7FF, 20), (0x3040, 0x30FF, 21),
    (0x31F0, 0x31FF, 21), (0x3100, 0x312F, 22), (0x31A0, 0x31BF, 22),
)  # fmt: skip
_UNKNOWN_SCRIPT_RANK = 19  # letters of scripts not listed: before Hangul, Kana and Han
_HAN = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x3FFFF))


def _script_primary(cp: int) -> int:
    for first, last in _HAN:
        if first <= cp <= last:
            return _P_IMPLICIT + cp
    if 0x30A1 <= cp <= 0x30F6:  # katakana sorts with the matching hiragana (differs at level 3)
        cp -= 0x60
    for first, last, rank in _SCRIPTS:
        if first <= cp <= last:
            return _P_SCRIPT + (rank << 21) + cp
    return _P_SCRIPT + (_UNKNOWN_SCRIPT_RANK << 21) + cp


def _nonletter(ch: str) -> int | None:
    rank = _NONLETTER_RANK.get(ch)
    return None if rank is None else _P_NONLETTER + 4 * rank


# anchors for punctuation and symbols outside Latin-1: the slot right after a known character
_ZONE_AFTER = {"Zs": " ", "Pc": "_", "Pd": "-", "Ps": "}", "Pe": "}", "Pi": '"', "Pf": '"', "Po": "%",
               "Sm": "\xae", "Sk": "^", "So": "~", "Sc": "\xa5"}  # fmt: skip


def _single(ch: str) -> tuple[Element, ...]:
    """Collation elements of one character that has no decomposition (or whose decomposition is itself)."""
    special = _SPECIAL.get(ch)
    if special is not None:
        return special
    primary = _nonletter(ch)
    if primary is not None:
        return ((primary, _S_COMMON, _T_LOWER),)
    cp = ord(ch)
    category = unicodedata.category(ch)
    if ch in _IGNORABLE_FORMAT or (category == "Cc" and ch not in _WHITESPACE_CONTROLS):
        return ()
    if category in ("Mn", "Mc", "Me"):
        rank = _MARK_RANK.get(cp)
        sec = _S_MARK + rank if rank is not None else _S_MARK_OTHER + (cp & 0x3FF)
        return ((0, sec, _T_LOWER),)
    if category == "Nd":
        return ((_P_DIGIT + unicodedata.decimal(ch), _S_COMMON, _T_LOWER if cp < 0x80 else _T_COMPAT),)
    if category.startswith("L"):
        lower = ch.lower()
        tertiary = _T_UPPER if ch != lower else _T_LOWER
        if 0x30A1 <= cp <= 0x30F6:
            tertiary = _T_UPPER
        base = lower if len(lower) == 1 else ch
        if base in _LATIN_RANK:
            return ((_P_LATIN + _LATIN_RANK[base], _S_COMMON, tertiary),)
        if cp < 0x0370 or 0x1D00 <= cp <= 0x1EFF or 0x2C60 <= cp <= 0x2C7F or 0xA720 <= cp <= 0xA7FF:
            return ((_P_LATIN_OTHER + ord(base), _S_COMMON, tertiary),)
        return ((_script_primary(ord(base)), _S_COMMON, tertiary),)
    if category == "Cf" or category == "Cs" or category == "Co" or category == "Cn":
        if category == "Cf":
            return ()
        return ((_P_IMPLICIT + cp, _S_COMMON, _T_LOWER),)
    if category == "Zs":
        return ((_P_SPACE_EXTRA, _S_COMMON, _T_COMPAT),)
    anchor = _ZONE_AFTER.get(category)
    if anchor is not None:
        return ((_P_NONLETTER + 4 * _NONLETTER_RANK[anchor] + 1, _S_COMMON, _T_LOWER), (0, 0, cp))
    # other numbers (No, Nl) without a decomposition: after the digits
    return ((_P_DIGIT + 10, _S_COMMON, _T_LOWER), (0, 0, cp))


@lru_cache(maxsize=8192)
def char_elements(ch: str) -> tuple[Element, ...]:
    """Collation elements of one character, decompositions applied (canonical first, then compatibility)."""
    if ch in _SPECIAL or ch in _NONLETTER_RANK:
        return _single(ch)
    nfd = unicodedata.normalize("NFD", ch)
    if nfd != ch:
        return tuple(el for c in nfd for el in char_elements(c))
    nfkd = unicodedata.normalize("NFKD", ch)
    if nfkd != ch and nfkd:
        out: list[Element] = []
        for c in nfkd:
            for p, s, t in char_elements(c):
                out.append((p, s, t + _T_COMPAT if p else t))
        return tuple(out)
    return _single(ch)


@lru_cache(maxsize=65536)
def collation_key(text: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """A sort key with ICU root / en-US order: compare keys with `<` like `localeCompare` compares strings.

    Equal keys mean `localeCompare` returns 0; callers keep the original order then (JavaScript's sort is
    stable, and so is Python's).
    """
    elements = [el for ch in text for el in char_elements(ch)]
    primaries = tuple(p for p, _, _ in elements if p)
    secondaries = tuple(s for _, s, _ in elements if s)
    tertiaries = tuple(t for p, s, t in elements if p or s)
    # a trailing "(0, 0, cp)" marks an approximated character: it orders them by code point last of all
    tiebreak = tuple(t for p, s, t in elements if not p and not s and t)
    return primaries, secondaries, tertiaries + ((-1, *tiebreak) if tiebreak else ())


def locale_compare(a: str, b: str) -> int:
    """`a.localeCompare(b)`: -1, 0 or 1."""
    ka, kb = collation_key(a), collation_key(b)
    return (ka > kb) - (ka < kb)
