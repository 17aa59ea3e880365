"""Effective configuration: one ``Settings`` object, built once by the entry point and passed down.

Precedence (highest first): explicit keyword arguments, environment variables with the
``REWRITE_MONITOR_`` prefix (plus the conventional ``DATABASE_URL``), the TOML file given with
``--config`` (or ``REWRITE_MONITOR_CONFIG``), then the defaults below, which run with nothing set.
A ``REWRITE_MONITOR_*`` variable that names no setting is an error, like an unknown key in the file,
except the few read elsewhere (:data:`NON_SETTING_ENV_VARS`).
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    AliasChoices,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from monitor.errors import ConfigError
from monitor.otel.mapping import REWRITE_SPAN_NAMES, MappingRules
from monitor.otel.shapes import CONDENSE_TEMPLATES, template_pattern
from monitor.sampling import DEFAULT_SEED
from monitor.setting_groups import AUTH_KEYS as AUTH_KEYS
from monitor.setting_groups import PROVIDER_KEYS as PROVIDER_KEYS
from monitor.setting_groups import (
    AlertSettings,
    CheckSettings,
    QueueSettings,
    ReplaySettings,
    WorkerSettings,
    check_http,
    dsn_problem,
    web_url_masked,
)
from monitor.setting_groups import auth_missing as auth_missing
from monitor.setting_groups import is_loopback as is_loopback
from monitor.text import ambiguous_userinfo, mask_url

# ``auth_missing``, ``is_loopback`` and their keys live in monitor.setting_groups (they need no Settings)
# and are re-exported (the ``x as x`` imports above): the dashboard and the CLI import them from here.

DEFAULT_DATABASE_URL = "sqlite:///rewrite-monitor.db"
ENV_PREFIX = "REWRITE_MONITOR_"

# REWRITE_MONITOR_* variables that are read elsewhere and are not settings. Any other variable with
# the prefix that names no setting is an error (a typo would otherwise be ignored silently), so a new
# variable of this kind must be added here.
NON_SETTING_ENV_VARS = frozenset(
    {
        "REWRITE_MONITOR_CONFIG",  # the TOML file: --config (monitor/cli.py), dashboard/resources.py
        "REWRITE_MONITOR_TEST_PG_URL",  # tests/conftest.py: the test suite's PostgreSQL server
        "REWRITE_MONITOR_REQUIRE_PG",  # tests/conftest.py, .ci/run: an unreachable server fails
        "REWRITE_MONITOR_SHARED_DATA",  # tests/conftest.py, benchmarks/run.py: the shared corpus
        "REWRITE_MONITOR_TEST_ARTIFACTS",  # tests/e2e/test_browser.py: where screenshots go
        "REWRITE_MONITOR_UPDATE_DOCS",  # tests/e2e/test_browser.py: refresh the docs' screenshots
    }
)

# Upper bounds of the duration and count settings. Every duration ends up in a ``timedelta`` or a
# date (a due date, a retention cut-off, a scheduler interval), which overflows far beyond these; the
# bounds are generous limits of what still means something, not tuning advice.
MINUTES_PER_DAY = 24 * 60
HOURS_PER_YEAR = 365 * 24
MAX_PER_DAY = 1_000_000  # queue items a day: far beyond what reviewers can label
MAX_COUNT = 1_000_000_000  # rewrites in an alert window
SECRET_SETTINGS = frozenset(
    {
        "database_url",
        "sentry_dsn",
        "anthropic_api_key",
        "redact_key",
        "alert_webhook_url",
        "alert_webhook_secret",
        "alert_slack_webhook_url",
        "alert_pagerduty_key",
        "langfuse_secret_key",
    }
)


class Settings(BaseSettings):
    """Every setting of rewrite-monitor, with defaults that work on a fresh machine.

    Raises ``ConfigError`` (through :func:`load_settings`) naming the setting and value when a value
    is invalid (secret values are masked or left out). Numbers are finite and bounded above: durations
    end up in dates and timedeltas, which overflow (a traceback mid-job) far beyond the bounds.

    The flat fields are the settings (environment names, TOML keys, ``config show``); :attr:`queue`,
    :attr:`alerts`, :attr:`worker` and :attr:`replay` are typed, frozen views of the groups a stage
    reads (``monitor.setting_groups``), built from the flat fields on first use. They are not
    rebuilt: treat a ``Settings`` as read-only once built.
    """

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        extra="forbid",
        populate_by_name=True,
        validate_default=True,
        # inf passes ``gt=0`` and crashes date arithmetic much later; rejecting non-finite floats
        # up front also covers float settings without an upper bound, with a clearer message.
        allow_inf_nan=False,
    )

    database_url: SecretStr = Field(
        default=SecretStr(DEFAULT_DATABASE_URL),
        validation_alias=AliasChoices("REWRITE_MONITOR_DATABASE_URL", "DATABASE_URL", "database_url"),
        description="SQLAlchemy URL of the store. Default: a SQLite file in the working directory.",
    )
    sources: list[str] = Field(
        default_factory=list, description="Paths or globs that `run` ingests when given no PATH."
    )
    source_name: str = Field(default="default", description="Label stored with each ingested event.")
    batch_size: int = Field(default=1000, ge=1, le=100_000, description="Lines per ingest transaction.")
    max_line_bytes: int = Field(
        default=1 << 20,
        ge=1024,
        le=1 << 30,
        description="Longer log lines are quarantined as line_too_long. At most 1 GiB: a line is read "
        "into memory in chunks of this size.",
    )
    rules_dir: Path | None = Field(default=None, description="Rules folder; default: the bundled rules/.")
    spacy_model: str | None = Field(
        default=None, description="A trained spaCy pipeline to use instead of the blank tokenizer."
    )
    sample_seed: str = Field(
        default=DEFAULT_SEED, min_length=1, description="Seed of every sampling draw (check and queue)."
    )
    redact_at_ingest: bool = Field(
        default=False,
        description="Store events with personal details already replaced by keyed placeholders "
        "(<EMAIL_3f9a0c12>), for deployments that may not keep raw transcripts; needs redact_key.",
    )
    redact_key: SecretStr | None = Field(
        default=None,
        description="Secret that keys the placeholders of redact_at_ingest: the same value gets the same "
        "placeholder in every event (at least 16 characters; keep it, or later events will not match).",
    )
    outbound_ids: Literal["hash_personal", "hash_all", "raw"] = Field(
        default="hash_personal",
        description="What alerts (Sentry, webhook, Slack, PagerDuty), the worker's log and the OTLP "
        "evaluation records carry for a request or conversation id: hash_personal replaces an id in which "
        "the redactor finds personal data (an e-mail, a phone number) by a keyed hash pid_..., hash_all "
        "every id, raw none. `rewrite-monitor show pid_...` finds the request again.",
    )
    otel_rewrite_span_names: list[str] = Field(
        default_factory=lambda: list(REWRITE_SPAN_NAMES),
        description="Shell patterns (case-insensitive) of the rewrite span's name in OpenTelemetry traces, "
        "after a span marked rewrite_monitor.step = rewrite; default none: the rewrite is the model call "
        "whose output a retriever searched for, or the one holding a condense prompt.",
    )
    otel_condense_templates: list[str] = Field(
        default_factory=list,
        description="Your own condense prompts, each with {chat_history} and {question}, read in traces "
        "that hold only the rendered text (OpenTelemetry GenAI instrumentation alone); after the built-in "
        "LlamaIndex and LangChain ones.",
    )
    check_rate: float = Field(default=1.0, gt=0, le=1, description="Share of rewrites checked.")
    check_workers: int | None = Field(
        default=None,
        ge=1,
        le=256,
        description="Processes grading the check phase (`run`, `check`, the worker) in jobs of 5,000+ "
        "rewrites; unset: the cores the load leaves free, capped by memory at 512 MB each. 1: this process.",
    )
    checks: dict[str, CheckSettings] = Field(
        default_factory=dict,
        description="Per check id (`rewrite-monitor checks list`): `enabled = false` turns a check off (not "
        "run, not among the current checks, so run, evaluate and coverage leave it out); `min_severity` is "
        "the lowest severity of its findings that reaches the review queue (all are still stored, listed "
        "and counted in the rates). In TOML a table per check ([checks.topic_shift]); in the "
        'environment JSON (\'{"topic_shift": {"enabled": false}}\'). An unknown id is an error.',
    )
    learn_from_verdicts: bool = Field(
        default=True,
        description="Grade each rewriter's added and lost words with what the reviewers' verdicts on them "
        "taught (`rewrite-monitor rules learned`); off: the rules files alone.",
    )
    queue_budget: int = Field(
        default=40, ge=1, le=MAX_PER_DAY, description="Queue items admitted per day (at most 1,000,000)."
    )
    queue_min_severity: Literal["low", "medium", "high"] = Field(
        default="medium", description="Lowest finding severity that reaches the queue."
    )
    control_share: float = Field(
        default=0.05, ge=0, le=1, description="Share of the budget for the control sample."
    )
    control_min: int = Field(
        default=2, ge=0, le=MAX_PER_DAY, description="Control items a day at least (at most 1,000,000)."
    )
    per_conversation_cap: int = Field(
        default=3,
        ge=1,
        le=MAX_PER_DAY,
        description="Queue items per conversation per day (at most 1,000,000, the budget's bound).",
    )
    reviews_per_item: int = Field(
        default=1,
        ge=1,
        le=5,
        description="Distinct reviewers whose verdicts finish a queue item (1: one verdict each).",
    )
    double_review_share: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description="Share of the daily sample (controls and flagged alike) also reviewed blind by a second "
        "reviewer, for the agreement figures (stats --agreement). 0.2 is a common choice.",
    )
    claim_lease_minutes: float = Field(
        default=10,
        gt=0,
        le=7 * MINUTES_PER_DAY,
        description="A claim expires after this many minutes. At most a week: a claim held longer is "
        "abandoned, not being worked on.",
    )
    review_sla_hours: float = Field(
        default=24,
        gt=0,
        le=HOURS_PER_YEAR,
        description="An item is due this many hours after its day ends. At most a year (8760): a later "
        "due date is no deadline.",
    )

    # worker (issue: scheduled worker, alerts, scale-out)
    worker_interval_minutes: float = Field(
        default=5,
        gt=0,
        le=MINUTES_PER_DAY,
        description="Minutes between worker cycles. At most a day (1440): cycles feed the alerts, and "
        "the daily job has its own schedule.",
    )
    daily_time: str = Field(default="06:00", pattern=r"^\d{2}:\d{2}$", description="Time of the daily job.")
    timezone: str = Field(default="UTC", description="IANA zone of daily_time.")
    retention_days: int = Field(
        default=30,
        ge=1,
        le=36_500,
        description="Transcripts older than this many days are deleted. At most 36500 (a century: "
        "keep them for good).",
    )
    log_json: bool = Field(default=False, description="Structured JSON logs.")
    sentry_dsn: SecretStr | None = Field(
        default=None, description="Sentry DSN; none: alerts go to log and table."
    )
    sentry_environment: str = Field(default="production", description="Sentry environment tag.")
    alert_min_severity: Literal["low", "medium", "high"] = Field(
        default="high", description="Findings at or above this count towards the fabrication rate."
    )
    alert_window_minutes: float = Field(
        default=60,
        gt=0,
        le=7 * MINUTES_PER_DAY,
        description="Alert window in minutes of event time. At most a week (10080): a longer window "
        "reports a spike too late to act on.",
    )
    alert_baseline_days: float = Field(
        default=7,
        gt=0,
        le=365,
        description="Trailing baseline before the window, in days. At most a year: an older baseline "
        "describes another system.",
    )
    alert_min_rewrites: int = Field(
        default=200, ge=1, le=MAX_COUNT, description="Rewrites a window needs to alert (at most 10^9)."
    )
    alert_min_flagged: int = Field(
        default=5, ge=1, le=MAX_COUNT, description="Flagged rewrites a window needs to alert (at most 10^9)."
    )
    alert_factor: float = Field(
        default=1.0,
        ge=1,
        le=1000,
        description="Alert when window lower bound > factor x baseline upper bound. At most 1000: rates "
        "are at most 1, so a larger factor could alert only on a baseline below 0.1%.",
    )
    alert_ceiling: float | None = Field(
        default=None, gt=0, le=1, description="Absolute rate that always alerts."
    )
    alert_cooldown_hours: float = Field(
        default=6,
        ge=0,
        le=HOURS_PER_YEAR,
        description="No repeat alert per group within this many hours. At most a year (8760).",
    )
    alert_webhook_url: SecretStr | None = Field(
        default=None,
        description="URL that receives every alert and recovery as JSON (POST), signed with "
        "alert_webhook_secret; none: no webhook. Secret: it may carry a token.",
    )
    alert_webhook_secret: SecretStr | None = Field(
        default=None,
        description="HMAC-SHA256 key of the webhook's X-Rewrite-Monitor-Signature header; required with "
        "alert_webhook_url.",
    )
    alert_slack_webhook_url: SecretStr | None = Field(
        default=None, description="Slack incoming-webhook URL for alerts and recoveries; none: no Slack."
    )
    alert_pagerduty_key: SecretStr | None = Field(
        default=None,
        description="PagerDuty Events API v2 routing (integration) key: alerts trigger, recoveries "
        "resolve; none: no PagerDuty.",
    )
    alert_pagerduty_url: str = Field(
        default="https://events.pagerduty.com/v2/enqueue", description="PagerDuty Events API v2 endpoint."
    )
    cron_monitor_slug: str = Field(default="rewrite-monitor-cycle", description="Sentry Crons monitor slug.")
    # findings written back to Langfuse (`findings --langfuse`)
    langfuse_host: str = Field(default="https://cloud.langfuse.com", description="Langfuse base URL.")
    langfuse_public_key: str | None = Field(default=None, description="Langfuse project public key.")
    langfuse_secret_key: SecretStr | None = Field(default=None, description="Langfuse project secret key.")
    # dashboard
    reviewer_name: str | None = Field(
        default=None, description="Reviewer identity when no login is configured."
    )
    dashboard_address: str = Field(default="127.0.0.1", description="Dashboard bind address.")
    dashboard_port: int = Field(default=8501, ge=1, le=65535, description="Dashboard port.")
    # replay
    anthropic_api_key: SecretStr | None = Field(
        default=None,
        validation_alias=AliasChoices(
            "REWRITE_MONITOR_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY", "anthropic_api_key"
        ),
        description="API key for replay (ANTHROPIC_API_KEY).",
    )
    replay_model: str = Field(default="claude-sonnet-5", description="Model the replay rewriter calls.")
    replay_max_tokens: int = Field(
        default=512, ge=16, le=8192, description="max_tokens per replayed rewrite."
    )
    replay_timeout_seconds: float = Field(
        default=60,
        gt=0,
        le=3600,
        description="Per-case timeout of a replay call, in seconds. At most an hour: a call that slow "
        "has failed.",
    )
    replay_max_retries: int = Field(
        default=4, ge=0, le=10, description="Retries (with backoff) of a replay call on 429/529/5xx."
    )
    replay_prices_file: Path | None = Field(
        default=None, description="Price table of replay's cost line; default: monitor/prices.yaml."
    )

    @property
    def ingest_redact_key(self) -> bytes | None:
        """The key ingest redacts events with, or None when ``redact_at_ingest`` is off."""
        if not self.redact_at_ingest:
            return None
        assert self.redact_key is not None  # checked by _redaction_has_a_key
        return self.redact_key.get_secret_value().encode()

    @property
    def trace_rules(self) -> MappingRules:
        """How ingest finds the rewrite in a trace: the span name patterns, then the built-in condense
        templates followed by the user's (``monitor.otel.mapping``)."""
        return MappingRules(
            span_names=tuple(self.otel_rewrite_span_names),
            condense_templates=(*CONDENSE_TEMPLATES, *self.otel_condense_templates),
        )

    @field_validator("otel_condense_templates")
    @classmethod
    def _condense_templates_compile(cls, v: list[str]) -> list[str]:
        for template in v:
            template_pattern(template)  # ValueError names the template that lacks a placeholder
        return v

    @field_validator("redact_key")
    @classmethod
    def _redaction_has_a_key(cls, v: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        if info.data.get("redact_at_ingest") and (v is None or len(v.get_secret_value().strip()) < 16):
            raise ValueError(
                "redact_at_ingest needs redact_key, a secret of at least 16 characters other than "
                "spaces: it keys the placeholders, so a value gets the same one in every event"
            )
        return v

    @cached_property
    def queue(self) -> QueueSettings:
        """Queue admission and claims: ``queue_*`` without the prefix, and the other settings it reads."""
        return QueueSettings(
            budget=self.queue_budget,
            min_severity=self.queue_min_severity,
            control_share=self.control_share,
            control_min=self.control_min,
            per_conversation_cap=self.per_conversation_cap,
            sample_seed=self.sample_seed,
            check_rate=self.check_rate,
            review_sla_hours=self.review_sla_hours,
            claim_lease_minutes=self.claim_lease_minutes,
            reviews_per_item=self.reviews_per_item,
            double_review_share=self.double_review_share,
            checks=self.checks,
        )

    @cached_property
    def alerts(self) -> AlertSettings:
        """The fabrication-rate alerts: ``alert_*`` without the prefix."""
        return AlertSettings(
            min_severity=self.alert_min_severity,
            window_minutes=self.alert_window_minutes,
            baseline_days=self.alert_baseline_days,
            min_rewrites=self.alert_min_rewrites,
            min_flagged=self.alert_min_flagged,
            factor=self.alert_factor,
            ceiling=self.alert_ceiling,
            cooldown_hours=self.alert_cooldown_hours,
            webhook_url=self.alert_webhook_url,
            webhook_secret=self.alert_webhook_secret,
            slack_webhook_url=self.alert_slack_webhook_url,
            pagerduty_key=self.alert_pagerduty_key,
            pagerduty_url=self.alert_pagerduty_url,
        )

    @cached_property
    def worker(self) -> WorkerSettings:
        """The worker's schedule: ``worker_*`` without the prefix, and the other settings it reads."""
        return WorkerSettings(
            interval_minutes=self.worker_interval_minutes,
            daily_time=self.daily_time,
            timezone=self.timezone,
            retention_days=self.retention_days,
            cron_monitor_slug=self.cron_monitor_slug,
        )

    @cached_property
    def replay(self) -> ReplaySettings:
        """Replay: ``replay_*`` without the prefix (the API key stays here, on ``Settings``)."""
        return ReplaySettings(
            model=self.replay_model,
            max_tokens=self.replay_max_tokens,
            timeout_seconds=self.replay_timeout_seconds,
            max_retries=self.replay_max_retries,
            prices_file=self.replay_prices_file,
        )

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, v: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"unknown time zone {v!r}; use an IANA name such as 'Europe/Dublin' or 'UTC'"
            ) from None
        return v

    @field_validator("daily_time")
    @classmethod
    def _clock_time(cls, v: str) -> str:
        hours, minutes = (int(x) for x in v.split(":"))
        if hours > 23 or minutes > 59:
            raise ValueError(f"{v!r} is not a time of day (HH:MM, 00:00 to 23:59)")
        return v

    @field_validator("database_url")
    @classmethod
    def _known_backend(cls, v: SecretStr) -> SecretStr:
        url = v.get_secret_value()
        if not url.startswith(("sqlite", "postgresql")):
            raise ValueError("only sqlite:// and postgresql:// URLs are supported")
        # Checked here, not when the engine is built: a bad port or a driver that is not installed
        # would otherwise surface mid-command as a traceback. urllib, not SQLAlchemy, so loading the
        # settings stays light for commands that never open the store. Messages never quote the URL.
        from urllib.parse import urlsplit

        if ambiguous_userinfo(url):
            # libpq would take the part after the raw character for the host and name it in its error
            raise ValueError(
                "the user, password or query holds a raw '@' (or the password a raw '/'): percent-encode "
                "it (%40, %2F)"
            )
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - reading the port raises for a non-number
        except ValueError:
            raise ValueError("not a database URL (scheme://user:password@host:port/database)") from None
        if parts.scheme not in ("sqlite", "sqlite+pysqlite", "postgresql", "postgresql+psycopg"):
            raise ValueError(
                f"driver {parts.scheme!r} is not supported: use sqlite:// or postgresql:// "
                "(psycopg 3 is installed with rewrite-monitor)"
            )
        return v

    @field_validator("alert_webhook_url", "alert_slack_webhook_url")
    @classmethod
    def _http_url(cls, v: SecretStr | None) -> SecretStr | None:
        """An alert destination is an http(s) URL with a host; the message never quotes it (it is a
        secret: Slack's URL is its own token)."""
        if v is None or not v.get_secret_value():
            return None
        check_http(v.get_secret_value())
        return v

    @field_validator("alert_pagerduty_url", "langfuse_host")
    @classmethod
    def _plain_http_url(cls, v: str) -> str:
        check_http(v)
        return v

    @field_validator("alert_webhook_secret")
    @classmethod
    def _webhook_has_a_secret(cls, v: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        """A webhook without a signing secret would let anyone who finds its URL forge alerts."""
        url = info.data.get("alert_webhook_url")
        if url is not None and url.get_secret_value() and (v is None or len(v.get_secret_value()) < 16):
            raise ValueError("alert_webhook_url needs alert_webhook_secret of 16 characters or more")
        return v

    @field_validator("sentry_dsn")
    @classmethod
    def _parsable_dsn(cls, v: SecretStr | None) -> SecretStr | None:
        """Reject a DSN the SDK would refuse at ``sentry_sdk.init`` (a traceback in the worker).

        The message gives a fixed reason only: the SDK's own (``BadDsn``) can quote parts of the DSN,
        which holds the project's key.
        """
        if v is None or not v.get_secret_value():
            return v  # empty: Sentry stays off, as without a DSN
        from sentry_sdk.utils import Dsn

        try:
            Dsn(v.get_secret_value())
        except ValueError as exc:  # BadDsn, or urllib's ValueError for a bad port or IPv6 host
            raise ValueError(
                f"not a Sentry DSN: {dsn_problem(str(exc))}; expected "
                "https://<public key>@<host>/<project id>"
            ) from None
        return v

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_file = settings_cls.model_config.get("toml_file")
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if toml_file:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml_file))
        return tuple(sources)


