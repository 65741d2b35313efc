"""The typed session.log path equals the exact per-line path: same records, same problems, same aggregates.

`core.agents.senpi.formats.typed_log` decodes a block of log lines with msgspec and hands every line it cannot
vouch for to the adapter's exact `parse`. These tests hold the two paths side by side on hostile lines (the
traps the performance review lists: msgspec does not check UTF-8 or numbers in fields it skips, nesting depth,
naive and odd times, counts outside int64, two objects on one line, ...), at every block boundary, on random
files (hypothesis), and through the engine and the report at several read sizes.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.agents.senpi.formats import logs as logs_module
from core.agents.senpi.formats.logs import SessionLogAdapter
from core.agents.senpi.formats.typed_log import TypedLog
from core.engine import Engine
from core.formats.base import exact_block
from core.kernel.logcols import LogColumns
from core.kernel.stats import LogStats
from core.logblock import LogBlock
from core.model import CLOSE_EVENT, CONTINUITY_EVENT, Problem
from core.report import build_report
from core.report.options import ReportOptions

PATH = "/logs/session.log"
CONT = CONTINUITY_EVENT


def line(ts: str = "2026-10-11T08:00:00.000Z", kind: str = "delta", reason: str = "prefix_matched",
         count: Any = 1, **extra: Any) -> bytes:  # fmt: skip
    obj: dict[str, Any] = {"ts": ts, "level": "info", "event": CONT, "kind": kind, "reason": reason}
    if count is not ...:
        obj["count"] = count
    obj.update(extra)
    return json.dumps(obj, separators=(",", ":")).encode()


def close(ts: str = "2026-10-11T08:00:01.000Z", reason: str = "idle_ttl", **extra: Any) -> bytes:
    obj = {"ts": ts, "level": "info", "event": CLOSE_EVENT, "reason": reason, **extra}
    return json.dumps(obj, separators=(",", ":")).encode()


#: every line the review and this module's docstring name as a trap, and a few more
HOSTILE: list[bytes] = [
    line()[:-1] + b",}",  # trailing comma
    b"",  # blank
    b"   \t",  # whitespace only
    line(ts="2026-10-11T08:00:00.000"),  # naive time (UTC by the exact rule)
    line(ts="2026-10-11T10:00:00.000+02:00"),  # an offset: same instant, other text
    line(ts="2026-10-11t08:00:00.000z"),  # lowercase: fromisoformat refuses, msgspec would not
    line(ts="2026-10-11T08:00:00.9999996Z"),  # 7 digits: truncated by one rule, rounded by the other
    line(ts="2026-10-11T23:59:60.000Z"),  # leap second
    line(ts="2026-02-30T08:00:00.000Z"),  # no such day
    line(ts="2026-10-11 08:00:00.000Z"),  # a space for the T
    line(ts="0999-10-11T08:00:00.000Z"),  # a year before 1000
    line(ts="not a time"),
    line(count=3.0),  # an integral float count
    line(count=2.5),
    line(count=True),
    line(count="7"),
    line(count=None),
    line(count=...),  # no count
    line(count=2**63 - 1),
    line(count=2**63),  # past int64, still an int for orjson
    line(count=2**64),  # orjson's float
    line(count=-(2**63)),  # the column's sentinels
    line(count=-(2**63) + 1),
    line(count=123456789012345678901234567890),
    line()[:-1] + b',"x":"\xff"}',  # invalid UTF-8 in a skipped field
    line()[:-1] + b',"x":1e999}',  # overflows in a skipped field
    line()[:-1] + b',"x":' + b"[" * 250 + b"]" * 250 + b"}",  # deeper than 200
    line()[:-1] + b',"x":' + b"[" * 150 + b"]" * 150 + b"}",  # deep, still fine
    b'{"ts":"2026-10-11T08:00:00.000Z","level":"info","event":"' + CONT.encode() + b'","kind":5,"reason":"x"}',
    line(kind="brand_new_kind"),  # a kind the vocabulary does not know yet
    line(reason="brand_new_reason"),
    line(kind="delta", reason="prefix_matched", level_twice=1),
    b"[1,2,3]",  # an array
    b'"a string"',
    b"\xef\xbb\xbf" + line(),  # BOM
    line() + b"\r",  # CRLF
    line() + line(),  # two objects on one line
    line()[:40],  # cut
    line().replace(b'"kind":"delta",', b""),  # no kind
    line().replace(b'"reason":"prefix_matched"', b'"reason":null'),
    close(ts="yesterday"),
    close().replace(b'"reason":"idle_ttl"', b'"reason":3'),
    close(kind="fork"),  # a close line with a kind (ignored by the exact rule)
    close(sessionId="s-1"),
    line(sessionId="s-1"),
    line(sessionId=5),
    line().replace(
        b'"ts":"2026-10-11T08:00:00.000Z"', b'"ts":"2026-10-11T08:00:00.000Z","ts":"2026-10-12T08:00:00.000Z"'
    ),
    line().replace(b'"kind":"delta"', b'"kind":"delta","kind":5'),
    b'{"ts":"2026-10-11T08:00:00.000Z","level":"info","event":"provider_error","kind":"timeout","error":"x"}',
    b'{"ts":"2026-10-11T08:00:00.000Z","level":"info","event":"queue_enqueue","mode":"steer","count":1}',
    b'{"ts":"2026-10-11T08:00:00.000Z","level":7,"event":"' + CONT.encode() + b'","kind":"delta","reason":"x"}',
    b'{"ts":"2026-10-11T08:00:00.000Z","level":"trace","event":"' + CONT.encode() + b'","kind":"fork","reason":"x"}',
    line(kind=b"fla\\u0074ten".decode("unicode_escape")),  # an escape that decodes to a known kind
    b'{"ts":"2026-10-11T08:00:00.000Z","level":"info","event":"'
    + CONT.encode()
    + b'","kind":"fl\\u0061tten","reason":"idle_ttl","count":4}',
    line(reason="\u00e9l\u00e8ve"),  # non-ASCII
    line()[:-1] + b',"x":"\\ud800"}',  # a lone surrogate escape
    b"\x00",
]


def normal_lines(n: int, seed: int) -> list[bytes]:
    """Lines of senpi's shape, in runs of equal decisions, with closes and other events between."""
    rng = random.Random(seed)
    out: list[bytes] = []
    ms = 1_791_705_600_000
    kinds = [("delta", "prefix_matched"), ("flatten", "assistant_rewritten"), ("fork", "idle_ttl"),
             ("bootstrap", "registry_miss"), ("failed", "query_failed")]  # fmt: skip
    while len(out) < n:
        kind, reason = rng.choice(kinds)
        for _ in range(rng.randint(1, 6)):
            ms += rng.randint(1, 30_000)
            ts = _iso(ms)
            pick = rng.random()
            if pick < 0.06:
                out.append(close(ts=ts, reason=rng.choice(["idle_ttl", "other"])))
            elif pick < 0.08:
                out.append(b'{"ts":"' + ts.encode() + b'","level":"warn","event":"provider_error","kind":"error"}')
            else:
                extra = {"sessionId": f"s-{rng.randint(1, 3)}"} if rng.random() < 0.3 else {}
                count: Any = rng.randint(0, 60) if kind != "failed" else ...
                out.append(line(ts=ts, kind=kind, reason=reason, count=count, **extra))
    return out[:n]


