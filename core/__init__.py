"""continuity-tui core: everything that is not a screen (never imports textual or rich)."""

__version__ = "0.1.0"
