"""Shared fixtures: every storage test runs on SQLite and on the machine's real PostgreSQL.

The schema comes only from ``alembic upgrade head``. Each test gets a session bound to a connection
whose outer transaction is rolled back afterwards (savepoint mode), so tests never see each other.

PostgreSQL: a throw-away database is created per test session on the server named by
``REWRITE_MONITOR_TEST_PG_URL`` (default ``postgresql://postgres@127.0.0.1:5432/test``). When it is
unreachable the PostgreSQL variants are skipped, unless ``REWRITE_MONITOR_REQUIRE_PG=1`` (set by
``.ci/run``), which turns that into a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from monitor.checks.rules import Rules, load_rules
from monitor.store.engine import make_engine, upgrade
from tests.helpers import SHARED_DATA, throwaway_pg_database


@pytest.fixture(scope="session")
def rules() -> Rules:
    """The bundled rules, loaded once: what the check tests and the verdict-form tests read."""
    return load_rules()


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """URL of a fresh, empty PostgreSQL database for this test session (dropped afterwards)."""
    with throwaway_pg_database("rm_test") as url:
        yield url


@pytest.fixture(scope="session")
def sqlite_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return f"sqlite:///{tmp_path_factory.mktemp('db') / 'test.db'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest) -> str:
    """A database URL at migration head, once per backend."""
    url = request.getfixturevalue("sqlite_url" if request.param == "sqlite" else "pg_url")
    upgrade(url)
    return url


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    eng = make_engine(db_url)
    yield eng
    eng.dispose()


@pytest.fixture
def session(engine: Engine) -> Iterator[Session]:
    """A session whose commits are savepoints inside a transaction rolled back after the test."""
    with engine.connect() as conn:
        outer = conn.begin()
        with Session(bind=conn, join_transaction_mode="create_savepoint", expire_on_commit=False) as s:
            yield s
        outer.rollback()


@pytest.fixture
def shared_logs() -> Path:
    """The real logs in ../shared/data/logs (CI has them); skips when absent on a dev machine."""
    logs = SHARED_DATA / "logs"
    if not logs.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"{logs} is missing on CI")
        pytest.skip(f"{logs} not present")
    return logs


@pytest.fixture
def cli_db(tmp_path: Path) -> str:
    """A migrated, empty SQLite store in the test's folder, made the way an operator does
    (``rewrite-monitor db upgrade``); its URL."""
    from typer.testing import CliRunner

    from monitor.cli.main import app

    url = f"sqlite:///{tmp_path / 'cli.db'}"
    result = CliRunner().invoke(app, ["--database-url", url, "db", "upgrade"])
    assert result.exit_code == 0, result.output
    return url
