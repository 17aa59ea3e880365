"""CLI commands of the review area (registered on monitor.cli.app)."""
