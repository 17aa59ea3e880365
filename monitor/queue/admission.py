"""Daily admission policy: which of a day's checked rewrites are its queue items, as pure decisions.

:func:`plan_day` re-plans one day from all its checked rewrites and the items already queued for it:
manual items stay out of the sample, items a reviewer touched keep their place, untouched pending items
are re-decided with the rest (``monitor.queue.sampling.admit`` draws the floors, budget, control sample
and per-conversation cap). :func:`day_writes` turns a day's plan into what to write: new items with π,
due time and reviews needed, items pending again or withdrawn, and the day's π and counts per stratum.
No I/O: ``monitor.queue.store.enqueue_days`` reads, calls these, and writes what they return.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from monitor.queue.sampling import PRIORITY, Admission, AdmissionPlan, Candidate, admit, reviews_needed

if TYPE_CHECKING:
    from monitor.setting_groups import QueueSettings

MANUAL = "manual"
"""Stratum of items added by :func:`verdict_for_request` (support tickets, ad-hoc finds), not by the
daily sample. Their π is 0: they were not drawn, so ``stats`` leaves them out of the whole-traffic
estimate (a stratum with π 0 has no population there), and admission leaves them out of the day's
counts. They carry no finding kinds, so the checks' precision, estimated over sampled items, ignores them.
"""

WITHDRAWN = "withdrawn"
"""State of a pending item a later admission of its day no longer selects (see
``monitor.queue.store.enqueue_days``)."""


class QueuedItem(Protocol):
    """A queue item of the day as admission reads it (a row of ``monitor.queue.store``)."""

    @property
    def id(self) -> int: ...
    @property
    def record_id(self) -> int: ...
    @property
    def conv_id(self) -> str: ...
    @property
    def stratum(self) -> str: ...
    @property
    def state(self) -> str: ...


@dataclass(frozen=True, slots=True)
class EnqueueResult:
    """What one admission did: items added (or re-admitted) per stratum, records capped, strata
    subsampled, days seen, and pending items withdrawn per stratum (a re-plan displaced them)."""

    added: dict[str, int]
    capped: int
    subsampled: dict[str, list[str]]
    days: list[date]
    withdrawn: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DayPlan:
    """What ``enqueue_days`` holds of a planned day until it writes: the plan, the day's re-decided
    items by record id, the admitted records' keys and when the day was planned (wall clock, UTC)."""

    day: date
    plan: AdmissionPlan
    undecided: dict[int, Any]
    keys: dict[int, str]
    planned_at: datetime


@dataclass
class DayWrites:
    """What admitting one planned day writes (:func:`day_writes`).

    ``inserts``: new queue items (``queue_items`` columns); ``repend``: re-decided items selected again
    that change (withdrawn, or in another stratum), each with the columns to set; ``withdraw``: pending
    items the plan leaves out; ``added``: items added or pending again, per stratum; ``probs``: each
    stratum's π (``d``, ``s``, ``pi``); ``new_days`` / ``old_days``: day plans (``queue_days``) to insert
    / to update.
    """

    inserts: list[dict[str, Any]] = field(default_factory=list)
    repend: list[tuple[QueuedItem, dict[str, Any]]] = field(default_factory=list)
    withdraw: list[QueuedItem] = field(default_factory=list)
    added: dict[str, int] = field(default_factory=dict)
    probs: list[dict[str, Any]] = field(default_factory=list)
    new_days: list[dict[str, Any]] = field(default_factory=list)
    old_days: list[dict[str, Any]] = field(default_factory=list)


def plan_day(
    day: date,
    candidates: Sequence[Candidate],
    existing: Sequence[QueuedItem],
    *,
    reviewed: Set[int],
    settings: QueueSettings,
    planned_at: datetime,
) -> DayPlan:
    """Re-plan ``day`` from all its ``candidates`` (its fully checked rewrites) and ``existing`` (its
    queue items; ``reviewed``: ids of items with a verdict). Items a reviewer has touched (claimed,
    done, skipped, or with a verdict) keep their place and count against the budget and the cap;
    untouched pending or withdrawn items are re-decided with the rest (see ``enqueue_days``)."""
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
    return DayPlan(day, plan, undecided, keys, planned_at)


