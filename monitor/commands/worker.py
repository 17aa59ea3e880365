"""CLI commands of the worker area (registered on monitor.cli.app)."""
