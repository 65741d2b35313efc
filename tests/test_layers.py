"""The layers hold: model <- kernel <- agents <- state <- (report | tui), read from every import in the source.

Every `import` / `from … import` of every module under `core/` and `tui/` is read with `ast`, wherever it sits
(module level, inside a function, under `TYPE_CHECKING`): a function-local import is still a dependency, and
a type-only one still couples two layers. The rules:

- each module belongs to a layer and imports only its own layer and those below it;
- the kernel and the sources sit side by side on the model and import none of each other (the format machinery
  may use the tailer's `Line`);
- an agent (`core/agents/<name>/`) imports the model, the kernel, the format machinery, the agents' base and
  what agents share (`core/agents/shared/`), never another agent, the sources (analysis does no IO of its own:
  it is handed the re-read port) or anything above (state, engine, report, tui);
- core never imports textual, rich or tui (`tests/test_core_is_headless.py` also checks it at run time);
- the senpi simulator (`core/demo/simulate.py`, `core/demo/sim/`) is a leaf: it imports nothing of core but
  itself, and only the demo (`core/demo/`), the tests and the bench import it: it is the independent oracle
  the analysis is checked against.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: (layer, module prefixes), lowest first; a module is in the layer of its longest matching prefix
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("model", ("core", "core.model", "core.logblock", "core.timeutil", "core.sanitize")),
    ("kernel", ("core.kernel",)),
    ("formats", ("core.formats",)),
    ("sources", ("core.sources",)),
    ("agents", ("core.agents",)),
    ("state", ("core.state",)),
    ("engine", ("core.engine", "core.pool", "core.session_pool")),
    ("report", ("core.report",)),
    ("index", ("core.index",)),
    ("demo", ("core.demo",)),
    ("tui", ("tui",)),
]
#: what each layer may import besides itself
ALLOWED: dict[str, set[str]] = {
    "model": set(),
    "kernel": {"model"},
    "formats": {"model", "sources"},  # the document joiner works on the tailer's lines
    "sources": {"model"},
    "agents": {"model", "kernel", "formats"},
    "state": {"model", "kernel", "formats", "sources", "agents"},
    "engine": {"model", "kernel", "formats", "sources", "agents", "state"},
    "report": {"model", "kernel", "formats", "sources", "agents", "state", "engine"},
    # the persistent index keeps strings only when the report's redaction leaves them unchanged
    "index": {"model", "kernel", "formats", "sources", "agents", "state", "engine", "report"},
    "demo": {"model"},
    "tui": {"model", "kernel", "formats", "sources", "agents", "state", "engine", "report", "index", "demo"},
}
SIM = ("core.demo.simulate", "core.demo.sim")
UI = ("textual", "rich", "tui")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _layer(name: str) -> str | None:
    best: tuple[int, str] | None = None
    for layer, prefixes in LAYERS:
        for prefix in prefixes:
            if (name == prefix if prefix == "core" else _under(name, prefix)) and (
                best is None or len(prefix) > best[0]
            ):
                best = (len(prefix), layer)
    return best[1] if best else None


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported module) of every import in the file; `from pkg import name` counts `pkg.name` when that
    is a module (so `from core.agents import senpi` is an import of the senpi agent)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            out.append((node.lineno, module))
            for alias in node.names:
                candidate = f"{module}.{alias.name}"
                target = ROOT / Path(*candidate.split("."))
                if target.with_suffix(".py").exists() or (target / "__init__.py").exists():
                    out.append((node.lineno, candidate))
    return out


def _sources() -> list[Path]:
    return sorted(p for top in ("core", "tui") for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts)


def _agent_of(name: str) -> str | None:
    """`core.agents.<name>…` -> `<name>` for an agent package (not the base, the registry or `shared`)."""
    parts = name.split(".")
    if len(parts) >= 3 and parts[:2] == ["core", "agents"] and parts[2] not in ("base", "shared"):
        return parts[2]
    return None


def rule_broken(name: str, imported: str) -> str | None:
    """Why module `name` may not import `imported`, or None when it may."""
    layer = _layer(name)
    assert layer is not None, f"{name} is in no layer: add it to LAYERS"
    if imported.split(".")[0] in UI and name.startswith("core"):
        return "core never imports textual, rich or tui"
    if not (imported == "core" or imported.startswith(("core.", "tui"))):
        return None
    if any(_under(name, s) for s in SIM):
        ok = any(_under(imported, s) for s in SIM)
        return None if ok else "the simulator imports nothing of core: it is the independent oracle"
    if any(_under(imported, s) for s in SIM):
        return None if layer == "demo" else "only the demo, the tests and the bench use the simulator"
    target = _layer(imported)
    if target is None or target == layer:
        mine, theirs = _agent_of(name), _agent_of(imported)
        if layer == "agents" and theirs is not None and theirs != mine:
            return "agents never import each other: what they share lives in core.agents.shared"
        return None
    return None if target in ALLOWED[layer] else f"{layer} may not import {target}"


def violations() -> list[str]:
    out: list[str] = []
    for path in _sources():
        name = _module_name(path)
        for line, imported in _imports(path):
            why = rule_broken(name, imported)
            if why is not None:
                out.append(f"{path.relative_to(ROOT)}:{line}: {name} imports {imported} ({why})")
    return out


def test_imports_follow_the_layers() -> None:
    """model <- kernel <- agents <- state <- (report | tui); agents never import each other or state."""
    assert violations() == []


def test_analysis_imports_no_state_and_opens_no_file() -> None:
    """The two ways analysis used to reach around its layer: importing state, and reading files itself."""
    offenders = []
    for path in _sources():
        name = _module_name(path)
        if _layer(name) not in ("kernel", "agents"):
            continue
        for line, imported in _imports(path):
            if _under(imported, "core.state") or _under(imported, "core.sources"):
                offenders.append(f"{name}:{line} imports {imported}")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open":
                offenders.append(f"{name}:{node.lineno} calls open()")
    assert offenders == []


@pytest.mark.parametrize(
    ("name", "imported", "broken"),
    [
        ("core.agents.pi.turns", "core.agents.senpi.profiles", True),  # one agent importing another
        ("core.agents.shared.stateless", "core.agents.claude_code.format", True),  # shared code naming an agent
        ("core.agents.senpi.commit", "core.state", True),
        ("core.agents.senpi.drilldown", "core.sources.reread", True),  # IO goes through the port it is handed
        ("core.kernel.diff", "core.agents.base", True),
        ("core.kernel.pipeline", "core.formats.base", True),
        ("core.sources.reread", "core.kernel.ports", True),
        ("core.state.tree", "core.engine", True),
        ("core.report.build", "tui.view", True),
        ("core.engine", "textual.app", True),
        ("core.demo.simulate", "core.model", True),  # the oracle stays independent of what it checks
        ("core.state", "core.demo.sim.builds", True),
        ("core.agents.pi.turns", "core.agents.shared.pi_family.turns", False),
        ("core.agents.senpi.analysis", "core.agents.senpi.payload.analyzer", False),
        ("core.agents.base", "core.kernel.pipeline", False),
        ("core.state.session", "core.agents.base", False),
        ("tui.screens.detail", "core.agents.senpi.drilldown", False),
        ("core.demo.bundle", "core.demo.simulate", False),
    ],
)
def test_the_rules_catch_each_kind_of_wrong_import(name: str, imported: str, broken: bool) -> None:
    """The checker is not vacuous: each kind of import the layers forbid is reported, and the allowed kinds not."""
    assert (rule_broken(name, imported) is not None) == broken


def test_importing_the_agents_imports_no_analysis() -> None:
    """Cheap to import: the list of agents loads their adapters, not their analyses (imported when a file of the
    agent is first read), so a Claude Code history never imports senpi's replay."""
    code = (
        "import sys, core.agents\n"
        "analyses = {agent.analysis for agent in core.agents.AGENTS}\n"
        "heavy = ('core.agents.senpi.continuity', 'core.agents.senpi.payload', 'core.agents.senpi.commit',\n"
        "         'core.agents.claude_code.calls', 'core.agents.mux.audit', 'core.agents.shared.pi_family.context')\n"
        "print(','.join(sorted(m for m in sys.modules if m in analyses or m.startswith(heavy))))\n"
        "core.agents.agent_named('claude-code').load()\n"
        "print(','.join(sorted(m for m in sys.modules if m in analyses)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    before, after = out.stdout.rstrip("\n").split("\n")
    assert before == "" and after == "core.agents.claude_code.analysis"


def test_a_log_imports_only_the_agents_its_sniff_reaches(tmp_path: Path) -> None:
    """Agents' packages are imported in sniff order as a file reaches them: a session.log is senpi's before Claude
    Code's, mux's or Codex's adapters are tried, so a log report imports none of those three (and `AGENTS`, which
    names them all, still gives every agent, each checked against `core.agents._AGENTS`)."""
    log = tmp_path / "logs" / "session.log"
    log.parent.mkdir()
    log.write_text(
        '{"ts":"2026-01-01T08:00:28.405Z","level":"info","event":"claude_sdk_oauth_session_continuity",'
        '"kind":"delta","reason":"prefix_matched","count":8}\n'
    )
    code = (
        "import sys\n"
        "from tui.cli import main\n"
        f"assert main(['report', {str(log)!r}, '--no-cache', '-o', {str(tmp_path / 'r.json')!r}]) == 0\n"
        "print(','.join(sorted({m.split('.')[2] for m in sys.modules if m.startswith('core.agents.') and "
        "m.count('.') >= 2} - {'base', 'shared'})))\n"
        "import core.agents\n"
        "print(','.join(agent.name for agent in core.agents.AGENTS))\n"
        "print('ctypes' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    # nor ctypes: a small file frees no block that would raise glibc's mmap threshold (`tui.cli.tune_malloc`)
    assert out.stdout.split("\n")[:3] == ["pi,senpi", "pi,senpi,claude-code,mux,codex", "False"], out.stdout


def test_only_small_regular_files_skip_the_malloc_tuning(tmp_path: Path) -> None:
    from tui.cli import SMALL_INPUT, small_input

    small, big = tmp_path / "a.log", tmp_path / "b.log"
    small.write_bytes(b"x" * 100)
    big.write_bytes(b"x" * (SMALL_INPUT + 1))
    assert small_input([small]) and small_input([small, small])
    assert not small_input([big]) and not small_input([small, big]) and not small_input([])
    assert not small_input([tmp_path]) and not small_input([Path("-")]) and not small_input([tmp_path / "gone"])
