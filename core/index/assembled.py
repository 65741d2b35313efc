"""Claude Code and mux sessions in the store: sessions a record handler assembles across files, stored and loaded
in *groups*, each keyed by every file it was read from.

A Claude Code session is read from its transcript, its sub-agent files, and the resumed copies another session's
file holds; a mux workspace from the files of its folder (`core.kernel.assembly`). What the handler makes of
one file depends on what it read of the others, and on the order their lines arrived in. So the unit stored is
a **group**: the sessions that touched a common file or met each other's records (a resumed copy, a replayed
message, a contested session id), with all their files. A group is stored only as a cold read makes it, and
loaded only when that is still what a cold read would make:

- **its files are all as they were read**, to their last byte: same identity, size, head and tail digests (the
  whole-prefix digest for formats rewritten in place), nothing appended. A file that changed in any way
  (appended, truncated, replaced, rotated, deleted) drops its whole group, whose files are then read again
  from their first byte (an appended file is not read on from its offset: the handlers' cross-file state, a
  resumed copy's owner, a thread's previous call, is not stored, so a group is re-read whole);
- **nothing read in this run meets it**: no file read now reaches one of its sessions or holds one of its ids
  (Claude Code's message ids and claimed session ids, kept as 64-bit digests); else the run reads everything
  cold (`Index.settle` says so);
- **a cold read would deliver its files' bytes in the same interleaving** (`arrival`: the drain reads
  round-robin in `chunk`-byte polls, so a file cut by the budget has another file's lines between its own; a
  group of one file always arrives in file order). A group read in this run must also arrive as in a cold read.

Stored, a session is what the surfaces read (`_Fields`: header, entry pointers, profile, its agent's typed
facts, the directive ledger's counts) and its calls whole (`codec.calls_to_plain`: verdict, cause, tokens, cache
figures, payload sizes, waste inputs; never message text). A string the report's redaction would change leaves
its group out of the store, as does anything `NotKept`; a crafted row can only be refused (`Corrupt`: typed
decoding, nothing executed or unpickled).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from array import array
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import msgspec
import xxhash

from core.agents import agent_named
from core.index.codec import (
    Corrupt,
    NotKept,
    calls_from_plain,
    calls_to_plain,
    check_strings,
    deflate,
    inflate,
    pack,
    plain,
    strings_of,
)
from core.index.sessions import decode_facts, facts_types
from core.model import EntryNode, SessionHeader, Turn, Where
from core.sources.order import DrainOrder
from core.state import SessionState

if TYPE_CHECKING:
    from core.kernel.assembly import Assembly
    from core.kernel.ports import Reread
    from core.state import State

__all__ = [
    "Group", "StoredGroup", "arrival", "delete_groups", "digests", "freeze_session", "groups", "met", "read_groups",
    "thaw_session", "write_group",
]  # fmt: skip

Arrival = list[tuple[int, int, int]]
"""A group's files' bytes in delivery order: (file index, first byte, end byte), consecutive reads of one file
merged."""


class Group(msgspec.Struct):
    """Sessions one handler assembled from a common set of files (see the module docstring)."""

    agent: str
    keys: list[str]  # in the state's order
    files: list[str]  # sorted
    ids: set[str]


class StoredGroup(msgspec.Struct):
    """An `assemblies` row and its sessions' rows, decoded (not yet checked against the disk)."""

    id: int
    agent: str
    sessions: int
    files: list[str]
    ids: frozenset[int]
    arrival: Arrival
    rows: list[tuple[str, str, str | None, bytes, bytes]]  # key, session id, cwd, state, calls


def groups(state: State) -> list[Group]:
    """The groups of every handler that assembles sessions across files (`assembly`), in the state's order of
    their first session."""
    rank = {key: i for i, key in enumerate(state.sessions)}
    out: list[Group] = []
    for name, handlers in state.handlers.items():
        for handler in handlers:
            assembly = getattr(handler, "assembly", None)
            if assembly is not None:
                out.extend(_split(name, assembly(state), rank))
    out.sort(key=lambda g: rank.get(g.keys[0], len(rank)))
    return out


