"""The schema exists only through Alembic: one head, round trips, and no drift from the models."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

from monitor.errors import StorageError
from monitor.store.engine import (
    HEAD_REVISION,
    alembic_config,
    current_revision,
    downgrade,
    head_revision,
    make_engine,
    open_store,
    require_current_schema,
    upgrade,
)
from monitor.store.models import Base

TABLES = {"events", "records", "quarantine", "check_runs", "findings", "alembic_version"}


def test_one_head() -> None:
    assert len(ScriptDirectory.from_config(alembic_config("sqlite://")).get_heads()) == 1


def test_the_head_constant_is_the_migrations_head() -> None:
    """A new migration must update ``HEAD_REVISION``, or every command would call a current store old."""
    assert HEAD_REVISION == head_revision() == "0014"


def test_a_store_at_head_opens_without_importing_alembic(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    upgrade(url)
    code = (
        "import sys\n"
        "from monitor.store.engine import open_store\n"
        f"open_store({url!r}, writes=True).dispose()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('alembic', 'mako')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"


def test_a_store_not_at_head_is_refused_with_its_revision(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        require_current_schema(engine)  # at head: no error
        downgrade(db_url, "0010")
        with pytest.raises(
            StorageError, match="is at revision 0010, not 0014: run `rewrite-monitor db upgrade`"
        ):
            require_current_schema(engine)
        downgrade(db_url, "base")
        with pytest.raises(StorageError, match="has no schema: run `rewrite-monitor db upgrade`"):
            open_store(db_url).dispose()
        with engine.begin() as conn:
            conn.execute(text("DROP TABLE alembic_version"))
        with pytest.raises(StorageError, match="has no schema"):
            require_current_schema(engine)
        upgrade(db_url)
        require_current_schema(engine)
    finally:
        engine.dispose()


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


def test_0008_merges_the_half_records_a_concurrent_join_left(db_url: str) -> None:
    """Before 0008 two workers could each open a record for one half of a request; the upgrade merges
    them into one whole record (and drops its skipped check run), then makes the key unique."""
    from sqlalchemy import text

    downgrade(db_url, "0007")
    engine = make_engine(db_url)
    try:
        with engine.begin() as conn:
            events = ((1, "ctx_input", "c_2"), (2, "rewrite", "c_2"), (3, "rewrite", "c_3"))
            # a turn join: ctx_input of c_4x and rewrite of c_4 whole, then c_4's own ctx_input alone
            events += ((4, "ctx_input", "c_4x"), (5, "rewrite", "c_4"), (6, "ctx_input", "c_4"))
            for eid, kind, rid in events:
                conn.execute(
                    text(
                        "INSERT INTO events (id, kind, event_key, content_sha, conv_id, request_id, turn, "
                        "source, origin, line_no, raw, ingested_at) VALUES (:id, :k, :key, 'x', 'c', :r, 2, "
                        "'s', 'o', :id, '{}', '2024-03-04 08:00:00')"
                    ),
                    {"id": eid, "k": kind, "key": f"k{eid}", "r": rid},
                )
            conn.execute(
                text(
                    "INSERT INTO records (id, conv_id, request_id, turn, ctx_event_id, rewrite_event_id) "
                    "VALUES (10, 'c', 'c_2', 2, 1, NULL), (11, 'c', 'c_2', 2, NULL, 2), "
                    "(12, 'c', 'c_3', 3, NULL, 3), (13, 'c', 'c_4', 4, 4, 5), (14, 'c', 'c_4', 4, 6, NULL)"
                )
            )
            conn.execute(
                text(
                    "INSERT INTO check_runs (record_id, check_id, check_version, status, rules_hash, "
                    "checked_at, n_findings) "
                    "VALUES (11, 'digest_mismatch', 1, 'skipped', 'h', '2024-03-04 08:00:00', 0)"
                )
            )
        upgrade(db_url)
        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT id, request_id, ctx_event_id, rewrite_event_id, join_method "
                    "FROM records ORDER BY id"
                )
            ).all()
            runs = conn.execute(text("SELECT count(*) FROM check_runs")).scalar()
        assert [tuple(r) for r in rows] == [
            (11, "c_2", 1, 2, "request_id"),
            (12, "c_3", None, 3, None),
            (13, "c_4", 4, 5, None),  # the whole record stays; c_4's lone ctx_input stays stored, unjoined
        ]
        assert runs == 0
        assert {i["name"] for i in inspect(engine).get_indexes("records") if i["unique"]} >= {
            "uq_records_conv_request"
        }
    finally:
        with engine.begin() as conn:  # the database is shared by the tests that follow
            conn.execute(text("DELETE FROM check_runs WHERE record_id IN (10, 11, 12, 13, 14)"))
            conn.execute(text("DELETE FROM records WHERE id IN (10, 11, 12, 13, 14)"))
            conn.execute(text("DELETE FROM events WHERE origin = 'o'"))
        engine.dispose()
