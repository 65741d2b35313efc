"""The OpenMetrics exposition (`core.report.openmetrics`): every figure equals the JSON report's on the same files,
`promtool check metrics` accepts it, counters never go down when a file is truncated or replaced, labels stay
bounded, inert and redacted, and session ids appear only with `per_session`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.engine import Engine
from core.report import ReportOptions, build_report
from core.report.openmetrics import LABEL_LIMIT, OTHER, Exposition, Labels, render_snapshot
from tests.exporter_support import call_of, expected, nonzero, parse, total

ROOT = Path(__file__).resolve().parent.parent
REALDATA = ROOT.parent / "shared" / "realdata"
DEMO = ROOT / "core" / "demo" / "data"
HOSTILE = ROOT / "tests" / "data" / "hostile"
PI_FILE = next(iter(sorted((REALDATA / "pi").rglob("*.jsonl"))), None) if REALDATA.is_dir() else None


def _sets() -> list[Path]:
    out = [DEMO, HOSTILE]
    if REALDATA.is_dir():
        out += sorted(p for p in (REALDATA / "claude-code").iterdir() if p.is_dir())
        out += [REALDATA / "pi", REALDATA / "codex", REALDATA / "mux", REALDATA / "senpi-live" / "agent"]
    return out


SETS = _sets()


def drained(path: Path) -> Engine:
    engine = Engine([path])
    engine.drain()
    return engine


@pytest.mark.parametrize("path", SETS, ids=lambda p: p.name)
def test_every_figure_equals_the_json_report(path: Path) -> None:
    engine = drained(path)
    report = build_report(engine, ReportOptions(redact=True))
    samples = parse(render_snapshot(engine))
    engine.close()
    want = expected(report)
    assert nonzero(total(samples, "continuity_calls_total", ("agent", "kind", "reason", "model"))) == nonzero(
        want["calls"]
    )
    calls = report["calls"]  # the report's own aggregates agree with the sums of its turns, and so with these
    assert sum(total(samples, "continuity_calls_total").values()) == calls["total"]
    assert nonzero(total(samples, "continuity_calls_total", ("agent", "kind"))) == {
        (agent, kind): n for agent, figures in calls["by_agent"].items() for kind, n in figures["by_kind"].items()
    }
    assert nonzero(total(samples, "continuity_calls_total", ("kind",))) == nonzero(
        {(kind,): n for kind, n in calls["by_kind"].items()}
    )
    assert nonzero(total(samples, "continuity_tokens_total", ("type",))) == nonzero(
        {(kind,): n for kind, n in (calls["tokens"] or {}).items()}
    )
    assert nonzero(total(samples, "continuity_payload_bytes_total", ("agent", "kind"))) == nonzero(want["payload"])
    assert nonzero(total(samples, "continuity_tokens_total", ("agent", "type"))) == nonzero(want["tokens"])
    assert nonzero(total(samples, "continuity_directive_copies_total", ("tag",))) == nonzero(want["directives"])
    assert nonzero(total(samples, "continuity_cache_excess_write_tokens_total", ("agent", "cause"))) == nonzero(
        want["excess"]
    )
    assert nonzero(total(samples, "continuity_log_decisions_total", ("kind", "reason"))) == nonzero(want["log"])
    assert sum(total(samples, "continuity_problems_total").values()) == report["problems_total"]
    assert nonzero(total(samples, "continuity_sessions", ("agent",))) == nonzero(want["sessions"])
    assert total(samples, "continuity_read_bytes_total")[()] == sum(s["bytes"] for s in report["sources"])
    assert total(samples, "continuity_unread_bytes")[()] == 0
    newest = max((t["ts"] for t in report["turns"] if t["ts"] and call_of(t) is not None), default=None)
    if newest is not None:
        from core.timeutil import parse_iso_ms

        assert max(total(samples, "continuity_last_call_timestamp_seconds", ("agent",)).values()) == pytest.approx(
            (parse_iso_ms(newest) or 0) / 1000, abs=0.001
        )
    assert ("continuity_build_info", frozenset({("version", report["tool_version"])})) in {
        (name, frozenset(kv for kv in labels if kv[0] == "version")) for name, labels in samples
    }


def _promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        pytest.skip("promtool not installed (Debian package prometheus; .ci/run installs it)")
    return found


@pytest.mark.parametrize("per_session", [False, True], ids=["default", "per-session"])
def test_promtool_accepts_the_output_of_every_set(tmp_path: Path, per_session: bool) -> None:
    promtool = _promtool()
    for path in SETS:
        cmd = [sys.executable, "-m", "tui.cli", "report", str(path), "--format", "openmetrics", "--no-cache"]
        out = subprocess.run(
            [*cmd, *(["--per-session"] if per_session else [])], cwd=ROOT, capture_output=True, timeout=300
        )
        assert out.returncode == 0, out.stderr
        checked = subprocess.run([promtool, "check", "metrics"], input=out.stdout, capture_output=True, timeout=60)
        assert checked.returncode == 0 and not checked.stdout.strip() and not checked.stderr.strip(), (
            path,
            checked.stdout.decode(),
            checked.stderr.decode(),
        )


def _calls(exposition: Exposition) -> float:
    return sum(total(parse(exposition.render()), "continuity_calls_total").values())


def _resets(exposition: Exposition) -> dict[tuple[str, ...], float]:
    return total(parse(exposition.render()), "continuity_source_resets_total", ("format", "event"))


@pytest.mark.skipif(PI_FILE is None, reason="../shared/realdata is not here")
def test_a_truncated_or_replaced_file_keeps_its_counts_and_counts_its_new_lines(tmp_path: Path) -> None:
    assert PI_FILE is not None
    lines = PI_FILE.read_bytes().splitlines(keepends=True)
    target = tmp_path / "sessions" / "--home-x--" / PI_FILE.name
    target.parent.mkdir(parents=True)
    target.write_bytes(b"".join(lines[:400]))
    engine = Engine([tmp_path])
    exposition = Exposition(engine)
    engine.drain()
    first = _calls(exposition)
    alone = drained(target)
    assert first == _calls(Exposition(alone)) > 0
    alone.close()

    target.write_bytes(b"".join(lines[:100]))  # truncated: shorter than what was read
    engine.drain()
    after_truncation = _calls(exposition)
    short = drained(target)
    assert after_truncation == first + _calls(Exposition(short))  # kept, and its new lines count from there
    short.close()
    assert _resets(exposition) == {("pi-transcript", "truncated"): 1}

    with target.open("ab") as fh:  # grows again: only the new lines add
        fh.write(b"".join(lines[100:300]))
    engine.drain()
    grown = drained(target)
    assert _calls(exposition) == first + _calls(Exposition(grown))
    grown.close()

    replacement = target.with_name("new.tmp")  # an atomic replacement by a new file
    replacement.write_bytes(b"".join(lines[:50]))
    os.replace(replacement, target)
    before = _calls(exposition)
    engine.drain()
    fifty = drained(target)
    assert _calls(exposition) == before + _calls(Exposition(fifty))
    fifty.close()
    assert _resets(exposition) == {("pi-transcript", "truncated"): 1, ("pi-transcript", "replaced"): 1}
    engine.close()


def test_label_values_are_bounded_inert_and_redacted() -> None:
    labels = Labels(redact=True)
    kept = [labels("tag", f"tag-{i}") for i in range(LABEL_LIMIT + 50)]
    assert kept[:LABEL_LIMIT] == [f"tag-{i}" for i in range(LABEL_LIMIT)]
    assert set(kept[LABEL_LIMIT:]) == {OTHER}
    assert labels("tag", "tag-3") == "tag-3"  # a kept value keeps its series
    assert labels.folded["tag"] == 50
    assert "\x1b" not in labels("model", "claude\x1b]0;pwned\x07-opus\nline")
    secret = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8" * 6 + "AA"
    assert secret not in labels("model", f"model {secret}")
    assert Labels(redact=False)("model", f"model {secret}") == f"model {secret}"


def test_no_session_label_unless_per_session() -> None:
    engine = drained(DEMO)
    plain = parse(render_snapshot(engine))
    per = parse(render_snapshot(engine, per_session=True))
    report = build_report(engine, ReportOptions())
    engine.close()
    assert not any(name == "session" for _, labels in plain for name, _ in labels)
    sessions = {dict(labels).get("session") for name, labels in per if name == "continuity_calls_total"}
    assert sessions == {s["id"] for s in report["sessions"] if s["turns"]}
    assert sum(total(per, "continuity_calls_total").values()) == sum(total(plain, "continuity_calls_total").values())


def test_report_format_openmetrics_writes_a_prom_file_beside_the_others(tmp_path: Path) -> None:
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "tui.cli", "report", str(DEMO), "--no-cache", "--format", "json,openmetrics"]
    done = subprocess.run([*cmd, "-o", str(out)], cwd=ROOT, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["continuity-report.json", "continuity-report.prom"]
    report = json.loads((out / "continuity-report.json").read_text())
    samples = parse((out / "continuity-report.prom").read_text())
    assert sum(total(samples, "continuity_log_decisions_total").values()) == report["continuity"]["events"]
    refused = subprocess.run([*cmd[:-1], "openmetrics", "--since", "2h"], cwd=ROOT, capture_output=True, timeout=300)
    assert refused.returncode == 2
    assert b"--format openmetrics counts everything read" in refused.stderr


HIVE = REALDATA / "claude-code" / "Crazytieguy-alignment-hive"


@pytest.mark.skipif(not HIVE.is_dir(), reason="needs ../shared/realdata")
def test_prices_file_prices_the_waste_series_as_it_prices_the_report(tmp_path: Path) -> None:
    """`--prices` reaches the OpenMetrics waste dollars (the snapshot and `metrics`), as it reaches the JSON's."""
    prices = tmp_path / "prices.json"
    doubled = {"input": 10.0, "output": 50.0, "cache_write_5m": 12.5, "cache_write_1h": 20.0, "cache_read": 1.0}
    prices.write_text(json.dumps({"claude-opus-4-5": doubled}))

    def run(*extra: str) -> tuple[float, float]:
        out = tmp_path / f"out{len(extra)}"
        cmd = [sys.executable, "-m", "tui.cli", "report", str(HIVE), "--no-cache", "--format", "json,openmetrics"]
        done = subprocess.run([*cmd, "-o", str(out), *extra], cwd=ROOT, capture_output=True, timeout=300)
        assert done.returncode == 0, done.stderr
        report = json.loads((out / "continuity-report.json").read_text())
        samples = parse((out / "continuity-report.prom").read_text())
        return sum(total(samples, "continuity_waste_usd_total").values()), report["waste"]["cost_usd"]["excess"]

    bundled_prom, bundled_json = run()
    priced_prom, priced_json = run("--prices", str(prices))
    assert bundled_prom == pytest.approx(bundled_json, abs=1e-4) and bundled_json > 0
    assert priced_prom == pytest.approx(priced_json, abs=1e-4)
    assert priced_prom == pytest.approx(2 * bundled_prom, rel=1e-3)  # every price doubled
    engine = drained(HIVE)
    from core.kernel.pricing import load_prices

    live = Exposition(engine, prices=load_prices(prices))  # what `metrics --prices` builds
    assert sum(total(parse(live.render()), "continuity_waste_usd_total").values()) == pytest.approx(
        priced_prom, abs=1e-4
    )
    engine.close()
