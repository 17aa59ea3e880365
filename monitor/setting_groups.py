"""Typed, read-only views of the settings one stage reads: ``settings.queue``, ``.alerts``, ``.worker``
and ``.replay`` (built by :class:`monitor.settings.Settings` from its flat fields).

The flat fields stay the source of truth: they carry the environment names, the TOML keys, the bounds
and the validation messages, and ``config show`` lists them. A view copies the values of one group,
its field names without the group's prefix (``queue_budget`` is ``settings.queue.budget``), so that a
stage's functions can take the group they read instead of the whole ``Settings``.

Also here, the checks of setting values that need no ``Settings``: the URL and DSN checks its validators
call (:func:`check_http`, :func:`dsn_problem`), the masking of a plain URL's credentials
(:func:`web_url_masked`), and what the dashboard and ``rewrite-monitor dashboard`` check before serving
(:func:`is_loopback`, :func:`auth_missing`).

Imports only pydantic and the standard library (no SQLAlchemy, no monitor.settings): the pure modules
(``monitor.alerts.policy``) take these types without loading the store.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

SeverityName = Literal["low", "medium", "high"]


class _Group(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CheckSettings(BaseModel):
    """One entry of the ``checks`` setting: whether the check runs (``monitor.checks.registry.configure``
    applies it) and the lowest severity of its findings that reaches the review queue (queue admission
    reads it: ``QueueSettings.check_floors``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(default=True, strict=True)  # "no" or 0 turning a check off is a typo, not a value
    min_severity: SeverityName = "low"


class QueueSettings(_Group):
    """What queue admission (``monitor.queue.store.enqueue_days``) and claims read.

    Each field is the flat setting of the same name, from the environment variable (or TOML key):

    - ``budget``: ``queue_budget`` (``REWRITE_MONITOR_QUEUE_BUDGET``)
    - ``min_severity``: ``queue_min_severity`` (``REWRITE_MONITOR_QUEUE_MIN_SEVERITY``)
    - ``control_share``: ``control_share`` (``REWRITE_MONITOR_CONTROL_SHARE``)
    - ``control_min``: ``control_min`` (``REWRITE_MONITOR_CONTROL_MIN``)
    - ``per_conversation_cap``: ``per_conversation_cap`` (``REWRITE_MONITOR_PER_CONVERSATION_CAP``)
    - ``sample_seed``: ``sample_seed`` (``REWRITE_MONITOR_SAMPLE_SEED``), shared with ingest
    - ``check_rate``: ``check_rate`` (``REWRITE_MONITOR_CHECK_RATE``), shared with the checks: an
      item's inclusion probability is ``check_rate`` times its admission's
    - ``review_sla_hours``: ``review_sla_hours`` (``REWRITE_MONITOR_REVIEW_SLA_HOURS``)
    - ``claim_lease_minutes``: ``claim_lease_minutes`` (``REWRITE_MONITOR_CLAIM_LEASE_MINUTES``)
    - ``reviews_per_item``: ``reviews_per_item`` (``REWRITE_MONITOR_REVIEWS_PER_ITEM``)
    - ``double_review_share``: ``double_review_share`` (``REWRITE_MONITOR_DOUBLE_REVIEW_SHARE``)
    - ``checks``: ``checks`` (``REWRITE_MONITOR_CHECKS``): admission reads each check's ``min_severity``,
      the lowest severity of its findings that reaches the queue (:attr:`check_floors`)
    """

    budget: int
    min_severity: SeverityName
    checks: dict[str, CheckSettings] = {}

    @property
    def check_floors(self) -> dict[str, str]:
        """Check id -> the lowest severity of its findings that reaches the queue, for the checks whose
        ``min_severity`` is above low."""
        return {k: v.min_severity for k, v in self.checks.items() if v.min_severity != "low"}

    control_share: float
    control_min: int
    per_conversation_cap: int
    sample_seed: str
    check_rate: float
    review_sla_hours: float
    claim_lease_minutes: float
    reviews_per_item: int = 1
    double_review_share: float = 0.0


class AlertSettings(_Group):
    """What the fabrication-rate alerts read (``monitor.alerts.policy.Policy.from_settings`` and the
    worker's alert job).

    Each field is the flat setting ``alert_<field>``, from the environment variable (or TOML key):

    - ``min_severity``: ``alert_min_severity`` (``REWRITE_MONITOR_ALERT_MIN_SEVERITY``)
    - ``window_minutes``: ``alert_window_minutes`` (``REWRITE_MONITOR_ALERT_WINDOW_MINUTES``)
    - ``baseline_days``: ``alert_baseline_days`` (``REWRITE_MONITOR_ALERT_BASELINE_DAYS``)
    - ``min_rewrites``: ``alert_min_rewrites`` (``REWRITE_MONITOR_ALERT_MIN_REWRITES``)
    - ``min_flagged``: ``alert_min_flagged`` (``REWRITE_MONITOR_ALERT_MIN_FLAGGED``)
    - ``factor``: ``alert_factor`` (``REWRITE_MONITOR_ALERT_FACTOR``)
    - ``ceiling``: ``alert_ceiling`` (``REWRITE_MONITOR_ALERT_CEILING``)
    - ``cooldown_hours``: ``alert_cooldown_hours`` (``REWRITE_MONITOR_ALERT_COOLDOWN_HOURS``)
    - ``webhook_url``: ``alert_webhook_url`` (``REWRITE_MONITOR_ALERT_WEBHOOK_URL``)
    - ``webhook_secret``: ``alert_webhook_secret`` (``REWRITE_MONITOR_ALERT_WEBHOOK_SECRET``)
    - ``slack_webhook_url``: ``alert_slack_webhook_url`` (``REWRITE_MONITOR_ALERT_SLACK_WEBHOOK_URL``)
    - ``pagerduty_key``: ``alert_pagerduty_key`` (``REWRITE_MONITOR_ALERT_PAGERDUTY_KEY``)
    - ``pagerduty_url``: ``alert_pagerduty_url`` (``REWRITE_MONITOR_ALERT_PAGERDUTY_URL``)

    The last five are the destinations besides Sentry (``monitor.alerts.deliver``); all but the last
    are secrets.
    """

    min_severity: SeverityName
    window_minutes: float
    baseline_days: float
    min_rewrites: int
    min_flagged: int
    factor: float
    ceiling: float | None
    cooldown_hours: float
    webhook_url: SecretStr | None = None
    webhook_secret: SecretStr | None = None
    slack_webhook_url: SecretStr | None = None
    pagerduty_key: SecretStr | None = None
    pagerduty_url: str = "https://events.pagerduty.com/v2/enqueue"

    @property
    def destinations(self) -> tuple[str, ...]:
        """The configured destinations besides Sentry, in delivery order: ``webhook``, ``slack``,
        ``pagerduty``."""
        out = []
        if self.webhook_url is not None:
            out.append("webhook")
        if self.slack_webhook_url is not None:
            out.append("slack")
        if self.pagerduty_key is not None and self.pagerduty_key.get_secret_value():
            out.append("pagerduty")
        return tuple(out)


class WorkerSettings(_Group):
    """What the worker's schedule reads (``monitor.worker.scheduler.build_scheduler``, the Sentry Crons
    monitor of ``monitor.observability.sentry``, the lease and retention of the worker).

    Each field is a flat setting, from the environment variable (or TOML key):

    - ``interval_minutes``: ``worker_interval_minutes`` (``REWRITE_MONITOR_WORKER_INTERVAL_MINUTES``)
    - ``daily_time``: ``daily_time`` (``REWRITE_MONITOR_DAILY_TIME``)
    - ``timezone``: ``timezone`` (``REWRITE_MONITOR_TIMEZONE``)
    - ``retention_days``: ``retention_days`` (``REWRITE_MONITOR_RETENTION_DAYS``)
    - ``cron_monitor_slug``: ``cron_monitor_slug`` (``REWRITE_MONITOR_CRON_MONITOR_SLUG``)
    """

    interval_minutes: float
    daily_time: str
    timezone: str
    retention_days: int
    cron_monitor_slug: str


class ReplaySettings(_Group):
    """What ``rewrite-monitor replay`` passes to ``monitor.replay.client`` (the API key stays on
    ``Settings``, a secret kept in one place).

    Each field is the flat setting ``replay_<field>``, from the environment variable (or TOML key):

    - ``model``: ``replay_model`` (``REWRITE_MONITOR_REPLAY_MODEL``)
    - ``max_tokens``: ``replay_max_tokens`` (``REWRITE_MONITOR_REPLAY_MAX_TOKENS``)
    - ``timeout_seconds``: ``replay_timeout_seconds`` (``REWRITE_MONITOR_REPLAY_TIMEOUT_SECONDS``)
    - ``max_retries``: ``replay_max_retries`` (``REWRITE_MONITOR_REPLAY_MAX_RETRIES``)
    - ``prices_file``: ``replay_prices_file`` (``REWRITE_MONITOR_REPLAY_PRICES_FILE``)
    """

    model: str
    max_tokens: int
    timeout_seconds: float
    max_retries: int
    prices_file: Path | None


# -- checks of setting values that need no Settings -------------------------------------------------
def dsn_problem(sdk_message: str) -> str:
    """A fixed description of what is wrong with a DSN, from the SDK's message (never quoted)."""
    reasons = (
        ("Unsupported scheme", "the scheme must be http or https"),
        ("Missing hostname", "it has no host"),
        ("Missing public key", "it has no public key before the @"),
        ("Invalid project", "the project id (the last path part) must be a number"),
        ("Port", "the port is not a number from 0 to 65535"),
        ("Invalid IPv6", "the host is not a valid IPv6 address"),
    )
    return next((reason for prefix, reason in reasons if sdk_message.startswith(prefix)), "unparsable")


def check_http(url: str) -> None:
    """Raise ``ValueError`` unless ``url`` is an http:// or https:// URL with a host."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an http:// or https:// URL with a host")


def web_url_masked(url: str) -> str:
    """An http(s) URL with any ``user:password@`` replaced by ``***@`` (the PagerDuty endpoint is not a
    secret, but a proxy in front of it may carry credentials)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))


