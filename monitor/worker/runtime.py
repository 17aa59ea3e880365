"""The worker process: building what a job needs (``monitor.worker.context.WorkerContext``), running
one job by name, and the foreground loop with graceful shutdown.

Shutdown: SIGTERM or SIGINT sets the context's stop flag. A running job polls it between lines
(ingest) and between batches (check), commits the batch in hand, and returns; the scheduler is then
shut down waiting for it, locks and leases are released, and Sentry is flushed. A second signal does
not interrupt the batch either: kill with SIGKILL to abandon it (its transaction rolls back and the
next start re-reads from the committed cursor).
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import time
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING

from monitor.worker.context import WorkerContext, utcnow
from monitor.worker.locks import WorkerError, locks_for

if TYPE_CHECKING:
    from sentry_sdk.transport import Transport

    from monitor.settings import Settings
    from monitor.worker.jobs import JobSummary

log = logging.getLogger("monitor.worker")


def open_worker(
    settings: Settings, *, sentry_transport: Transport | None = None, holder: str | None = None
) -> WorkerContext:
    """Build the worker context: engine (schema at head), rules, NLP pipeline, locks and Sentry.

    Raises ``StorageError`` (database unreachable or not migrated), ``RulesError``, ``ConfigError``,
    and ``WorkerError`` when another worker holds a SQLite store.
    """
    from monitor.checks.nlp import use_model
    from monitor.checks.registry import configure
    from monitor.checks.rules import load_rules
    from monitor.observability.sentry import init_sentry
    from monitor.store.engine import open_store

    rules = load_rules(settings.rules_dir)
    configure(settings.checks)
    use_model(settings.spacy_model)
    # writes: on SQLite every cycle's transaction takes the write lock at BEGIN, so beside reviewers and
    # a `run` the worker waits its turn (busy timeout) instead of failing with "database is locked".
    engine = open_store(settings.database_url.get_secret_value(), writes=True)
    holder = holder or f"{socket.gethostname()}:{os.getpid()}"
    try:
        locks = locks_for(engine, holder)
    except BaseException:
        engine.dispose()
        raise
    from monitor.store.engine import session_factory
    from monitor.worker.store import prune_dead

    with session_factory(engine)() as session:
        prune_dead(session=session, host=socket.gethostname())
        session.commit()
    sentry = init_sentry(settings, transport=sentry_transport)
    from monitor.worker.pool import CheckPool

    return WorkerContext(
        settings=settings,
        engine=engine,
        rules=rules,
        locks=locks,
        holder=holder,
        sentry=sentry,
        pool=CheckPool.for_settings(settings),
    )


def run_job(ctx: WorkerContext, name: str) -> JobSummary:
    """Run the job ``name`` (``cycle``, ``daily``, ``alerts``, ``retention``) once and return its summary.

    The cycle checks in with Sentry Crons when Sentry is on. Raises ``WorkerError`` for an unknown name;
    a job's own errors propagate (the scheduler wrapper logs and reports them).
    """
    from monitor.observability.sentry import cron_checkin
    from monitor.worker.jobs import WORKER_JOBS

    job = WORKER_JOBS.get(name)
    if job is None:
        raise WorkerError(f"unknown job {name!r}: choose one of {', '.join(sorted(WORKER_JOBS))}")
    started = time.perf_counter()
    if name == "cycle":
        with cron_checkin(ctx.settings.worker, ctx.sentry):
            summary = job(ctx)
    else:
        summary = job(ctx)
    fields = summary.log_fields() if hasattr(summary, "log_fields") else {}
    log.info(
        f"{name} done",
        extra={"fields": {"job": name, "seconds": round(time.perf_counter() - started, 3), **fields}},
    )
    return summary


def _scheduled(ctx: WorkerContext) -> Callable[[str], None]:
    def run(name: str) -> None:
        if ctx.stopping():
            return
        try:
            run_job(ctx, name)
        except Exception as exc:
            # The scheduler must survive a failed cycle (database restarting, file unreadable): log the
            # error type (messages can quote input) and report it; the next cycle retries.
            from monitor.errors import MonitorError

            detail = str(exc) if isinstance(exc, MonitorError) else type(exc).__name__
            log.error(f"{name} failed", exc_info=True, extra={"fields": {"job": name, "error": detail}})
            if ctx.sentry:
                import sentry_sdk

                sentry_sdk.capture_exception(exc)

    return run


def run_forever(ctx: WorkerContext, *, install_signals: bool = True) -> None:
    """Run the scheduler (cycle every ``worker_interval_minutes``, the first at once; daily at
    ``daily_time`` in ``timezone``) until SIGTERM/SIGINT or ``ctx.stop_event``; then shut down
    gracefully (see the module doc)."""
    from monitor.worker.scheduler import build_scheduler

    if install_signals:

        def on_signal(signum: int, _frame: FrameType | None) -> None:
            log.info("shutdown requested", extra={"fields": {"signal": signal.Signals(signum).name}})
            ctx.stop_event.set()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
    # A cycle longer than the interval makes APScheduler warn at every skipped run; coalescing them is
    # the intent, so only its errors are logged.
    logging.getLogger("apscheduler").setLevel(logging.ERROR)
    scheduler = build_scheduler(ctx.settings.worker, _scheduled(ctx))
    scheduler.start()
    log.info(
        "worker started",
        extra={
            "fields": {
                "holder": ctx.holder,
                "backend": ctx.engine.dialect.name,
                "interval_minutes": ctx.settings.worker_interval_minutes,
                "daily_time": ctx.settings.daily_time,
                "timezone": ctx.settings.timezone,
                "sources": len(ctx.settings.sources),
                "sentry": ctx.sentry,
            }
        },
    )
    if not ctx.settings.sources:
        log.warning("no sources configured: cycles will only check, admit and alert (set `sources`)")
    try:
        while not ctx.stop_event.wait(0.5):
            pass
    finally:
        scheduler.shutdown(wait=True)
        log.info("worker stopped", extra={"fields": {"holder": ctx.holder}})


__all__ = ["WorkerContext", "WorkerError", "open_worker", "run_forever", "run_job", "utcnow"]
