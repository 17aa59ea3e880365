"""Sentry: alert events, Crons check-ins of the cycle job, and the scrubber that keeps text out.

Nothing here runs without a DSN: :func:`init_sentry` returns ``False`` and alerts go to the log and
the ``alerts`` table only. With a DSN the SDK is set up with ``send_default_pii`` off, no local
variables in stack traces, no command line (the Argv integration is off), and :func:`scrub_event` as
``before_send``, which removes every field that can hold text from logged rewrites
(``monitor.observability.logs.TEXT_KEYS``) and the command line, masks URL credentials and redacts
e-mail addresses in the strings left, and replaces exception messages (they can quote input values)
except those of rewrite-monitor's own errors, whose messages name settings, paths and ids only.
"""

from __future__ import annotations

import math
import re
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from monitor.errors import MonitorError
from monitor.observability.logs import SCRUBBED, TEXT_KEYS

if TYPE_CHECKING:
    from sentry_sdk.transport import Transport
    from sentry_sdk.types import Event, Hint, MonitorConfig

    from monitor.setting_groups import WorkerSettings
    from monitor.settings import Settings

EMAIL_RE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
EMAIL_REPLACEMENT = "[email]"
# The user-info part of any URL ("postgresql://app:s3cret@db/x", a Sentry DSN's key): credentials.
URL_USERINFO_RE = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s@]+@")
URL_USERINFO_REPLACEMENT = r"\g<scheme>[credentials]@"
ARGV_KEYS = frozenset({"sys.argv", "argv"})
"""Where the SDK's Argv integration puts the command line (``extra["sys.argv"]``): it holds
``--database-url`` with its password, so it is dropped whole."""


def _own_error_names() -> set[str]:
    names, todo = set(), [MonitorError]
    while todo:
        cls = todo.pop()
        names.add(cls.__name__)
        todo.extend(cls.__subclasses__())
    return names


def _redact(value: Any) -> Any:
    if isinstance(value, str):
        # Credentials first: "user:pass@host.tld" would otherwise half-match as an e-mail address.
        return EMAIL_RE.sub(EMAIL_REPLACEMENT, URL_USERINFO_RE.sub(URL_USERINFO_REPLACEMENT, value))
    if isinstance(value, dict):
        return {
            k: _redact(v)
            for k, v in value.items()
            if k not in TEXT_KEYS and k != "vars" and k not in ARGV_KEYS
        }
    if isinstance(value, list | tuple):
        return [_redact(v) for v in value]
    return value


def scrub_event(event: Event, hint: Hint | None = None) -> Event:
    """``before_send``: the event without transcript text. Returns a new dict.

    - every key in ``TEXT_KEYS`` (``query``, ``latest``, ``messages``, ``content``, ...), at any depth,
      every stack frame's ``vars``, and the command line (:data:`ARGV_KEYS`) are removed;
    - the user-info of any URL left in a string (a database password, a DSN's key) becomes
      ``[credentials]``, and e-mail addresses become ``[email]``;
    - ``request`` and ``user`` (beyond an ``id``) are dropped: the worker serves no HTTP requests and
      has no users, so anything there came from a log record;
    - exception messages are replaced by ``[scrubbed]`` unless the exception is a ``MonitorError``.
    """
    own = _own_error_names()
    out: Event = _redact(event)
    out.pop("request", None)
    if isinstance(out.get("user"), dict):
        out["user"] = {k: v for k, v in out["user"].items() if k == "id"}
    for exc in (out.get("exception") or {}).get("values") or []:
        if exc.get("type") not in own and "value" in exc:
            exc["value"] = SCRUBBED
    return out


def delivery_transport() -> type[Transport]:
    """The SDK's HTTP transport that also counts what it could not deliver (``dropped``): a network
    error, a 4xx/5xx or rate-limited answer, a full queue (the SDK's ``on_dropped_event`` hook). The
    alert job reads the count to tell a sent alert from one still pending (``monitor.alerts.deliver``)."""
    from sentry_sdk.transport import HttpTransport

    class DeliveryTransport(HttpTransport):
        dropped = 0

        def on_dropped_event(self, _reason: str) -> None:
            self.dropped += 1

    return DeliveryTransport


def init_sentry(
    settings: Settings, *, transport: Transport | None = None, release: str | None = None
) -> bool:
    """Set up the SDK when ``settings.sentry_dsn`` is set; returns whether Sentry is on.

    ``transport`` replaces the HTTP transport (tests pass a capturing one: the real SDK builds and
    scrubs the payload, nothing leaves the machine). Logging records become breadcrumbs only, never
    events of their own: alerts and job errors are sent explicitly.
    """
    if settings.sentry_dsn is None or not settings.sentry_dsn.get_secret_value():
        return False
    import sentry_sdk
    from sentry_sdk.integrations.argv import ArgvIntegration
    from sentry_sdk.integrations.logging import LoggingIntegration

    sentry_sdk.init(
        dsn=settings.sentry_dsn.get_secret_value(),
        environment=settings.sentry_environment,
        release=release,
        # send_default_pii stays at its default, off: sentry-sdk 2.75 deprecates passing it (a test
        # asserts the client reports it off). Setting data_collection instead would disable the SDK's
        # own EventScrubber, which stays on as a second net behind scrub_event.
        include_local_variables=False,
        before_send=scrub_event,
        transport=transport if transport is not None else delivery_transport(),
        integrations=[LoggingIntegration(event_level=None)],
        # The command line carries --database-url with its password; scrub_event drops it too.
        disabled_integrations=[ArgvIntegration()],
        traces_sample_rate=None,
    )
    return True


def close_sentry() -> None:
    """Flush pending events (up to 5 s) and disable the SDK again."""
    import sentry_sdk

    client = sentry_sdk.get_client()
    if client.is_active():
        client.flush(timeout=5)
        client.close()


def monitor_config(worker: WorkerSettings) -> MonitorConfig:
    """The Crons monitor of the cycle job: an interval schedule of ``worker_interval_minutes``.

    Sentry takes whole minutes, so the interval is rounded up; a check-in may be one interval late
    (``checkin_margin``) before Sentry reports it missed, and a cycle may run ``max_runtime`` minutes
    (four intervals, at least 30: a catch-up after downtime reads a backlog) before it counts as
    timed out.
    """
    minutes = max(1, math.ceil(worker.interval_minutes))
    return {
        "schedule": {"type": "interval", "value": minutes, "unit": "minute"},
        "checkin_margin": minutes,
        "max_runtime": max(30, 4 * minutes),
        "timezone": worker.timezone,
    }


def cron_checkin(worker: WorkerSettings, enabled: bool) -> AbstractContextManager[None]:
    """The cycle's Crons check-ins: the SDK's ``sentry_sdk.monitor`` for ``worker.cron_monitor_slug``
    with :func:`monitor_config` (``in_progress`` on entry, then ``ok``, or ``error`` with the exception
    still raised, each with the same check-in id and the duration), or a no-op when not ``enabled``."""
    if not enabled:
        return nullcontext()
    import sentry_sdk

    return sentry_sdk.monitor(monitor_slug=worker.cron_monitor_slug, monitor_config=monitor_config(worker))


__all__ = [
    "close_sentry",
    "cron_checkin",
    "delivery_transport",
    "init_sentry",
    "monitor_config",
    "scrub_event",
]
