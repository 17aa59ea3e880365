"""CLI commands of the dashboard area (registered on monitor.cli.app)."""
