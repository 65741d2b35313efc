"""Shared algorithms, pure and agent-agnostic: what every agent's analysis may use. Imports `core.model` only.

canonical JSON and collation (JavaScript's `JSON.stringify` and `localeCompare`, for digests), diff and
volatility (capture vs commit, which fields are allowed to change), stats (log aggregates), hashing (hash
lists with O(1) prefix digests, the stable fingerprint), directives (tagged blocks and the per-session ledger),
dedupe (this tool's keep-first proposal), the prompt-cache verdict (`cache_verdict`), and the contracts
analyses plug in with (`pipeline`: the analyzer and handler base classes; `ports`: the re-read port).
"""
