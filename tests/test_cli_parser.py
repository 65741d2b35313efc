"""`continuity-tui <command> …` parses with that subcommand's parser alone (`build_parser(only)`, start-up): what
it accepts, what it prints for `--help` and how it refuses must be exactly what the parser of every subcommand
gives."""

from __future__ import annotations

import contextlib
import io

import pytest

from tui.cli import COMMANDS, build_parser

ARGVS = [
    ["report"],
    ["report", "a.log", "b", "--no-cache", "--format", "json,md", "-o", "out", "--jobs", "2", "--since", "2h"],
    ["report", "x", "--volatile", ".a", "--volatile", ".b", "--session", "s1", "--no-redact", "--include-text"],
    ["report", "--per-session", "--prices", "p.json", "--until", "2026-01-01T00:00:00Z"],
    ["check", "x", "--max-resend-share", "0.5", "--max-avoidable", "3", "--max-waste-usd", "1.5"],
    ["check", "--max-directive-share", "0.1", "--max-payload-bytes", "100", "--max-waste-share", "0.2"],
    ["metrics", "x", "--listen", ":9464", "--per-session", "--no-redact", "--jobs", "1"],
    ["index", "--path"],
    ["index"],
]

REFUSED = [
    ["report", "--bogus"],
    ["report", "--jobs", "0"],
    ["report", "--jobs", "two"],
    ["report", "-o"],
    ["check", "--max-avoidable", "x"],
    ["check", "x", "y", "--nope"],
    ["metrics", "--listen"],
    ["index", "--path", "extra"],
    ["report", "--help"],
    ["check", "-h"],
    ["metrics", "--help"],
    ["index", "--help"],
]


def _run(parser_argv: tuple[str | None, list[str]]) -> tuple[object, str, str]:
    only, argv = parser_argv
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            result: object = vars(build_parser(only).parse_args(argv))
        except SystemExit as exc:
            result = ("exit", exc.code)
    return result, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv", ARGVS + REFUSED, ids=lambda argv: " ".join(argv))
def test_one_subcommand_parses_as_all_of_them(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")  # help is wrapped to the terminal: the same width for both
    alone = _run((argv[0], argv))
    every = _run((None, argv))
    assert alone == every
    if argv in REFUSED:
        assert alone[0][0] == "exit"  # type: ignore[index]
    else:
        assert alone[0]["command"] == argv[0]  # type: ignore[index]


def test_every_command_has_its_parser() -> None:
    for name in COMMANDS:
        assert build_parser(name).parse_args([name]).command == name
