"""The only door to the queue tables: admission per day, claims with leases, and listings.

Listings for the dashboard are filtered and paginated in SQL, so the Queue page costs the same with
100,000 records as with 100 (``benchmarks/dashboard_load.py`` measures it); rows come back as
:class:`QueueRow`, the same plain data the CLI's ``queue`` prints. Verdicts are in ``monitor.review.store``.

Claims are compare-and-set updates (``UPDATE ... WHERE id = :id AND <still claimable>``): on
PostgreSQL a second concurrent claimer waits for the first to commit, re-reads the row, and matches
nothing, so two reviewers can never hold the same item; on SQLite writes are serialised anyway.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    Select,
    Table,
    and_,
    bindparam,
    distinct,
    exists,
    func,
    insert,
    or_,
    select,
    tuple_,
    update,
)
from sqlalchemy.orm import Session

from monitor.checks.store import fully_checked
from monitor.errors import QueueError
from monitor.queue.sampling import PRIORITY, STRATA, AdmissionPlan, Candidate, admit, reviews_needed
from monitor.severity import SEVERITY_RANK
from monitor.store.engine import insert_ignore, naive_utc, rowcount
from monitor.store.models import CheckRun, Finding, QueueDay, QueueItem, Record, Verdict
from monitor.store.rows import to_row

if TYPE_CHECKING:
    from monitor.setting_groups import QueueSettings

MANUAL = "manual"
"""Stratum of items added by :func:`verdict_for_request` (support tickets, ad-hoc finds), not by the
daily sample. Their π is 0: they were not drawn, so ``stats`` leaves them out of the whole-traffic
estimate (a stratum with π 0 has no population there), and admission leaves them out of the day's
counts. They carry no finding kinds, so the checks' precision, estimated over sampled items, ignores them.
"""


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


@dataclass(frozen=True, slots=True)
class EnqueueResult:
    """What one admission did: items added (or re-admitted) per stratum, records capped, strata
    subsampled, days seen, and pending items withdrawn per stratum (a re-plan displaced them)."""

    added: dict[str, int]
    capped: int
    subsampled: dict[str, list[str]]
    days: list[date]
    withdrawn: dict[str, int] = field(default_factory=dict)


def queue_row(item: QueueItem, now: datetime) -> QueueRow:
    """The one ``QueueItem`` -> :class:`QueueRow` conversion (``overdue`` judged at ``now``)."""
    return to_row(
        QueueRow, item, overdue=item.state in ("pending", "claimed") and item.due_at < naive_utc(now)
    )


def _at_floor(floors: Mapping[str, str]) -> list[Any]:
    """Conditions on ``Finding``: it stands at or above its check's floor (``floors``: check id -> the
    lowest severity of its findings that reaches the queue, the ``checks`` setting's ``min_severity``).
    Empty without floors."""
    return [
        or_(Finding.check_id != check_id, Finding.severity_rank >= SEVERITY_RANK[floor])
        for check_id, floor in sorted(floors.items())
    ]


def day_candidates(
    *,
    session: Session,
    day: date,
    checks: Sequence[tuple[str, int]],
    floors: Mapping[str, str] | None = None,
) -> list[Candidate]:
    """The day's fully checked rewrites (UTC day of the rewrite's ``ts``) with their top severity (over
    the findings of ``checks``, any severity, less those under their check's floor: ``floors``, check id
    -> severity), in record order.

    Only what the plan reads is held, one small object a rewrite: the queue item's other fields are read
    for the admitted records alone (:func:`admitted_meta`). A day of a large backfill holds tens of
    thousands of rewrites; holding each one's findings' words as well took about 150 MB on a 1,000,000-event
    backfill (issue 18).
    """
    start = datetime.combine(day, time.min)
    stmt = _candidates_statement(
        tuple((check, version) for check, version in checks), tuple(sorted((floors or {}).items()))
    )
    rows = session.execute(stmt, {"start": start, "end": start + timedelta(days=1)})
    names = {v: k for k, v in SEVERITY_RANK.items()}
    return [Candidate(rid, f"{conv}/{request}", conv, names.get(rank)) for rid, conv, request, rank in rows]


@lru_cache(maxsize=8)
def _candidates_statement(
    checks: tuple[tuple[str, int], ...], floors: tuple[tuple[str, str], ...] = ()
) -> Select[Any]:
    """:func:`day_candidates`' query for ``checks``, the day bound as ``start`` and ``end`` (naive UTC).
    Built once per set of checks: an admission runs it for each of its days (92 on the shared logs), and
    building it took more Python than SQLite took to run it."""
    start, end = bindparam("start", type_=Record.ts.type), bindparam("end", type_=Record.ts.type)
    runs = fully_checked(checks, start, end)
    top = (
        select(func.max(Finding.severity_rank))
        .where(
            Finding.record_id == Record.id,
            tuple_(Finding.check_id, Finding.check_version).in_(checks),
            *_at_floor(dict(floors)),
        )
        .scalar_subquery()
    )
    return (
        select(Record.id, Record.conv_id, Record.request_id, top)
        .join(runs, runs.c.record_id == Record.id)
        .where(Record.ts >= start, Record.ts < end, Record.rewrite_event_id.is_not(None))
        .order_by(Record.id)
    )


def admitted_meta(
    *,
    session: Session,
    ids: Sequence[int],
    checks: Sequence[tuple[str, int]],
    min_severity: str,
    floors: Mapping[str, str] | None = None,
) -> dict[int, dict[str, Any]]:
    """Per record id of ``ids``: what its queue item records: request id, conversation, model, prompt
    version, and the kinds and words of its findings (of ``checks``) at or above ``min_severity`` and
    their check's floor (``floors``)."""
    meta: dict[int, dict[str, Any]] = {}
    for chunk_start in range(0, len(ids), 500):
        chunk = list(ids[chunk_start : chunk_start + 500])
        for r in session.execute(
            select(Record.id, Record.conv_id, Record.request_id, Record.model, Record.prompt_version).where(
                Record.id.in_(chunk)
            )
        ):
            meta[r.id] = {
                "request_id": r.request_id,
                "conv_id": r.conv_id,
                "model": r.model,
                "prompt_version": r.prompt_version,
                "kinds": [],
                "words": [],
            }
        stmt = (
            select(Finding.record_id, Finding.kind, Finding.words)
            .where(
                Finding.record_id.in_(chunk),
                tuple_(Finding.check_id, Finding.check_version).in_(checks),
                Finding.severity_rank >= SEVERITY_RANK[min_severity],
                *_at_floor(floors or {}),
            )
            .order_by(Finding.record_id, Finding.severity_rank.desc(), Finding.id)
        )
        for rid, kind, words in session.execute(stmt):
            m = meta[rid]
            if kind not in m["kinds"]:
                m["kinds"].append(kind)
            m["words"].extend(w for w in words if w not in m["words"])
    return meta


