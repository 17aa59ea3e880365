"""One record per request: a unique key on (conv_id, request_id).

Without it, two workers that each read one half of a request (``ctx_input`` and ``rewrite`` in different
files) in concurrent transactions both opened a record, since neither saw the other's uncommitted row:
permanent half-records, the rewrite never checked against what the rewriter received. With the key, the
second insert waits for the first and joins it (``monitor.ingest.store.batches``: an upsert).

The upgrade first leaves one record per request (:func:`_merge_duplicates`): the half-records such a
race left behind are merged, and a ctx-only record beside a whole one of the same request id (left by
a join on the turn) is removed, its event staying stored.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def _merge_duplicates(conn: sa.Connection) -> int:
    """Leave one record per (conv_id, request_id); returns how many were removed.

    A request has at most one ``ctx_input`` and one ``rewrite`` event (event keys are unique), so a
    duplicate is a ctx-only record beside a rewrite-only one (two workers' race) or beside a whole
    record (a turn join gave that record another request's ctx_input first). The record kept is the
    whole one, else the one with the rewrite; it takes the other's ctx_input when it has none (then its
    skipped check runs go, so the next check run judges it whole). What pointed at the removed record
    points at the kept one: its check runs and findings are deleted (they are recomputed), its queue
    item, verdicts and regression cases move (a second queue item of the request is dropped)."""
    groups = conn.execute(
        sa.text("SELECT conv_id, request_id FROM records GROUP BY conv_id, request_id HAVING count(*) > 1")
    ).all()
    removed = 0
    for conv_id, request_id in groups:
        rows = conn.execute(
            sa.text(
                "SELECT id, ctx_event_id, rewrite_event_id FROM records "
                "WHERE conv_id = :c AND request_id = :r ORDER BY id"
            ),
            {"c": conv_id, "r": request_id},
        ).all()
        keep = (
            next((r for r in rows if r.ctx_event_id is not None and r.rewrite_event_id is not None), None)
            or next((r for r in rows if r.rewrite_event_id is not None), None)
            or rows[0]
        )
        ctx = keep.ctx_event_id
        for r in rows:
            if r.id == keep.id:
                continue
            ids = {"old": r.id, "new": keep.id}
            conn.execute(sa.text("DELETE FROM findings WHERE record_id = :old"), ids)
            conn.execute(sa.text("DELETE FROM check_runs WHERE record_id = :old"), ids)
            taken = conn.execute(
                sa.text("SELECT count(*) FROM queue_items WHERE record_id = :new"), ids
            ).scalar()
            if taken:
                conn.execute(sa.text("DELETE FROM queue_items WHERE record_id = :old"), ids)
            for table in ("queue_items", "verdicts", "regression_cases"):
                conn.execute(sa.text(f"UPDATE {table} SET record_id = :new WHERE record_id = :old"), ids)
            conn.execute(sa.text("DELETE FROM records WHERE id = :old"), ids)
            removed += 1
            if ctx is None and r.ctx_event_id is not None:
                ctx = r.ctx_event_id
        if ctx != keep.ctx_event_id:
            conn.execute(
                sa.text("UPDATE records SET ctx_event_id = :e, join_method = 'request_id' WHERE id = :id"),
                {"e": ctx, "id": keep.id},
            )
            conn.execute(
                sa.text("DELETE FROM check_runs WHERE record_id = :id AND status = 'skipped'"),
                {"id": keep.id},
            )
    return removed


def upgrade() -> None:
    _merge_duplicates(op.get_bind())
    op.drop_index("ix_records_conv_request", table_name="records")
    op.create_index("uq_records_conv_request", "records", ["conv_id", "request_id"], unique=True)


def downgrade() -> None:
    op.drop_index("uq_records_conv_request", table_name="records")
    op.create_index("ix_records_conv_request", "records", ["conv_id", "request_id"])
