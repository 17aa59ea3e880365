"""Planner statistics after a bulk write (``monitor.store.engine.refresh_planner_statistics``)."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session

from monitor.store.engine import ANALYZE_MIN_ROWS, refresh_planner_statistics
from tests.factories import quarantine_row


def test_a_bulk_write_analyses_its_tables_on_postgresql_only(session: Session) -> None:
    postgres = session.get_bind().dialect.name == "postgresql"
    for n in range(3):
        quarantine_row(session, line_no=n, reason="invalid_json", detail="-", raw_sha=f"{n:064x}")
    assert refresh_planner_statistics(session, ("quarantine",), rows=ANALYZE_MIN_ROWS - 1) is False
    assert refresh_planner_statistics(session, ("quarantine",), rows=ANALYZE_MIN_ROWS) is postgres
    if postgres:
        # ANALYZE counted the three rows this transaction sees (reltuples is -1 before any analysis,
        # and a plain insert never sets it)
        reltuples = session.execute(text("SELECT reltuples FROM pg_class WHERE relname = 'quarantine'"))
        assert reltuples.scalar_one() == 3
