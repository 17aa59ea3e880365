"""Effective configuration: one ``Settings`` object, built once by the entry point and passed down.

Precedence (highest first): explicit keyword arguments, environment variables with the
``REWRITE_MONITOR_`` prefix (plus the conventional ``DATABASE_URL``), the TOML file given with
``--config`` (or ``REWRITE_MONITOR_CONFIG``), then the defaults below, which run with nothing set.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from monitor.errors import ConfigError

DEFAULT_DATABASE_URL = "sqlite:///rewrite-monitor.db"


class Settings(BaseSettings):
    """Every setting of rewrite-monitor, with defaults that work on a fresh machine.

    Raises ``ConfigError`` (through :func:`load_settings`) naming the setting and value when a value
    is invalid.
    """

    model_config = SettingsConfigDict(
        env_prefix="REWRITE_MONITOR_", extra="forbid", populate_by_name=True, validate_default=True
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
        default=1 << 20, ge=1024, description="Longer log lines are quarantined as line_too_long."
    )
    rules_dir: Path | None = Field(default=None, description="Rules folder; default: the bundled rules/.")
    spacy_model: str | None = Field(
        default=None, description="A trained spaCy pipeline to use instead of the blank tokenizer."
    )
    sample_seed: str = Field(
        default="rewrite-monitor", min_length=1, description="Seed of every sampling draw (check and queue)."
    )
    check_rate: float = Field(default=1.0, gt=0, le=1, description="Share of rewrites checked.")
    queue_budget: int = Field(default=40, ge=1, description="Queue items admitted per day.")
    queue_min_severity: Literal["low", "medium", "high"] = Field(
        default="medium", description="Lowest finding severity that reaches the queue."
    )
    control_share: float = Field(
        default=0.05, ge=0, le=1, description="Share of the budget for the control sample."
    )
    control_min: int = Field(default=2, ge=0, description="Control items a day at least.")
    per_conversation_cap: int = Field(default=3, ge=1, description="Queue items per conversation per day.")
    claim_lease_minutes: float = Field(default=10, gt=0, description="A claim expires after this long.")
    review_sla_hours: float = Field(
        default=24, gt=0, description="An item is due this long after its day ends."
    )

    # worker (issue: scheduled worker, alerts, scale-out)
    worker_interval_minutes: float = Field(default=5, gt=0, description="Minutes between worker cycles.")
    daily_time: str = Field(default="06:00", pattern=r"^\d{2}:\d{2}$", description="Time of the daily job.")
    timezone: str = Field(default="UTC", description="IANA zone of daily_time.")
    retention_days: int = Field(default=30, ge=1, description="Transcripts older than this are deleted.")
    log_json: bool = Field(default=False, description="Structured JSON logs.")
    sentry_dsn: SecretStr | None = Field(
        default=None, description="Sentry DSN; none: alerts go to log and table."
    )
    sentry_environment: str = Field(default="production", description="Sentry environment tag.")
    alert_min_severity: Literal["low", "medium", "high"] = Field(
        default="high", description="Findings at or above this count towards the fabrication rate."
    )
    alert_window_minutes: float = Field(default=60, gt=0, description="Alert window, in event time.")
    alert_baseline_days: float = Field(default=7, gt=0, description="Trailing baseline before the window.")
    alert_min_rewrites: int = Field(default=200, ge=1, description="Rewrites a window needs to alert.")
    alert_min_flagged: int = Field(default=5, ge=1, description="Flagged rewrites a window needs to alert.")
    alert_factor: float = Field(
        default=1.0, ge=1, description="Alert when window lower bound > factor x baseline upper bound."
    )
    alert_ceiling: float | None = Field(
        default=None, gt=0, le=1, description="Absolute rate that always alerts."
    )
    alert_cooldown_hours: float = Field(default=6, ge=0, description="No repeat alert per group within this.")
    cron_monitor_slug: str = Field(default="rewrite-monitor-cycle", description="Sentry Crons monitor slug.")
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
    replay_timeout_seconds: float = Field(default=60, gt=0, description="Per-case timeout of a replay call.")
    replay_max_retries: int = Field(
        default=4, ge=0, le=10, description="Retries (with backoff) of a replay call on 429/529/5xx."
    )
    replay_prices_file: Path | None = Field(
        default=None, description="Price table of replay's cost line; default: monitor/prices.yaml."
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


def load_settings(config_file: Path | None = None, **overrides: Any) -> Settings:
    """Build the effective settings from the environment, an optional TOML file and overrides.

    ``overrides`` with value ``None`` are ignored, so CLI options can be passed through as they are.
    Raises ``ConfigError`` when the file is missing or unreadable, or a value is invalid.
    """
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
    except SettingsError as exc:  # a complex value (e.g. sources) that is not valid JSON
        raise ConfigError(
            f"invalid configuration: {exc}; lists are given as JSON, e.g. '[\"logs/*.jsonl\"]'"
        ) from exc
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'settings'}: {err['msg']} (got {err.get('input')!r})"
            for err in exc.errors()
        )
        where = f" in {config_file}" if config_file else ""
        raise ConfigError(f"invalid configuration{where}: {problems}") from exc


def masked_url(url: str) -> str:
    """``url`` with its password replaced by ``***`` (for display and logs)."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def effective_config(settings: Settings) -> dict[str, Any]:
    """The settings as a plain dict for display, with secrets masked."""
    out: dict[str, Any] = {}
    for name in Settings.model_fields:
        value = getattr(settings, name)
        if name == "database_url":
            value = masked_url(value.get_secret_value())
        elif isinstance(value, SecretStr):
            value = "***" if value.get_secret_value() else ""
        elif isinstance(value, Path):
            value = str(value)
        out[name] = value
    return out
