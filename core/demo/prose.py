"""Seeded content for the demo sessions: source files, command output, prose. Written here, copied from nowhere.

The sizes matter (a tool result of 20 KB is what makes a prompt grow, and what a cache miss processes again);
the words only have to look like a working session on screen, so a small vocabulary is enough.
"""

from __future__ import annotations

from core.demo.seeded import Seeded

NOUNS = (
    "invoice", "batch", "cursor", "retry", "window", "tenant", "ledger", "tile", "shard", "lease", "queue",
    "backoff", "schema", "export", "import", "index", "token", "session", "page", "worker", "job", "budget",
    "checksum", "snapshot", "report", "config", "client", "request", "response", "limit", "offset", "route",
)  # fmt: skip
VERBS = (
    "load", "parse", "sync", "flush", "merge", "split", "apply", "render", "fetch", "store", "retry", "drain",
    "encode", "decode", "check", "resolve", "build", "emit", "scan", "update",
)  # fmt: skip
TYPES = ("str", "int", "bool", "float", "bytes", "list[str]", "dict[str, int]", "Path", "datetime")


class Prose:
    """Text of plausible shape and of a chosen size, from a `Seeded` generator."""

    def __init__(self, seeded: Seeded) -> None:
        self.s = seeded

    def ident(self) -> str:
        return f"{self.s.choice(VERBS)}_{self.s.choice(NOUNS)}"

    def words(self, n: int) -> str:
        return " ".join(self.s.choice(NOUNS if i % 3 else VERBS) for i in range(n))

    def sentence(self) -> str:
        n = self.s.randint(6, 16)
        text = self.words(n)
        return text[0].upper() + text[1:] + "."

    def paragraph(self, sentences: int) -> str:
        return " ".join(self.sentence() for _ in range(sentences))

    def python(self, size: int) -> str:
        """A Python module of about `size` characters: imports, classes, functions with docstrings."""
        out = [
            '"""' + self.sentence() + '"""',
            "",
            "from __future__ import annotations",
            "",
            "import logging",
            "from dataclasses import dataclass",
            "",
            "log = logging.getLogger(__name__)",
            "",
        ]
        length = sum(len(x) + 1 for x in out)
        while length < size:
            block = self._function() if self.s.randint(0, 3) else self._class()
            out.extend(block)
            length += sum(len(x) + 1 for x in block)
        return "\n".join(out)[:size]

    def numbered(self, text: str, start: int = 1) -> str:
        """`cat -n` style, as Claude Code's Read tool returns a file."""
        return "\n".join(f"{i:6d}\u2192{row}" for i, row in enumerate(text.split("\n"), start=start))

    def _function(self) -> list[str]:
        name = self.ident()
        args = ", ".join(f"{self.s.choice(NOUNS)}: {self.s.choice(TYPES)}" for _ in range(self.s.randint(1, 3)))
        body = [f"def {name}({args}) -> {self.s.choice(TYPES)}:", f'    """{self.sentence()}"""']
        for _ in range(self.s.randint(3, 9)):
            a, b = self.s.choice(NOUNS), self.ident()
            body.append(
                self.s.choice(
                    (
                        f"    {a} = {b}({a})",
                        f"    if not {a}:",
                        f"        return {b}()",
                        f"    log.debug('{b} %s', {a})",
                        f"    for {a} in {b}():",
                    )
                )
            )
        body += [f"    return {self.s.choice(NOUNS)}", "", ""]
        return body

    def _class(self) -> list[str]:
        name = "".join(part.capitalize() for part in self.ident().split("_"))
        rows = ["@dataclass", f"class {name}:", f'    """{self.sentence()}"""', ""]
        rows += [f"    {self.s.choice(NOUNS)}: {self.s.choice(TYPES)}" for _ in range(self.s.randint(2, 5))]
        return [*rows, "", ""]

    def pytest_run(self, passed: int, failed: int = 0, size: int = 0) -> str:
        """pytest's output for a run with `passed`/`failed` tests, padded with test lines to about `size`."""
        rows = [
            "============================= test session starts ==============================",
            "platform linux -- Python 3.12.4, pytest-8.3.2, pluggy-1.5.0",
            "rootdir: /home/mika/work",
            f"collected {passed + failed} items",
            "",
        ]
        while sum(len(r) + 1 for r in rows) < size:
            rows.append(f"tests/test_{self.s.choice(NOUNS)}.py::test_{self.ident()} PASSED")
        if failed:
            rows += [
                "",
                "=================================== FAILURES ===================================",
                f"___________________________ test_{self.ident()} ___________________________",
                f"E       AssertionError: expected {self.s.randint(2, 9)} retries, got 1",
            ]
        tail = f"{failed} failed, {passed} passed" if failed else f"{passed} passed"
        rows.append(f"========================= {tail} in {self.s.randint(1, 40) / 10:.2f}s =========================")
        return "\n".join(rows)

    def grep(self, hits: int, root: str) -> str:
        return "\n".join(
            f"{root}/{self.s.choice(NOUNS)}/{self.ident()}.py:{self.s.randint(3, 400)}:    "
            f"{self.ident()}({self.s.choice(NOUNS)})"
            for _ in range(hits)
        )

    def listing(self, n: int) -> str:
        return "\n".join(f"{self.s.choice(NOUNS)}/{self.ident()}.py" for _ in range(n))
