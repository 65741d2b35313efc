"""Screens pushed over the dashboard: turn detail, problems, help."""