def setting_env_vars() -> dict[str, str]:
    """Every environment variable that sets a setting (upper case) -> the setting's name."""
    names: dict[str, str] = {}
    for name, field in Settings.model_fields.items():
        names[f"{ENV_PREFIX}{name}".upper()] = name
        alias = field.validation_alias
        choices = alias.choices if isinstance(alias, AliasChoices) else [alias] if alias else []
        names.update({c.upper(): name for c in choices if isinstance(c, str)})
    return names


def check_env_names(environ: Mapping[str, str] | None = None) -> None:
    """Raise ``ConfigError`` naming every ``REWRITE_MONITOR_*`` variable that is no setting.

    Such a variable is almost always a misspelt setting, which would otherwise be ignored; the same
    typo in the TOML file is already an error. Names compare case-insensitively, as pydantic-settings
    reads them; :data:`NON_SETTING_ENV_VARS` are allowed. The message suggests the closest setting's
    variable when one is similar; values are never shown (some are secrets).
    """
    environ = os.environ if environ is None else environ
    known = set(setting_env_vars()) | NON_SETTING_ENV_VARS
    # Compared without the prefix: it is shared by every name and would make anything look close.
    suffixes = {k.removeprefix(ENV_PREFIX): k for k in known if k.startswith(ENV_PREFIX)}
    problems = []
    for var in sorted(environ):
        if not var.upper().startswith(ENV_PREFIX) or var.upper() in known:
            continue
        close = difflib.get_close_matches(var.upper().removeprefix(ENV_PREFIX), list(suffixes), n=1)
        hint = f" (did you mean {suffixes[close[0]]}?)" if close else ""
        problems.append(f"{var}{hint}")
    if problems:
        several = len(problems) > 1
        raise ConfigError(
            f"unknown environment variable{'s' if several else ''} {', '.join(problems)}: "
            f"{'no setting has these names' if several else 'no setting has this name'} "
            "(`rewrite-monitor config show` lists the settings' variables)"
        )


