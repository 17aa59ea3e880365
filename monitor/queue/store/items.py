"""A queue item as plain data (:class:`QueueRow`), and the SQL conditions claims and listings share:
what is claimable, what awaits someone else's second review, and the review order."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import and_, exists, or_

from monitor.store.engine import naive_utc
from monitor.store.models import QueueItem, Verdict
from monitor.store.rows import to_row


@dataclass(frozen=True, slots=True)
class QueueRow:
    """A queue item as plain data; ``overdue`` is computed against the ``now`` of the listing."""

    id: int
    request_id: str
    conv_id: str
    day: date
    stratum: str
    inclusion_prob: float
    kinds: list[str]
    words: list[str]
    state: str
    claimed_by: str | None
    lease_expires_at: datetime | None
    due_at: datetime
    created_at: datetime
    prompt_version: str | None
    model: str | None
    overdue: bool
    reviews_needed: int = 1


def queue_row(item: QueueItem, now: datetime) -> QueueRow:
    """The one ``QueueItem`` -> :class:`QueueRow` conversion (``overdue`` judged at ``now``)."""
    return to_row(
        QueueRow, item, overdue=item.state in ("pending", "claimed") and item.due_at < naive_utc(now)
    )


def claimable(now: datetime) -> Any:
    """SQL condition: the item can be claimed at ``now`` (pending, or its claim's lease expired)."""
    return or_(
        QueueItem.state == "pending",
        and_(QueueItem.state == "claimed", QueueItem.lease_expires_at < now),
    )


def reviewed_by(reviewer: str) -> Any:
    """SQL condition: ``reviewer`` already gave a (non-adjudication) verdict on the item and it needs
    another reviewer. Such an item waits for someone else: a second review is blind and by another
    person, so the queue never hands it back to the first."""
    return and_(
        QueueItem.reviews_needed > 1,
        exists().where(
            Verdict.queue_item_id == QueueItem.id,
            Verdict.reviewer == reviewer,
            Verdict.adjudication.is_(False),
        ),
    )


def review_order() -> tuple[Any, ...]:
    """The queue's review order: severity (priority), then the oldest day, then arrival."""
    return (QueueItem.priority.desc(), QueueItem.day, QueueItem.created_at, QueueItem.id)
