"""The typed views of the settings (``settings.queue``, ``.alerts``, ``.worker``, ``.replay``) carry
exactly the flat values, which stay the settings' source of truth."""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest

from monitor.setting_groups import AlertSettings, QueueSettings, ReplaySettings, WorkerSettings
from monitor.settings import ENV_PREFIX, Settings

# prefix of the flat fields -> the view holding every one of them, under its name without the prefix
PREFIXES = {"queue_": "queue", "alert_": "alerts", "worker_": "worker", "replay_": "replay"}
GROUPS: dict[str, type[pydantic.BaseModel]] = {
    "queue": QueueSettings,
    "alerts": AlertSettings,
    "worker": WorkerSettings,
    "replay": ReplaySettings,
}
# Every value differs from its default, so a view reading the wrong field (or a default) shows.
CHANGED = Settings(
    queue_budget=17,
    queue_min_severity="high",
    control_share=0.25,
    control_min=4,
    per_conversation_cap=2,
    sample_seed="other",
    check_rate=0.5,
    review_sla_hours=12,
    claim_lease_minutes=3,
    reviews_per_item=3,
    double_review_share=0.2,
    alert_min_severity="medium",
    alert_window_minutes=30,
    alert_baseline_days=3,
    alert_min_rewrites=50,
    alert_min_flagged=2,
    alert_factor=1.5,
    alert_ceiling=0.2,
    alert_cooldown_hours=1,
    worker_interval_minutes=2,
    daily_time="05:15",
    timezone="Europe/Dublin",
    retention_days=9,
    cron_monitor_slug="slug",
    replay_model="claude-haiku-4-5",
    replay_max_tokens=64,
    replay_timeout_seconds=5,
    replay_max_retries=1,
    replay_prices_file=Path("prices.yaml"),
)


def source(group: str, name: str) -> str:
    """The flat field a view's field is read from: the prefixed name when there is one."""
    prefix = next((p for p, g in PREFIXES.items() if g == group), "")
    return prefix + name if prefix + name in Settings.model_fields else name


def test_a_keyword_argument_reaches_its_view() -> None:
    assert Settings(queue_budget=7).queue.budget == 7


def test_two_fields_by_hand() -> None:
    assert CHANGED.queue.min_severity == "high"
    assert CHANGED.alerts.cooldown_hours == 1.0


@pytest.mark.parametrize("settings", [Settings(), CHANGED], ids=["defaults", "changed"])
def test_views_carry_exactly_the_flat_values(settings: Settings) -> None:
    for group, cls in GROUPS.items():
        view = getattr(settings, group)
        assert isinstance(view, cls)
        assert view.model_dump() == {
            name: getattr(settings, source(group, name)) for name in cls.model_fields
        }


def test_every_prefixed_field_is_in_its_group() -> None:
    for name in Settings.model_fields:
        group = next((g for p, g in PREFIXES.items() if name.startswith(p)), None)
        if group is not None:
            short = name.removeprefix(next(p for p, g in PREFIXES.items() if g == group))
            assert short in GROUPS[group].model_fields, f"{name} is not in settings.{group}"
            assert getattr(getattr(CHANGED, group), short) == getattr(CHANGED, name)


def test_every_view_field_names_a_setting() -> None:
    for group, cls in GROUPS.items():
        for name in cls.model_fields:
            assert source(group, name) in Settings.model_fields, f"settings.{group}.{name}"


def test_docstrings_name_each_fields_environment_variable() -> None:
    for group, cls in GROUPS.items():
        for name in cls.model_fields:
            env = f"{ENV_PREFIX}{source(group, name)}".upper()
            assert f"``{name}``: ``{source(group, name)}`` (``{env}``)" in (cls.__doc__ or "")


def test_views_are_frozen_and_cached() -> None:
    settings = Settings()
    assert settings.queue is settings.queue
    with pytest.raises(pydantic.ValidationError):
        settings.queue.budget = 1  # type: ignore[misc]


def test_views_are_not_settings() -> None:
    # Not fields: no environment variable, TOML key or `config show` line of their own.
    assert not set(GROUPS) & set(Settings.model_fields)
    assert set(Settings().model_dump()) == set(Settings.model_fields)
