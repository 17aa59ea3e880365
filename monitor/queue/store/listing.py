"""Listings of the queue: the CLI's ``queue`` (every item of a state, in review order) and the
dashboard's Queue page (open items filtered and paginated in SQL, with counts), the queue's depth, and
single items by id, request or a reviewer's held claim.

Listings for the dashboard are filtered and paginated in SQL, so the Queue page costs the same with
100,000 records as with 100 (``benchmarks/dashboard_load.py`` measures it); rows come back as
:class:`QueueRow`, the same plain data the CLI's ``queue`` prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.queue.sampling import STRATA
from monitor.queue.store.claims import held_claim
from monitor.queue.store.filters import NO_FILTERS, QueueFilters, filter_conditions
from monitor.queue.store.items import QueueRow, claimable, queue_row, review_order
from monitor.severity import SEVERITY_RANK
from monitor.store.models import Finding, QueueItem


def list_queue(
    *,
    session: Session,
    now: datetime,
    state: str | None = "pending",
    kind: str | None = None,
    limit: int | None = 50,
) -> list[QueueRow]:
    """Queue items in review order (severity, then age). ``state`` ``pending`` includes expired claims."""
    stmt = select(QueueItem).order_by(*review_order())
    if state == "pending":
        stmt = stmt.where(claimable(now))
    elif state is not None:
        stmt = stmt.where(QueueItem.state == state)
    rows = [queue_row(i, now) for i in session.scalars(stmt) if kind is None or kind in i.kinds]
    return rows[:limit] if limit is not None else rows


def queue_depth(*, session: Session, now: datetime) -> tuple[int, int]:
    """``(open items, overdue open items)``; open means pending or claimed."""
    open_ = QueueItem.state.in_(("pending", "claimed"))
    total = session.scalar(select(func.count()).where(open_)) or 0
    overdue = session.scalar(select(func.count()).where(open_, QueueItem.due_at < now)) or 0
    return int(total), int(overdue)


@dataclass(frozen=True, slots=True)
class QueueListing:
    """What ``rewrite-monitor queue`` shows: the first ``limit`` matching items (``rows``), how many
    match, and the queue's depth (open items, and how many of them are overdue)."""

    rows: list[QueueRow]
    matching: int
    depth: int
    overdue: int


def queue_listing(
    *, session: Session, now: datetime, state: str | None, kind: str | None, limit: int
) -> QueueListing:
    """The items of ``state`` (``None``: any state) with finding kind ``kind`` in review order, at most
    ``limit`` of them, with the count of all that match and the queue depth (:func:`queue_depth`)."""
    # Every match, to say how many the limit left out (list_queue reads them all to filter by kind).
    matching = list_queue(session=session, now=now, state=state, kind=kind, limit=None)
    depth, overdue = queue_depth(session=session, now=now)
    return QueueListing(matching[:limit], len(matching), depth, overdue)


@dataclass(frozen=True, slots=True)
class QueuePage:
    """One page of open items in review order, with counts over every item matching the filters.

    ``total`` and ``by_stratum`` count all matching items (not only this page); ``overdue`` counts the
    matching items past their due time.
    """

    rows: list[QueueRow]
    total: int
    overdue: int
    by_stratum: dict[str, int]
    offset: int
    limit: int


@dataclass(frozen=True, slots=True)
class FilterOptions:
    """The values the Queue page's filters offer, read from the queue itself (sorted)."""

    kinds: list[str]
    prompt_versions: list[str]
    models: list[str]
    first_day: date | None
    last_day: date | None


def list_open(
    *,
    session: Session,
    now: datetime,
    checks: Sequence[tuple[str, int]],
    min_severity: str = "medium",
    filters: QueueFilters = NO_FILTERS,
    limit: int = 50,
    offset: int = 0,
) -> QueuePage:
    """Open queue items (pending or claimed) matching ``filters``, in review order, one page of them.

    ``checks`` are the current ``(check_id, version)`` pairs and ``min_severity`` the queue's minimum
    (they define which findings the kind filter looks at). Three queries: the page, counts per stratum,
    the overdue count. Raises ``ValueError`` for an unknown ``stratum`` or ``min_severity``.
    """
    if filters.stratum is not None and filters.stratum not in STRATA:
        raise ValueError(f"unknown stratum {filters.stratum!r}; one of: {', '.join(STRATA)}")
    # Open for review: pending, or claimed (by anyone) and not finished. The page lists claimed items
    # too, so a reviewer sees what a colleague holds; claim_next decides who gets which item.
    conds = [
        QueueItem.state.in_(("pending", "claimed")),
        *filter_conditions(filters, now, checks, SEVERITY_RANK[min_severity]),
    ]
    order = review_order()
    items = session.scalars(select(QueueItem).where(*conds).order_by(*order).limit(limit).offset(offset))
    rows = [queue_row(i, now) for i in items]
    by_stratum = {
        s: int(n)
        for s, n in session.execute(
            select(QueueItem.stratum, func.count()).where(*conds).group_by(QueueItem.stratum)
        )
    }
    overdue = session.scalar(
        select(func.count()).select_from(QueueItem).where(*conds, QueueItem.due_at < now)
    )
    return QueuePage(
        rows=rows,
        total=sum(by_stratum.values()),
        overdue=int(overdue or 0),
        by_stratum={s: by_stratum[s] for s in STRATA if s in by_stratum},
        offset=offset,
        limit=limit,
    )


def filter_options(*, session: Session) -> FilterOptions:
    """Finding kinds that occur in findings, and the prompt versions, models and day range of the queue."""
    kinds = session.scalars(select(Finding.kind).distinct().order_by(Finding.kind))
    versions = session.scalars(
        select(QueueItem.prompt_version)
        .where(QueueItem.prompt_version.is_not(None))
        .distinct()
        .order_by(QueueItem.prompt_version)
    )
    models = session.scalars(
        select(QueueItem.model).where(QueueItem.model.is_not(None)).distinct().order_by(QueueItem.model)
    )
    first, last = session.execute(select(func.min(QueueItem.day), func.max(QueueItem.day))).one()
    return FilterOptions(list(kinds), [v for v in versions if v], [m for m in models if m], first, last)


def held_item(*, session: Session, reviewer: str, now: datetime) -> QueueRow | None:
    """The item ``reviewer`` holds an unexpired claim on (the oldest in review order), or ``None``.

    Read-only: unlike ``claim_next`` it neither claims nor renews.
    """
    item = held_claim(session=session, reviewer=reviewer, now=now)
    return queue_row(item, now) if item is not None else None


def get_item(*, session: Session, item_id: int, now: datetime) -> QueueRow | None:
    """Queue item ``item_id`` as plain data (re-read from the database), or ``None`` when unknown."""
    item = session.get(QueueItem, item_id, populate_existing=True)
    return queue_row(item, now) if item is not None else None


def item_for_request(*, session: Session, request_id: str, now: datetime) -> QueueRow | None:
    """The queue item of ``request_id``, or ``None`` when that request was never queued."""
    item = session.scalars(
        select(QueueItem).where(QueueItem.request_id == request_id).order_by(QueueItem.id).limit(1)
    ).first()
    return queue_row(item, now) if item is not None else None
