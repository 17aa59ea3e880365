"""Alert delivery: where a decision of the alert policy (``monitor.alerts.policy``) is sent.

Sentry (``send_alert``), with the scrubbing of ``monitor.observability.sentry`` already installed by
``init_sentry``: an alert counts as sent only when the transport took it without dropping it
(:data:`FLUSH_SECONDS` of waiting); otherwise it is stored as ``pending`` and sent again, from its stored
payload, by the next cycles (``send_alert`` again).

Besides Sentry, over HTTP (``monitor.http.post``; one ``alert_deliveries`` row per alert and destination,
retried with :func:`backoff` until the destination answers 2xx):

- ``webhook``: the payload as JSON (:func:`webhook_body`), signed: header
  ``X-Rewrite-Monitor-Signature: sha256=<hex HMAC-SHA256 of the body with alert_webhook_secret>``, the
  scheme GitHub's webhooks use, so a receiver can check it with any HMAC library;
- ``slack``: an incoming-webhook message (:func:`slack_body`): the rate, interval, baseline and prompt
  version, and the ``rewrite-monitor show`` commands for the flagged request ids;
- ``pagerduty``: an Events API v2 event (:func:`pagerduty_body`): ``trigger`` for an alert, ``resolve``
  for its recovery, with one ``dedup_key`` per alert group so the recovery resolves the incident the
  alert opened.

Every payload is built from the stored alert payload (``monitor.alerts.policy.context``): counts,
rates, intervals, times, the prompt version and request ids, never query or transcript text. Producer
chosen strings (the prompt version, request ids) are escaped for Slack's markup.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import urllib.error
import urllib.request
from datetime import timedelta
from typing import Any, Literal

from monitor.alerts import policy as rules
from monitor.setting_groups import AlertSettings

FLUSH_SECONDS = 10.0
"""How long one alert waits for the transport to send it; an envelope still in flight then counts as
sent (the SDK retries nothing itself)."""


def _capture(
    message: str,
    level: Literal["error", "info"],
    tags: dict[str, str],
    context: dict[str, Any],
    fp: list[str],
) -> tuple[str | None, bool]:
    import sentry_sdk

    client = sentry_sdk.get_client()
    transport = client.transport
    before = getattr(transport, "dropped", 0)
    with sentry_sdk.new_scope() as scope:
        for k, v in tags.items():
            scope.set_tag(k, v)
        scope.set_context("fabrication_rate", context)
        scope.fingerprint = fp
        event_id = sentry_sdk.capture_message(message, level=level)
    client.flush(timeout=FLUSH_SECONDS)
    return event_id, event_id is not None and getattr(transport, "dropped", 0) == before


def send_alert(status: str, context: dict[str, Any]) -> tuple[str | None, bool]:
    """Send one alert (``status`` ``alert``) or recovery (``recovered``) built from its payload
    (``monitor.alerts.policy.context``, as the ``alerts`` row stores it), so a first send and every
    resend of a pending alert make the same event. Returns the Sentry event id (``None`` when the SDK
    made none) and whether the transport delivered it.

    Message ``fabrication rate spike: prompt_version <v>`` (or ``... recovered: ...``), level ``error``
    for a spike and ``info`` for a recovery, the tags of ``policy.tags``, the payload as the
    ``fabrication_rate`` context block (counts, rates, intervals, window, request ids) and the fixed
    fingerprint ``[fabrication_rate, <prompt version>]`` so repeats group into one issue.
    """
    recovered = status == "recovered"
    return _capture(
        rules.message_for(context, recovered=recovered),
        "info" if recovered else "error",
        rules.tags_for(context),
        context,
        rules.fingerprint_for(context, recovered=recovered),
    )


# -- webhook, Slack, PagerDuty ----------------------------------------------------------------------
BACKOFF_CAP = timedelta(hours=1)


def backoff(attempts: int) -> timedelta:
    """The wait before the next try of a delivery that failed ``attempts`` times (1, 2, 3, ...): one
    minute, doubling each time, at most :data:`BACKOFF_CAP` (exponential backoff, as the AWS
    Architecture Blog's "Exponential Backoff And Jitter" describes, without the jitter: one worker
    leader retries, so no herd forms)."""
    return min(BACKOFF_CAP, timedelta(minutes=2 ** max(0, attempts - 1)))


def webhook_body(status: str, alert_id: int, payload: dict[str, Any]) -> bytes:
    """The webhook's JSON body: ``{"event": "alert"|"recovered", "alert_id", "message", "payload"}``,
    keys sorted so the signed bytes are stable."""
    doc = {
        "event": status,
        "alert_id": alert_id,
        "message": rules.message_for(payload, recovered=status == "recovered"),
        "payload": payload,
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def signature(secret: str, body: bytes) -> str:
    """``sha256=<hex>``: HMAC-SHA256 of ``body`` keyed by ``secret`` (the ``X-Rewrite-Monitor-Signature``
    header)."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def slack_escape(text: str) -> str:
    """``text`` with Slack's three control characters escaped (``&``, ``<``, ``>``: Slack's "Formatting
    text for app surfaces"), so a producer-chosen prompt version cannot mention ``<!channel>`` or make
    a link."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _pct(x: Any) -> str:
    return "n/a" if x is None else f"{float(x):.2%}"


def _minute(iso: Any) -> str:
    """A stored window bound (ISO-8601, naive UTC, ending a microsecond after the newest rewrite) to
    the minute, as a reader wants it."""
    from datetime import datetime

    try:
        return datetime.fromisoformat(str(iso)).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return str(iso)


def slack_body(status: str, alert_id: int, payload: dict[str, Any]) -> bytes:
    """The Slack incoming-webhook message: a one-line summary (rate, flagged/rewrites, window, baseline,
    prompt version) and the ``rewrite-monitor show`` commands of up to five flagged request ids."""
    recovered = status == "recovered"
    head = rules.message_for(payload, recovered=recovered)
    line = (
        f"{'Recovered' if recovered else 'Spike'}: {_pct(payload.get('window_rate'))} "
        f"({payload.get('window_flagged')}/{payload.get('window_rewrites')}) from "
        f"{_minute(payload.get('window_start'))} to {_minute(payload.get('window_end'))} UTC, baseline "
        f"{_pct(payload.get('baseline_rate'))} ({payload.get('baseline_flagged')}/"
        f"{payload.get('baseline_rewrites')}); reason {payload.get('reason') or 'recovered'}; "
        f"alert {alert_id}"
    )
    ids = [str(x) for x in payload.get("flagged_request_ids", [])][:5]
    text = slack_escape(head) + "\n" + slack_escape(line)
    if ids and not recovered:
        text += "\nOpen:\n" + "\n".join(f"`rewrite-monitor show {slack_escape(i)}`" for i in ids)
    return json.dumps({"text": text, "unfurl_links": False, "unfurl_media": False}).encode()


def dedup_key(payload: dict[str, Any]) -> str:
    """PagerDuty's ``dedup_key`` of an alert group: stable across the alert and its recovery."""
    return f"rewrite-monitor:{rules.ALERT_KIND}:{payload['group']}"


