"""Regression cases (built from verdicts) as plain data for the CLI, the export and the dashboard."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.models import RegressionCase


@dataclass(frozen=True, slots=True)
class CaseRow:
    """One regression case version; ``superseded`` is True when a later review replaced it."""

    id: int
    case_key: str
    version: int
    superseded: bool
    source_request_id: str
    messages: list[dict[str, Any]]
    latest: str
    expected_query: str | None
    must_include: list[str]
    must_not_include: list[str]
    label: str
    artifact: str
    reviewer: str
    verdict_at: datetime
    prompt_version: str | None
    model: str | None


def list_cases(
    *,
    session: Session,
    label: str | None = None,
    since: datetime | None = None,
    include_superseded: bool = False,
    limit: int | None = 100,
    offset: int = 0,
) -> list[CaseRow]:
    """Regression cases, newest verdict first; by default only the current version of each case."""
    stmt = select(RegressionCase).order_by(RegressionCase.verdict_at.desc(), RegressionCase.id.desc())
    if not include_superseded:
        stmt = stmt.where(RegressionCase.superseded_at.is_(None))
    if label is not None:
        stmt = stmt.where(RegressionCase.label == label)
    if since is not None:
        stmt = stmt.where(RegressionCase.verdict_at >= since)
    stmt = stmt.offset(offset)
    if limit is not None:
        stmt = stmt.limit(limit)
    return [
        CaseRow(
            c.id,
            c.case_key,
            c.version,
            c.superseded_at is not None,
            c.source_request_id,
            list(c.messages),
            c.latest,
            c.expected_query,
            list(c.must_include),
            list(c.must_not_include),
            c.label,
            c.artifact,
            c.reviewer,
            c.verdict_at,
            c.prompt_version,
            c.model,
        )
        for c in session.scalars(stmt)
    ]


def count_cases(*, session: Session, include_superseded: bool = False) -> int:
    """How many cases (current versions only, unless ``include_superseded``)."""
    stmt = select(func.count()).select_from(RegressionCase)
    if not include_superseded:
        stmt = stmt.where(RegressionCase.superseded_at.is_(None))
    return int(session.scalar(stmt) or 0)
