"""The scheduled worker: incremental ingest (``tail``), locks between workers (``locks``), and the
process runtime (``runtime``). The jobs themselves are plain functions in ``monitor.worker.jobs``; the
scheduler's triggers are in ``monitor.worker.scheduler``.
"""