def _iso(ms: int) -> str:
    from core.timeutil import iso_ms

    text = iso_ms(ms)
    assert text is not None
    return text


def data_of(lines: list[bytes]) -> bytes:
    return b"".join(item + b"\n" for item in lines)


def comparable(block: LogBlock) -> tuple[list[Any], dict[str, int]]:
    records = []
    for record in block.as_records():
        if isinstance(record, Problem):
            records.append(("Problem", record.line, record.offset, record.error))
        elif type(record).__name__ != "LogEvent":
            records.append(record)
    return records, dict(sorted(block.other.items()))


def applied(blocks: list[LogBlock]) -> tuple[Any, ...]:
    """What the state would hold after these blocks: the columns' bytes and the aggregates."""
    cols = LogColumns()
    stats = LogStats(rows=cols.continuity)
    for block in blocks:
        cols.continuity.append_block(block)
        cols.closes.append_block(block)
        stats.add_block(block)
        stats.add_closes(block.close_reasons)
    n, m = len(cols.continuity), len(cols.closes)
    return (
        [list(cols.continuity)],
        [list(cols.closes)],
        {k: v for k, v in cols.continuity.chunk_blobs(0, n).items() if k not in ("kind", "reason")},
        cols.closes.chunk_blobs(0, m)["ts"],
        stats.events,
        dict(stats.by_kind),
        {r: dict(c) for r, c in stats.by_reason.items()},
        [(s.kind, s.reason, s.length, s.start_ms, s.end_ms, s.start, s.end, s.count_first, s.count_last)
         for s in stats.all_streaks()],
        None if stats.peak is None else (stats.peak.value, stats.peak.at, stats.peak.at_ms, stats.peak.kind),
        dict(stats.closes),
        stats.last_ms,
    )  # fmt: skip


def both(lines: list[bytes], typed: TypedLog | None = None) -> tuple[LogBlock, LogBlock]:
    adapter = SessionLogAdapter()
    typed = typed or TypedLog(adapter.parse)
    data = data_of(lines)
    return typed.parse_block(PATH, 1, 0, data), exact_block(adapter.parse, PATH, 1, 0, data)


