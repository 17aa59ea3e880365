"""Claims on queue items: a reviewer claims the next item (or one by id) under a lease, renews it,
releases or skips it, and reopens an item they gave a verdict on (undo). Verdicts are in
``monitor.review.store``.

Claims are compare-and-set updates (``UPDATE ... WHERE id = :id AND <still claimable>``): on
PostgreSQL a second concurrent claimer waits for the first to commit, re-reads the row, and matches
nothing, so two reviewers can never hold the same item; on SQLite writes are serialised anyway.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import distinct, func, or_, select, update
from sqlalchemy.orm import Session

from monitor.errors import QueueError
from monitor.queue.store.filters import QueueFilters, filter_conditions
from monitor.queue.store.items import QueueRow, claimable, queue_row, review_order, reviewed_by
from monitor.store.engine import naive_utc, rowcount
from monitor.store.models import QueueItem, Verdict


def held_claim(*, session: Session, reviewer: str, now: datetime) -> QueueItem | None:
    """The item ``reviewer`` holds an unexpired claim on (the first in review order), or ``None``.
    Reads only: neither claims nor renews."""
    return session.scalars(
        select(QueueItem)
        .where(
            QueueItem.state == "claimed",
            QueueItem.claimed_by == reviewer,
            QueueItem.lease_expires_at >= now,
        )
        .order_by(*review_order())
        .limit(1)
    ).first()


def claim_next(
    *,
    session: Session,
    reviewer: str,
    now: datetime,
    lease: timedelta,
    kind: str | None = None,
    filters: QueueFilters | None = None,
    checks: Sequence[tuple[str, int]] = (),
    min_rank: int = 0,
) -> QueueRow | None:
    """Claim the reviewer's next item (severity first, then age) and commit; ``None`` when none is left.

    ``kind`` keeps items that show that finding kind (``review --kind``); ``filters`` keeps items the
    Queue page's filters list (``filter_conditions``: the kind filter reads the findings of ``checks``
    at ``min_rank`` or above), so "Review next" hands out only what the page shows, item after item.
    A reviewer who still holds an unexpired claim gets that item back (its lease renewed).
    """
    held = held_claim(session=session, reviewer=reviewer, now=now)
    if held is not None:
        held.lease_expires_at = now + lease
        session.commit()
        return queue_row(held, now)
    for _attempt in range(20):
        # kinds is a JSON list: filtering it in Python keeps one query shape on SQLite and PostgreSQL.
        stmt = (
            select(QueueItem.id, QueueItem.kinds)
            .where(claimable(now), ~reviewed_by(reviewer))
            .order_by(*review_order())
        )
        if filters is not None:
            stmt = stmt.where(*filter_conditions(filters, now, checks, min_rank))
        if kind is None:
            stmt = stmt.limit(10)
        ids = [i for i, kinds in session.execute(stmt) if kind is None or kind in kinds][:10]
        if not ids:
            return None
        for item_id in ids:
            if _try_claim(session, item_id, reviewer, now, lease):
                return queue_row(session.get_one(QueueItem, item_id, populate_existing=True), now)
    return None


def _try_claim(session: Session, item_id: int, reviewer: str, now: datetime, lease: timedelta) -> bool:
    result = session.execute(
        update(QueueItem)
        .where(QueueItem.id == item_id, claimable(now))
        .values(state="claimed", claimed_by=reviewer, claimed_at=now, lease_expires_at=now + lease)
        .execution_options(synchronize_session=False)
    )
    session.commit()
    return rowcount(result) == 1


def claim(
    *,
    session: Session,
    item_id: int,
    reviewer: str,
    now: datetime,
    lease: timedelta,
    again: bool = False,
) -> QueueRow:
    """Claim one item by id (or renew one's own claim). Raises ``QueueError`` when someone else holds it,
    and when it awaits a second reviewer and ``reviewer`` gave the first verdict (:func:`reviewed_by`),
    unless ``again`` (a deliberate re-review of one's own verdict, ``rewrite-monitor verdict``)."""
    now = naive_utc(now)
    item = session.get(QueueItem, item_id)
    if item is None:
        raise QueueError(f"no queue item {item_id}")
    if (
        not again
        and item.state != "done"
        and session.scalar(
            select(reviewed_by(reviewer)).select_from(QueueItem).where(QueueItem.id == item_id)
        )
    ):
        raise QueueError(
            f"queue item {item_id} awaits a second reviewer: {reviewer} gave its first verdict "
            "(a second review is blind and by someone else)"
        )
    if (
        item.state == "claimed"
        and item.claimed_by == reviewer
        and item.lease_expires_at
        and item.lease_expires_at >= now
    ):
        item.lease_expires_at = now + lease
        session.commit()
        return queue_row(item, now)
    if not _try_claim(session, item_id, reviewer, now, lease):
        session.refresh(item)
        raise QueueError(
            f"queue item {item_id} is {item.state}"
            + (f" by {item.claimed_by}" if item.state == "claimed" else "")
        )
    return queue_row(session.get_one(QueueItem, item_id, populate_existing=True), now)


def _own(session: Session, item_id: int, reviewer: str, now: datetime) -> QueueItem:
    item = session.get(QueueItem, item_id, populate_existing=True)
    if item is None:
        raise QueueError(f"no queue item {item_id}")
    if item.state == "claimed" and item.claimed_by == reviewer:
        if item.lease_expires_at is not None and item.lease_expires_at < naive_utc(now):
            raise QueueError(
                f"{reviewer}'s claim on queue item {item_id} expired at {item.lease_expires_at:%H:%M:%S}"
            )
        return item
    who = f" by {item.claimed_by}" if item.state == "claimed" else ""
    raise QueueError(f"queue item {item_id} is {item.state}{who}, not claimed by {reviewer}")


def reviewable_count(
    *,
    session: Session,
    reviewer: str,
    now: datetime,
    kind: str | None = None,
    filters: QueueFilters | None = None,
    checks: Sequence[tuple[str, int]] = (),
    min_rank: int = 0,
) -> int:
    """How many items :func:`claim_next` could still hand ``reviewer`` (claimable, not awaiting someone
    else's second review, with finding kind ``kind`` and within ``filters`` when given, as
    :func:`claim_next` reads them): the "N" of "item i of N"."""
    stmt = select(QueueItem.kinds).where(claimable(now), ~reviewed_by(reviewer))
    if filters is not None:
        stmt = stmt.where(*filter_conditions(filters, now, checks, min_rank))
    if kind is None:
        return int(session.scalar(select(func.count()).select_from(stmt.subquery())) or 0)
    return sum(1 for (kinds,) in session.execute(stmt) if kind in kinds)


def reopen(*, session: Session, item_id: int, reviewer: str, now: datetime, lease: timedelta) -> QueueRow:
    """Claim back an item ``reviewer`` just gave a verdict on (undo): a done item, or one awaiting a
    second reviewer, is claimed by ``reviewer`` again; the next verdict is a new version (verdicts are
    appended, never overwritten), and until then the earlier one stands. Compare-and-set; raises
    ``QueueError`` when someone else holds it meanwhile or ``reviewer`` gave no verdict on it."""
    now = naive_utc(now)
    mine = session.scalar(
        select(func.count()).where(Verdict.queue_item_id == item_id, Verdict.reviewer == reviewer)
    )
    if not mine:
        raise QueueError(f"{reviewer} gave no verdict on queue item {item_id}: nothing to undo")
    result = session.execute(
        update(QueueItem)
        .where(QueueItem.id == item_id, or_(QueueItem.state == "done", claimable(now)))
        .values(
            state="claimed",
            claimed_by=reviewer,
            claimed_at=now,
            lease_expires_at=now + lease,
            finished_at=None,
        )
        .execution_options(synchronize_session=False)
    )
    session.commit()
    item = session.get_one(QueueItem, item_id, populate_existing=True)
    if rowcount(result) != 1:
        raise QueueError(
            f"queue item {item_id} is {item.state}" + (f" by {item.claimed_by}" if item.claimed_by else "")
        )
    return queue_row(item, now)


def renew(*, session: Session, item_id: int, reviewer: str, now: datetime, lease: timedelta) -> bool:
    """Extend ``reviewer``'s claim on ``item_id`` to ``now + lease`` while it is still theirs (even past
    its lease, if nobody took it meanwhile); commit. False when the claim is gone: released, finished,
    or taken by someone else after it expired. The Item page calls it while it is open, so a reviewer
    who reads slowly keeps the item (issue 16, part 5)."""
    now = naive_utc(now)
    result = session.execute(
        update(QueueItem)
        .where(QueueItem.id == item_id, QueueItem.state == "claimed", QueueItem.claimed_by == reviewer)
        .values(lease_expires_at=now + lease)
        .execution_options(synchronize_session=False)
    )
    session.commit()
    return rowcount(result) == 1


def keep_verdict(*, session: Session, item_id: int, reviewer: str, now: datetime) -> None:
    """Give back an item reopened by :func:`reopen` without a new verdict: the earlier one stands, and
    the item is done again (or pending, when it still awaits a second reviewer)."""
    item = _own(session, item_id, reviewer, now)
    reviewers = session.scalar(
        select(func.count(distinct(Verdict.reviewer))).where(
            Verdict.queue_item_id == item_id, Verdict.adjudication.is_(False)
        )
    )
    if (reviewers or 0) >= item.reviews_needed:
        item.state, item.finished_at = "done", now
    else:
        item.state = "pending"
    item.claimed_by, item.claimed_at, item.lease_expires_at = None, None, None
    session.commit()


def release(*, session: Session, item_id: int, reviewer: str, now: datetime) -> None:
    """Give a claimed item back to the queue. Raises ``QueueError`` unless ``reviewer`` holds it."""
    item = _own(session, item_id, reviewer, now)
    item.state, item.claimed_by, item.claimed_at, item.lease_expires_at = "pending", None, None, None
    session.commit()


def skip(*, session: Session, item_id: int, reviewer: str, now: datetime) -> None:
    """Mark a claimed item skipped (it leaves the queue without a verdict)."""
    item = _own(session, item_id, reviewer, now)
    item.state, item.finished_at = "skipped", now
    session.commit()
