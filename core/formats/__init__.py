"""What every format adapter shares (`base`: JSON decoding that never raises, the `Adapter` base class with its
declared capabilities) and pretty-printed JSON documents (`document`).

The adapters themselves belong to their agents (`core/agents/<agent>/`), and `core.agents.ADAPTERS` lists them
in sniff order.
"""
