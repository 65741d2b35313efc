"""One pane per module: each widget of the dashboard."""
