"""The words the dashboard shows, explained once: kinds, reasons and terms, for the help screen (`?`).

The review found the help without `failed`, the reason names, the table's `n` and `dir` columns, "logged-only" and
the rule names of the commit title. Columns are explained where they are defined (`turn_table.COLUMNS`); this
module holds the rest. Reasons are senpi's `ContinuityReason` vocabulary (35 values, see
`reference/senpi-formats.md` §2.4), grouped by what they mean for a user; other agents add theirs here.
"""

from __future__ import annotations

KINDS_HELP: tuple[tuple[str, str], ...] = (
    ("delta", "only the new messages were sent: the session's prefix matched (the healthy case)"),
    ("fork", "history re-sent from an earlier point (a live entry was closed or diverged, then re-attached)"),
    ("flatten", "the whole history re-serialized into one prompt and re-sent"),
    ("bootstrap", "the first call of a session: everything is new"),
    ("disabled", "continuity off for this call (resume mode off, or a non-resident call)"),
    ("failed", "the call failed before a decision (query_failed, abort_timeout, …): nothing was reused"),
    (
        "re-send",
        "a stateless agent's call (pi, Claude Code, mux, Codex) that read back less of the prompt cache "
        "than the previous call left in it: history processed again",
    ),
    ("compaction", "the first call after the history was replaced by a summary: rebuilt on purpose, not a re-send"),
    ("aborted", "a request with no usage at all (aborted or failed): left out of the re-send share"),
)

REASONS_HELP: tuple[tuple[str, str], ...] = (
    ("prefix_matched", "delta: the live entry's sent messages are a prefix of this call's"),
    ("registry_miss", "no live entry for the session: a first call, or the entry was never kept"),
    ("assistant_rewritten", "the committed assistant message differs from the one streamed (flag R): the next "
                            "call cannot extend the prefix"),
    ("idle_ttl · capacity", "a close cause: the entry was dropped after idling, or to make room"),
    ("model_selected · thinking_level_selected · extensions_removed",
     "a close cause: the user changed the model, the thinking level, or removed extensions"),
    ("model_changed · toolset_changed · system_prompt_changed · options_changed · account_changed",
     "the request changed in a way the live session cannot take: re-send"),
    ("assistant_stream_diverged · sent_stream_diverged · history_rolled_back",
     "what was streamed or sent no longer matches the transcript (a rewind, an edit)"),
    ("branch_diverged · branch_boundary_unavailable · branch_resume · transcript_missing",
     "the transcript branched, or its boundary could not be found"),
    ("tainted_compaction · tainted_fork · tainted_abort · tainted_assistant_provenance_unverified",
     "the live entry was marked unsafe to extend"),
    ("query_failed · turn_attribution_failed · abort_timeout · timeout_retry",
     "a failure closed the entry (kind failed, or the cause of the next re-send)"),
    ("resume_initialization_failed · resume_initialization_aborted · resume_mode_off · session_shutdown · other",
     "resume could not start, was off, or the session ended"),
    ("cache_hit · uncached · below_cache_minimum",
     "delta by the cache: it read back all the previous call cached (its read + write; Codex: its prompt in "
     "128-token blocks), or nothing had been cached"),
    ("cache_expired · cache_miss · prefix_rewritten",
     "re-send by the cache: the gap reached the cache lifetime (5 min / 1 h), nothing was read back within it, "
     "or less than expected (the prefix changed)"),
)  # fmt: skip

TERMS_HELP: tuple[tuple[str, str], ...] = (
    ("logged", "the decision senpi wrote (its diagnostic on the message, or a matched session.log line)"),
    ("recomputed", "the same decision replayed here from the transcript; ≠ marks a disagreement"),
    ("logged-only", "the why says this when the cause is not on disk (a close, a failure): the logged decision "
                    "is taken as it is"),
    ("capture / commit", "the assistant message as streamed (event recording) and as persisted (transcript)"),
    ("volatile", "a field that changes without changing meaning (thinking startedAt/endedAt, timestamps)"),
    ("rule verbatim / projected", "in a commit title: the fingerprint rule of the agent's build: verbatim "
                                  "hashes content as is (before v2026.8.11-2), projected leaves timing out"),
    ("avoidable", "a re-send a fingerprint ignoring volatile fields would have kept as a delta (flag A)"),
    ("pending", "a line the live tail holds back (being written, or a file not recognised yet); a report counts "
                "it as a problem"),
    ("sent / serialized", "payload bytes the provider received, after the agent's own directive dedupe, and "
                          "the same prompt as serialized before it (\"before dedupe\"); a directive share divides "
                          "figures of one side"),
)  # fmt: skip
