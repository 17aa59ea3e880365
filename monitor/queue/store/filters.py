"""What the Queue page narrows the open items to, as conditions on ``QueueItem``: the same for the page's
list (``listing.list_open``) and for "Review next" (``claims.claim_next``), so a reviewer is handed only
what the page shows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import exists, tuple_

from monitor.store.models import Finding, QueueItem


@dataclass(frozen=True, slots=True)
class QueueFilters:
    """What the Queue page narrows the pending list to; ``None`` (or ``False``) means no filter.

    ``kind`` keeps items whose record has a finding of that kind at or above the queue's minimum
    severity (the kinds an item shows); ``stratum`` is the item's severity stratum (``STRATA``);
    ``day_from``/``day_to`` bound the rewrite's UTC day, both inclusive.
    """

    kind: str | None = None
    stratum: str | None = None
    prompt_version: str | None = None
    model: str | None = None
    day_from: date | None = None
    day_to: date | None = None
    overdue_only: bool = False


def filter_conditions(
    filters: QueueFilters, now: datetime, checks: Sequence[tuple[str, int]], min_rank: int
) -> list[Any]:
    """The WHERE conditions of ``filters`` on ``QueueItem`` (none for an unset filter): what the Queue
    page lists and what "Review next" claims from (``claim_next``). ``checks`` and ``min_rank`` define
    the findings the kind filter looks at; ``ValueError`` for a kind filter without ``checks``."""
    conds: list[Any] = []
    if filters.kind is not None and not checks:
        # no current check would match every item out: a caller's mistake, not an empty queue
        raise ValueError("a kind filter needs the current checks (monitor.checks.current_versions())")
    if filters.kind is not None:
        # Findings rather than the JSON ``kinds`` column: an indexed EXISTS behaves the same on SQLite
        # and PostgreSQL, where JSON containment does not.
        conds.append(
            exists().where(
                Finding.record_id == QueueItem.record_id,
                Finding.kind == filters.kind,
                Finding.severity_rank >= min_rank,
                tuple_(Finding.check_id, Finding.check_version).in_(checks),
            )
        )
    if filters.stratum is not None:
        conds.append(QueueItem.stratum == filters.stratum)
    if filters.prompt_version is not None:
        conds.append(QueueItem.prompt_version == filters.prompt_version)
    if filters.model is not None:
        conds.append(QueueItem.model == filters.model)
    if filters.day_from is not None:
        conds.append(QueueItem.day >= filters.day_from)
    if filters.day_to is not None:
        conds.append(QueueItem.day <= filters.day_to)
    if filters.overdue_only:
        conds.append(QueueItem.due_at < now)
    return conds


NO_FILTERS = QueueFilters()
"""Every open item."""
