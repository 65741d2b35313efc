"""A real Prometheus scraping a live `continuity-tui metrics`: the same numbers as `report`, counters that follow
appended lines and never go down (a truncated file included), and every query of the Grafana dashboard and of
the alert rules answered without error and with data.

Prometheus (the Debian package's /usr/bin/prometheus; `.ci/run` installs it) runs with a temp config and TSDB,
scraping the exporter on 127.0.0.1 every second and evaluating `docs/prometheus/alerts.yml` every second, on free
ports; its HTTP API is queried like Grafana queries it. The data is real: the bundled senpi demo (log decisions,
payloads, directives, problems), a real pi session (`../shared/realdata`, half of it at start, more appended
while it runs) and a real Claude Code project (prompt-cache figures). Wall time ~20 s.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.exporter_support import Running, expected, nonzero, start, stop, wait_for

ROOT = Path(__file__).resolve().parent.parent
REALDATA = ROOT.parent / "shared" / "realdata"
DEMO = ROOT / "core" / "demo" / "data"
DASHBOARD = ROOT / "docs" / "grafana" / "continuity-tui.json"
RULES = ROOT / "docs" / "prometheus" / "alerts.yml"
PI_FILE = next(iter(sorted((REALDATA / "pi").rglob("*.jsonl"))), None) if REALDATA.is_dir() else None
CLAUDE = REALDATA / "claude-code" / "marot-spotter"
#: what Grafana puts in for its variables when the queries run here (All selected; windows that hold several
#: 1 s scrapes of this short run)
GRAFANA_VARS = {"$__rate_interval": "10s", "$__range": "5m", "$__interval": "2s", "$instance": ".*", "$agent": ".*"}


def prometheus_binary() -> str:
    found = shutil.which("prometheus") or ("/usr/bin/prometheus" if Path("/usr/bin/prometheus").exists() else None)
    if found is None:
        pytest.skip("the prometheus binary is not installed (Debian package prometheus; .ci/run installs it)")
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Prometheus:
    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"

    def api(self, path: str, **params: str) -> Any:
        url = f"{self.base}/api/v1/{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        with urllib.request.urlopen(url, timeout=10) as response:
            body = json.loads(response.read())
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        data = self.api("query", query=expr, time=f"{time.time():.3f}")
        assert data["resultType"] == "vector", (expr, data)
        return data["result"]

    def by(self, expr: str, *labels: str) -> dict[tuple[str, ...], float]:
        return {tuple(r["metric"].get(k, "") for k in labels): float(r["value"][1]) for r in self.query(expr)}

    def value(self, expr: str) -> float:
        result = self.query(expr)
        return float(result[0]["value"][1]) if result else math.nan


@pytest.fixture
def data(tmp_path: Path) -> Path:
    if PI_FILE is None or not CLAUDE.is_dir():
        pytest.skip("../shared/realdata is not here")
    root = tmp_path / "data"
    shutil.copytree(DEMO, root / "senpi")
    shutil.copytree(CLAUDE, root / "claude")
    pi = root / "pi" / "--home-dev-pi--" / PI_FILE.name
    pi.parent.mkdir(parents=True)
    pi.write_bytes(b"".join(PI_FILE.read_bytes().splitlines(keepends=True)[:400]))
    return root


@pytest.fixture
def stack(data: Path, tmp_path: Path) -> Iterator[tuple[Running, Prometheus]]:
    binary = prometheus_binary()
    exporter = start([data], tmp_path, "--no-cache")
    port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(  # (JSON is YAML)
        json.dumps(
            {
                "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
                "rule_files": [str(RULES)],
                "scrape_configs": [
                    {"job_name": "continuity", "static_configs": [{"targets": [f"127.0.0.1:{exporter.port}"]}]}
                ],
            }
        )
    )
    log = (tmp_path / "prometheus.log").open("wb")
    server = subprocess.Popen(
        [binary, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    prometheus = Prometheus(port)
    try:

        def ready() -> bool:
            try:
                with urllib.request.urlopen(f"{prometheus.base}/-/ready", timeout=2) as response:
                    return response.status == 200
            except OSError:
                return server.poll() is not None  # stop waiting: it exited

        assert wait_for(ready, timeout=60) and server.poll() is None, (tmp_path / "prometheus.log").read_text()
        yield exporter, prometheus
    finally:
        server.terminate()
        server.wait(30)
        log.close()
        if exporter.proc.poll() is None:
            assert stop(exporter) == 0


def report_of(data: Path) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "tui.cli", "report", str(data), "--format", "json", "--no-cache"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def scraped(prometheus: Prometheus) -> dict[str, dict[tuple[str, ...], float]]:
    """What Prometheus holds now, in the shape of `expected`."""
    return {
        "calls": prometheus.by("sum by (agent, kind, reason, model) (continuity_calls_total)",
                               "agent", "kind", "reason", "model"),
        "payload": prometheus.by("sum by (agent, kind) (continuity_payload_bytes_total)", "agent", "kind"),
        "tokens": prometheus.by("sum by (agent, type) (continuity_tokens_total)", "agent", "type"),
        "directives": prometheus.by("sum by (tag) (continuity_directive_copies_total)", "tag"),
        "excess": prometheus.by("sum by (agent, cause) (continuity_cache_excess_write_tokens_total)", "agent", "cause"),
        "log": prometheus.by("sum by (kind, reason) (continuity_log_decisions_total)", "kind", "reason"),
        "sessions": prometheus.by("sum by (agent) (continuity_sessions)", "agent"),
    }  # fmt: skip


def agrees(prometheus: Prometheus, report: dict[str, Any]) -> bool:
    want = {name: nonzero(counter) for name, counter in expected(report).items()}
    got = {name: nonzero(values) for name, values in scraped(prometheus).items()}
    problems = prometheus.value("sum(continuity_problems_total) + sum(continuity_pending_problems)")
    return got == want and problems == report["problems_total"]


def show_difference(prometheus: Prometheus, report: dict[str, Any]) -> str:
    want = {name: nonzero(counter) for name, counter in expected(report).items()}
    got = {name: nonzero(values) for name, values in scraped(prometheus).items()}
    lines = [f"{name}: report {want[name]} prometheus {got[name]}" for name in want if want[name] != got[name]]
    lines.append(
        f"problems: report {report['problems_total']} prometheus {prometheus.value('sum(continuity_problems_total)')}"
    )
    return "\n".join(lines)


def has_waste(report: dict[str, Any]) -> bool:
    """The report prices its cache excess (`waste.cost_usd`, schema Additions; issue 14)."""
    return bool((report.get("waste") or {}).get("cost_usd"))


def grafana_queries() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text())
    out = [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", ())]
    assert len(out) >= 15 and all(out)
    return out


def grafana_variable_queries() -> list[str]:
    """`label_values(METRIC, LABEL)` of the dashboard's variables, as a query whose result lists the values."""
    out = []
    for variable in json.loads(DASHBOARD.read_text())["templating"]["list"]:
        if variable["type"] != "query":
            continue
        found = re.fullmatch(r"label_values\((.+),\s*(\w+)\)", variable["definition"])
        assert found, variable["definition"]
        out.append(f"count by ({found.group(2)}) ({found.group(1)})")
    return out


