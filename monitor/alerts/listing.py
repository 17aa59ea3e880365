"""What ``alerts list --json`` prints: one stored alert (``monitor.alerts.store.AlertRow``) as a plain
JSON-ready dict, with its deliveries besides Sentry."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from monitor.alerts.store import AlertRow


def alert_as_dict(r: AlertRow) -> dict[str, Any]:
    """``r`` as one line of ``alerts list --json``: its group, status, reason, window and baseline counts
    and rates (shares in [0, 1]), every flagged request id, where it was sent, and each delivery
    (``next_attempt_at`` only while ``pending``); times ISO, naive UTC."""
    return {
        "id": r.id,
        "group": r.group_key,
        "status": r.status,
        "reason": r.reason,
        "window_start": r.window_start.isoformat(),
        "window_end": r.window_end.isoformat(),
        "window_rewrites": r.window_rewrites,
        "window_flagged": r.window_flagged,
        "window_rate": r.window_rate,
        "baseline_rewrites": r.baseline_rewrites,
        "baseline_flagged": r.baseline_flagged,
        "baseline_rate": r.baseline_rate,
        "flagged_request_ids": r.flagged_request_ids,
        "delivered_to": r.delivered_to,
        "deliveries": [
            {
                "destination": d.destination,
                "status": d.status,
                "attempts": d.attempts,
                "last_error": d.last_error,
                "next_attempt_at": d.next_attempt_at.isoformat() if d.status == "pending" else None,
                "sent_at": d.sent_at.isoformat() if d.sent_at else None,
            }
            for d in r.deliveries
        ],
        "created_at": r.created_at.isoformat(),
    }
