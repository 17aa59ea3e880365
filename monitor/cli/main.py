"""The ``rewrite-monitor`` entry point: the root app with every command module registered on it.

Command modules receive the app (``register(app)``, the sqlite-utils ``register_commands(cli)`` way)
and import only ``monitor.cli.app`` (consoles, exit codes, the store opener), never this module, so the
command line has no import cycle. Registration order is the order ``--help`` lists the commands in:
the pipeline's (set up, ingest, check, run, review, measure, serve).
"""

from __future__ import annotations

from monitor.cli.app import app
from monitor.cli.commands import checks, dashboard, db, ingest, queue, review, run, stats, worker

for _module in (db, ingest, checks, run, queue, review, stats, dashboard, worker):
    _module.register(app)


def main() -> None:
    """Console-script entry point."""
    app()


__all__ = ["app", "main"]
