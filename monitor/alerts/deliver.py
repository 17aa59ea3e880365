"""Alert delivery: where a decision of the alert policy (``monitor.alerts.policy``) is sent.

Today one destination, Sentry (``send_alert``), with the scrubbing of ``monitor.observability.sentry``
already installed by ``init_sentry``: the payload holds counts, rates, intervals and request ids, never
query or transcript text.
"""

from __future__ import annotations

from typing import Literal

from monitor.alerts import policy as rules


def send_alert(decision: rules.Decision, policy: rules.Policy) -> str | None:
    """Capture one alert or recovery; returns the Sentry event id (``None`` when not sent).

    Message ``fabrication rate spike: prompt_version <v>`` (or ``... recovered: ...``), level
    ``error`` for a spike and ``info`` for a recovery, the tags of ``monitor.alerts.policy.tags``, a
    ``fabrication_rate`` context block (counts, rates, intervals, window, request ids) and the fixed
    fingerprint ``[fabrication_rate, <prompt version>]`` so repeats group into one issue.
    """
    import sentry_sdk

    with sentry_sdk.new_scope() as scope:
        for k, v in rules.tags(decision).items():
            scope.set_tag(k, v)
        scope.set_context("fabrication_rate", rules.context(decision, policy))
        scope.fingerprint = rules.fingerprint(decision)
        level: Literal["error", "info"] = "error" if decision.action == "alert" else "info"
        return sentry_sdk.capture_message(rules.message(decision), level=level)
