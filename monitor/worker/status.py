"""What ``worker status`` shows, as plain data: the workers' leases with their state (who runs, who leads,
who stopped renewing) and each source file's cursor. The CLI prints it as JSON or as two tables."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from monitor.ingest.store.cursors import list_cursors
from monitor.worker.store import list_leases, pid_alive


def worker_status(*, session: Session, now: datetime, host: str) -> dict[str, list[dict[str, Any]]]:
    """``{"leases": [...], "cursors": [...]}``, the shape ``worker status --json`` prints.

    Each lease (by name): ``name``, ``holder``, ``acquired_at`` and ``expires_at`` (ISO, naive UTC),
    ``expired`` (at ``now``, naive UTC) and ``state`` (``ok``, ``expired`` or ``dead``: see
    ``monitor.worker.store.LeaseRow.state``; ``host`` is this machine's name). Each cursor (by path):
    ``path``, ``offset``, ``line_no``, ``size``, ``completed`` and ``updated_at`` (ISO).
    """
    leases = list_leases(session=session)
    cursors = list_cursors(session=session)
    return {
        "leases": [
            {
                "name": x.name,
                "holder": x.holder,
                "acquired_at": x.acquired_at.isoformat(),
                "expires_at": x.expires_at.isoformat(),
                "expired": x.expired(now),
                "state": x.state(now, host=host, alive=pid_alive),
            }
            for x in leases
        ],
        "cursors": [
            {
                "path": c.path,
                "offset": c.offset,
                "line_no": c.line_no,
                "size": c.size,
                "completed": c.completed,
                "updated_at": c.updated_at.isoformat(),
            }
            for c in cursors
        ],
    }


def unhealthy(status: dict[str, list[dict[str, Any]]]) -> bool:
    """Whether any lease of :func:`worker_status`'s ``status`` is expired or dead (``worker status``
    exits 1 then)."""
    return any(x["state"] != "ok" for x in status["leases"])
