"""The worker's alert evaluation: decide the fabrication-rate alerts (``monitor.alerts.policy``) over the
newest window, store them, and deliver them to Sentry and the configured destinations, sending again
what an earlier cycle could not deliver. The leader runs it (``alerts_job`` and each cycle's leader
phase in ``monitor.worker.jobs``).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session

if TYPE_CHECKING:
    from monitor.alerts.policy import Decision
    from monitor.worker.context import WorkerContext

_log = logging.getLogger("monitor.alerts")


CLOCK_SKEW = timedelta(minutes=5)
"""How far ahead of the worker's clock a rewrite's time may be and still set the alert window."""


def evaluate_alerts(ctx: WorkerContext, session: Session) -> list[Decision]:
    """Decide and deliver the fabrication-rate alerts (``monitor.alerts.policy``) and commit; returns every
    group's decision. The caller holds the leader lock.

    Delivery is at-least-once: Sentry (when configured) first, then the ``alerts`` row and the log
    line, so a crash in between re-sends the alert on the next cycle rather than losing it. An alert
    the transport did not deliver is stored as ``pending`` (never "sent to sentry") and sent again by
    the next cycles until Sentry takes it.
    """
    from monitor.alerts import policy as rules
    from monitor.alerts.store import (
        PENDING,
        add_deliveries,
        alert_history,
        group_windows,
        newest_checked_ts,
        store_alert,
    )
    from monitor.checks import current_versions
    from monitor.severity import SEVERITY_RANK

    alerts = ctx.settings.alerts
    policy = rules.Policy.from_settings(alerts)
    checks = current_versions()
    now = ctx.clock()
    # Rewrites dated after now + CLOCK_SKEW (a producer's clock running ahead) wait until real time
    # reaches them; they never drag the window away from the traffic.
    utc_now = now if now.tzinfo is None else now.astimezone(UTC).replace(tzinfo=None)  # naive is UTC here
    not_after = utc_now + CLOCK_SKEW
    newest = newest_checked_ts(
        session=session, checks=checks, kinds=rules.FABRICATION_KINDS, not_after=not_after
    )
    if newest is None:
        _deliver_due(ctx, session, utc_now)
        session.commit()
        return []
    b_start, w_start, w_end = rules.windows(newest, alerts.window_minutes, alerts.baseline_days)
    groups = group_windows(
        session=session,
        checks=checks,
        kinds=rules.FABRICATION_KINDS,
        min_rank=SEVERITY_RANK[policy.min_severity],
        baseline_start=b_start,
        window_start=w_start,
        window_end=w_end,
    )
    if ctx.sentry:
        _resend_pending(session)
    history = alert_history(session=session)
    decisions = []
    no_history = rules.History(None, False)
    for g in groups:
        d = rules.decide(g, policy, history.get(g.group_key, no_history), now)
        decisions.append(d)
        if d.action not in ("alert", "recovered"):
            continue
        payload = _outbound(rules.context(d, policy), session, ctx.settings.outbound_ids)
        event_id, delivered_to = None, "log"
        if ctx.sentry:
            from monitor.alerts.deliver import send_alert

            event_id, sent = send_alert("recovered" if d.action == "recovered" else "alert", payload)
            delivered_to = "sentry" if sent else PENDING
        alert_id = store_alert(
            session=session,
            decision=d,
            context=payload,
            delivered_to=delivered_to,
            sentry_event_id=event_id,
            now=now,
        )
        add_deliveries(session=session, alert_id=alert_id, destinations=alerts.destinations, now=utc_now)
        level = logging.ERROR if d.action == "alert" else logging.INFO
        _log.log(
            level,
            rules.message(d),
            extra={"fields": {**rules.tags(d), **payload, "sentry_event_id": event_id}},
        )
    _deliver_due(ctx, session, utc_now)
    session.commit()
    return decisions


def _outbound(payload: dict[str, Any], session: Session, mode: str) -> dict[str, Any]:
    """``payload`` with its request ids as they may leave the machine (``outbound_ids``:
    :func:`monitor.privacy.outbound_id`). Applied before the alert is stored, so Sentry, the worker's
    log and every later delivery (sent again from the stored payload) carry the same form."""
    from monitor.store.keys import outbound_ids

    ids = [str(i) for i in payload.get("flagged_request_ids", [])]
    if ids:
        out = outbound_ids(session=session, mode=mode)
        payload["flagged_request_ids"] = [out(i) for i in ids]
    return payload


def _deliver_due(ctx: WorkerContext, session: Session, now: datetime) -> None:
    """Send the deliveries besides Sentry that are due (new alerts, and failed ones whose backoff has
    passed), each over HTTP; a failure stays pending, due again after ``backoff(attempts)``. Each try
    is committed with its outcome, so a crash after a send does not forget it was sent."""
    from monitor.alerts.deliver import backoff, request_for
    from monitor.alerts.store import NOT_CONFIGURED, due_deliveries, record_attempt
    from monitor.http import post

    failed: set[tuple[str, str]] = set()  # (destination, group) that failed in this pass: the rest waits
    for row, status, payload in due_deliveries(session=session, now=now):
        if (row.destination, str(payload.get("group"))) in failed:
            continue
        try:
            error = post(request_for(row.destination, status, row.alert_id, payload, ctx.settings.alerts))
        except (KeyError, ValueError):
            error = NOT_CONFIGURED  # a destination removed from the settings since the alert
        if error not in (None, NOT_CONFIGURED):
            failed.add((row.destination, str(payload.get("group"))))
        record_attempt(
            session=session,
            delivery_id=row.id,
            error=error,
            now=now,
            retry_at=now + backoff(row.attempts + 1),
        )
        session.commit()
        fields = {"alert_id": row.alert_id, "destination": row.destination, "attempt": row.attempts + 1}
        if error is None:
            _log.info("alert delivered", extra={"fields": fields})
        else:
            _log.warning("alert not delivered; will retry", extra={"fields": {**fields, "error": error}})


def _resend_pending(session: Session) -> None:
    """Send again the alerts Sentry did not accept in an earlier cycle (``pending``), from their stored
    payload; each one delivered is marked ``sentry``, the others stay pending for the next cycle."""
    from monitor.alerts.deliver import send_alert
    from monitor.alerts.store import mark_delivered, pending_alerts

    for alert_id, status, payload in pending_alerts(session=session):
        event_id, sent = send_alert(status, payload)
        if not sent:
            _log.warning("alert still not delivered", extra={"fields": {"alert_id": alert_id}})
            break  # Sentry is still unreachable: the rest waits for the next cycle
        mark_delivered(session=session, alert_id=alert_id, sentry_event_id=event_id)
