"""The ``rewrite-monitor`` entry point: the root app with every command module registered on it.

Command modules receive the app (``register(app)``, the sqlite-utils ``register_commands(cli)`` way)
and import only ``monitor.cli.app`` (consoles, exit codes, the store opener), never this module, so the
command line has no import cycle. Registration order is the order ``--help`` lists the commands in:
the pipeline's (set up, ingest, check, run, review, measure, serve).
"""

from __future__ import annotations

import gc

from monitor.cli.app import app
from monitor.cli.commands import checks, dashboard, db, ingest, queue, review, run, stats, worker

for _module in (db, ingest, checks, run, queue, review, stats, dashboard, worker):
    _module.register(app)


GC_THRESHOLDS = (50_000, 20, 20)
"""The collector's generation thresholds for a command's process (CPython's default: 700, 10, 10).

The checks allocate millions of short-lived objects (tokens, spans, findings), nearly all freed by
reference counting; at the default a young collection runs every 700 net allocations and mostly walks
the long-lived NLP tables and ORM state for nothing. Measured on the 3,385 rewrites of the shared logs
(every check, in memory, one process): 1,267 collections and 2.29 s of 18.7 s of CPU at the default,
17 collections and 0.37 s with these thresholds, the same peak RSS. Set at the entry point, as
``gc.set_threshold``'s documentation suggests for programs whose allocation pattern is known."""


def tune_gc() -> None:
    """Apply :data:`GC_THRESHOLDS` to this process: what every ``rewrite-monitor`` command runs under
    (``benchmarks/run.py`` applies it too, so it times what users run)."""
    gc.set_threshold(*GC_THRESHOLDS)


def main() -> None:
    """Console-script entry point."""
    tune_gc()
    app()


__all__ = ["GC_THRESHOLDS", "app", "main", "tune_gc"]
