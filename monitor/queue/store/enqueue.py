"""Admission's reads and writes: a day's candidates and the admitted records' fields, the days to admit,
and :func:`enqueue_days`, which writes what the policy (``monitor.queue.admission``) decides."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from sqlalchemy import Select, Table, bindparam, func, insert, or_, select, tuple_, update
from sqlalchemy.orm import Session

from monitor.checks.store.runs import fully_checked
from monitor.queue.admission import (
    WITHDRAWN,
    DayWrites,
    EnqueueResult,
    QueuedItem,
    day_writes,
    enqueue_result,
    plan_day,
)
from monitor.queue.sampling import Candidate
from monitor.severity import SEVERITY_RANK
from monitor.store.engine import insert_ignore, rowcount
from monitor.store.models import CheckRun, Finding, QueueDay, QueueItem, Record, Verdict

if TYPE_CHECKING:
    from monitor.setting_groups import QueueSettings


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
    ordered = sorted(set(days))
    queued, reviewed, planned = _admission_state(session, ordered)
    # Plan every day first, then read the admitted records' fields and write, each in a few statements
    # for all days at once. Why: a backfill's admission plans about a hundred days, and a dozen small
    # statements a day (ORM updates that each flushed the day plans added before them) cost more than
    # reading and planning the days (enqueue_days on the shared logs' 92 days: 0.40 -> 0.12 s, with
    # day_candidates' statement built once; issue 18). Nothing written changes what a later day reads
    # (see _admission_state). Only each day's plan is held between the phases (its admitted records
    # and counts, bounded by the budget), not its candidates: memory stays that of one day.
    plans = [
        plan_day(
            day,
            day_candidates(session=session, day=day, checks=checks, floors=settings.check_floors),
            queued[day],
            reviewed=reviewed,
            settings=settings,
            # wall clock, not ``now``: days_to_admit compares it with check runs' wall-clock times
            planned_at=datetime.now(UTC),
        )
        for day in ordered
    ]
    meta = admitted_meta(
        session=session,
        ids=sorted(a.record_id for p in plans for a in p.plan.admitted),
        checks=checks,
        min_severity=settings.min_severity,
        floors=settings.check_floors,
    )
    writes = [day_writes(p, meta, settings=settings, now=now, planned=planned) for p in plans]
    withdrawn: dict[str, int] = {}
    for w in writes:
        _repend(session, w.repend)
        for stratum in _withdraw(session, w.withdraw, now):
            withdrawn[stratum] = withdrawn.get(stratum, 0) + 1
    _write_days(session, writes)
    _expire_days(session, ordered)
    session.flush()
    return enqueue_result(ordered, plans, writes, withdrawn)


def _repend(session: Session, items: Sequence[tuple[QueuedItem, Mapping[str, Any]]]) -> None:
    """Make each re-decided item of ``items`` pending again with its new columns."""
    for old, fields in items:
        # Only an item still untouched is changed: a reviewer may have claimed it meanwhile.
        session.execute(
            update(QueueItem)
            .where(QueueItem.id == old.id, QueueItem.state == old.state)
            .values(state="pending", finished_at=None, **fields)
        )


def _withdraw(session: Session, items: Sequence[QueuedItem], now: datetime) -> list[str]:
    """Withdraw the pending ``items`` a new plan leaves out, each only while still pending (a reviewer
    may have claimed it meanwhile); the strata of those withdrawn, one per item."""
    strata = []
    for old in items:
        gone = rowcount(
            session.execute(
                update(QueueItem)
                .where(QueueItem.id == old.id, QueueItem.state == "pending")
                .values(state=WITHDRAWN, finished_at=now)
            )
        )
        if gone:
            strata.append(old.stratum)
    return strata


def _write_days(session: Session, writes: Sequence[DayWrites]) -> None:
    """Insert the new items of all ``writes``, then set each (day, stratum)'s π on its items and store
    the day plans, a few statements for all days at once."""
    rows = [row for w in writes for row in w.inserts]
    probs = [row for w in writes for row in w.probs]
    new_days = [row for w in writes for row in w.new_days]
    old_days = [row for w in writes for row in w.old_days]
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


def _expire_days(session: Session, days: Sequence[date]) -> None:
    """Expire the queue items and day plans of ``days`` the session holds."""
    # Core statements leave the session's objects alone: an item or day plan of these days it holds
    # (a worker's long-lived session) is re-read on its next access, as the ORM updates kept it current.
    admitted_days = set(days)
    for obj in list(session.identity_map.values()):
        if isinstance(obj, QueueItem | QueueDay) and obj.day in admitted_days:
            session.expire(obj)


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