def _shown_input(field: str | None, value: Any) -> str:
    """How an invalid value appears in an error message: secrets never in clear."""
    if field == "database_url" and isinstance(value, str):
        return f" (got {mask_url(value)!r})"
    if field in SECRET_SETTINGS:
        return ""
    if field in ("alert_pagerduty_url", "langfuse_host") and isinstance(value, str):
        return f" (got {web_url_masked(value)!r})"
    return f" (got {value!r})"


def load_settings(config_file: Path | None = None, **overrides: Any) -> Settings:
    """Build the effective settings from the environment, an optional TOML file and overrides.

    ``overrides`` with value ``None`` are ignored, so CLI options can be passed through as they are.
    Raises ``ConfigError`` when the file is missing or unreadable, a value is invalid (the message
    names the setting; secret values are masked), or a ``REWRITE_MONITOR_*`` environment variable
    names no setting (:func:`check_env_names`).
    """
    check_env_names()
    clean = {k: v for k, v in overrides.items() if v is not None}
    cls: type[Settings] = Settings
    if config_file is not None:
        if not config_file.is_file():
            raise ConfigError(f"config file not found: {config_file}")
        try:
            with config_file.open("rb") as fh:
                tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{config_file}: invalid TOML: {exc}") from exc

        class _FileSettings(Settings):
            model_config = SettingsConfigDict(toml_file=config_file)

        cls = _FileSettings
    try:
        return cls(**clean)
    except SettingsError as exc:  # a complex value (sources, checks) that is not valid JSON
        raise ConfigError(_json_setting_error(str(exc))) from exc
    except ValidationError as exc:
        by_env = setting_env_vars()
        problems, secret = [], False
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"]) or "settings"
            # pydantic reports an aliased field by its first alias (REWRITE_MONITOR_DATABASE_URL) even
            # when another one was set (DATABASE_URL): the setting's own name is right either way.
            field = by_env.get(loc.upper(), loc)
            if err["type"] == "extra_forbidden":
                # An unknown key is most often a misspelt setting, and a misspelt secret holds the
                # secret: never show its value, and treat the error as secret (no chained cause).
                close = difflib.get_close_matches(loc, list(Settings.model_fields), n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                problems.append(f"{field}: unknown setting{hint}; its value is not shown")
                secret = True
                continue
            secret = secret or field in SECRET_SETTINGS
            problems.append(f"{field}: {err['msg']}{_shown_input(field, err.get('input'))}")
        where = f" in {config_file}" if config_file else ""
        # The ValidationError quotes every input; chained, it would carry a secret into tracebacks.
        cause = None if secret else exc
        raise ConfigError(f"invalid configuration{where}: {'; '.join(problems)}") from cause


def _json_setting_error(message: str) -> str:
    """One line for a complex setting whose environment value is not JSON, naming its variable and the
    shape it takes (pydantic-settings says ``error parsing value for field "checks" from source
    "EnvSettingsSource"``)."""
    m = re.search(r'field "(\w+)"', message)
    if m is None or m.group(1) not in Settings.model_fields:
        return f"invalid configuration: {message}"
    name = m.group(1)
    var = f"{ENV_PREFIX}{name.upper()}"
    if name == "checks":
        example = '\'{"topic_shift": {"enabled": false}}\''
        return f"{var} is not valid JSON: tables are given as JSON, e.g. {example}"
    return f"{var} is not valid JSON: lists are given as JSON, e.g. '[\"logs/*.jsonl\"]'"


def effective_config(settings: Settings) -> dict[str, Any]:
    """The settings as a plain dict for display, with secrets masked (and the credentials of a URL that
    is not itself a secret)."""
    out: dict[str, Any] = {}
    for name in Settings.model_fields:
        value = getattr(settings, name)
        if name == "database_url":
            value = mask_url(value.get_secret_value())
        elif name in ("alert_pagerduty_url", "langfuse_host"):
            value = web_url_masked(value)
        elif isinstance(value, SecretStr):
            value = "***" if value.get_secret_value() else ""
        elif isinstance(value, Path):
            value = str(value)
        elif name == "checks":
            value = {check_id: choice.model_dump() for check_id, choice in value.items()}
        out[name] = value
    return out
