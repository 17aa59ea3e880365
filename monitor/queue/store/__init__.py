"""The only door to the queue tables: admission per day (``enqueue``), claims with leases (``claims``),
and listings (``listing``); :class:`QueueRow` is a queue item as plain data (``items``). Verdicts are in
``monitor.review.store``; the admission policy those writes follow is ``monitor.queue.admission``.

Every name the rest of the code reads is importable from here as well as from its module.
"""

from monitor.errors import QueueError
from monitor.queue.admission import MANUAL, WITHDRAWN, EnqueueResult
from monitor.queue.store.claims import (
    _own,
    claim,
    claim_next,
    held_claim,
    keep_verdict,
    release,
    renew,
    reopen,
    reviewable_count,
    skip,
)
from monitor.queue.store.enqueue import (
    ADMISSION_LOOKBACK,
    admitted_meta,
    day_candidates,
    days_to_admit,
    enqueue_days,
)
from monitor.queue.store.filters import QueueFilters
from monitor.queue.store.items import QueueRow, queue_row, review_order, reviewed_by
from monitor.queue.store.listing import (
    FilterOptions,
    QueueListing,
    QueuePage,
    filter_options,
    get_item,
    held_item,
    item_for_request,
    list_open,
    list_queue,
    queue_depth,
    queue_listing,
)

__all__ = [
    "ADMISSION_LOOKBACK",
    "MANUAL",
    "WITHDRAWN",
    "EnqueueResult",
    "FilterOptions",
    "QueueError",
    "QueueFilters",
    "QueueListing",
    "QueuePage",
    "QueueRow",
    "_own",
    "admitted_meta",
    "claim",
    "claim_next",
    "day_candidates",
    "days_to_admit",
    "enqueue_days",
    "filter_options",
    "get_item",
    "held_claim",
    "held_item",
    "item_for_request",
    "keep_verdict",
    "list_open",
    "list_queue",
    "queue_depth",
    "queue_listing",
    "queue_row",
    "release",
    "renew",
    "reopen",
    "review_order",
    "reviewable_count",
    "reviewed_by",
    "skip",
]
