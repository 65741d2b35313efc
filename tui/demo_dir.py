"""Where `--demo` replays its data: a temporary dir removed on exit, or `--demo-dir DIR`, kept.

The demo used to write a new `$TMPDIR/continuity-demo-*/agent` each run (~1.8 MB), never removed and never
named, so `report` could not be pointed at it while the demo ran. Now the dir is named on screen (the demo
bar) and removed on exit unless the user chose it. A chosen dir must be empty, or one an earlier demo wrote
(marked with a dot-file, which discovery skips): the replay appends, so old files would be read twice.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

MARKER = ".continuity-demo"


class DemoDirError(ValueError):
    """A `--demo-dir` that cannot be used (not empty, not a dir); the message is one line for the user."""


@dataclass(frozen=True, slots=True)
class DemoDir:
    path: Path  # the agent dir the writer fills (what `report` takes)
    kept: bool  # chosen with --demo-dir: not removed on exit
    _remove: Path | None = None  # the temp dir to remove on exit

    def cleanup(self) -> None:
        if self._remove is not None:
            shutil.rmtree(self._remove, ignore_errors=True)


def prepare(chosen: Path | None) -> DemoDir:
    """A fresh dir for the replay: under the system temp dir, or `chosen` (created, or an earlier demo's emptied)."""
    if chosen is None:
        base = Path(tempfile.mkdtemp(prefix="continuity-demo-"))
        target = base / "agent"
        target.mkdir()
        return DemoDir(target, kept=False, _remove=base)
    target = chosen.expanduser()
    if target.exists() and not target.is_dir():
        raise DemoDirError(f"--demo-dir {chosen}: not a directory")
    if target.is_dir() and any(target.iterdir()):
        if not (target / MARKER).is_file():
            raise DemoDirError(f"--demo-dir {chosen}: not empty, and not a dir an earlier demo wrote "
                               "(the replay appends: give an empty or new dir)")  # fmt: skip
        for child in target.iterdir():  # an earlier demo: start it over
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
    target.mkdir(parents=True, exist_ok=True)
    (target / MARKER).write_text("written by continuity-tui --demo; removed and rewritten by the next one\n")
    return DemoDir(target, kept=True)