ADMISSION_LOOKBACK = timedelta(hours=1)
"""How far before the last admission :func:`days_to_admit` looks. A concurrent worker's check batch
may commit after an admission although its ``checked_at`` (set when the batch started) is older;
re-admitting those days (idempotent) catches it."""


def days_to_admit(*, session: Session) -> list[date]:
    """UTC days of rewrites checked since the last admission, less :data:`ADMISSION_LOOKBACK` (all
    checked days before the first admission).

    This is what makes admission catch up after a crash between checking and queueing, after a
    ``check`` run on its own, and after another worker's late commit.
    """
    last = session.scalar(select(func.max(QueueDay.updated_at)))
    stmt = select(func.date(Record.ts)).distinct().join(CheckRun, CheckRun.record_id == Record.id)
    if last is not None:
        stmt = stmt.where(CheckRun.checked_at >= last - ADMISSION_LOOKBACK)
    out = []
    for value in session.scalars(stmt.where(Record.ts.is_not(None))):
        out.append(value if isinstance(value, date) else date.fromisoformat(str(value)))
    return sorted(out)


WITHDRAWN = "withdrawn"
"""State of a pending item a later admission of its day no longer selects (see :func:`enqueue_days`)."""


def enqueue_days(
    *,
    session: Session,
    days: Sequence[date],
    checks: Sequence[tuple[str, int]],
    settings: QueueSettings,
    now: datetime,
) -> EnqueueResult:
    """Admit each day's checked rewrites to the queue (see ``monitor.queue.sampling.admit``); idempotent.

    ``settings`` (``Settings.queue``) supplies ``sample_seed``, ``budget``, ``min_severity``,
    ``control_share``, ``control_min``, ``per_conversation_cap``, ``check_rate`` and
    ``review_sla_hours``.

    A day's rewrites arrive over many cycles, so each admission re-plans the whole day from all its
    checked rewrites. Items a reviewer has touched (claimed, done, skipped, or with a verdict) keep
    their place and count against the budget and the cap; untouched pending items are re-decided with
    the rest. One the new plan leaves out becomes ``withdrawn`` (a high finding that arrived late
    displaces a medium one, a smaller draw displaces a larger one); a withdrawn item the plan selects
    again is pending again. The queue therefore ends as a one-shot admission of the whole day would
    make it, whatever the order of arrival, and π (check_rate × taken / eligible, refreshed for every
    item of a (day, stratum)) describes a simple random sample within each stratum.
    """
    added: dict[str, int] = {}
    withdrawn: dict[str, int] = {}
    capped = 0
    subsampled: dict[str, list[str]] = {}
    ordered = sorted(set(days))
    queued, reviewed, planned = _admission_state(session, ordered)
    # Plan every day first, then read the admitted records' fields and write, each in a few statements
    # for all days at once. Why: a backfill's admission plans about a hundred days, and a dozen small
    # statements a day (ORM updates that each flushed the day plans added before them) cost more than
    # reading and planning the days (enqueue_days on the shared logs' 92 days: 0.40 -> 0.12 s, with
    # day_candidates' statement built once; issue 18). Nothing written changes what a later day reads
    # (see _admission_state). Only each day's plan is held between the phases (its admitted records
    # and counts, bounded by the budget), not its candidates: memory stays that of one day.
    plans: list[_DayPlan] = []
    for day in ordered:
        candidates = day_candidates(session=session, day=day, checks=checks, floors=settings.check_floors)
        existing = queued[day]
        # A manually added item was not drawn: it is neither eligible nor taken in its day's sample,
        # so the sampled strata's π stay those of the random design.
        manual = {e.record_id for e in existing if e.stratum == MANUAL}
        sampled = [e for e in existing if e.stratum != MANUAL]
        candidates = [c for c in candidates if c.record_id not in manual]
        present = {c.record_id for c in candidates}
        # Re-decided: untouched items whose rewrite is among the day's fully checked ones. One awaiting a
        # re-check at new check versions keeps its place meanwhile rather than flickering out and back.
        undecided = {
            e.record_id: e
            for e in sampled
            if e.state in ("pending", WITHDRAWN) and e.id not in reviewed and e.record_id in present
        }
        touched = [e for e in sampled if e.record_id not in undecided and e.state != WITHDRAWN]
        plan = admit(
            candidates,
            seed=settings.sample_seed,
            budget=settings.budget,
            min_severity=settings.min_severity,
            control_share=settings.control_share,
            control_min=settings.control_min,
            per_conversation_cap=settings.per_conversation_cap,
            existing=[(e.record_id, e.conv_id, e.stratum) for e in touched],
        )
        chosen = {a.record_id for a in plan.admitted}
        keys = {c.record_id: c.key for c in candidates if c.record_id in chosen}
        # wall clock, not ``now``: days_to_admit compares it with check runs' wall-clock times
        plans.append(_DayPlan(day, plan, undecided, keys, datetime.now(UTC)))
    meta = admitted_meta(
        session=session,
        ids=sorted(a.record_id for p in plans for a in p.plan.admitted),
        checks=checks,
        min_severity=settings.min_severity,
        floors=settings.check_floors,
    )
    rows = []
    probs: list[dict[str, Any]] = []
    new_days: list[dict[str, Any]] = []
    old_days: list[dict[str, Any]] = []
    for p in plans:
        day, plan, undecided = p.day, p.plan, p.undecided
        due = datetime.combine(day + timedelta(days=1), time.min) + timedelta(hours=settings.review_sla_hours)
        for a in plan.admitted:
            m = meta[a.record_id]
            fields = {
                "stratum": a.stratum,
                "priority": PRIORITY[a.stratum],
                "kinds": m["kinds"] if a.stratum != "control" else [],
                "words": m["words"] if a.stratum != "control" else [],
            }
            old = undecided.get(a.record_id)
            if old is None:
                rows.append(
                    {
                        "record_id": a.record_id,
                        "request_id": m["request_id"],
                        "conv_id": m["conv_id"],
                        "day": day,
                        "inclusion_prob": settings.check_rate * a.inclusion_prob,
                        "model": m["model"],
                        "prompt_version": m["prompt_version"],
                        "state": "pending",
                        "due_at": due,
                        "created_at": now,
                        "reviews_needed": reviews_needed(
                            settings.sample_seed,
                            p.keys[a.record_id],
                            per_item=settings.reviews_per_item,
                            double_share=settings.double_review_share,
                        ),
                        **fields,
                    }
                )
            elif old.state == WITHDRAWN or old.stratum != a.stratum:
                # Only an item still untouched is changed: a reviewer may have claimed it meanwhile.
                session.execute(
                    update(QueueItem)
                    .where(QueueItem.id == old.id, QueueItem.state == old.state)
                    .values(state="pending", finished_at=None, **fields)
                )
            else:
                continue  # still selected, unchanged
            if old is None or old.state == WITHDRAWN:
                added[a.stratum] = added.get(a.stratum, 0) + 1
        chosen = {a.record_id for a in plan.admitted}
        for rid, old in undecided.items():
            if old.state == "pending" and rid not in chosen:
                gone = rowcount(
                    session.execute(
                        update(QueueItem)
                        .where(QueueItem.id == old.id, QueueItem.state == "pending")
                        .values(state=WITHDRAWN, finished_at=now)
                    )
                )
                if gone:
                    withdrawn[old.stratum] = withdrawn.get(old.stratum, 0) + 1
        for stratum in set(plan.eligible) | set(plan.taken):
            key = {"d": day, "s": stratum}
            probs.append({**key, "pi": settings.check_rate * plan.inclusion_prob(stratum)})
            values = {
                "eligible": plan.eligible[stratum],
                "taken": plan.taken[stratum],
                "capped": plan.capped[stratum],
                "subsampled": stratum in plan.subsampled,
                "updated_at": p.planned_at,
            }
            if (day, stratum) not in planned:
                new_days.append({"day": day, "stratum": stratum, **values})
            else:
                old_days.append({**key, **values})
        capped += sum(plan.capped.values())
        if plan.subsampled:
            subsampled[day.isoformat()] = plan.subsampled
    if rows:
        session.execute(insert_ignore(session, QueueItem, ["record_id"]), rows)
    # After the inserts and withdrawals, as each day's own update came after them: every item of a
    # (day, stratum) still in the sample gets the stratum's π, the kept ones as the new.
    items: Table = QueueItem.__table__  # type: ignore[assignment]
    plans_t: Table = QueueDay.__table__  # type: ignore[assignment]
    if probs:
        session.execute(
            update(items)
            .where(
                items.c.day == bindparam("d"), items.c.stratum == bindparam("s"), items.c.state != WITHDRAWN
            )
            .values(inclusion_prob=bindparam("pi")),
            probs,
        )
    if new_days:
        session.execute(insert(plans_t), new_days)
    if old_days:
        session.execute(
            update(plans_t)
            .where(plans_t.c.day == bindparam("d"), plans_t.c.stratum == bindparam("s"))
            .values({c: bindparam(c) for c in ("eligible", "taken", "capped", "subsampled", "updated_at")}),
            old_days,
        )
    # Core statements leave the session's objects alone: an item or day plan of these days it holds
    # (a worker's long-lived session) is re-read on its next access, as the ORM updates kept it current.
    admitted_days = set(ordered)
    for obj in list(session.identity_map.values()):
        if isinstance(obj, QueueItem | QueueDay) and obj.day in admitted_days:
            session.expire(obj)
    session.flush()
    return EnqueueResult(added, capped, subsampled, ordered, withdrawn)


