"""Job ids to APScheduler triggers, and nothing else: the jobs are ``monitor.worker.jobs.WORKER_JOBS`` and
run by name from the CLI too (``rewrite-monitor worker run cycle``).

- ``cycle``: every ``worker_interval_minutes`` (``WorkerSettings.interval_minutes``), the first run at
  start-up. ``coalesce`` folds runs missed while a long cycle ran into one; ``misfire_grace_time`` of
  one interval drops a run more late than that (the next one reads everything anyway).
- ``daily``: at ``daily_time`` in ``timezone``; a run up to six hours late still happens (a worker
  restarted in the morning still writes the summary and applies retention), a later one waits for the
  next day.

Both run in one thread, one at a time (``max_instances=1`` and a single-thread executor), so the
daily retention never races the cycle's writes on SQLite.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

if TYPE_CHECKING:
    from monitor.setting_groups import WorkerSettings

JOB_IDS = ("cycle", "daily")
DAILY_GRACE_SECONDS = 6 * 3600


def build_scheduler(worker: WorkerSettings, run: Callable[[str], None]) -> BackgroundScheduler:
    """A (not yet started) scheduler calling ``run("cycle")`` and ``run("daily")`` on their triggers."""
    tz = ZoneInfo(worker.timezone)
    interval = worker.interval_minutes
    scheduler = BackgroundScheduler(executors={"default": ThreadPoolExecutor(max_workers=1)}, timezone=tz)
    scheduler.add_job(
        run,
        IntervalTrigger(minutes=interval, timezone=tz),
        args=["cycle"],
        id="cycle",
        coalesce=True,
        max_instances=1,
        misfire_grace_time=max(1, int(interval * 60)),
        next_run_time=datetime.now(tz),
    )
    hour, minute = (int(x) for x in worker.daily_time.split(":"))
    scheduler.add_job(
        run,
        CronTrigger(hour=hour, minute=minute, timezone=tz),
        args=["daily"],
        id="daily",
        coalesce=True,
        max_instances=1,
        misfire_grace_time=DAILY_GRACE_SECONDS,
    )
    return scheduler


__all__ = ["JOB_IDS", "build_scheduler"]
