"""The tables of the persistent index, as SQL, and the version that names them.

One SQLite file holds every *scope* (a set of roots and options: what one `continuity-tui report PATH…` or
dashboard reads); each table is keyed by its scope and goes with it. A user can read it with `sqlite3`:

- `scopes`: one row per scope (its roots and `--volatile` patterns as JSON, the digest of the code that wrote
  it, when it was made and last used, which run may write it);
- `streams` and `files`: every file whose contribution is stored, one row per generation (a rotated
  `session.log.1` and the current `session.log` are two generations of one stream): device, inode, size, read
  offset, line count, the length and blake2b digest of its first bytes and of the bytes just before the offset
  (never the bytes themselves), and its per-file counts;
- `sessions` and `calls`: finished sessions (parked, `core.state.parking`) with the fields the surfaces read
  (and `log_credits`, `log_credits_parked`: how many log lines naming the session a cold read counts as its
  build evidence while the session is read, and after it was parked), one row per provider call (time, kind,
  reason, evidence, model, payload bytes, tokens, commit outcome); the session's analysis state and its calls
  whole, as typed data (`state`, `calls_data`: compressed MessagePack, what a loader reads); never message text;
- `log_chunks` and `log_columns`: the decision and close lines of each log generation, in file order, as one
  BLOB per column per chunk of rows (`log_columns.data` is `core.kernel.logcols`'s little-endian array of the
  typecode beside it: `length(data)` is the rows times the width), with `log_vocab` (the strings the codes
  stand for), `log_streaks` and `log_state` (the aggregates a report reads: streaks, counts, peak), and the
  queryable aggregates `decisions_daily` (lines by UTC day, kind and reason) and `closes_daily` (close lines by
  day and reason); `log_view`: the report's `continuity` section (its streaks as the JSON a report writes for them) and
  per-session line counts as a report last built them from those rows (`core.state.logview`: read back instead
  of the columns while no row was added);
- `problems`: the located problems of stored files (path, line, offset, message);
- `assemblies`: Claude Code and mux sessions, which are read from several files (`core.index.assembled`): one
  row per group of sessions that met across files, with its files (a JSON list; each is a `streams` row of unit
  `assembled`), the 64-bit digests of what other files' records would find it by (`ids`: message and session
  ids) and the order a cold read delivers its files' bytes in (`arrival`); its sessions are `sessions` rows
  whose `assembly` names it (`parked_at` 0: never parked), with their `calls`.

Strings kept from data (paths, session ids, reasons, models, entry ids) are kept only when the report's
redaction would leave them unchanged; anything else about a file is not stored and the file is read again
(`core.index.codec.check_strings`).
"""

from __future__ import annotations

SCHEMA_VERSION = 4
"""`PRAGMA user_version` of a store this code reads; any other version is replaced by an empty store."""

APPLICATION_ID = 0x43544958
"""`PRAGMA application_id` ("CTIX"): a SQLite file of another program is never taken for an index."""