def _split(agent: str, made: Assembly, rank: dict[str, int]) -> list[Group]:
    """One handler's sessions in groups: connected by a common file or a link (union-find)."""
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    owner: dict[str, str] = {}
    for key in sorted(made.touched):
        find(key)
        for path in made.touched[key]:
            if path in owner:
                union(owner[path], key)
            else:
                owner[path] = key
    for a, b in made.links:
        union(a, b)
    members: dict[str, list[str]] = {}
    for key in list(parent):
        members.setdefault(find(key), []).append(key)
    out = []
    for keys in members.values():
        keys.sort(key=lambda k: rank.get(k, len(rank)))
        files = sorted({path for key in keys for path in made.touched.get(key, ())})
        out.append(Group(agent, keys, files, {i for key in keys for i in made.ids.get(key, ())}))
    return out


def digests(ids: Iterable[str]) -> frozenset[int]:
    """What a group is known by across files, as 64-bit digests (a collision can only make a run read cold)."""
    return frozenset(xxhash.xxh3_64_intdigest(i.encode("utf-8", "surrogatepass")) for i in ids)


def arrival(order: DrainOrder, files: list[str]) -> Arrival:
    """How `order` delivers the bytes of `files` (see `Arrival`)."""
    reads = sorted(
        (poll, visit, i, first, stop)
        for i, path in enumerate(files)
        for poll, visit, first, stop in order.stretches(path)
    )
    out: Arrival = []
    for _, _, i, first, stop in reads:
        if out and out[-1][0] == i and out[-1][2] == first:
            out[-1] = (i, out[-1][1], stop)
        else:
            out.append((i, first, stop))
    return out


def met(fresh: list[Group], loaded: list[StoredGroup], loaded_keys: set[str]) -> str | None:
    """Why what this run read would have met a stored group in a cold read (None: it did not)."""
    ids = frozenset().union(*(g.ids for g in loaded)) if loaded else frozenset()
    for group in fresh:
        for key in group.keys:
            if key in loaded_keys:
                return f"a file read now belongs to stored session {os.path.basename(key)}"
        if ids and not ids.isdisjoint(digests(group.ids)):
            return f"session {os.path.basename(group.keys[0])} shares calls or ids with a stored session"
    return None


# ---------------------------------------------------------------------------------------------- one session
class _Node(msgspec.Struct, array_like=True):
    id: str
    parent_id: str | None
    type: str
    path: str
    line: int
    offset: int
    length: int
    turn_index: int | None


class _Fields(msgspec.Struct):
    """What a stored assembled session's `sessions.state` BLOB holds (its calls are in `calls_data`)."""

    header: SessionHeader | None
    nodes: list[_Node]
    branch: list[str]
    profile: dict[str, Any] | None
    counterfactual: dict[str, Any] | None
    facts: dict[str, Any] | None
    entries: int
    analyzers: dict[str, Any]
    origin: Where | None


def freeze_session(session: SessionState) -> tuple[bytes, bytes]:
    """A session as its `state` and `calls_data` BLOBs; `NotKept` when it cannot be stored as it is."""
    if session.parked is not None or session.sidecar is not None:
        raise NotKept("a parked session, or one with a restart sidecar")
    key = session.key
    turn_types, session_type = facts_types(session.agent)
    facts = session.facts
    if facts is not None and (session_type is None or type(facts) is not session_type):
        raise NotKept("session facts of an undeclared type")
    analyzers: dict[str, Any] = {}
    for cls, analyzer in session.analyzers.items():
        kept = analyzer.keep(session)  # may raise NotKept
        if kept is not None and cls.in_stored_session:
            analyzers[cls.__qualname__] = kept
        elif cls.in_stored_session:
            raise NotKept(f"{cls.__name__} keeps nothing to resume from")
    nodes = [
        _Node(n.id, n.parent_id, n.type, n.where.path, n.where.line, n.where.offset, n.where.length, n.turn_index)
        for n in session.nodes.values()
    ]
    fields = _Fields(
        header=session.header,
        nodes=nodes,
        branch=list(session.branch),
        profile=session.profile,
        counterfactual=session.counterfactual,
        facts=None if facts is None else msgspec.to_builtins(facts),
        entries=session.entries,
        analyzers=analyzers,
        origin=session.origin,
    )
    plain_fields = msgspec.to_builtins(fields)
    calls = calls_to_plain(session.turns, key, session.session_id, turn_types)
    strings = [key, session.session_id, *([session.cwd] if session.cwd is not None else [])]
    secret = check_strings([*strings, *_strings(plain_fields, calls)])
    if secret is not None:
        raise NotKept(f"it holds a secret ({secret})")
    return deflate(pack(plain_fields)), deflate(pack(calls))


