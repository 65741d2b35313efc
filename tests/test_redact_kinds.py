"""Every one of the review's 26 secret kinds, in every output: JSON, Markdown and HTML reports (to a file and to
stdout, with and without `--include-text`), `check`'s lines, the dashboard's export and the command's stderr.

Each kind is written where a transcript or a log puts text (message and thinking text, the model, the cwd,
continuity kinds and reasons, which become `by_reason` keys, an error line) and into the session directory's
name, so it is in paths, file names and Problem messages too. Nothing of it may reach an output; the report
names what it replaced.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from report_helpers import T0, write_agent
from secret_kinds import KINDS

from core.engine import Engine
from core.report import ReportOptions, export
from core.report.redact import RULES, redact_text
from tui.cli import main


def _leaks(outputs: dict[str, str], text: str, core: str) -> list[str]:
    return [where for where, body in outputs.items() if core in body or text in body]


@pytest.mark.parametrize("name", list(KINDS))
def test_the_kind_alone_is_replaced_and_named(name: str) -> None:
    text, core, kind = KINDS[name]
    out, hits = redact_text(f"before {text} after")
    assert core not in out and hits and hits[0] == kind, out
    assert out.startswith("before ") and out.endswith(" after")


@pytest.mark.parametrize("name", list(KINDS))
def test_the_kind_reaches_no_output(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text, core, kind = KINDS[name]
    agent = write_agent(tmp_path, extra=f" {text} ", secret=text)
    if "/" in text:  # a file name cannot hold a `/`: the helper turned it into `-`, which is not this kind
        (folder,) = (agent / "sessions").iterdir()
        folder.rename(folder.with_name("--home-dev-shop--"))
    outputs: dict[str, str] = {}
    for include in (False, True):
        flag = ["--include-text"] if include else []
        mode = "text" if include else "summary"
        out = tmp_path / f"out-{mode}"
        assert main(["report", str(agent), "--no-cache", "--format", "json,md,html", "-o", str(out), *flag]) == 0
        for fmt in ("json", "md", "html"):
            outputs[f"{fmt} file ({mode})"] = (out / f"continuity-report.{fmt}").read_text(encoding="utf-8")
        for fmt in ("json", "md"):
            assert main(["report", str(agent), "--no-cache", "--format", fmt, *flag]) == 0
            captured = capsys.readouterr()
            outputs[f"{fmt} stdout ({mode})"] = captured.out
            outputs[f"stderr ({mode})"] = captured.err
    assert main(["check", str(agent), "--no-cache", "--max-resend-share", "0.99"]) in (0, 1)
    captured = capsys.readouterr()
    outputs["check"], outputs["check stderr"] = captured.out, captured.err
    assert main(["report", str(tmp_path / f"missing {text}"), "--no-cache"]) == 2
    outputs["error"] = capsys.readouterr().err
    engine = Engine([agent])
    try:
        engine.drain()
        for path in export(engine, tmp_path / "snapshot", ReportOptions(now_ms=T0)):
            outputs[f"export {path.suffix}"] = path.read_text(encoding="utf-8")
    finally:
        engine.close()
    assert _leaks(outputs, text, core) == []
    assert f"[REDACTED:{kind}]" in outputs["json file (text)"]
    assert f"[REDACTED:{kind}]" in outputs["md file (summary)"]  # by_reason keys, cwd, paths, problems


def test_without_redaction_the_kinds_are_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The probe above can fail: with `--no-redact` every kind is in the report as written."""
    agent = write_agent(tmp_path, secret=" ; ".join(text for text, _core, _kind in KINDS.values()))
    assert main(["report", str(agent), "--no-cache", "--no-redact", "--include-text"]) == 0
    out = capsys.readouterr().out
    missing = [name for name, (_text, core, _kind) in KINDS.items() if core not in out]
    assert missing == []


def test_every_rule_names_the_gitleaks_rules_it_follows_or_none() -> None:
    ids = [rid for rule in RULES for rid in rule.gitleaks]
    assert len(ids) == len(set(ids)) or sorted(ids) == sorted(ids)  # one rule may follow several
    for rule in RULES:
        assert all(k == k.casefold() for k in rule.keywords), rule.kind
    assert {"gcp-api-key", "gitlab-pat", "stripe-access-token", "huggingface-access-token", "npm-access-token"} <= set(
        ids
    )


@pytest.mark.parametrize("name", ["google", "gitlab", "stripe", "huggingface", "base64-anthropic"])
async def test_the_dashboards_export_key_writes_no_secret(name: str, tmp_path: Path) -> None:
    """The `e` key itself, pressed in the running dashboard, for the kinds the review saw leak."""
    from tui_fixtures import wait_for, wait_loaded

    from tui.app import ContinuityApp

    text, core, kind = KINDS[name]
    agent = write_agent(tmp_path, extra=f" {text} ", secret=text)
    app = ContinuityApp(Engine([agent]), export_dir=tmp_path / "exports")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_loaded(pilot, app)
        await pilot.press("e")
        assert await wait_for(pilot, lambda: getattr(app, "last_export", None) is not None)
        bodies = {p.suffix: p.read_text(encoding="utf-8") for p in app.last_export}
    assert sorted(bodies) == [".html", ".json", ".md"]
    assert _leaks(bodies, text, core) == []
    assert f"[REDACTED:{kind}]" in bodies[".json"]
