"""Mutual exclusion between workers: per source file, and for the single leader.

- PostgreSQL: session-level advisory locks (``pg_try_advisory_lock``) on one dedicated connection
  per worker. The server releases them when that connection ends, so a worker killed with SIGKILL
  frees its files and the leader role at once; nothing expires on a clock.
- SQLite: one worker per store. The worker holds an exclusive ``flock`` on ``<database>.worker-lock``
  for its lifetime (the kernel drops it when the process dies); a second worker is refused with a
  message naming the first one's pid. Within the one worker every lock is granted.

Lock names: ``ingest:<absolute path>`` for a file, ``leader`` for sampling and alerts.
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
from pathlib import Path
from typing import IO, Protocol

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DBAPIError

from monitor.errors import WorkerError


class Locks(Protocol):
    """Non-blocking named locks held by one worker process."""

    def try_lock(self, name: str) -> bool: ...

    def unlock(self, name: str) -> None: ...

    def close(self) -> None: ...


class SqliteWorkerLock:
    """The one-worker guard of a SQLite store; every named lock is then granted.

    Raises ``WorkerError`` when another process holds the guard.
    """

    def __init__(self, database: str | None, holder: str):
        self._fh: IO[str] | None = None
        if not database or database == ":memory:":
            return  # an in-memory store is private to this process
        path = Path(f"{database}.worker-lock")
        fh = path.open("a+")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            fh.seek(0)
            who = fh.read().strip() or "unknown"
            fh.close()
            raise WorkerError(
                f"another worker ({who}) is running on the SQLite store {database}; SQLite supports one "
                "worker: stop that one, or use PostgreSQL to run several"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()}, holder {holder}")
        fh.flush()
        self._fh = fh

    def try_lock(self, name: str) -> bool:
        return True

    def unlock(self, name: str) -> None:
        return None

    def close(self) -> None:
        if self._fh is not None:
            fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None


class PgAdvisoryLocks:
    """Named session-level advisory locks on a dedicated autocommit connection.

    The key of a name is ``hashtextextended(name, 0)`` (64-bit; a collision between two names would
    only serialise them). The connection is shared by the worker's job threads, hence the mutex.
    """

    def __init__(self, engine: Engine):
        self._engine = engine
        self._conn: Connection | None = None
        self._mutex = threading.Lock()

    def _connection(self) -> Connection:
        if self._conn is None:
            self._conn = self._engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        return self._conn

    def _drop(self) -> None:
        # The server released every lock of the lost session; the next call reconnects.
        if self._conn is not None:
            try:
                self._conn.invalidate()
                self._conn.close()
            except DBAPIError:
                pass
            self._conn = None

    def try_lock(self, name: str) -> bool:
        """Take ``name`` if free; ``False`` when held elsewhere or the database cannot be reached."""
        with self._mutex:
            try:
                stmt = text("SELECT pg_try_advisory_lock(hashtextextended(:n, 0))")
                return bool(self._connection().execute(stmt, {"n": name}).scalar())
            except DBAPIError:
                self._drop()
                return False

    def unlock(self, name: str) -> None:
        with self._mutex:
            try:
                stmt = text("SELECT pg_advisory_unlock(hashtextextended(:n, 0))")
                self._connection().execute(stmt, {"n": name})
            except DBAPIError:
                self._drop()

    def close(self) -> None:
        with self._mutex:
            if self._conn is not None:
                try:
                    self._conn.close()
                except DBAPIError:
                    pass
                self._conn = None


def locks_for(engine: Engine, holder: str) -> Locks:
    """The lock implementation for ``engine``'s backend (raises ``WorkerError`` on a held SQLite store)."""
    if engine.dialect.name == "postgresql":
        return PgAdvisoryLocks(engine)
    return SqliteWorkerLock(engine.url.database, holder)


__all__ = ["Locks", "PgAdvisoryLocks", "SqliteWorkerLock", "WorkerError", "locks_for"]
