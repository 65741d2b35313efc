"""Session-wide test settings."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _index_in_tmp(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test (and every process it starts) keeps the persistent index (`core.index`) in a fresh temp dir:
    no test reads or writes ~/.cache, and no test sees another's index."""
    directory = tmp_path_factory.mktemp("index")
    monkeypatch.setenv("CONTINUITY_TUI_CACHE_DIR", str(directory))
    return directory
