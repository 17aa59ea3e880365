"""Alerts raised on the fabrication rate, as plain data for the CLI and the dashboard."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.models import Alert


@dataclass(frozen=True, slots=True)
class AlertRow:
    """One stored alert or recovery. Rates are shares in [0, 1]; times are naive UTC."""

    id: int
    kind: str
    group_key: str
    prompt_version: str | None
    status: str
    window_start: datetime
    window_end: datetime
    window_rewrites: int
    window_flagged: int
    window_rate: float
    baseline_rate: float | None
    delivered_to: str
    created_at: datetime


def list_alerts(*, session: Session, since: datetime | None = None, limit: int = 50) -> list[AlertRow]:
    """Stored alerts, newest first (``since``: created at or after, naive UTC)."""
    stmt = select(Alert).order_by(Alert.created_at.desc(), Alert.id.desc()).limit(limit)
    if since is not None:
        stmt = stmt.where(Alert.created_at >= since)
    return [
        AlertRow(
            a.id,
            a.kind,
            a.group_key,
            a.prompt_version,
            a.status,
            a.window_start,
            a.window_end,
            a.window_rewrites,
            a.window_flagged,
            a.window_rate,
            a.baseline_rate,
            a.delivered_to,
            a.created_at,
        )
        for a in session.scalars(stmt)
    ]
