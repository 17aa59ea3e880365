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
    """Console-script entry point: the command under :func:`tune_gc`, then the collector frozen
    (``gc.freeze``) so that the interpreter's shutdown does not walk and free the process's objects one
    by one before it exits.

    Why: a command's process holds millions of long-lived objects (WordNet's tables, the word lists,
    spaCy's vocabulary, the ORM's state), and the collections and deallocations of the interpreter's
    teardown took 0.6-0.9 s after ``run`` on the shared logs had finished its work (0.3 s after just
    loading the word tables); with the objects frozen, 0.04 s: the operating system reclaims the memory
    at once. The price is that frozen objects are never finalised, so what must happen at exit happens
    before: each command's engines are disposed when it ends (``State.close_engines``: on SQLite, that
    checkpoints the write-ahead log into the database file), files are written inside ``with`` blocks,
    ``atexit`` handlers (logging's flush) still run and the interpreter flushes standard output and
    error itself."""
    tune_gc()
    try:
        app()
    finally:
        gc.freeze()


__all__ = ["GC_THRESHOLDS", "app", "main", "tune_gc"]