def test_every_hostile_line_alone_and_among_good_ones() -> None:
    for bad in HOSTILE:
        for lines in ([bad], [*normal_lines(20, 1), bad, *normal_lines(20, 2)]):
            fast, exact = both(lines)
            assert comparable(fast) == comparable(exact), bad
            assert applied([fast]) == applied([exact]), bad


def test_all_hostile_lines_in_one_block_twice_over() -> None:
    """The second pass runs on a decoder that has learned the new kinds and reasons."""
    adapter = SessionLogAdapter()
    typed = TypedLog(adapter.parse)
    lines = [item for bad in HOSTILE for item in (*normal_lines(3, len(bad)), bad)]
    for _ in range(2):
        fast, exact = both(lines, typed)
        assert comparable(fast) == comparable(exact)
        assert applied([fast]) == applied([exact])
    assert "brand_new_kind" in typed.vocab["kind"] and "trace" in typed.vocab["level"]


def test_every_block_boundary_gives_the_same_as_one_block() -> None:
    adapter = SessionLogAdapter()
    lines = [*normal_lines(30, 3), HOSTILE[0], *normal_lines(10, 4), HOSTILE[4], *normal_lines(10, 5)]
    whole = exact_block(adapter.parse, PATH, 1, 0, data_of(lines))
    expected = applied([whole])
    typed = TypedLog(adapter.parse)
    for cut in range(len(lines) + 1):
        head, tail = lines[:cut], lines[cut:]
        first = typed.parse_block(PATH, 1, 0, data_of(head))
        second = typed.parse_block(PATH, 1 + cut, len(data_of(head)), data_of(tail))
        assert applied([first, second]) == expected, cut
        joined = LogBlock(PATH)
        joined.extend(first)
        joined.extend(second)
        assert comparable(joined) == comparable(whole), cut


def test_streaks_join_and_the_peak_keeps_the_first_across_blocks() -> None:
    lines = [line(kind="fork", reason="idle_ttl", count=c, ts=_iso(1_791_705_600_000 + i * 1000))
             for i, c in enumerate([5, 9, 9, 2, 9, 1])]  # fmt: skip
    adapter = SessionLogAdapter()
    typed = TypedLog(adapter.parse)
    for cut in range(1, len(lines)):
        a = typed.parse_block(PATH, 1, 0, data_of(lines[:cut]))
        b = typed.parse_block(PATH, 1 + cut, len(data_of(lines[:cut])), data_of(lines[cut:]))
        result = applied([a, b])
        streaks, peak = result[7], result[8]
        assert [(s[2], s[7], s[8]) for s in streaks] == [(6, 5, 1)], cut
        assert peak[0] == 9 and peak[2] == 1_791_705_601_000, cut


_FIELD = st.sampled_from(HOSTILE) | st.builds(
    line,
    ts=st.sampled_from(["2026-10-11T08:00:00.000Z", "2026-10-11T08:00:00Z", "2026-10-11T08:00:00.000+00:00", "x"]),
    kind=st.sampled_from(["delta", "fork", "flatten", "odd"]),
    reason=st.sampled_from(["prefix_matched", "idle_ttl", "new"]),
    count=st.one_of(st.integers(-(2**65), 2**65), st.none(), st.just(...), st.floats(allow_nan=False)),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_FIELD, max_size=40), st.integers(0, 40))
def test_random_files_and_cuts(lines: list[bytes], cut: int) -> None:
    adapter = SessionLogAdapter()
    typed = TypedLog(adapter.parse)
    cut = min(cut, len(lines))
    whole = exact_block(adapter.parse, PATH, 1, 0, data_of(lines))
    first = typed.parse_block(PATH, 1, 0, data_of(lines[:cut]))
    second = typed.parse_block(PATH, 1 + cut, len(data_of(lines[:cut])), data_of(lines[cut:]))
    joined = LogBlock(PATH)
    joined.extend(first)
    joined.extend(second)
    assert comparable(joined) == comparable(whole)
    assert applied([first, second]) == applied([whole])


# ---------------------------------------------------------------------------------------------- end to end
def _report(paths: list[Path], chunk: int) -> dict[str, Any]:
    engine = Engine(paths)
    engine.sources.read_chunk = chunk
    engine.drain()
    report = build_report(engine, ReportOptions(now_ms=0))
    engine.close()
    report.pop("generated_at")
    return report


