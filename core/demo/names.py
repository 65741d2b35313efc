"""The agents the demo plays, by name: a constant the CLI needs to build its options, kept apart from
`core.demo.live` (importing the writer and its plans cost every start-up ~30 ms, a one-line report included)."""

AGENTS = ("senpi", "claude-code", "pi", "codex")
"""Every agent the demo plays, in the order they start writing."""
