"""Seeded content: source files, command output and prose for the bulky parts of a session.

The sizes matter (they are what a flatten re-sends); the words do not, so a small vocabulary suffices.
"""

from __future__ import annotations

import random

WORDS = [
    "ledger",
    "account",
    "balance",
    "cursor",
    "page",
    "row",
    "batch",
    "stream",
    "retry",
    "job",
    "queue",
    "entry",
    "posting",
    "journal",
    "period",
    "snapshot",
    "reconcile",
    "import",
    "export",
    "window",
    "offset",
    "limit",
    "token",
    "checksum",
    "audit",
    "tenant",
    "currency",
    "amount",
    "settlement",
    "statement",
    "invoice",
    "schedule",
    "worker",
    "lease",
    "lock",
    "timeout",
    "backoff",
    "migration",
    "index",
    "schema",
]
VERBS = [
    "load",
    "read",
    "parse",
    "apply",
    "build",
    "merge",
    "split",
    "flush",
    "fetch",
    "emit",
    "check",
    "verify",
    "commit",
    "rollback",
    "encode",
]


class Texts:
    """Seeded generators for the bulky parts of a session: source files, command output, prose."""

    def __init__(self, rng: random.Random, scale: float) -> None:
        self.rng = rng
        self.scale = scale

    def _n(self, lines: int) -> int:
        return max(3, int(lines * self.scale))

    def ident(self) -> str:
        return f"{self.rng.choice(VERBS)}_{self.rng.choice(WORDS)}"

    def source_file(self, path: str, lines: int) -> str:
        """A Python-looking module, the shape ``read`` returns."""
        rng = self.rng
        out = [f'"""{path}: {" ".join(rng.sample(WORDS, 4))}."""', "", "from __future__ import annotations", ""]
        while len(out) < self._n(lines):
            name, arg = self.ident(), rng.choice(WORDS)
            out += [
                f"def {name}({arg}: {rng.choice(['int', 'str', 'Row', 'Batch', 'Cursor'])}) -> None:",
                f'    """{rng.choice(VERBS).capitalize()} the {arg} {rng.choice(WORDS)}."""',
            ]
            for _ in range(rng.randint(2, 7)):
                call = f"{self.ident()}({arg}, {rng.choice(WORDS)}={rng.randint(0, 999)})"
                out.append(f"    {rng.choice(WORDS)} = {call}")
            out += [f"    return {rng.choice(WORDS)}", ""]
        return "\n".join(out)

    def pytest_output(self, lines: int, failed: int = 0) -> str:
        rng, out = self.rng, ["============================= test session starts =============================="]
        out.append("platform linux -- Python 3.12.4, pytest-8.3.2, pluggy-1.5.0")
        n = self._n(lines)
        for i in range(n):
            status = "FAILED" if i < failed else "PASSED"
            out.append(
                f"tests/test_{rng.choice(WORDS)}.py::test_{self.ident()}[{rng.choice(WORDS)}] {status} "
                f"[{100 * (i + 1) // n:3d}%]"
            )
        out.append(
            f"======================== {n - failed} passed, {failed} failed in {rng.uniform(1, 40):.2f}s "
            "========================"
        )
        return "\n".join(out)

    def grep_output(self, pattern: str, lines: int) -> str:
        rng = self.rng
        return "\n".join(
            f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.py:{rng.randint(1, 900)}:    {self.ident()}({pattern})"
            for _ in range(self._n(lines))
        )

    def diagnostics(self, lines: int) -> str:
        rng = self.rng
        return "\n".join(
            f"src/{rng.choice(WORDS)}.py:{rng.randint(1, 500)}:{rng.randint(1, 60)} "
            f'{rng.choice(["error", "warning", "hint"])}: "{rng.choice(WORDS)}" is possibly unbound'
            for _ in range(self._n(lines))
        )

    def ast_matches(self, lines: int) -> str:
        rng = self.rng
        return "\n".join(
            f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.py:{rng.randint(1, 700)}: for row in "
            f"{self.ident()}({rng.choice(WORDS)}):"
            for _ in range(self._n(lines))
        )

    def sentences(self, count: int) -> str:
        rng, out = self.rng, []
        for _ in range(count):
            a, b, c = rng.sample(WORDS, 3)
            out.append(
                rng.choice(
                    (
                        f"The {a} path calls {self.ident()} before the {b} commits, so a retry can see a stale {c}.",
                        f"I should {rng.choice(VERBS)} the {a} first and only then touch the {b} {c}.",
                        f"If the {a} {b} is empty the loop exits early and the {c} is never flushed.",
                        f"The test for {self.ident()} covers the {a} case but not an interrupted {b}.",
                        f"Keeping the {a} as a generator avoids holding every {b} in memory during the {c}.",
                    )
                )
            )
        return " ".join(out)
