"""Rejected log lines, as plain data for the CLI."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.models import Quarantine


@dataclass(frozen=True, slots=True)
class QuarantineRow:
    """One rejected line: where it was, why, and (only when asked for) the start of its text."""

    origin: str
    line_no: int
    reason: str
    detail: str
    excerpt: str | None
    created_at: datetime


def list_quarantine(
    *,
    session: Session,
    reason: str | None = None,
    origin: str | None = None,
    limit: int = 50,
    with_excerpt: bool = False,
) -> tuple[list[QuarantineRow], dict[str, int]]:
    """Rejected lines (newest first, at most ``limit``) and the count of every reason in the store.

    The excerpt is the raw line's start, which may hold personal data: returned only with
    ``with_excerpt``.
    """
    stmt = select(Quarantine).order_by(Quarantine.created_at.desc(), Quarantine.origin, Quarantine.line_no)
    if reason is not None:
        stmt = stmt.where(Quarantine.reason == reason)
    if origin is not None:
        stmt = stmt.where(Quarantine.origin == origin)
    rows = [
        QuarantineRow(
            q.origin, q.line_no, q.reason, q.detail, q.raw_excerpt if with_excerpt else None, q.created_at
        )
        for q in session.scalars(stmt.limit(limit))
    ]
    stmt_counts = select(Quarantine.reason, func.count()).group_by(Quarantine.reason)
    counts = {r: n for r, n in session.execute(stmt_counts)}
    return rows, {k: counts[k] for k in sorted(counts)}
