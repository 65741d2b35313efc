"""Deterministic ids and clock formatting: UUIDv7/v4, tool-call ids, thinking signatures, ISO times.

Everything comes from a seeded ``random.Random``, so the same seed writes the same bytes.
"""

from __future__ import annotations

import calendar
import random
import time


def iso_ms(ms: int) -> str:
    """JavaScript ``Date.prototype.toISOString`` of epoch milliseconds."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def parse_iso_ms(text: str) -> int:
    """Inverse of :func:`iso_ms`."""
    base = calendar.timegm(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S"))
    return base * 1000 + int(text[20:23])


def uuid7(ms: int, rng: random.Random) -> str:
    """A UUIDv7 (48-bit ms timestamp, version 7, variant 10) from a seeded generator."""
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | rng.getrandbits(12) << 64 | 0b10 << 62 | rng.getrandbits(62)
    return _uuid_text(value)


def uuid4(rng: random.Random) -> str:
    """A UUIDv4 from a seeded generator (Claude Code message uuids)."""
    value = rng.getrandbits(128) & ~(0xF << 76) | 0x4 << 76
    value = value & ~(0b11 << 62) | 0b10 << 62
    return _uuid_text(value)


def _uuid_text(value: int) -> str:
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def tool_call_id(rng: random.Random) -> str:
    return "toolu_01" + "".join(rng.choice(_B62) for _ in range(22))


def thinking_signature(rng: random.Random) -> str:
    return "Eq" + "".join(rng.choice(_B62 + "+/") for _ in range(rng.randint(180, 420))) + "=="