def pagerduty_body(status: str, alert_id: int, payload: dict[str, Any], routing_key: str) -> bytes:
    """A PagerDuty Events API v2 event: ``trigger`` (severity ``error``) for an alert with the counts as
    ``custom_details``, ``resolve`` for a recovery; ``dedup_key`` from :func:`dedup_key`."""
    recovered = status == "recovered"
    doc: dict[str, Any] = {
        "routing_key": routing_key,
        "event_action": "resolve" if recovered else "trigger",
        "dedup_key": dedup_key(payload),
    }
    if not recovered:
        details = {k: v for k, v in payload.items() if k != "flagged_request_ids"}
        details["alert_id"] = alert_id
        details["flagged_request_ids"] = list(payload.get("flagged_request_ids", []))[:20]
        doc["payload"] = {
            "summary": rules.message_for(payload, recovered=False)[:1024],
            "source": "rewrite-monitor",
            "severity": "error",
            "component": "query rewriter",
            "group": str(payload.get("group")),
            "class": rules.ALERT_KIND,
            "custom_details": details,
        }
    return json.dumps(doc, sort_keys=True).encode()


def request_for(
    destination: str, status: str, alert_id: int, payload: dict[str, Any], alerts: AlertSettings
) -> urllib.request.Request:
    """The HTTP request delivering one alert to ``destination`` (``webhook``, ``slack``, ``pagerduty``).
    Raises ``KeyError`` for another destination and ``ValueError`` when it is not configured."""
    headers = {"Content-Type": "application/json", "User-Agent": "rewrite-monitor"}
    if destination == "webhook":
        if alerts.webhook_url is None or alerts.webhook_secret is None:
            raise ValueError("the webhook is not configured")
        body = webhook_body(status, alert_id, payload)
        headers["X-Rewrite-Monitor-Signature"] = signature(alerts.webhook_secret.get_secret_value(), body)
        headers["X-Rewrite-Monitor-Event"] = status
        url = alerts.webhook_url.get_secret_value()
    elif destination == "slack":
        if alerts.slack_webhook_url is None:
            raise ValueError("Slack is not configured")
        body, url = slack_body(status, alert_id, payload), alerts.slack_webhook_url.get_secret_value()
    elif destination == "pagerduty":
        if alerts.pagerduty_key is None:
            raise ValueError("PagerDuty is not configured")
        body = pagerduty_body(status, alert_id, payload, alerts.pagerduty_key.get_secret_value())
        url = alerts.pagerduty_url
    else:
        raise KeyError(destination)
    return urllib.request.Request(url, data=body, headers=headers, method="POST")