_JSON_STRING = re.compile(rb'"([^"\\]*(?:\\.[^"\\]*)*)"')
"""A string in JSON text (the text `msgspec.json` writes: every string quoted, `"` and `\\` escaped)."""


def _strings(*values: Any) -> set[str]:
    """Every string in plain data, dict keys too, each once (`codec.strings_of`'s set). The data is written as
    JSON in C and its string tokens found by one regex, then only the distinct ones decoded: a 7,900-call
    history holds ~680,000 strings (every call's field names), ~3 % of them distinct; walking them in Python
    was 0.6 s of its first report's 1.5 s of storing."""
    try:
        blob = msgspec.json.encode(values)
    except (TypeError, ValueError, OverflowError, UnicodeError):  # (a lone surrogate, an int beyond 64 bits)
        return set(strings_of(values))
    out: set[str] = set()
    for token in set(_JSON_STRING.findall(blob)):
        out.add(json.loads(b'"' + token + b'"') if b"\\" in token else token.decode("utf-8"))
    return out


def thaw_session(
    agent_name: str, key: str, session_id: str, cwd: str | None, state: bytes, calls: bytes, reread: Reread
) -> SessionState:
    """A session from its rows, as a cold read left it (`Corrupt` when they do not decode into that)."""
    try:
        agent = agent_named(agent_name)
    except KeyError:
        raise Corrupt(f"a stored session of an unknown agent ({agent_name})") from None
    turn_types, session_type = facts_types(agent)
    try:
        fields = msgspec.convert(plain(inflate(state)), _Fields)
    except (msgspec.ValidationError, TypeError, ValueError) as exc:
        raise Corrupt(f"a stored session does not decode: {exc}") from None
    session = SessionState(key=key, session_id=session_id, agent=agent, cwd=cwd)
    for cls in agent.load().session_analyzers:
        if not cls.in_stored_session:
            continue
        kept = fields.analyzers.get(cls.__qualname__)
        if kept is None:
            raise Corrupt(f"a stored session without its {cls.__name__}")
        try:
            analyzer = cls(session, reread)
            analyzer.resume(session, kept)
        except Exception as exc:  # a kept value of the wrong shape: whatever `resume` raised
            raise Corrupt(f"a stored {cls.__name__} does not resume: {type(exc).__name__}") from None
        session.analyzers[cls] = analyzer
    session.header = fields.header
    session.turns = calls_from_plain(plain(inflate(calls)), key, session_id, turn_types)
    for index, turn in enumerate(session.turns):
        if turn.index != index:
            raise Corrupt("a stored session's calls are out of order")
        turn.log_line = None  # paired again as a cold read pairs them (`Index.settle`)
    session.nodes = {
        n.id: EntryNode(n.id, n.parent_id, n.type, Where(n.path, n.line, n.offset, n.length), n.turn_index)
        for n in fields.nodes
    }
    session.branch = fields.branch
    session.profile = fields.profile
    session.counterfactual = fields.counterfactual
    session.facts = decode_facts(fields.facts, session_type)
    session.entries = fields.entries
    session.origin = fields.origin
    return session


