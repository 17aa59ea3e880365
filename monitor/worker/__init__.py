"""The scheduled worker: locks between workers (``locks``) and the process runtime (``runtime``). The jobs
themselves are plain functions in ``monitor.worker.jobs`` (their results in ``summaries``, the alert job's
evaluation and delivery in ``alerting``); the scheduler's triggers are in ``monitor.worker.scheduler``;
``worker status`` reads ``status``.
"""
