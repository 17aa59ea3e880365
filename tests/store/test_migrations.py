"""The schema exists only through Alembic: one head, round trips, and no drift from the models."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

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

TABLES = {
    "events",
    "records",
    "quarantine",
    "check_sets",
    "check_set_members",
    "check_runs",
    "check_skips",
    "findings",
    "alembic_version",
}


def test_one_head() -> None:
    assert len(ScriptDirectory.from_config(alembic_config("sqlite://")).get_heads()) == 1


def test_the_head_constant_is_the_migrations_head() -> None:
    """A new migration must update ``HEAD_REVISION``, or every command would call a current store old."""
    assert HEAD_REVISION == head_revision() == "0016"


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
            StorageError, match="is at revision 0010, not 0016: run `rewrite-monitor db upgrade`"
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


def test_0015_makes_one_run_per_record_and_set_keeping_every_finding(db_url: str) -> None:
    """Before 0015 a record had one run per check and version. Record 20 was checked at a (v1), b (v1,
    skipped: no ctx_input) and c (v1), then again after a went to v2: its newest versions {a2, b1, c1}
    become one run and {a1} another. Record 21 has {a1, b1}. Findings keep their runs' order, numbered
    again within the merged run in their old runs' order: c1's (103, old run 3), then a2's two (101, 102,
    old run 4)."""
    from monitor.checks.store import check_set_key

    downgrade(db_url, "0014")
    engine = make_engine(db_url)
    old_runs = [  # id, record, check, version, status, reason
        (1, 20, "a", 1, "ran", None),
        (2, 20, "b", 1, "skipped", "no ctx_input"),
        (3, 20, "c", 1, "ran", None),
        (4, 20, "a", 2, "ran", None),
        (5, 21, "a", 1, "ran", None),
        (6, 21, "b", 1, "ran", None),
    ]
    old_findings = [(101, 4, 0), (102, 4, 1), (103, 3, 0), (104, 1, 0), (105, 6, 0)]  # id, run, ordinal
    old = {i: (rec, c, v) for i, rec, c, v, _st, _why in old_runs}

    def old_rows(conn: Any) -> tuple[set[tuple[Any, ...]], dict[int, tuple[Any, ...]]]:
        """The per-check rows as (record, check, version, status, reason), and each finding's run as
        (record, check, version) with its ordinal."""
        runs = conn.execute(
            text(
                "SELECT id, record_id, check_id, check_version, status, skip_reason FROM check_runs "
                "WHERE record_id IN (20, 21)"
            )
        ).all()
        key = {r.id: (r.record_id, r.check_id, r.check_version) for r in runs}
        found = conn.execute(text("SELECT id, check_run_id, ordinal FROM findings WHERE id > 100")).all()
        return {tuple(r)[1:] for r in runs}, {f.id: (*key[f.check_run_id], f.ordinal) for f in found}

    try:
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO events (id, kind, event_key, content_sha, conv_id, request_id, turn, "
                    "source, origin, line_no, raw, ingested_at) "
                    "VALUES (:id, 'rewrite', :k, 'x', 'c', :r, 2, 's', 'o15', :id, '{}', "
                    "'2024-03-04 08:00:00')"
                ),
                [{"id": 20, "k": "k20", "r": "r20"}, {"id": 21, "k": "k21", "r": "r21"}],
            )
            conn.execute(
                text(
                    "INSERT INTO records (id, conv_id, request_id, turn, rewrite_event_id) "
                    "VALUES (20, 'c', 'r20', 2, 20), (21, 'c', 'r21', 2, 21)"
                )
            )
            conn.execute(
                text(
                    "INSERT INTO check_runs (id, record_id, check_id, check_version, status, skip_reason, "
                    "rules_hash, n_findings, checked_at) VALUES (:id, :rec, :c, :v, :st, :why, 'h', :n, "
                    ":t)"
                ),
                [
                    {
                        "id": i,
                        "rec": rec,
                        "c": c,
                        "v": v,
                        "st": st,
                        "why": why,
                        "n": sum(1 for _, run, _ in old_findings if run == i),
                        "t": f"2024-03-0{4 + (v - 1)} 09:00:00",
                    }
                    for i, rec, c, v, st, why in old_runs
                ],
            )
            conn.execute(
                text(
                    "INSERT INTO findings (id, check_run_id, ordinal, record_id, request_id, kind, severity, "
                    "severity_rank, reason, words, evidence, check_id, check_version, rules_hash, "
                    "created_at) VALUES (:id, :run, :o, :rec, 'r', 'k', 'low', 0, 'r', '[]', '{}', :c, "
                    ":v, 'h', '2024-03-04 09:00:00')"
                ),
                [
                    {"id": f, "run": run, "o": o, "rec": old[run][0], "c": old[run][1], "v": old[run][2]}
                    for f, run, o in old_findings
                ],
            )
        upgrade(db_url)
        with engine.connect() as conn:
            runs = conn.execute(
                text(
                    "SELECT id, record_id, check_set_id, n_findings FROM check_runs "
                    "WHERE record_id IN (20, 21)"
                )
            ).all()
            sets = {key: sid for sid, key in conn.execute(text("SELECT id, key FROM check_sets")).all()}
            skips = conn.execute(
                text("SELECT check_run_id, check_id, reason FROM check_skips WHERE check_run_id <= 6")
            ).all()
            findings = conn.execute(
                text("SELECT id, check_run_id, ordinal FROM findings WHERE id > 100 ORDER BY id")
            ).all()
        by_set = {(rec, sid): (rid, n) for rid, rec, sid, n in runs}
        a2b1c1 = sets[check_set_key([("a", 2), ("b", 1), ("c", 1)])]
        assert set(by_set) == {
            (20, a2b1c1),
            (20, sets[check_set_key([("a", 1)])]),
            (21, sets[check_set_key([("a", 1), ("b", 1)])]),
        }
        # the lowest id of each group stays: 2 (of 2, 3, 4), 1 (a1 of record 20), 5 (of 5, 6)
        assert by_set[(20, a2b1c1)] == (2, 3)
        assert [tuple(s) for s in skips] == [(2, "b", "no ctx_input")]
        assert [tuple(f) for f in findings] == [
            (101, 2, 1),
            (102, 2, 2),
            (103, 2, 0),
            (104, 1, 0),
            (105, 5, 0),
        ]
    finally:
        with engine.begin() as conn:  # the database is shared by the tests that follow
            conn.execute(text("DELETE FROM findings WHERE record_id IN (20, 21)"))
            conn.execute(
                text(
                    "DELETE FROM check_skips WHERE check_run_id IN (SELECT id FROM check_runs "
                    "WHERE record_id IN (20, 21))"
                )
            )
            conn.execute(text("DELETE FROM check_runs WHERE record_id IN (20, 21)"))
            conn.execute(text("DELETE FROM records WHERE id IN (20, 21)"))
            conn.execute(text("DELETE FROM events WHERE origin = 'o15'"))
        engine.dispose()


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_0015_downgrade_takes_each_version_from_the_run_that_owns_it(kind: str, tmp_path: Path) -> None:
    """A record checked at {a1, b1} with b skipped, then at {a2, b1} where b ran and found something: the
    newer run owns b1. Down to 0014 there is one row per check version, b1 ran with its finding on it
    (a cold read found the downgrade kept the older run's skip); back up, the record is checked at
    {a2, b1} with no skip."""
    from datetime import datetime

    from sqlalchemy import select

    from monitor.checks.base import CheckOutcome, CheckStatus, Finding
    from monitor.checks.store import store_outcomes
    from monitor.store.engine import session_factory
    from tests.factories import record_row
    from tests.helpers import fresh_database

    def run(statuses: list[CheckStatus], found: tuple[Finding, ...]) -> CheckOutcome:
        return CheckOutcome("c_2", "h", found, tuple(statuses))

    b1 = Finding("k", "high", {"words": [{"text": "b1"}]}, "r", "b", 1, "s")
    for url in fresh_database(kind, tmp_path):
        engine = make_engine(url)
        try:
            with session_factory(engine)() as s:
                rec = record_row(s).id
                now = datetime(2024, 3, 4, 10)
                skipped = [CheckStatus("a", 1, "ran"), CheckStatus("b", 1, "skipped", "no ctx_input logged")]
                store_outcomes(session=s, outcomes=[(rec, "c_2", run(skipped, ()))], now=now)
                ran = [CheckStatus("a", 2, "ran"), CheckStatus("b", 1, "ran", None, 1)]
                store_outcomes(session=s, outcomes=[(rec, "c_2", run(ran, (b1,)))], now=now)
                s.commit()
            engine.dispose()
            downgrade(url, "0014")
            with engine.connect() as conn:
                rows = conn.execute(
                    text(
                        "SELECT id, check_id, check_version, status, skip_reason, n_findings FROM check_runs"
                    )
                ).all()
                found = conn.execute(text("SELECT check_run_id, check_id, ordinal FROM findings")).all()
            by_pair = {(r.check_id, r.check_version): r for r in rows}
            assert {p: (r.status, r.skip_reason, r.n_findings) for p, r in by_pair.items()} == {
                ("a", 1): ("ran", None, 0),
                ("a", 2): ("ran", None, 0),
                ("b", 1): ("ran", None, 1),
            }
            assert [tuple(f) for f in found] == [(by_pair[("b", 1)].id, "b", 0)]
            upgrade(url)
            with session_factory(engine)() as s:
                from monitor.checks.store import coverage

                got = {
                    c.check_id: (c.ran, c.skipped) for c in coverage(session=s, checks=[("a", 2), ("b", 1)])
                }
                assert got == {"a": (1, 0), "b": (1, 0)}
                assert s.scalar(select(text("count(*)")).select_from(text("findings"))) == 1
        finally:
            engine.dispose()