@dataclass(frozen=True, slots=True)
class _DayPlan:
    """What :func:`enqueue_days` holds of a planned day until it writes: the plan, the day's re-decided
    items by record id, the admitted records' keys and when the day was planned (wall clock, UTC)."""

    day: date
    plan: AdmissionPlan
    undecided: dict[int, Any]
    keys: dict[int, str]
    planned_at: datetime


def _admission_state(
    session: Session, days: Sequence[date]
) -> tuple[dict[date, list[Any]], set[int], set[tuple[date, str]]]:
    """What :func:`enqueue_days` reads of the queue for ``days`` before planning them, for all of them at
    once (by 500 days, the bound-parameter limit of SQLite): each day's queue items (``id``,
    ``record_id``, ``conv_id``, ``stratum``, ``state``), the ids of items with a verdict, and the
    ``(day, stratum)`` keys of the stored day plans (``QueueDay``).

    Why at once: a backfill's admission plans about a hundred days, and three small queries a day
    (two of them finding nothing on a new store) cost more than the planning. Nothing the loop writes
    changes what another day reads: an item belongs to the day of its rewrite, and admissions are
    serialised (``monitor.worker.jobs.enqueue_job``); a reviewer's claim meanwhile is caught by the
    compare-and-set updates of the loop."""
    queued: dict[date, list[Any]] = {d: [] for d in days}
    reviewed: set[int] = set()
    planned: set[tuple[date, str]] = set()
    for start in range(0, len(days), 500):
        chunk = list(days[start : start + 500])
        for item in session.execute(
            select(
                QueueItem.id,
                QueueItem.record_id,
                QueueItem.conv_id,
                QueueItem.stratum,
                QueueItem.state,
                QueueItem.day,
            )
            .where(QueueItem.day.in_(chunk))
            .order_by(QueueItem.id)
        ):
            queued[item.day].append(item)
        reviewed.update(
            session.scalars(
                select(Verdict.queue_item_id)
                .join(QueueItem, QueueItem.id == Verdict.queue_item_id)
                .where(QueueItem.day.in_(chunk))
                .distinct()
            )
        )
        planned.update(
            (d, stratum)
            for d, stratum in session.execute(
                select(QueueDay.day, QueueDay.stratum).where(QueueDay.day.in_(chunk))
            )
        )
    return queued, reviewed, planned


