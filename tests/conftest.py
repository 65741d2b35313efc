"""Session-wide test settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.index import Index


@pytest.fixture(autouse=True)
def _index_in_tmp(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test (and every process it starts) keeps the persistent index (`core.index`) in a fresh temp dir:
    no test reads or writes ~/.cache, and no test sees another's index."""
    directory = tmp_path_factory.mktemp("index")
    monkeypatch.setenv("CONTINUITY_TUI_CACHE_DIR", str(directory))
    return directory


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[Index]:
    """The persistent index of each run, in order (a spy on `Index.restore`); `.status` is `warm` or
    `cold: <why>` once the run is over."""
    seen: list[Index] = []
    original = Index.restore

    def spy(self: Index, engine: Any) -> bool:
        seen.append(self)
        return original(self, engine)

    monkeypatch.setattr(Index, "restore", spy)
    return seen
