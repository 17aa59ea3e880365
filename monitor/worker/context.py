"""What every worker job is given: the settings, the engine, the rules, the locks and the stop flag of
one worker process (:class:`WorkerContext`), built by ``monitor.worker.runtime.open_worker``.

Its own module so that the jobs (``monitor.worker.jobs``) and the process that runs them
(``monitor.worker.runtime``) both read it without reading each other.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from monitor.worker.locks import Locks

if TYPE_CHECKING:
    from monitor.checks.rules import Rules
    from monitor.settings import Settings
    from monitor.worker.pool import CheckPool


def utcnow() -> datetime:
    """Wall-clock now, naive UTC (how the store keeps times)."""
    return datetime.now(UTC).replace(tzinfo=None)


@dataclass
class WorkerContext:
    """Everything a worker job needs, built once per process by :func:`open_worker`.

    ``holder`` names this process in locks and leases (``host:pid``); ``clock`` gives wall-clock
    naive UTC (tests pass a fixed one); ``sentry`` says whether alerts and check-ins go to Sentry;
    ``pool`` grades the check phase's batches on worker processes, kept from cycle to cycle (started by
    the first batch large enough, ``monitor.worker.pool``).
    """

    settings: Settings
    engine: Engine
    rules: Rules
    locks: Locks
    holder: str
    sentry: bool = False
    stop_event: threading.Event = field(default_factory=threading.Event)
    clock: Callable[[], datetime] = utcnow
    pool: CheckPool | None = None

    def stopping(self) -> bool:
        """Whether a shutdown was requested."""
        return self.stop_event.is_set()

    def session(self) -> Session:
        """A new session (the caller closes it; values stay loaded after commit)."""
        from monitor.store.engine import session_factory

        return session_factory(self.engine)()

    @property
    def lease_ttl(self) -> timedelta:
        """How long a lease row promises the holder is alive: three cycle intervals."""
        return timedelta(minutes=3 * self.settings.worker.interval_minutes)

    def close(self) -> None:
        """Release this worker's lease row and locks, flush Sentry, dispose of the engine."""
        from monitor.worker.store import release

        try:
            with self.session() as s:
                release(session=s, name=f"worker:{self.holder}", holder=self.holder)
                release(session=s, name="leader", holder=self.holder)
                s.commit()
        finally:
            if self.pool is not None:
                self.pool.close()
            self.locks.close()
            if self.sentry:
                from monitor.observability.sentry import close_sentry

                close_sentry()
            self.engine.dispose()