# ---------------------------------------------------------------------------------------------- rows
def write_group(
    conn: sqlite3.Connection,
    scope: int,
    group: Group,
    frozen: list[tuple[SessionState, bytes, bytes]],
    order: Arrival,
    calls: Callable[[sqlite3.Connection, int, list[Turn]], None],
) -> None:
    """One group's `assemblies` row and its sessions' rows (its files' `streams` rows are written beside)."""
    ids = array("Q", sorted(digests(group.ids)))
    cursor = conn.execute(
        "INSERT INTO assemblies (scope, agent, sessions, files, ids, arrival) VALUES (?, ?, ?, ?, ?, ?)",
        (scope, group.agent, len(frozen), json.dumps(group.files), ids.tobytes(), pack([list(a) for a in order])),
    )
    assembly = int(cursor.lastrowid or 0)
    for session, state, data in frozen:
        started = session.header.timestamp if session.header is not None else None
        row = conn.execute(
            "INSERT INTO sessions (scope, key, session_id, agent, cwd, started, calls, parked_at, sidecar, state, "
            "calls_data, assembly) VALUES (?, ?, ?, ?, ?, ?, ?, 0, NULL, ?, ?, ?)",
            (scope, session.key, session.session_id, group.agent, session.cwd, started, len(session.turns), state,
             data, assembly),
        )  # fmt: skip
        calls(conn, int(row.lastrowid or 0), session.turns)


def delete_groups(conn: sqlite3.Connection, scope: int, keep: set[int]) -> None:
    """Every stored group of the scope but `keep`, with its sessions and their calls (its files' `streams`
    rows go with the files: `drop_stream`)."""
    kept = sorted(keep)
    marks = ", ".join("?" * len(kept))
    gone = f"SELECT id FROM sessions WHERE scope = ? AND assembly IS NOT NULL AND assembly NOT IN ({marks})"
    conn.execute(f"DELETE FROM calls WHERE session IN ({gone})", (scope, *kept))
    conn.execute(f"DELETE FROM sessions WHERE id IN ({gone})", (scope, *kept))
    conn.execute(f"DELETE FROM assemblies WHERE scope = ? AND id NOT IN ({marks})", (scope, *kept))


def read_groups(conn: sqlite3.Connection, scope: int) -> list[StoredGroup]:
    """Every stored group of the scope, its rows type-checked (`Corrupt` when a row is not what `write_group`
    wrote)."""
    out: dict[int, StoredGroup] = {}
    for assembly, agent, sessions, files, ids, order in conn.execute(
        "SELECT id, agent, sessions, files, ids, arrival FROM assemblies WHERE scope = ? ORDER BY id", (scope,)
    ):
        if not (isinstance(assembly, int) and isinstance(agent, str) and isinstance(sessions, int)):
            raise Corrupt("a stored group row is not one")
        if not (isinstance(files, str) and isinstance(ids, bytes) and isinstance(order, bytes)) or len(ids) % 8:
            raise Corrupt("a stored group row is not one")
        try:
            names = json.loads(files)
            delivered = msgspec.convert(plain(order), list[tuple[int, int, int]])
        except (ValueError, msgspec.ValidationError, TypeError):
            raise Corrupt("a stored group row is not one") from None
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise Corrupt("a stored group names no files")
        digest = array("Q")
        digest.frombytes(ids)
        out[assembly] = StoredGroup(assembly, agent, sessions, names, frozenset(digest), delivered, [])
    for key, session_id, agent, cwd, state, calls, assembly in conn.execute(
        "SELECT key, session_id, agent, cwd, state, calls_data, assembly FROM sessions "
        "WHERE scope = ? AND assembly IS NOT NULL ORDER BY id",
        (scope,),
    ):
        group = out.get(assembly)
        if group is None:
            continue  # a group removed while its sessions stayed (a kill between two writes): never read
        if not (isinstance(key, str) and isinstance(session_id, str) and agent == group.agent):
            raise Corrupt("a stored session row is not one")
        if not (isinstance(state, bytes) and isinstance(calls, bytes) and (cwd is None or isinstance(cwd, str))):
            raise Corrupt("a stored session row is not one")
        group.rows.append((key, session_id, cwd, state, calls))
    return list(out.values())