def substitute(expr: str) -> str:
    for name, value in sorted(GRAFANA_VARS.items(), key=lambda kv: -len(kv[0])):
        expr = expr.replace(name, value)
    assert "$" not in expr, expr
    return expr


def test_prometheus_scraping_a_live_exporter(stack: tuple[Running, Prometheus], data: Path) -> None:
    exporter, prometheus = stack
    assert wait_for(lambda: prometheus.query("continuity_calls_total"), timeout=60), "never scraped"
    assert prometheus.value('up{job="continuity"}') == 1

    # 1. the same numbers as `report` on the same files
    first = report_of(data)
    assert first["turns"] and first["continuity"]["events"] and first["problems_total"]
    assert wait_for(lambda: agrees(prometheus, first), timeout=20), show_difference(prometheus, first)
    calls_before = prometheus.value("sum(continuity_calls_total)")
    log_before = prometheus.value("sum(continuity_log_decisions_total)")

    # 2. appended lines: a pi session grows by 300 lines, session.log by 7 decisions and one bad line
    assert PI_FILE is not None
    pi = next((data / "pi").rglob("*.jsonl"))
    lines = PI_FILE.read_bytes().splitlines(keepends=True)
    log = data / "senpi" / "logs" / "session.log"
    decisions = [line for line in log.read_bytes().splitlines(keepends=True) if b"session_continuity" in line][:7]
    with pi.open("ab") as fh:
        fh.write(b"".join(lines[400:700]))
    with log.open("ab") as fh:
        fh.write(b"".join(decisions) + b'{"ts": "2026-10-12T14:30:00.000Z", "event": \n')
    grown = report_of(data)
    assert grown["problems_total"] == first["problems_total"] + 1
    assert wait_for(lambda: agrees(prometheus, grown), timeout=20), show_difference(prometheus, grown)
    calls_after = prometheus.value("sum(continuity_calls_total)")
    assert calls_after > calls_before
    assert prometheus.value("sum(continuity_log_decisions_total)") == log_before + 7
    print(f"\ncalls {calls_before:.0f} -> {calls_after:.0f}; log decisions {log_before:.0f} -> {log_before + 7:.0f}")

    # 3. a truncated file keeps its counts (Prometheus sees no counter reset) and says so
    pi.write_bytes(b"".join(lines[:60]))
    assert wait_for(lambda: prometheus.value('sum(continuity_source_resets_total{event="truncated"})') == 1, timeout=20)
    time.sleep(2.5)  # a few more scrapes after the reset
    assert prometheus.value("sum(continuity_calls_total)") >= calls_after
    assert prometheus.value("sum(resets(continuity_calls_total[5m]))") == 0
    assert prometheus.value("sum(resets(continuity_tokens_total[5m]))") == 0

    # 4. every query of the Grafana dashboard, as Grafana sends it, answers with data (waste in dollars once the
    # report has its `waste` section, issue 14: until then those queries only have to run)
    failures = []
    for expr in [*grafana_queries(), *grafana_variable_queries()]:
        query = substitute(expr)
        if not prometheus.query(query) and (has_waste(grown) or "waste_usd" not in query):
            failures.append(query)
    assert not failures, "dashboard queries without data:\n" + "\n".join(failures)

    # 5. the alert rules: loaded and evaluated by this Prometheus without error; each query answers with data
    assert wait_for(lambda: all(r.get("lastEvaluation", "").startswith("2") and not r["lastEvaluation"].startswith("0001")
                                for g in prometheus.api("rules")["groups"] for r in g["rules"]), timeout=10)  # fmt: skip
    rules = [rule for group in prometheus.api("rules")["groups"] for rule in group["rules"]]
    assert {r["name"] for r in rules} >= {"ContinuityResendShareHigh", "ContinuityWasteHigh", "ContinuityInputProblems"}
    assert all(r["health"] == "ok" and not r.get("lastError") for r in rules), rules
    empty = []
    for rule in rules:
        prometheus.query(rule["query"])  # as written: evaluates (an alert's is empty while it does not hold)
        measured = rule["query"] if rule["type"] == "recording" else re.sub(r" ([<>]=?) ", r" \1 bool ", rule["query"])
        if not prometheus.query(measured) and (has_waste(grown) or "waste_usd" not in measured):
            empty.append(measured)
    assert not empty, "rule queries without data:\n" + "\n".join(empty)
    # the bad line appended in step 2 is a new problem: that alert holds (pending for its 5 minutes)
    alerts = {a["labels"]["alertname"]: a["state"] for a in prometheus.api("alerts")["alerts"]}
    assert alerts.get("ContinuityInputProblems") in ("pending", "firing"), alerts

    assert stop(exporter) == 0