def is_loopback(address: str) -> bool:
    """Whether a server bound to ``address`` is reachable from this machine only: ``localhost`` or a
    loopback IP (``127.0.0.1``, ``::1``). An empty address (Streamlit's default: every interface) is not."""
    import ipaddress

    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


AUTH_KEYS = ("redirect_uri", "cookie_secret")
PROVIDER_KEYS = ("client_id", "client_secret", "server_metadata_url")


def auth_missing(auth: Mapping[str, object]) -> list[str]:
    """What an ``[auth]`` table (Streamlit's OIDC login, ``st.login``) lacks to work: the names of the
    missing keys, empty when complete. It needs ``redirect_uri`` and ``cookie_secret``, and
    ``client_id``, ``client_secret`` and ``server_metadata_url`` directly or in one named provider table
    (``[auth.google]``). An empty or partial table must not count as a login: it would unlock a
    non-local address with no working authentication."""
    missing = [k for k in AUTH_KEYS if not auth.get(k)]
    providers = [auth, *(v for v in auth.values() if isinstance(v, Mapping))]
    best = min(([k for k in PROVIDER_KEYS if not p.get(k)] for p in providers), key=len)
    return missing + best


__all__ = [
    "AUTH_KEYS",
    "PROVIDER_KEYS",
    "AlertSettings",
    "CheckSettings",
    "QueueSettings",
    "ReplaySettings",
    "SeverityName",
    "WorkerSettings",
    "auth_missing",
    "check_http",
    "dsn_problem",
    "is_loopback",
    "web_url_masked",
]
