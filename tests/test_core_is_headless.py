"""core/ must never import textual or rich: the report and check commands run where no terminal exists."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import core

ROOT = Path(__file__).resolve().parent.parent


def _core_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(core.__path__, "core."))


def test_core_modules_import_no_ui_module() -> None:
    modules = _core_modules()
    assert "core.engine" in modules and "core.state" in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich', 'tui'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"core pulled in UI modules: {out.stdout.strip()}"


def test_report_command_path_does_not_import_textual() -> None:
    code = "import sys, tui.cli, tui.commands; print(any(m.startswith('textual') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
