"""The Textual dashboard: screens, panes and keys. Reads core, never the reverse."""
