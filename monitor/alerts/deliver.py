"""Alert delivery: where a decision of the alert policy (``monitor.alerts.policy``) is sent.

Today one destination, Sentry (``send_alert``), with the scrubbing of ``monitor.observability.sentry``
already installed by ``init_sentry``: the payload holds counts, rates, intervals and request ids, never
query or transcript text. An alert counts as sent only when the transport took it without dropping it
(:data:`FLUSH_SECONDS` of waiting); otherwise it is stored as ``pending`` and sent again, from its stored
payload, by the next cycles (``send_alert`` again).
"""

from __future__ import annotations

from typing import Any, Literal

from monitor.alerts import policy as rules

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
