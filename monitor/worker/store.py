"""Who holds what: the ``leases`` table as a visible record of workers and their roles.

Mutual exclusion itself is done by the database (PostgreSQL advisory locks, released when the
holder's connection dies) or by the operating system (a file lock beside a SQLite store), see
``monitor.worker.locks``; these rows only say who holds a role, since when, and until when the holder
promised to renew (so ``worker status`` and the dashboard can show a worker that stopped renewing).
Callers commit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from monitor.store.engine import insert_ignore
from monitor.store.models import Lease
from monitor.store.rows import to_row


@dataclass(frozen=True, slots=True)
class LeaseRow:
    """One lease: ``name`` (``worker:<holder>`` or ``leader``), holder, times in naive UTC."""

    name: str
    holder: str
    acquired_at: datetime
    expires_at: datetime

    def expired(self, now: datetime) -> bool:
        """Whether the holder failed to renew by ``expires_at`` (naive UTC ``now``)."""
        return self.expires_at < now

    def state(self, now: datetime, *, host: str, alive: Callable[[int], bool]) -> str:
        """``ok``, ``expired`` (not renewed by ``expires_at``), ``dead`` (the holder ran on ``host``, this
        machine, and its process ``hostname:pid`` is gone: killed before its lease ran out) or ``ok``
        when it cannot be told (another machine: only the lease says)."""
        name, sep, pid = self.holder.rpartition(":")
        if sep and name == host and pid.isdigit() and not alive(int(pid)):
            return "dead"
        return "expired" if self.expired(now) else "ok"


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this machine (signal 0; a process of another user counts)."""
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def heartbeat(*, session: Session, name: str, holder: str, now: datetime, ttl: timedelta) -> None:
    """Record that ``holder`` holds ``name`` until ``now + ttl`` (keeps ``acquired_at`` while the
    holder stays the same; a new holder takes the row over)."""
    session.execute(
        insert_ignore(session, Lease, ["name"]),
        [{"name": name, "holder": holder, "acquired_at": now, "expires_at": now + ttl}],
    )
    session.execute(
        update(Lease).where(Lease.name == name, Lease.holder == holder).values(expires_at=now + ttl)
    )
    session.execute(
        update(Lease)
        .where(Lease.name == name, Lease.holder != holder)
        .values(holder=holder, acquired_at=now, expires_at=now + ttl)
    )


def release(*, session: Session, name: str, holder: str) -> None:
    """Delete ``name`` if ``holder`` holds it (a clean shutdown)."""
    session.execute(delete(Lease).where(Lease.name == name, Lease.holder == holder))


def prune_dead(*, session: Session, host: str, alive: Callable[[int], bool] = pid_alive) -> int:
    """Delete the ``worker:`` leases of holders on ``host`` whose process is gone (a worker killed
    before it could release its lease); returns how many. A starting worker runs this, so one crash does
    not leave ``worker status`` reporting DEAD, and exiting 1, for good. Flushes, does not commit."""
    now = datetime.min
    gone = [
        x.name
        for x in list_leases(session=session)
        if x.name.startswith("worker:") and x.state(now, host=host, alive=alive) == "dead"
    ]
    if gone:
        session.execute(delete(Lease).where(Lease.name.in_(gone)))
    return len(gone)


def list_leases(*, session: Session) -> list[LeaseRow]:
    """Every lease row, by name."""
    return [to_row(LeaseRow, x) for x in session.scalars(select(Lease).order_by(Lease.name))]


__all__ = ["LeaseRow", "heartbeat", "list_leases", "pid_alive", "prune_dead", "release"]
