"""The schema exists only through Alembic: one head, round trips, and no drift from the models."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from monitor.store.engine import (
    alembic_config,
    current_revision,
    downgrade,
    head_revision,
    make_engine,
    upgrade,
)
from monitor.store.models import Base

TABLES = {"events", "records", "quarantine", "check_runs", "findings", "alembic_version"}


def test_one_head() -> None:
    assert len(ScriptDirectory.from_config(alembic_config("sqlite://")).get_heads()) == 1


def test_upgrade_downgrade_upgrade_and_no_drift(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        upgrade(db_url)
        assert TABLES <= set(inspect(engine).get_table_names())
        downgrade(db_url, "base")
        assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
        assert current_revision(engine) is None
        upgrade(db_url)
        assert current_revision(engine) == head_revision()
        with engine.connect() as conn:
            diff = compare_metadata(
                MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata
            )
        assert diff == []
    finally:
        engine.dispose()