def day_writes(
    p: DayPlan,
    meta: Mapping[int, Mapping[str, Any]],
    *,
    settings: QueueSettings,
    now: datetime,
    planned: Set[tuple[date, str]],
) -> DayWrites:
    """What admitting the planned day ``p`` writes. ``meta``: the admitted records' fields by record id
    (``monitor.queue.store.admitted_meta``); ``planned``: the ``(day, stratum)`` of the stored day
    plans. A withdrawn item the plan selects again is pending again; an untouched pending item it
    leaves out is withdrawn; π is ``check_rate`` × the stratum's taken / eligible."""
    writes = DayWrites()
    due = datetime.combine(p.day + timedelta(days=1), time.min) + timedelta(hours=settings.review_sla_hours)
    for a in p.plan.admitted:
        m = meta[a.record_id]
        fields = {
            "stratum": a.stratum,
            "priority": PRIORITY[a.stratum],
            "kinds": m["kinds"] if a.stratum != "control" else [],
            "words": m["words"] if a.stratum != "control" else [],
        }
        old = p.undecided.get(a.record_id)
        if old is None:
            writes.inserts.append(_new_item(p, a, m, fields, settings=settings, due=due, now=now))
        elif old.state == WITHDRAWN or old.stratum != a.stratum:
            writes.repend.append((old, fields))
        else:
            continue  # still selected, unchanged
        if old is None or old.state == WITHDRAWN:
            writes.added[a.stratum] = writes.added.get(a.stratum, 0) + 1
    chosen = {a.record_id for a in p.plan.admitted}
    writes.withdraw = [
        old for rid, old in p.undecided.items() if old.state == "pending" and rid not in chosen
    ]
    _stratum_writes(writes, p, settings=settings, planned=planned)
    return writes


def _new_item(
    p: DayPlan,
    a: Admission,
    m: Mapping[str, Any],
    fields: Mapping[str, Any],
    *,
    settings: QueueSettings,
    due: datetime,
    now: datetime,
) -> dict[str, Any]:
    """The ``queue_items`` columns of the new item of admission ``a`` (record fields ``m``)."""
    return {
        "record_id": a.record_id,
        "request_id": m["request_id"],
        "conv_id": m["conv_id"],
        "day": p.day,
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


def _stratum_writes(
    writes: DayWrites, p: DayPlan, *, settings: QueueSettings, planned: Set[tuple[date, str]]
) -> None:
    """Add to ``writes`` the π and the day plan (``queue_days`` row) of each stratum of ``p``."""
    day, plan = p.day, p.plan
    for stratum in set(plan.eligible) | set(plan.taken):
        key = {"d": day, "s": stratum}
        writes.probs.append({**key, "pi": settings.check_rate * plan.inclusion_prob(stratum)})
        values = {
            "eligible": plan.eligible[stratum],
            "taken": plan.taken[stratum],
            "capped": plan.capped[stratum],
            "subsampled": stratum in plan.subsampled,
            "updated_at": p.planned_at,
        }
        if (day, stratum) not in planned:
            writes.new_days.append({"day": day, "stratum": stratum, **values})
        else:
            writes.old_days.append({**key, **values})


def enqueue_result(
    days: Sequence[date],
    plans: Sequence[DayPlan],
    writes: Sequence[DayWrites],
    withdrawn: dict[str, int],
) -> EnqueueResult:
    """The :class:`EnqueueResult` of admitting ``days`` (``plans`` and their ``writes``, in day order);
    ``withdrawn``: items actually withdrawn per stratum (a reviewer may have claimed one meanwhile)."""
    added: dict[str, int] = {}
    for w in writes:
        for stratum, n in w.added.items():
            added[stratum] = added.get(stratum, 0) + n
    capped = sum(sum(p.plan.capped.values()) for p in plans)
    subsampled = {p.day.isoformat(): p.plan.subsampled for p in plans if p.plan.subsampled}
    return EnqueueResult(added, capped, subsampled, list(days), withdrawn)
