"""The JSON report: contract conformance (pydantic schema), log aggregates across a rotation, selection."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import orjson
import pytest
from pydantic import ValidationError
from report_helpers import OTHER_SESSION_ID, SESSION_ID, T0, enrich, report_for, ts, write_agent

from core.engine import Engine
from core.report import ReportOptions, build_report, render
from core.report.schema import validate
from tui.cli import main

NOW = T0 + 3_600_000


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    return write_agent(tmp_path)


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["report", *argv, "--format", "json"]) == 0
    return orjson.loads(capsys.readouterr().out)


def test_report_of_a_built_session_validates_against_the_contract(agent: Path) -> None:
    report = report_for(agent)
    model = validate(report)
    assert model.schema_ == "continuity.report/1"
    assert report["generated_at"] == "2026-08-04T03:00:00.000Z"
    assert {
        "schema",
        "generated_at",
        "tool_version",
        "sources",
        "continuity",
        "sessions",
        "turns",
        "directives",
        "counterfactual",
        "problems",
        "problems_total",
    } <= report.keys()
    # the rendered JSON is the same document, and validates as loaded by a script
    assert validate(orjson.loads(render(report, "json"))) == model


def test_rotated_logs_give_the_right_counts_reasons_streaks_and_peak(agent: Path) -> None:
    cont = report_for(agent)["continuity"]
    assert cont["events"] == 13
    assert cont["by_kind"] == {"bootstrap": 1, "delta": 3, "fork": 4, "flatten": 4, "disabled": 1}
    assert cont["by_reason"] == {
        "assistant_rewritten": {"fork": 4, "flatten": 2},
        "prefix_matched": {"delta": 3},
        "idle_ttl": {"flatten": 2},
        "registry_miss": {"bootstrap": 1},
        "resume_mode_off": {"disabled": 1},
    }
    assert cont["resend_share"] == 0.6154  # 8 / 13, four decimals
    # the fork run starts in session.log.1 and ends in session.log: one streak, not two
    assert cont["streaks"] == [
        {
            "kind": "fork",
            "reason": "assistant_rewritten",
            "length": 4,
            "start": ts(40),
            "end": ts(61),
            "count_first": 2,
            "count_last": 5,
        },
        {
            "kind": "flatten",
            "reason": "assistant_rewritten",
            "length": 2,
            "start": ts(70),
            "end": ts(80),
            "count_first": 6,
            "count_last": 132,
        },
        {
            "kind": "flatten",
            "reason": "idle_ttl",
            "length": 2,
            "start": ts(100),
            "end": ts(110),
            "count_first": 7,
            "count_last": 8,
        },
    ]
    assert cont["peak_count"] == {"value": 132, "at": ts(80), "kind": "flatten"}
    assert cont["closes"] == {"idle_ttl": 1, "model_selected": 1}


def test_cli_report_json_lists_sources_in_reading_order_relative_to_the_path(
    agent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = cli_json(capsys, str(agent))
    validate(report)
    paths = [s["path"] for s in report["sources"]]
    assert paths[:2] == ["logs/session.log.1", "logs/session.log"]
    assert all(p.startswith("sessions/--home-dev-shop--/") for p in paths[2:]) and len(paths) == 4
    formats = {s["path"]: s["format"] for s in report["sources"]}
    assert formats["logs/session.log"] == "senpi-session-log"
    assert formats[paths[2]] == "senpi-transcript"
    by_path = {s["path"]: s for s in report["sources"]}
    assert by_path["logs/session.log.1"]["bad_lines"] == 0 and by_path["logs/session.log"]["bad_lines"] == 1
    assert by_path["logs/session.log.1"]["bytes"] == (agent / "logs" / "session.log.1").stat().st_size
    assert report["sessions"][0]["path"] == paths[2]


def test_a_logs_dir_argument_names_the_sibling_sessions_relative_to_it(agent: Path) -> None:
    report = report_for(agent / "logs")
    paths = [s["path"] for s in report["sources"]]
    assert paths[:2] == ["session.log.1", "session.log"]
    assert all(p.startswith("../sessions/") for p in paths[2:])


def test_sessions_and_turns_carry_the_logged_decisions(agent: Path) -> None:
    report = report_for(agent)
    sessions = {s["id"]: s for s in report["sessions"]}
    main_session = sessions[SESSION_ID]
    assert main_session["cwd"] == "/home/dev/shop" and main_session["turns"] == 5
    assert main_session["by_kind"] == {"bootstrap": 1, "delta": 2, "fork": 1, "flatten": 1, "disabled": 0}
    turns = [t for t in report["turns"] if t["session"] == SESSION_ID]
    assert [t["index"] for t in turns] == [0, 1, 2, 3, 4]
    first = turns[0]
    assert first["logged"]["kind"] == "bootstrap" and first["logged"]["payload_bytes"] == 25096
    assert first["logged"]["count"] == 1 and first["logged"]["matched_log_line"] is True
    assert first["tokens"].items() >= {"input": 6, "cache_read": 0, "cache_write": 6274, "output": 180}.items()
    assert first["entry_id"] == "00000003" and first["ts"].endswith("Z")
    # turns come in session order, then index order
    order = [(t["session"], t["index"]) for t in report["turns"]]
    assert order == [(SESSION_ID, i) for i in range(5)] + [(OTHER_SESSION_ID, 0)]


def test_analysis_fields_are_carried_when_produced(agent: Path) -> None:
    engine = Engine([agent])
    engine.drain()
    enrich(engine)
    report = build_report(engine, ReportOptions(now_ms=NOW))
    engine.close()
    validate(report)
    turn = report["turns"][2]
    assert turn["commit"]["outcome"] == "rewritten" and turn["commit"]["class"] == "volatile-only"
    assert turn["commit"]["diff"][0] == {
        "path": ".content[0].startedAt",
        "change": "missing_in_capture",
        "volatile": True,
        "capture": None,
        "commit": 1785819137555,
    }
    assert turn["fingerprints"] == {
        "senpi_sha256": "a" * 64,
        "senpi_sha256_verbatim": "b" * 64,
        "stable_xxh3": "c" * 16,
    }
    assert turn["content"]["blocks"] == {"thinking": 1, "text": 1}
    assert report["turns"][0]["commit"]["class"] is None  # clean turns have no class
    session = report["sessions"][0]
    assert session["rewritten"] == 1 and session["payload_bytes_total"] == 25096 + 300 + 420 + 2000 + 50303
    directives = report["directives"]
    assert directives["largest_payload"] == {
        "session": SESSION_ID, "index": 4, "payload_bytes_raw": 75174, "payload_bytes": 50303, "kind": "flatten",
        "directive_bytes": 3 * 24871, "directive_bytes_sent": 2 * 24871, "share": 0.9925, "share_sent": 0.9888,
    }  # fmt: skip
    tag = directives["tags"]["ultrawork-mode"]
    assert tag["copies_in_largest_payload"] == 3 and tag["bytes_in_largest_payload"] == 3 * 24871
    assert tag["copies_sent_in_largest_payload"] == 2 and tag["bytes_sent_in_largest_payload"] == 2 * 24871
    measured = [t for t in report["turns"] if t["payload_bytes_raw"] is not None]  # the other session's call too
    sent = sum(t["payload_bytes"] for t in measured)
    raw = sum(t["payload_bytes_raw"] for t in measured)
    assert sent == 25096 + 300 + 420 + 2000 + 50303 + measured[-1]["payload_bytes"] and raw == sent - 50303 + 75174
    assert directives["payloads"] == {"calls": 6, "payload_bytes_raw": raw, "payload_bytes": sent}
    assert tag["all_payloads"] == {
        "copies": 4, "bytes": 4 * 24871, "copies_sent": 3, "bytes_sent": 3 * 24871,
        "share": round(4 * 24871 / raw, 4), "share_sent": round(3 * 24871 / sent, 4),
    }  # fmt: skip
    assert tag["bytes_per_copy"] in (24871, None) or tag["injections"] is not None  # from the ledger when it ran
    # the fork (2,000 bytes, not avoidable) and the flatten (50,303 bytes, 700 as a delta)
    cf = report["counterfactual"]
    assert {k: cf[k] for k in ("resends_logged", "resends_avoidable", "bytes_logged", "bytes_if_stable")} == {
        "resends_logged": 2,
        "resends_avoidable": 1,
        "bytes_logged": 2000 + 50303,
        "bytes_if_stable": 2000 + 700,
    }
    # the replay's message totals are whole-session figures: carried without a window, null within one
    assert {"messages_resent_logged", "messages_resent_avoidable"} <= cf.keys()


def test_sections_without_a_producer_are_null_and_every_key_is_present(tmp_path: Path) -> None:
    logs = tmp_path / "agent" / "logs"
    logs.mkdir(parents=True)
    (logs / "session.log").write_text(
        '{"ts":"2026-08-04T02:00:00.000Z","level":"info","event":"claude_sdk_oauth_session_close","reason":"x"}\n'
    )
    report = report_for(tmp_path / "agent")
    validate(report)
    cont = report["continuity"]
    assert cont["events"] == 0 and cont["resend_share"] is None and cont["peak_count"] is None
    assert cont["by_kind"] == {"bootstrap": 0, "delta": 0, "fork": 0, "flatten": 0, "disabled": 0}
    assert cont["streaks"] == [] and cont["closes"] == {"x": 1}
    assert report["sessions"] == [] and report["turns"] == []
    assert report["directives"] is None and report["counterfactual"] is None
    assert report["problems"] == [] and report["problems_total"] == 0


def test_other_kinds_are_added_after_the_five(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    line = '{"ts":"2026-10-10T09:52:00.000Z","level":"info","event":"claude_sdk_oauth_session_continuity","kind":"failed","reason":"query_failed"}\n'
    (logs / "session.log").write_text(line * 2)
    cont = report_for(logs)["continuity"]
    assert list(cont["by_kind"]) == ["bootstrap", "delta", "fork", "flatten", "disabled", "failed"]
    assert cont["resend_share"] == 0.0  # failed is not a re-send
    assert cont["streaks"][0]["kind"] == "failed" and cont["streaks"][0]["count_first"] is None


def test_problems_are_capped_at_1000_with_the_true_total(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    good = '{"ts":"2026-08-04T02:00:00.000Z","level":"info","event":"claude_sdk_oauth_session_close","reason":"x"}'
    (logs / "session.log").write_text(good + "\n" + "{bad\n" * 1205)
    report = report_for(logs)
    validate(report)
    assert len(report["problems"]) == 1000 and report["problems_total"] == 1205
    assert report["problems"][-1]["line"] == 1206  # the newest are kept
    assert report["problems"][-1]["path"] == "session.log"
    assert report["problems"][-1]["error"].startswith("invalid JSON")
    assert report["sources"][0]["bad_lines"] == 1205


def test_session_selection_limits_sessions_turns_but_not_continuity(agent: Path) -> None:
    everything = report_for(agent)
    one = report_for(agent, ReportOptions(session=OTHER_SESSION_ID, now_ms=NOW))
    validate(one)
    assert [s["id"] for s in one["sessions"]] == [OTHER_SESSION_ID]
    assert {t["session"] for t in one["turns"]} == {OTHER_SESSION_ID}
    assert one["continuity"] == everything["continuity"]
    assert one["selection"]["session"] == OTHER_SESSION_ID and one["selection"]["sessions_matched"] == 1
    prefix = report_for(agent, ReportOptions(session=SESSION_ID[:-3], now_ms=NOW))
    assert {s["id"] for s in prefix["sessions"]} == {SESSION_ID, OTHER_SESSION_ID}
    unknown = report_for(agent, ReportOptions(session="nope", now_ms=NOW))
    validate(unknown)
    assert unknown["sessions"] == [] and unknown["turns"] == []


def test_since_and_until_window_lines_and_turns(agent: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = cli_json(capsys, str(agent), "--since", ts(60), "--until", ts(105))
    validate(report)
    cont = report["continuity"]
    # lines at 60, 61 (fork), 70, 80 (flatten), 90 (delta), 95 (disabled), 100 (flatten idle_ttl)
    assert cont["events"] == 7
    assert cont["by_kind"] == {"bootstrap": 0, "delta": 1, "fork": 2, "flatten": 3, "disabled": 1}
    assert [(s["kind"], s["length"]) for s in cont["streaks"]] == [("fork", 2), ("flatten", 2)]
    assert cont["closes"] == {"model_selected": 1}
    assert [(t["session"], t["index"]) for t in report["turns"]] == [(SESSION_ID, 4), (OTHER_SESSION_ID, 0)]
    assert report["selection"]["since"] == ts(60) and report["selection"]["until"] == ts(105)


def test_relative_times_are_measured_from_now(agent: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recent = cli_json(capsys, str(agent), "--since", "36500d")  # the last century: everything
    assert recent["continuity"]["events"] == 13 and len(recent["turns"]) == 6
    old = cli_json(capsys, str(agent), "--until", "36500d")  # older than a century: nothing
    assert old["continuity"]["events"] == 0 and old["turns"] == [] and old["sessions"] == []
    validate(old)


def test_options_parse_iso_and_relative_times() -> None:
    from argparse import Namespace

    now = T0
    opts = ReportOptions.from_args(
        Namespace(session=None, since="1h30m", until="2026-08-05", no_redact=True, include_text=True), now=now
    )
    assert opts.since_ms == T0 - 5_400_000 and opts.until_ms == T0 + 22 * 3_600_000
    assert opts.redact is False and opts.include_text is True
    for bad in ("yesterday", "2h ago", "-1h", ""):
        with pytest.raises(ValueError) as err:
            ReportOptions.from_args(Namespace(session=None, since=bad, until=None), now=now)
        assert "--since" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ValueError, match="later than"):
        ReportOptions.from_args(Namespace(session=None, since="1h", until="2h"), now=now)
    naive = ReportOptions.from_args(Namespace(session=" ", since="2026-08-04T02:00:00", until=None), now=now)
    assert naive.since_ms == T0 and naive.session is None  # naive = UTC; a blank session selects all


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("schema",), "continuity.report/2"),
        (("continuity", "events"), 13.0),
        (("continuity", "resend_share"), 0.61538),
        (("generated_at",), "2026-08-04T03:00:00Z"),
        (("turns", 0, "ts"), "2026-08-04 02:00:00"),
        (("continuity", "by_kind"), {"delta": 3}),
        (("problems_total",), 0),
        (("sources", 0, "bytes"), True),
    ],
)
def test_schema_rejects_contract_violations(agent: Path, path: tuple, value: object) -> None:
    report = report_for(agent)
    bad = copy.deepcopy(report)
    target = bad
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(ValidationError):
        validate(bad)


def test_schema_rejects_a_renamed_or_missing_field(agent: Path) -> None:
    report = report_for(agent)
    renamed = json.loads(json.dumps(report))
    renamed["continuity"]["resendShare"] = renamed["continuity"].pop("resend_share")
    with pytest.raises(ValidationError):
        validate(renamed)
    unsorted = json.loads(json.dumps(report))
    unsorted["continuity"]["streaks"].reverse()
    with pytest.raises(ValidationError):
        validate(unsorted)
    extra = json.loads(json.dumps(report))
    extra["continuity"]["something_new"] = 1  # new fields are allowed
    validate(extra)


def test_bundled_demo_report_validates_and_counts_every_log_decision(tmp_path: Path) -> None:
    from core.demo.bundle import demo_source

    demo = demo_source()
    report = report_for(demo)
    validate(report)
    logged = 0
    for name in ("session.log.1", "session.log"):
        path = demo / "logs" / name
        for raw in path.read_bytes().splitlines() if path.exists() else []:
            try:
                obj = json.loads(raw)
            except ValueError:
                continue  # the demo carries a few bad lines on purpose
            if obj.get("event") == "claude_sdk_oauth_session_continuity" and isinstance(obj.get("kind"), str):
                logged += 1
    assert report["continuity"]["events"] == logged > 0
    assert report["sessions"] and all(not s["path"].startswith("/") for s in report["sessions"])
    assert sum(s["turns"] for s in report["sessions"]) == len(report["turns"])
    for fmt in ("md", "html"):
        assert render(report, fmt)


def test_diff_values_are_bounded_in_depth_width_and_length(agent: Path) -> None:
    from core.model import CommitInfo, DiffChange

    engine = Engine([agent])
    engine.drain()
    deep: object = "leaf"
    for _ in range(300):
        deep = [deep]
    wide = {f"k{i}": i for i in range(500)}
    turn = engine.state.all_turns()[1]
    turn.commit = CommitInfo(
        "rewritten",
        "events",
        "semantic",
        [
            DiffChange(".a", "changed", False, deep, "x" * 100_000),
            DiffChange(".b", "changed", False, wide, None),
        ],
    )
    report = build_report(engine, ReportOptions(now_ms=NOW))
    with_text = build_report(engine, ReportOptions(now_ms=NOW, include_text=True))
    engine.close()
    validate(report)
    capture = report["turns"][1]["commit"]["diff"][0]["capture"]
    depth = 0
    while isinstance(capture, list):
        capture, depth = capture[0], depth + 1
    assert depth <= 6 and "nested deeper" in capture
    assert (
        report["turns"][1]["commit"]["diff"][0]["commit"]
        == "[text: 100000 chars, 1 lines, xxh3 " + (report["turns"][1]["commit"]["diff"][0]["commit"].split("xxh3 ")[1])
    )
    assert len(report["turns"][1]["commit"]["diff"][1]["capture"]) == 51  # 50 keys and a note of the rest
    assert len(with_text["turns"][1]["commit"]["diff"][0]["commit"]) == 20_000  # clipped even when included
    for fmt in ("json", "md", "html"):
        render(report, fmt)