def _promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        pytest.skip("promtool is not installed (Debian package prometheus; .ci/run installs it)")
    return found


def test_promtool_checks_the_rules_and_their_thresholds() -> None:
    promtool = _promtool()
    checked = subprocess.run([promtool, "check", "rules", str(RULES)], capture_output=True, timeout=60)
    assert checked.returncode == 0 and b"SUCCESS: 8 rules found" in checked.stdout, checked.stdout + checked.stderr
    tested = subprocess.run(
        [promtool, "test", "rules", str(RULES.with_name("alerts.test.yml"))], capture_output=True, timeout=60
    )
    assert tested.returncode == 0 and b"SUCCESS" in tested.stdout, tested.stdout + tested.stderr


def test_the_dashboard_is_an_importable_grafana_dashboard() -> None:
    """What Grafana's import needs: a datasource input, a uid and title, panels with a position and targets that
    name the chosen data source, and the variables the queries use."""
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["__inputs"][0] == {
        "name": "DS_PROMETHEUS", "label": "Prometheus", "description": "", "type": "datasource",
        "pluginId": "prometheus", "pluginName": "Prometheus",
    }  # fmt: skip
    assert dashboard["uid"] == "continuity-tui" and dashboard["title"] and dashboard["schemaVersion"] >= 36
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    assert set(variables) == {"datasource", "instance", "agent"}
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    titles = " ".join(panel["title"].lower() for panel in dashboard["panels"])
    for wanted in ("re-send share", "waste $/h by cause", "payload bytes", "directive copies", "problems"):
        assert wanted in titles
    for panel in dashboard["panels"]:
        assert set(panel["gridPos"]) == {"x", "y", "w", "h"} and panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"} and panel["targets"]
        for target in panel["targets"]:
            assert target["datasource"] == panel["datasource"] and target["refId"]
            assert 'instance=~"$instance"' in target["expr"]