TABLES = """
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE scopes (
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  roots TEXT NOT NULL,
  options TEXT NOT NULL,
  code TEXT NOT NULL,
  writer TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  used_ms INTEGER NOT NULL
);
CREATE TABLE streams (
  scope INTEGER NOT NULL,
  logical TEXT NOT NULL,
  unit TEXT NOT NULL,
  format TEXT,
  next_number INTEGER NOT NULL,
  PRIMARY KEY (scope, logical)
);
CREATE TABLE files (
  scope INTEGER NOT NULL,
  logical TEXT NOT NULL,
  number INTEGER NOT NULL,
  path TEXT NOT NULL,
  current INTEGER NOT NULL,
  dev INTEGER NOT NULL,
  ino INTEGER NOT NULL,
  size INTEGER NOT NULL,
  sig_size INTEGER,
  sig_mtime_ns INTEGER,
  sig_ctime_ns INTEGER,
  pos INTEGER NOT NULL,
  line_start INTEGER NOT NULL,
  lineno INTEGER NOT NULL,
  skipping INTEGER NOT NULL,
  flushed_at INTEGER NOT NULL,
  head_len INTEGER NOT NULL,
  head_digest BLOB NOT NULL,
  tail_digest BLOB NOT NULL,
  prefix_digest BLOB,
  bytes INTEGER NOT NULL,
  lines INTEGER NOT NULL,
  bad_lines INTEGER NOT NULL,
  counted INTEGER NOT NULL,
  source_format TEXT,
  PRIMARY KEY (scope, logical, number)
);
CREATE TABLE problems (
  scope INTEGER NOT NULL,
  logical TEXT NOT NULL,
  number INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  line INTEGER,
  offset INTEGER,
  error TEXT NOT NULL,
  noticed_ms INTEGER,
  PRIMARY KEY (scope, logical, number, seq)
);
CREATE TABLE sessions (
  id INTEGER PRIMARY KEY,
  scope INTEGER NOT NULL,
  key TEXT NOT NULL,
  session_id TEXT NOT NULL,
  agent TEXT NOT NULL,
  cwd TEXT,
  started TEXT,
  calls INTEGER NOT NULL,
  parked_at INTEGER NOT NULL,
  log_credits INTEGER,
  log_credits_parked INTEGER,
  sidecar TEXT,
  state BLOB NOT NULL,
  calls_data BLOB NOT NULL,
  assembly INTEGER,
  UNIQUE (scope, key)
);
CREATE TABLE assemblies (
  id INTEGER PRIMARY KEY,
  scope INTEGER NOT NULL,
  agent TEXT NOT NULL,
  sessions INTEGER NOT NULL,
  files TEXT NOT NULL,
  ids BLOB NOT NULL,
  arrival BLOB NOT NULL
);
CREATE TABLE calls (
  session INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  ts TEXT,
  kind TEXT,
  reason TEXT,
  evidence TEXT,
  recomputed_kind TEXT,
  agreement INTEGER,
  model TEXT,
  payload_bytes INTEGER,
  payload_bytes_raw INTEGER,
  input_tokens INTEGER,
  cache_read_tokens INTEGER,
  cache_write_tokens INTEGER,
  output_tokens INTEGER,
  commit_outcome TEXT,
  avoidable INTEGER,
  PRIMARY KEY (session, idx)
);
CREATE TABLE log_vocab (
  scope INTEGER NOT NULL,
  name TEXT NOT NULL,
  code INTEGER NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (scope, name, code)
);
CREATE TABLE log_chunks (
  scope INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  logical TEXT NOT NULL,
  number INTEGER NOT NULL,
  first_row INTEGER NOT NULL,
  first_close INTEGER NOT NULL,
  rows INTEGER NOT NULL,
  closes INTEGER NOT NULL,
  layout INTEGER NOT NULL,
  extras BLOB NOT NULL,
  PRIMARY KEY (scope, seq)
);
CREATE TABLE log_columns (
  scope INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  name TEXT NOT NULL,
  typecode TEXT NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (scope, seq, name)
);
CREATE TABLE log_streaks (
  scope INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (scope, seq)
);
CREATE TABLE log_state (
  scope INTEGER PRIMARY KEY,
  rows INTEGER NOT NULL,
  closes INTEGER NOT NULL,
  data BLOB NOT NULL
);
CREATE TABLE log_view (
  scope INTEGER PRIMARY KEY,
  rows INTEGER NOT NULL,
  closes INTEGER NOT NULL,
  events INTEGER NOT NULL,
  data BLOB NOT NULL
);
CREATE TABLE decisions_daily (
  scope INTEGER NOT NULL,
  logical TEXT NOT NULL,
  number INTEGER NOT NULL,
  day TEXT NOT NULL,
  kind TEXT NOT NULL,
  reason TEXT NOT NULL,
  lines INTEGER NOT NULL,
  PRIMARY KEY (scope, logical, number, day, kind, reason)
);
CREATE TABLE closes_daily (
  scope INTEGER NOT NULL,
  logical TEXT NOT NULL,
  number INTEGER NOT NULL,
  day TEXT NOT NULL,
  reason TEXT NOT NULL,
  lines INTEGER NOT NULL,
  PRIMARY KEY (scope, logical, number, day, reason)
);
CREATE INDEX sessions_by_scope ON sessions (scope);
"""
"""Every object of a store, exactly: a file whose `sqlite_master` holds anything else (a trigger, a view, another
table, a column more or less) is not an index of this version and is never read (`core.index.store`)."""
