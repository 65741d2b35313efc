"""Seeded ids and clock text for the demo generators: the same seed gives the same bytes.

Each generator owns one `Seeded` (a `random.Random` named after the agent and the seed), so adding a call to
one agent's story never changes another agent's files.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def iso(ms: int) -> str:
    """`Date.prototype.toISOString` of epoch ms (what every agent here writes)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def file_stamp(ms: int) -> str:
    """The ISO time with `:` and `.` as `-`, as pi names its session files (`2026-08-07T09-12-04-311Z`)."""
    return iso(ms).replace(":", "-").replace(".", "-")


def line(obj: dict[str, Any]) -> bytes:
    """One JSONL line as JavaScript's `JSON.stringify` writes it: compact, non-ASCII kept, key order kept."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


class Seeded:
    """Ids in each agent's own shapes, from one seeded generator."""

    def __init__(self, name: str, seed: int) -> None:
        self.rng = random.Random(f"continuity-demo/{name}/{seed}")

    def randint(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def choice(self, items: Any) -> Any:
        return self.rng.choice(items)

    def uuid4(self) -> str:
        value = self.rng.getrandbits(128) & ~(0xF << 76) | 0x4 << 76
        return _uuid_text(value & ~(0b11 << 62) | 0b10 << 62)

    def uuid7(self, ms: int) -> str:
        value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | self.rng.getrandbits(12) << 64
        return _uuid_text(value | 0b10 << 62 | self.rng.getrandbits(62))

    def hex(self, n: int) -> str:
        return f"{self.rng.getrandbits(4 * n):0{n}x}"

    def b62(self, n: int) -> str:
        return "".join(self.rng.choice(B62) for _ in range(n))

    def b58(self, n: int) -> str:
        return "".join(self.rng.choice(B58) for _ in range(n))

    def signature(self) -> str:
        """An opaque thinking signature (base64-looking, a few hundred characters, as Anthropic's are)."""
        return "Eu" + "".join(self.rng.choice(B62 + "+/") for _ in range(self.rng.randint(240, 520))) + "=="


def _uuid_text(value: int) -> str:
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