@pytest.mark.parametrize("chunk", [300, 1500, 3000, 20_000, 1 << 20])
def test_reports_are_equal_with_and_without_the_typed_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    lines = normal_lines(4000, 9)
    for i, bad in enumerate(HOSTILE):
        lines.insert(97 * i % len(lines), bad)
    (logs / "session.log").write_bytes(data_of(lines))
    monkeypatch.setattr(logs_module, "TYPED_MIN_BYTES", 0)
    monkeypatch.setattr(SessionLogAdapter, "_typed", None)
    typed = _report([logs], chunk)
    monkeypatch.setattr(SessionLogAdapter, "blocks", False)  # one line at a time, the exact path
    exact = _report([logs], chunk)
    assert typed == exact
    assert typed["continuity"]["events"] > 3000 and typed["problems_total"] > 10


def test_a_block_whose_reason_codes_cross_a_byte_keeps_every_row() -> None:
    """A one-byte code column widens in the middle of a block (the 256th distinct reason): the values appended
    before the one that did not fit are not kept twice (they were: every later row's reason was shifted, and
    reading a row past the shorter column raised IndexError)."""
    lines = [line(reason=f"r{i}", count=i, ts=_iso(1_791_705_600_000 + i)) for i in range(600)]
    typed = TypedLog(SessionLogAdapter().parse)
    for cut in (0, 200, 300):
        cols = LogColumns()
        for part, base in ((lines[:cut], 0), (lines[cut:], cut)):
            cols.continuity.append_block(typed.parse_block(PATH, 1 + base, len(data_of(lines[:base])), data_of(part)))
        rows = cols.continuity
        assert len(rows.reason) == len(rows.ts) == 600, cut
        assert [(row.reason, row.count) for row in rows] == [(f"r{i}", i) for i in range(600)], cut


def test_a_block_of_known_shapes_after_the_257th_shape_is_parsed() -> None:
    """Past 256 row shapes (distinct reasons, a hostile or numbered log) a block whose codes all fit a byte still
    parses, typed, as the exact path does: its translation table was as long as the shapes known (ValueError, and
    the dashboard's ingest thread died: the reliability battery's live cases lost every later line)."""
    lines = [line(reason=f"r{i}", count=i, ts=_iso(1_791_705_600_000 + i)) for i in range(600)]
    typed = TypedLog(SessionLogAdapter().parse)
    fasts, exacts = [], []
    for again in (False, True):  # the second time every shape is known
        for k in range(0, 600, 50):
            fast, exact = both(lines[k : k + 50], typed)
            assert comparable(fast) == comparable(exact), (again, k)
            fasts.append(fast)
            exacts.append(exact)
    assert len(typed._shape) > 256
    # and the columns take such a block (its byte codes index the first 256 of its pairs; the kind column was
    # appended, the reason's table raised, and every later row read past the shorter column: IndexError)
    assert applied(fasts) == applied(exacts)


def test_times_of_other_lengths_side_by_side_are_not_read_as_canonical() -> None:
    """A 23-character time (naive: UTC by the exact rule, kept as text) next to a 25-character one: their total
    is two canonical lengths and every separator falls where a canonical time has it, so only a per-time length
    check keeps the pair from being read as two canonical times (the first one's text lost, the second one's
    unusable time read as a time)."""
    pair = [line(ts="2026-10-11T08:00:00.000"), line(ts="Z2026-10-11T08:00:01.000Z")]
    for lines in (pair, [*normal_lines(20, 1), *pair, *normal_lines(20, 2)]):
        fast, exact = both(lines)
        assert comparable(fast) == comparable(exact)
        assert applied([fast]) == applied([exact])


def test_small_blocks_switch_to_the_typed_decoder_once_enough_bytes_were_read_exactly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A live tail hands the adapter one small block a poll: after `TYPED_MIN_BYTES` of them in all (not only
    after one big block) the typed decoder reads them, and each block is what the exact path makes of it."""
    monkeypatch.setattr(SessionLogAdapter, "_typed", None)
    monkeypatch.setattr(SessionLogAdapter, "_exact_bytes", 0)
    adapter = SessionLogAdapter()
    lines = normal_lines(3000, 4)
    for i, bad in enumerate(HOSTILE):
        lines.insert(53 * i % len(lines), bad)
    lineno, offset, typed_at = 1, 0, None
    for start in range(0, len(lines), 40):  # ~6 KB a poll
        data = data_of(lines[start : start + 40])
        before = SessionLogAdapter._typed
        got = adapter.parse_block(PATH, lineno, offset, data)
        if before is None and SessionLogAdapter._typed is not None:
            typed_at = offset
        assert comparable(got) == comparable(exact_block(adapter.parse, PATH, lineno, offset, data)), start
        lineno, offset = lineno + data.count(b"\n"), offset + len(data)
    assert typed_at is not None and logs_module.TYPED_MIN_BYTES - 10_000 < typed_at <= logs_module.TYPED_MIN_BYTES
