"""Settings validation: bounded numbers, Sentry DSNs and unknown REWRITE_MONITOR_* variables.

Every invalid setting is a one-line error at start-up (exit 2) naming the setting, never a traceback
later in the job that first uses the value (an ``OverflowError`` in date arithmetic, a ``BadDsn``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import annotated_types
import pytest
from typer.testing import CliRunner

from monitor.cli.main import app
from monitor.errors import ConfigError
from monitor.settings import NON_SETTING_ENV_VARS, Settings, check_env_names, load_settings
from tests.helpers import REPO

runner = CliRunner()

# A syntactically valid DSN; its public key must never appear in an error message.
KEY = "0123456789abcdef0123456789abcdef"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # Settings of the machine running the tests would change what these tests load.
    for var in list(os.environ):
        if var.upper().startswith("REWRITE_MONITOR_") and var.upper() not in NON_SETTING_ENV_VARS:
            monkeypatch.delenv(var)
    for var in ("DATABASE_URL", "ANTHROPIC_API_KEY", "REWRITE_MONITOR_CONFIG"):
        monkeypatch.delenv(var, raising=False)


def numeric_fields() -> dict[str, Any]:
    """Every int or float setting (optional ones included) -> its pydantic field."""
    return {
        n: f
        for n, f in Settings.model_fields.items()
        if any(t in (int, float) for t in (f.annotation, *getattr(f.annotation, "__args__", ())))
    }


def upper_bound(field: Any) -> float:
    return next(m.le for m in field.metadata if isinstance(m, annotated_types.Le))


def is_float(field: Any) -> bool:
    return float in (field.annotation, *getattr(field.annotation, "__args__", ()))


# -- 1. numbers: finite and bounded ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("env", "value", "message"),
    [
        ("REVIEW_SLA_HOURS", "inf", "review_sla_hours: Input should be a finite number (got 'inf')"),
        (
            "REVIEW_SLA_HOURS",
            "1e9",
            "review_sla_hours: Input should be less than or equal to 8760 (got '1e9')",
        ),
        (
            "ALERT_WINDOW_MINUTES",
            "inf",
            "alert_window_minutes: Input should be a finite number (got 'inf')",
        ),
        (
            "ALERT_BASELINE_DAYS",
            "1e12",
            "alert_baseline_days: Input should be less than or equal to 365 (got '1e12')",
        ),
        (
            "ALERT_COOLDOWN_HOURS",
            "inf",
            "alert_cooldown_hours: Input should be a finite number (got 'inf')",
        ),
        (
            "WORKER_INTERVAL_MINUTES",
            "inf",
            "worker_interval_minutes: Input should be a finite number (got 'inf')",
        ),
        (
            "RETENTION_DAYS",
            "99999999",
            "retention_days: Input should be less than or equal to 36500 (got '99999999')",
        ),
        ("CLAIM_LEASE_MINUTES", "-inf", "claim_lease_minutes: Input should be a finite number (got '-inf')"),
        ("CHECK_RATE", "nan", "check_rate: Input should be a finite number (got 'nan')"),
        ("ALERT_FACTOR", "nan", "alert_factor: Input should be a finite number (got 'nan')"),
        (
            "MAX_LINE_BYTES",
            "100000000000000000000",
            "max_line_bytes: Input should be less than or equal to 1073741824 (got '100000000000000000000')",
        ),
    ],
)
@pytest.mark.parametrize(
    "command",
    [["config", "show"], ["run", "examples/"], ["worker", "run", "cycle"], ["worker", "run", "daily"]],
)
def test_out_of_range_numbers_are_one_line_errors(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: str, value: str, message: str, command: list[str]
) -> None:
    monkeypatch.setenv(f"REWRITE_MONITOR_{env}", value)
    monkeypatch.chdir(REPO)
    result = runner.invoke(app, ["--database-url", f"sqlite:///{tmp_path / 'x.db'}", *command])
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: invalid configuration: {message}\n"
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_every_numeric_setting_has_an_upper_bound() -> None:
    fields = numeric_fields()
    assert len(fields) >= 20  # the filter above still finds the settings
    assert [
        n for n, f in fields.items() if not any(isinstance(m, annotated_types.Le) for m in f.metadata)
    ] == []


@pytest.mark.parametrize("name", sorted(numeric_fields()))
def test_every_numeric_setting_rejects_values_beyond_its_bound(name: str) -> None:
    field = Settings.model_fields[name]
    bound = upper_bound(field)
    too_big = bound * 2 if is_float(field) else int(bound) + 1
    with pytest.raises(ConfigError) as exc:
        load_settings(**{name: too_big})
    assert str(exc.value) == (
        f"invalid configuration: {name}: Input should be less than or equal to {bound} (got {too_big!r})"
    )
    assert getattr(load_settings(**{name: bound}), name) == bound


@pytest.mark.parametrize("name", sorted(n for n, f in numeric_fields().items() if is_float(f)))
@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_every_float_setting_rejects_non_finite_values(name: str, value: float) -> None:
    with pytest.raises(
        ConfigError, match=rf"^invalid configuration: {name}: Input should be a finite number"
    ):
        load_settings(**{name: value})


def test_non_finite_values_in_the_config_file_are_rejected(tmp_path: Path) -> None:
    cfg = tmp_path / "rm.toml"
    cfg.write_text("review_sla_hours = inf\n")
    result = runner.invoke(app, ["--config", str(cfg), "config", "show"])
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: invalid configuration in {cfg}: review_sla_hours: Input should be a finite number "
        "(got inf)\n"
    )


@pytest.mark.slow
def test_the_jobs_run_with_every_bound_at_its_maximum(tmp_path: Path) -> None:
    """The bounds are below what overflows: ingest, check, queue, alerts and retention all run."""
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("REWRITE_MONITOR_")}
    env["REWRITE_MONITOR_DATABASE_URL"] = f"sqlite:///{tmp_path / 'max.db'}"
    for name, field in numeric_fields().items():
        if name not in ("dashboard_port", "replay_max_tokens", "replay_max_retries", "alert_ceiling"):
            env[f"REWRITE_MONITOR_{name.upper()}"] = str(upper_bound(field))

    def cli(*args: str, stdin: str = "") -> None:
        proc = subprocess.run(
            [sys.executable, "-m", "monitor", *args],
            env=env,
            cwd=REPO,
            capture_output=True,
            text=True,
            input=stdin,
        )
        assert proc.returncode == 0, (args, proc.stderr[-2000:])
        assert "Traceback" not in proc.stderr

    cli("db", "upgrade")
    cli("run", "examples/")
    cli("worker", "run", "cycle")
    cli("worker", "run", "daily")
    cli("review", stdin="q\n")  # claims an item for claim_lease_minutes


# -- 2. Sentry DSN ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("dsn", "reason"),
    [
        ("notadsn", "the scheme must be http or https"),
        (f"{KEY}@o1.ingest.sentry.io/1", "the scheme must be http or https"),
        (f"{KEY}:secret@o1.ingest.sentry.io/1", "the scheme must be http or https"),
        (f"https://{KEY}@o1.ingest.sentry.io/notnum", "the project id (the last path part) must be a number"),
        (f"https://{KEY}@o1.ingest.sentry.io/", "the project id (the last path part) must be a number"),
        ("https://o1.ingest.sentry.io/1", "it has no public key before the @"),
        (f"https://{KEY}@o1.ingest.sentry.io:port/1", "the port is not a number from 0 to 65535"),
        (f"https://{KEY}@[::1/1", "the host is not a valid IPv6 address"),
    ],
)
@pytest.mark.parametrize("command", [["config", "show"], ["worker", "run", "cycle"]])
def test_an_invalid_sentry_dsn_is_a_one_line_error_without_the_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, dsn: str, reason: str, command: list[str]
) -> None:
    monkeypatch.setenv("REWRITE_MONITOR_SENTRY_DSN", dsn)
    result = runner.invoke(app, ["--database-url", f"sqlite:///{tmp_path / 'x.db'}", *command])
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"error: invalid configuration: sentry_dsn: Value error, not a Sentry DSN: {reason}; "
        "expected https://<public key>@<host>/<project id>\n"
    )
    for part in (KEY, "secret", "notadsn", "notnum", "port"):
        assert part not in result.stderr.replace("the port is", "")


def test_an_invalid_dsn_does_not_travel_in_the_exception_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REWRITE_MONITOR_SENTRY_DSN", f"https://{KEY}@o1.ingest.sentry.io/notnum")
    with pytest.raises(ConfigError) as exc:
        load_settings()
    assert exc.value.__cause__ is None
    assert KEY not in repr(exc.value.__context__ or "")


@pytest.mark.parametrize(
    "dsn", [f"https://{KEY}@o1.ingest.sentry.io/42", f"http://{KEY}:s@localhost:9000/1", ""]
)
def test_valid_or_empty_sentry_dsns_are_accepted(monkeypatch: pytest.MonkeyPatch, dsn: str) -> None:
    monkeypatch.setenv("REWRITE_MONITOR_SENTRY_DSN", dsn)
    result = runner.invoke(app, ["config", "show", "--json"])
    assert result.exit_code == 0, result.output
    assert f'"sentry_dsn": "{"***" if dsn else ""}"' in result.stdout
    assert KEY not in result.output


def test_an_invalid_database_url_is_shown_without_its_password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "mysql://monitor:s3cret@db.internal/rm")
    result = runner.invoke(app, ["config", "show"])
    assert result.exit_code == 2
    assert result.stderr == (
        "error: invalid configuration: database_url: Value error, only sqlite:// and postgresql:// URLs "
        "are supported (got 'mysql://monitor:***@db.internal/rm')\n"
    )


# -- 3. unknown REWRITE_MONITOR_* variables ------------------------------------------------------------
@pytest.mark.parametrize(
    ("variables", "message"),
    [
        (
            ["REWRITE_MONITOR_QUEUE_BUDJET"],
            "unknown environment variable REWRITE_MONITOR_QUEUE_BUDJET (did you mean "
            "REWRITE_MONITOR_QUEUE_BUDGET?): no setting has this name",
        ),
        (
            ["REWRITE_MONITOR_XYZZY"],
            "unknown environment variable REWRITE_MONITOR_XYZZY: no setting has this name",
        ),
        (
            ["REWRITE_MONITOR_CONFG", "rewrite_monitor_batchsize"],
            "unknown environment variables REWRITE_MONITOR_CONFG (did you mean "
            "REWRITE_MONITOR_CONFIG?), rewrite_monitor_batchsize (did you mean "
            "REWRITE_MONITOR_BATCH_SIZE?): no setting has these names",
        ),
    ],
)
def test_unknown_prefixed_variables_are_one_line_errors(
    monkeypatch: pytest.MonkeyPatch, variables: list[str], message: str
) -> None:
    for var in variables:
        monkeypatch.setenv(var, "10")
    result = runner.invoke(app, ["config", "show"])
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {message} (`rewrite-monitor config show` lists the settings' variables)\n"
    )
    assert "10" not in result.stderr  # values are never shown: some are secrets


@pytest.mark.parametrize("var", sorted(NON_SETTING_ENV_VARS - {"REWRITE_MONITOR_CONFIG"}))
def test_variables_read_outside_the_settings_are_allowed(monkeypatch: pytest.MonkeyPatch, var: str) -> None:
    monkeypatch.setenv(var, "1")
    result = runner.invoke(app, ["config", "show", "--json"])
    assert result.exit_code == 0, result.output


def test_the_config_file_variable_is_allowed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cfg = tmp_path / "rm.toml"
    cfg.write_text("batch_size = 77\n")
    monkeypatch.setenv("REWRITE_MONITOR_CONFIG", str(cfg))
    result = runner.invoke(app, ["config", "show", "--json"])
    assert result.exit_code == 0, result.output
    assert '"batch_size": 77' in result.stdout


def test_aliases_and_lower_case_settings_still_work(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://monitor@db.internal/rm")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("REWRITE_MONITOR_ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("rewrite_monitor_batch_size", "250")  # pydantic-settings ignores case
    settings = load_settings()
    assert settings.database_url.get_secret_value() == "postgresql://monitor@db.internal/rm"
    assert settings.anthropic_api_key is not None and settings.batch_size == 250


def test_every_prefixed_variable_the_repository_uses_is_known() -> None:
    """A REWRITE_MONITOR_* variable read by tests, CI or tools but missing from the allow-list
    would make every command fail where it is set (``.ci/run`` sets REWRITE_MONITOR_REQUIRE_PG)."""
    names: set[str] = set()
    paths = [REPO / p for p in ("monitor", "dashboard", "tests", "benchmarks", "scripts", "docs", ".ci")]
    files = [f for p in paths if p.exists() for f in p.rglob("*") if f.is_file()]
    files += [REPO / "Makefile", REPO / "README.md"]
    for f in files:
        if f.suffix in (".png", ".gz", ".pyc", ".db") or f.resolve() == Path(__file__).resolve():
            continue
        names |= set(re.findall(r"REWRITE_MONITOR_[A-Z0-9_]+", f.read_text(errors="replace")))
    assert names, "the scan found nothing: the pattern or the paths are wrong"
    check_env_names(dict.fromkeys(names, ""))  # raises naming any unknown one


def test_a_typo_in_the_config_file_is_still_rejected(tmp_path: Path) -> None:
    cfg = tmp_path / "rm.toml"
    cfg.write_text("queue_budjet = 10\n")
    result = runner.invoke(app, ["--config", str(cfg), "config", "show"])
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: invalid configuration in {cfg}: queue_budjet: unknown setting (did you mean "
        "queue_budget?); its value is not shown\n"
    )


def test_a_misspelt_secret_in_the_config_file_never_shows_its_value(tmp_path: Path) -> None:
    cfg = tmp_path / "rm.toml"
    cfg.write_text('databse_url = "postgresql://u:S3cr3t@127.0.0.1:1/x"\nanthropic_api_kye = "sk-S3cr3t"\n')
    result = runner.invoke(app, ["--config", str(cfg), "config", "show"])
    assert result.exit_code == 2
    assert "S3cr3t" not in result.output and result.exception is not None
    assert "S3cr3t" not in repr(result.exception.__cause__) and result.exception.__cause__ is None
    assert result.stderr == (
        f"error: invalid configuration in {cfg}: databse_url: unknown setting (did you mean database_url?); "
        "its value is not shown; anthropic_api_kye: unknown setting (did you mean anthropic_api_key?); "
        "its value is not shown\n"
    )


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        (
            "postgresql://u:S3cr3t@127.0.0.1:abc/x",
            "not a database URL (scheme://user:password@host:port/database) "
            "(got 'postgresql://u:***@127.0.0.1:abc/x')",
        ),
        (
            "postgresql+asyncpg://u:S3cr3t@h/x",
            "driver 'postgresql+asyncpg' is not supported: use sqlite:// or postgresql:// "
            "(psycopg 3 is installed with rewrite-monitor) (got 'postgresql+asyncpg://u:***@h/x')",
        ),
    ],
    ids=["port-not-a-number", "driver-not-installed"],
)
def test_a_database_url_the_engine_would_choke_on_is_a_settings_error(url: str, reason: str) -> None:
    for command in (["config", "show"], ["db", "current"], ["run", str(REPO / "examples")]):
        result = runner.invoke(app, ["--database-url", url, *command])
        assert result.exit_code == 2, (command, result.output)
        assert result.stderr == f"error: invalid configuration: database_url: Value error, {reason}\n"
        assert "S3cr3t" not in result.output


def test_credentials_in_the_pagerduty_url_are_masked_in_show_and_in_errors() -> None:
    from monitor.settings import Settings, effective_config, load_settings

    shown = effective_config(Settings(alert_pagerduty_url="https://u:PDPASS@events.example/v2"))
    assert shown["alert_pagerduty_url"] == "https://***@events.example/v2"
    with pytest.raises(ConfigError) as err:
        load_settings(alert_pagerduty_url="https://u:PDPASS@/v2")
    assert "PDPASS" not in str(err.value) and "https://***@/v2" in str(err.value)


# Issue 38: a raw '@' in the password showed the part after it as a host ("tpw@127.0.0.1"), in our line and
# in libpq's. Every shape below holds the password "S3cr@tpw" or a piece of it; none may show a piece.
REFUSED_SHAPES = [
    ("postgresql://monitor:S3cr@tpw@127.0.0.1:5432/test", "raw"),  # a raw '@'
    ("postgresql://monitor:S3cr@t/pw@127.0.0.1:5432/test", "raw"),  # a raw '@' and '/'
    ("postgresql://monitor:S3cr@t@pw@127.0.0.1/test", "raw"),  # two raw '@'s
    ("postgresql://monitor:S3cr@t?pw@127.0.0.1/test", "raw"),  # '@' before and after a raw '?'
    ("postgresql://monitor:S3cr#tpw@127.0.0.1:5432/test", "port"),  # a raw '#': urllib reads a port "S3cr"
    ("postgresql://monitor:S3cr?tpw@127.0.0.1:5432/test", "port"),  # a raw '?'
    ("postgresql://monitor:S3crtpw/test", "port"),  # no host at all
]
REASONS = {
    "raw": "the user, password or query holds a raw '@' (or the password a raw '/'): percent-encode it "
    "(%40, %2F)",
    "port": "not a database URL (scheme://user:password@host:port/database)",
}
ACCEPTED_SHAPES = [
    "postgresql://monitor:S3cr%40tpw@127.0.0.1:1/test",  # percent-encoded: what libpq accepts
    "postgresql://monitor:S3cr:tpw@127.0.0.1:1/test",  # a ':' in the password is allowed raw
    "postgresql://127.0.0.1:1/test?user=monitor&password=S3cr%40tpw",  # libpq's query parameter
    "postgresql://127.0.0.1:1/test?user=monitor&pass%77ord=S3cr#tpw",  # an encoded key, a '#' in the value
    "postgresql+psycopg://monitor:S3crtpw@127.0.0.1:1/test",
]


@pytest.mark.parametrize(("url", "why"), REFUSED_SHAPES)
def test_a_url_whose_password_holds_a_raw_delimiter_is_refused_without_a_piece_of_it(
    url: str, why: str
) -> None:
    result = runner.invoke(app, ["--database-url", url, "db", "current"])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(
        f"error: invalid configuration: database_url: Value error, {REASONS[why]} (got 'postgresql://monitor"
    )
    for piece in ("S3cr", "tpw", "t/pw", "pw@"):
        assert piece not in result.output


@pytest.mark.parametrize("url", ACCEPTED_SHAPES)
def test_a_url_libpq_accepts_is_named_masked_when_the_server_is_unreachable(url: str) -> None:
    result = runner.invoke(app, ["--database-url", url, "db", "current"])
    assert result.exit_code == 4, result.output  # nothing listens on port 1
    assert result.stderr.startswith("error: cannot reach the database postgresql://")
    assert "S3cr" not in result.output and "tpw" not in result.output


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://monitor:S3cr@t/pw@db:5432/rm", "postgresql://monitor:***@db:5432/rm"),
        ("postgresql://monitor:S3cr:tpw@db/rm", "postgresql://monitor:***@db/rm"),
        ("postgresql://monitor@db/rm", "postgresql://monitor@db/rm"),  # no password: nothing to hide
        (
            "postgresql://db/rm?user=m&PASSWORD=S3cr&sslmode=require",
            "postgresql://db/rm?user=m&PASSWORD=***&sslmode=require",
        ),
        (
            "postgresql://db/rm?sslmode=require&password=Tr0ub#4dor",
            "postgresql://db/rm?sslmode=require&password=***",
        ),
        (
            "postgresql://db/rm?pass%77ord=S3cr",
            "postgresql://db/rm?pass%77ord=***",
        ),  # the key as parsers read it
        ("postgresql://monitor:S3cr/rm", "postgresql://monitor:***/rm"),  # no '@': not a port, so hidden
        ("postgresql://db:5432/rm", "postgresql://db:5432/rm"),  # a port is shown
        ("postgresql://u:pw@db/rm?application_name=ab", "postgresql://u:***@db/rm?application_name=ab"),
        ("monitor:S3cr@db/rm", "***@db/rm"),  # no scheme: only what follows the last '@'
        ("sqlite:///tmp/rm.db", "sqlite:///tmp/rm.db"),
    ],
)
def test_mask_url_hides_the_password_whatever_the_syntax(url: str, shown: str) -> None:
    from monitor.text import mask_url

    assert mask_url(url) == shown
