"""The guarantees section names the tests that prove each guarantee: every test it names must exist.

Checks ``docs/guarantees.md`` and ``README.md`` (where the section is merged). A reference is either
``tests/test_x.py::test_name`` or, in the same table cell, ``::test_name`` after such a reference (same file).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
DOCS = [p for p in (ROOT / "docs" / "guarantees.md", ROOT / "README.md") if p.exists()]
REF = re.compile(r"`(tests/[\w/]+\.py)?::(test_\w+)`")
FILE = re.compile(r"`(tests/[\w/]+\.py)(?:::test_\w+)?`")


def references(doc: Path) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for line in doc.read_text(encoding="utf-8").splitlines():
        current: str | None = None
        for m in re.finditer(r"`[^`]+`", line):
            token = m.group(0)
            ref = REF.fullmatch(token)
            if ref:
                current = ref.group(1) or current
                assert current, f"{doc.name}: {token} without a file before it: {line[:80]}"
                out.append((current, ref.group(2)))
            elif FILE.fullmatch(token):
                current = FILE.fullmatch(token).group(1)  # type: ignore[union-attr]
                assert (ROOT / current).exists(), f"{doc.name} names a missing file {current}"
    return out


def test_the_guarantees_section_exists() -> None:
    assert DOCS and any("guarantees" in d.read_text(encoding="utf-8").lower() for d in DOCS)


@pytest.mark.parametrize("doc", DOCS, ids=[d.name for d in DOCS])
def test_every_test_the_guarantees_name_exists(doc: Path) -> None:
    refs = references(doc)
    if doc.name == "guarantees.md":
        assert len(refs) >= 30
    names: dict[str, set[str]] = {}
    for path, name in refs:
        if path not in names:
            tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
            names[path] = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
        assert name in names[path], f"{doc.name} names {path}::{name}, which does not exist"
