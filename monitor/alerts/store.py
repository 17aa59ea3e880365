"""Alerts raised on the fabrication rate: the counts they are decided on, and the stored alerts as
plain data for the CLI and the dashboard. The decision rule itself is ``monitor.alerts.policy`` (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, or_, select, tuple_, update
from sqlalchemy.orm import Session, aliased

from monitor.alerts.policy import (
    ALERT_KIND,
    ALERT_SIGNALS,
    NO_VERSION,
    OVERALL,
    Counts,
    Decision,
    GroupWindow,
    History,
)
from monitor.checks.store.runs import sets_holding
from monitor.store.engine import insert_ignore
from monitor.store.models import Alert, AlertDelivery, CheckRun, CheckSkip, Finding, Record
from monitor.store.rows import to_row


@dataclass(frozen=True, slots=True)
class DeliveryRow:
    """One alert's delivery to one destination: ``status`` ``pending``, ``sent`` or ``dropped``; times
    naive UTC."""

    id: int
    alert_id: int
    destination: str
    status: str
    attempts: int
    last_error: str | None
    next_attempt_at: datetime
    sent_at: datetime | None


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
    baseline_rewrites: int
    baseline_flagged: int
    baseline_rate: float | None
    delivered_to: str
    created_at: datetime
    reason: str | None
    """``spike`` (window above ``factor`` x the baseline), ``ceiling`` (at or above the absolute ceiling),
    or ``recovered``; from the stored payload."""
    flagged_request_ids: list[str]
    """The flagged rewrites of the window the payload named (the runbook's first thing to open)."""
    deliveries: list[DeliveryRow]
    """Its deliveries besides Sentry (webhook, Slack, PagerDuty), each ``sent``, ``pending`` or
    ``dropped``."""


def list_alerts(*, session: Session, since: datetime | None = None, limit: int = 50) -> list[AlertRow]:
    """Stored alerts, newest first (``since``: created at or after, naive UTC), with the reason and
    flagged request ids of the payload that was sent, and their deliveries besides Sentry."""
    stmt = select(Alert).order_by(Alert.created_at.desc(), Alert.id.desc()).limit(limit)
    if since is not None:
        stmt = stmt.where(Alert.created_at >= since)
    alerts = list(session.scalars(stmt))
    deliveries = deliveries_of(session=session, alert_ids=[a.id for a in alerts])
    return [
        to_row(
            AlertRow,
            a,
            reason=(a.context or {}).get("reason") or ("recovered" if a.status == "recovered" else None),
            flagged_request_ids=[str(x) for x in (a.context or {}).get("flagged_request_ids", [])],
            deliveries=deliveries.get(a.id, []),
        )
        for a in alerts
    ]


# -- the worker's alert evaluation -------------------------------------------------------------------
def _fabrication_checks(checks: Sequence[tuple[str, int]], kinds: Sequence[str]) -> list[tuple[str, int]]:
    from monitor.checks import REGISTRY

    current = dict(checks)
    return sorted(
        (spec.id, current[spec.id])
        for spec in REGISTRY.values()
        if spec.id in current and set(spec.kinds) & set(kinds)
    )


def _fully_ran(fab_checks: list[tuple[str, int]]) -> Any:
    """Condition on ``Record``: every fabrication check ran on it (skipped ones are not counted, see
    module doc): it has a run of a set holding those versions that skipped none of them. Correlated on
    the record id (``uq_check_runs_record_set``), so a query bounded by ``Record.ts`` reads only its
    window's runs."""
    skipped = (
        select(CheckSkip.check_run_id)
        .where(CheckSkip.check_run_id == CheckRun.id, CheckSkip.check_id.in_([c for c, _ in fab_checks]))
        .exists()
    )
    return (
        select(CheckRun.id)
        .where(
            CheckRun.record_id == Record.id,
            CheckRun.check_set_id.in_(sets_holding(fab_checks)),
            ~skipped,
        )
        .exists()
    )


def _flagged(
    fab_checks: list[tuple[str, int]], kinds: Sequence[str], min_rank: int, start: datetime, end: datetime
) -> Any:
    """Condition on ``Record``: it has a fabrication finding at ``min_rank`` or above, of a precise signal
    (``added_content_word`` by a number, a name or a qualifier value, ``ALERT_SIGNALS``). The findings are
    read once, only for the records of ``[start, end)`` (event time); a correlated form let SQLite
    scan every finding of those kinds per record."""
    in_range = select(Record.id).where(Record.ts >= start, Record.ts < end)
    signal = Finding.evidence["severity_signal"].as_string()
    return Record.id.in_(
        select(Finding.record_id).where(
            Finding.record_id.in_(in_range),
            Finding.kind.in_(kinds),
            Finding.severity_rank >= min_rank,
            tuple_(Finding.check_id, Finding.check_version).in_(fab_checks),
            # the precise signals only (monitor.alerts.policy.ALERT_SIGNALS)
            or_(Finding.kind != "added_content_word", signal.is_(None), signal.in_(ALERT_SIGNALS)),
        )
    )


def newest_checked_ts(
    *,
    session: Session,
    checks: Sequence[tuple[str, int]],
    kinds: Sequence[str],
    not_after: datetime | None = None,
) -> datetime | None:
    """Event time (``records.ts``, naive UTC) of the newest rewrite the fabrication checks ran on, at
    or before ``not_after`` (naive UTC) when given: a producer with a skewed clock must not move the
    alert window into the future, where the real traffic is not."""
    fab = _fabrication_checks(checks, kinds)
    if not fab:
        return None
    bound = [Record.ts <= not_after] if not_after is not None else []
    # Newest first on the ts index, stopping at the first fully checked rewrite: a cycle reads a few
    # rows rather than every check run in the store.
    stmt = (
        select(Record.ts)
        .where(Record.rewrite_event_id.is_not(None), Record.ts.is_not(None), _fully_ran(fab), *bound)
        .order_by(Record.ts.desc())
        .limit(1)
    )
    return session.scalar(stmt)


def group_windows(
    *,
    session: Session,
    checks: Sequence[tuple[str, int]],
    kinds: Sequence[str],
    min_rank: int,
    baseline_start: datetime,
    window_start: datetime,
    window_end: datetime,
    max_request_ids: int = 20,
) -> list[GroupWindow]:
    """Counts per group (``overall`` first, then each prompt version by name) over the window
    ``[window_start, window_end)`` and the baseline ``[baseline_start, window_start)``, event time.

    A prompt version with no rewrite in the window is left out (nothing to judge). ``kinds`` are the
    finding kinds that count as fabrication; ``min_rank`` their lowest severity rank.
    """
    fab = _fabrication_checks(checks, kinds)
    if not fab:
        return []
    version = func.coalesce(Record.prompt_version, NO_VERSION).label("v")
    flagged = _flagged(fab, kinds, min_rank, baseline_start, window_end)
    counted = _fully_ran(fab)
    in_window = Record.ts >= window_start
    base = (
        select(Record.id, Record.ts, Record.request_id, Record.model, version, flagged.label("f"))
        .where(
            counted,
            Record.rewrite_event_id.is_not(None),
            Record.ts >= baseline_start,
            Record.ts < window_end,
        )
        .subquery()
    )
    counts = session.execute(
        select(
            base.c.v,
            func.count().filter(base.c.ts >= window_start),
            func.count().filter(base.c.ts >= window_start, base.c.f),
            func.count().filter(base.c.ts < window_start),
            func.count().filter(base.c.ts < window_start, base.c.f),
        ).group_by(base.c.v)
    ).all()
    models: dict[str, dict[str, int]] = {}
    for v, model, n in session.execute(
        # Grouped on the raw columns: PostgreSQL cannot match two coalesce() with separate parameters.
        select(Record.prompt_version, Record.model, func.count())
        .where(counted, Record.ts >= window_start, Record.ts < window_end)
        .group_by(Record.prompt_version, Record.model)
    ):
        per = models.setdefault(v if v is not None else NO_VERSION, {})
        key = model if model is not None else NO_VERSION
        per[key] = per.get(key, 0) + n
    flagged_ids: dict[str, list[str]] = {}
    for v, req in session.execute(
        select(version, Record.request_id)
        .where(counted, flagged, in_window, Record.ts < window_end)
        .order_by(Record.ts.desc(), Record.id.desc())
    ):
        flagged_ids.setdefault(v, []).append(req)

    def group(
        key: str, v: str | None, w: Counts, b: Counts, m: dict[str, int], ids: list[str]
    ) -> GroupWindow:
        return GroupWindow(
            key, v, w, b, window_start, window_end, baseline_start, m, tuple(ids[:max_request_ids])
        )

    out = []
    all_models: dict[str, int] = {}
    for per in models.values():
        for m, n in per.items():
            all_models[m] = all_models.get(m, 0) + n
    all_ids = [
        req
        for _v, req in session.execute(
            select(version, Record.request_id)
            .where(counted, flagged, in_window, Record.ts < window_end)
            .order_by(Record.ts.desc(), Record.id.desc())
            .limit(max_request_ids)
        )
    ]
    total_w = Counts(sum(r[1] for r in counts), sum(r[2] for r in counts))
    total_b = Counts(sum(r[3] for r in counts), sum(r[4] for r in counts))
    out.append(group(OVERALL, None, total_w, total_b, all_models, all_ids))
    for v, wn, wf, bn, bf in sorted(counts, key=lambda r: str(r[0])):
        if wn:
            out.append(
                group(
                    f"prompt_version:{v}",
                    v,
                    Counts(wn, wf),
                    Counts(bn, bf),
                    models.get(v, {}),
                    flagged_ids.get(v, []),
                )
            )
    return out


def alert_history(*, session: Session, kind: str = ALERT_KIND) -> dict[str, History]:
    """Per group key: the time of its latest alert and whether a recovery was stored after it."""
    out: dict[str, History] = {}
    last_alert = dict(
        session.execute(
            select(Alert.group_key, func.max(Alert.created_at))
            .where(Alert.kind == kind, Alert.status == "alert")
            .group_by(Alert.group_key)
        ).all()
    )
    last_recovery = dict(
        session.execute(
            select(Alert.group_key, func.max(Alert.created_at))
            .where(Alert.kind == kind, Alert.status == "recovered")
            .group_by(Alert.group_key)
        ).all()
    )
    for key, at in last_alert.items():
        rec = last_recovery.get(key)
        out[key] = History(at, rec is not None and rec >= at)
    return out


def store_alert(
    *,
    session: Session,
    decision: Decision,
    context: dict[str, Any],
    delivered_to: str,
    sentry_event_id: str | None,
    now: datetime,
) -> int:
    """Store an alert (``status`` ``alert``) or recovery (``recovered``); returns its id. Flushes."""
    g = decision.group
    row = Alert(
        kind=ALERT_KIND,
        group_key=g.group_key,
        prompt_version=g.prompt_version,
        status="alert" if decision.action == "alert" else "recovered",
        window_start=g.window_start,
        window_end=g.window_end,
        window_rewrites=g.window.rewrites,
        window_flagged=g.window.flagged,
        window_rate=g.window.rate or 0.0,
        baseline_rewrites=g.baseline.rewrites,
        baseline_flagged=g.baseline.flagged,
        baseline_rate=g.baseline.rate,
        delivered_to=delivered_to,
        sentry_event_id=sentry_event_id,
        context=context,
        created_at=now,
    )
    session.add(row)
    session.flush()
    return row.id


PENDING = "pending"
"""``delivered_to`` of an alert Sentry did not accept yet: the next cycles send it again."""


def pending_alerts(*, session: Session, limit: int = 20) -> list[tuple[int, str, dict[str, Any]]]:
    """``(id, status, payload)`` of the oldest alerts still to deliver (``delivered_to`` ``pending``)."""
    rows = session.execute(
        select(Alert.id, Alert.status, Alert.context)
        .where(Alert.delivered_to == PENDING)
        .order_by(Alert.id)
        .limit(limit)
    ).all()
    return [(r.id, r.status, dict(r.context or {})) for r in rows]


def mark_delivered(*, session: Session, alert_id: int, sentry_event_id: str | None) -> None:
    """Record that a pending alert was delivered to Sentry. Flushes, does not commit."""
    session.execute(
        update(Alert)
        .where(Alert.id == alert_id, Alert.delivered_to == PENDING)
        .values(delivered_to="sentry", sentry_event_id=sentry_event_id)
    )


# -- deliveries besides Sentry ----------------------------------------------------------------------
SENT = "sent"
"""``status`` of a delivery the destination accepted."""
DROPPED = "dropped"
"""``status`` of a delivery to a destination no longer configured: never tried again."""
NOT_CONFIGURED = "not configured"
"""The error that drops a delivery (its destination was removed from the settings since the alert)."""


def add_deliveries(*, session: Session, alert_id: int, destinations: Sequence[str], now: datetime) -> None:
    """A pending delivery of alert ``alert_id`` to each of ``destinations``, due at ``now``; one already
    there is left alone (insert-or-ignore on the unique key). Flushes, does not commit."""
    rows = [
        {
            "alert_id": alert_id,
            "destination": d,
            "status": PENDING,
            "attempts": 0,
            "next_attempt_at": now,
        }
        for d in destinations
    ]
    if rows:
        session.execute(insert_ignore(session, AlertDelivery, ["alert_id", "destination"]), rows)


def due_deliveries(
    *, session: Session, now: datetime, limit: int = 50
) -> list[tuple[DeliveryRow, str, dict[str, Any]]]:
    """The pending deliveries due at ``now``, oldest alert first, each with its alert's ``status``
    (``alert`` or ``recovered``) and stored payload.

    A delivery waits while an older alert of the same group still has a pending delivery to the same
    destination, due or not: one destination receives a group's alert and its recovery in order (a
    PagerDuty resolve sent before the trigger it closes would leave that incident open for good)."""
    older = aliased(AlertDelivery)
    older_alert = aliased(Alert)
    blocked = (
        select(older.id)
        .join(older_alert, older_alert.id == older.alert_id)
        .where(
            older.destination == AlertDelivery.destination,
            older.status == PENDING,
            older_alert.group_key == Alert.group_key,
            older.alert_id < AlertDelivery.alert_id,
        )
        .exists()
    )
    rows = session.execute(
        select(AlertDelivery, Alert.status, Alert.context)
        .join(Alert, Alert.id == AlertDelivery.alert_id)
        .where(AlertDelivery.status == PENDING, AlertDelivery.next_attempt_at <= now, ~blocked)
        .order_by(AlertDelivery.alert_id, AlertDelivery.id)
        .limit(limit)
    ).all()
    return [(to_row(DeliveryRow, d), status, dict(ctx or {})) for d, status, ctx in rows]


def record_attempt(
    *, session: Session, delivery_id: int, error: str | None, now: datetime, retry_at: datetime
) -> None:
    """Record one try of a delivery: sent when ``error`` is None; dropped when it is
    :data:`NOT_CONFIGURED`; else still pending, due again at ``retry_at``, with ``error`` (an HTTP status
    or an error class, cut to 200 characters). Flushes."""
    values: dict[str, Any] = {"attempts": AlertDelivery.attempts + 1}
    if error is None:
        values.update(status=SENT, sent_at=now, last_error=None)
    elif error == NOT_CONFIGURED:
        values.update(status=DROPPED, last_error=error)
    else:
        values.update(last_error=error[:200], next_attempt_at=retry_at)
    session.execute(update(AlertDelivery).where(AlertDelivery.id == delivery_id).values(**values))


def deliveries_of(*, session: Session, alert_ids: Sequence[int]) -> dict[int, list[DeliveryRow]]:
    """Alert id -> its deliveries besides Sentry, by destination order of creation."""
    out: dict[int, list[DeliveryRow]] = {}
    if not alert_ids:
        return out
    stmt = select(AlertDelivery).where(AlertDelivery.alert_id.in_(list(alert_ids))).order_by(AlertDelivery.id)
    for d in session.scalars(stmt):
        out.setdefault(d.alert_id, []).append(to_row(DeliveryRow, d))
    return out
