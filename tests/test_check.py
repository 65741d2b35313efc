"""`continuity-tui check`: one line per threshold with the measured value; exit 0 / 1 / 2."""

from __future__ import annotations

from argparse import Namespace
from pathlib import Path

import pytest
from report_helpers import OTHER_SESSION_ID, SESSION_ID, T0, enrich, ts, write_agent

from core.engine import Engine
from core.report import ReportOptions, build_report
from core.report.check import Thresholds, evaluate
from tui.cli import main


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    return write_agent(tmp_path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    code = main(["check", *argv])
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err


def test_passing_thresholds_exit_0_with_one_line_each(agent: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, _ = run(capsys, str(agent), "--max-resend-share", "0.7", "--max-payload-bytes", "10000000")
    assert code == 0
    assert lines[0] == "PASS resend-share 0.3333 <= max 0.7000 (over calls: 2 re-sends in 6 calls)"
    assert lines[1] == "PASS resend-share 0.6154 <= max 0.7000 (over log lines: 8 re-sends in 13 log decisions)"
    assert lines[2].startswith("PASS payload-bytes ") and lines[2].endswith(")") and len(lines) == 3


def test_resend_share_above_the_threshold_fails_with_exit_1(agent: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Calls and log lines are measured each on its own line; either over the maximum fails the check."""
    code, lines, _ = run(capsys, str(agent), "--max-resend-share", "0.5")
    assert code == 1
    assert lines == [
        "PASS resend-share 0.3333 <= max 0.5000 (over calls: 2 re-sends in 6 calls)",
        "FAIL resend-share 0.6154 > max 0.5000 (over log lines: 8 re-sends in 13 log decisions)",
    ]
    code, lines, _ = run(capsys, str(agent), "--max-resend-share", "0.3")
    assert code == 1 and [line.split()[0] for line in lines] == ["FAIL", "FAIL"]


def test_unusable_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, err = run(capsys, str(tmp_path / "missing"), "--max-resend-share", "0.5")
    assert code == 2 and lines == [] and "missing" in err and err.count("\n") == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    code, lines, err = run(capsys, str(empty), "--max-resend-share", "0.5")
    assert code == 2 and "nothing readable" in err
    code, _, err = run(capsys, str(write_agent(tmp_path)), "--since", "last tuesday")
    assert code == 2 and "--since" in err and err.count("\n") == 1


def test_session_selection_measures_that_session(agent: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, _ = run(capsys, str(agent), "--session", SESSION_ID, "--max-resend-share", "0.2")
    assert code == 1  # a fork and a flatten in five turns
    assert lines == [
        f"FAIL resend-share 0.4000 > max 0.2000 (over calls of session {SESSION_ID}: 2 re-sends in 5 calls)"
    ]
    code, lines, _ = run(capsys, str(agent), "--session", OTHER_SESSION_ID, "--max-resend-share", "0.2")
    assert code == 0 and lines[0].startswith("PASS resend-share 0.0000")
    code, lines, err = run(capsys, str(agent), "--session", "nope", "--max-resend-share", "0.9")
    assert code == 2 and lines == [] and err == "continuity-tui: --session nope: no session matches\n"


def test_time_window_changes_what_is_measured(agent: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, _ = run(capsys, str(agent), "--until", ts(30), "--max-resend-share", "0.1")
    assert code == 0  # before the rewrite: bootstrap and two deltas
    assert lines == [
        "PASS resend-share 0.0000 <= max 0.1000 (over calls: 0 re-sends in 3 calls)",
        "PASS resend-share 0.0000 <= max 0.1000 (over log lines: 0 re-sends in 3 log decisions)",
    ]
    code, lines, _ = run(capsys, str(agent), "--since", ts(60), "--until", ts(85), "--max-resend-share", "0.9")
    assert (
        code == 1
        and lines[-1] == "FAIL resend-share 1.0000 > max 0.9000 (over log lines: 4 re-sends in 4 log decisions)"
    )


def test_thresholds_that_cannot_be_measured_fail(agent: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = _report(agent, enriched=False)
    report["counterfactual"] = None
    report["directives"] = None
    for turn in report["turns"]:
        turn["payload_bytes_raw"] = None  # as when payloads were not reconstructed
    results = evaluate(report, Thresholds(max_avoidable=0, max_directive_share=0.5))
    assert [r.ok for r in results] == [False, False]
    assert results[0].line().startswith("FAIL avoidable not measurable, max 0 (")
    assert results[1].line() == "FAIL directive-share not measurable, max 0.5000 (no reconstructed payload)"


def test_avoidable_directive_share_and_payload_on_analysed_data(agent: Path) -> None:
    report = _report(agent, enriched=True)
    results = evaluate(report, Thresholds(max_avoidable=0, max_directive_share=0.98, max_payload_bytes=60_000))
    assert [(r.name, r.measured, r.ok) for r in results] == [
        ("avoidable", 1, False),
        ("directive-share", 0.9888, False),  # 2 x 24,871 of the 50,303 bytes sent (3 x of 75,174 serialized)
        ("payload-bytes", 50303, True),
    ]
    assert results[0].line() == "FAIL avoidable 1 > max 0 (of 2 re-sends in transcripts)"
    assert results[1].line() == (
        f"FAIL directive-share 0.9888 > max 0.9800 (largest payload, session {SESSION_ID} turn 4, flatten: 49742 of "
        "50303 bytes sent; 74613 of 75174 bytes serialized (0.9925))"
    )
    assert report["directives"]["largest_payload"]["share_sent"] == results[1].measured  # the report's own figure


def test_without_thresholds_every_measure_is_printed_and_passes(
    agent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, lines, _ = run(capsys, str(agent))
    assert code == 0
    assert [line.split()[:2] for line in lines] == [
        ["INFO", "resend-share"],
        ["INFO", "resend-share"],
        ["INFO", "avoidable"],
        ["INFO", "directive-share"],
        ["INFO", "payload-bytes"],
        ["INFO", "waste-usd"],
        ["INFO", "waste-share"],
    ]


def test_thresholds_from_args() -> None:
    args = Namespace(max_resend_share=0.25, max_avoidable=3, max_directive_share=None, max_payload_bytes=None)
    assert Thresholds.from_args(args) == Thresholds(0.25, 3, None, None)
    assert Thresholds().any() is False and Thresholds.from_args(args).any() is True


def _report(agent: Path, *, enriched: bool) -> dict:
    engine = Engine([agent])
    engine.drain()
    if enriched:
        enrich(engine)
    try:
        return build_report(engine, ReportOptions(now_ms=T0))
    finally:
        engine.close()


def test_directive_share_of_an_older_report_without_a_largest_payload_uses_the_largest_call() -> None:
    """A saved report from before `largest_payload` was any call's and before the sent-side counts: the gate still
    measures, on the one side that report has, and says so."""
    turn = {
        "session": "S",
        "index": 2,
        "payload_bytes_raw": 1000,
        "payload_bytes": 1000,
        "directives": {"system-reminder": {"copies": 2, "bytes": 250}},
        "logged": None,
        "recomputed": None,
    }
    report = {
        "selection": {},
        "sessions": [{"id": "S"}],
        "directives": {"tags": {}, "largest_payload": None, "dedupe": None},
        "turns": [turn],
    }
    (result,) = evaluate(report, Thresholds(max_directive_share=0.2))
    assert result.measured == 0.25 and not result.ok
    assert result.line() == (
        "FAIL directive-share 0.2500 > max 0.2000 (largest payload, session S turn 2: 250 of 1000 bytes serialized "
        "(0.2500); the report predates sent-side counts)"
    )