def _claimable(now: datetime) -> Any:
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
    *, session: Session, reviewer: str, now: datetime, lease: timedelta, kind: str | None = None
) -> QueueRow | None:
    """Claim the reviewer's next item (severity first, then age) and commit; ``None`` when none is left.

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
            .where(_claimable(now), ~reviewed_by(reviewer))
            .order_by(*review_order())
        )
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
        .where(QueueItem.id == item_id, _claimable(now))
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


def reviewable_count(*, session: Session, reviewer: str, now: datetime, kind: str | None = None) -> int:
    """How many items :func:`claim_next` could still hand ``reviewer`` (claimable, not awaiting someone
    else's second review, with finding kind ``kind`` when given): the "N" of "item i of N"."""
    stmt = select(QueueItem.kinds).where(_claimable(now), ~reviewed_by(reviewer))
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
        .where(QueueItem.id == item_id, or_(QueueItem.state == "done", _claimable(now)))
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
        stmt = stmt.where(_claimable(now))
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


def _where(
    filters: QueueFilters, now: datetime, checks: Sequence[tuple[str, int]], min_rank: int
) -> list[Any]:
    # Open for review: pending, or claimed (by anyone) and not finished. The page lists claimed items
    # too, so a reviewer sees what a colleague holds; claim_next decides who gets which item.
    conds: list[Any] = [QueueItem.state.in_(("pending", "claimed"))]
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


def list_open(
    *,
    session: Session,
    now: datetime,
    checks: Sequence[tuple[str, int]],
    min_severity: str = "medium",
    filters: QueueFilters = QueueFilters(),
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
    conds = _where(filters, now, checks, SEVERITY_RANK[min_severity])
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
