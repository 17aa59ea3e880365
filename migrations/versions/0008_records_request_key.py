"""One record per request: a unique key on (conv_id, request_id).

Without it, two workers that each read one half of a request (``ctx_input`` and ``rewrite`` in different
files) in concurrent transactions both opened a record, since neither saw the other's uncommitted row:
permanent half-records, the rewrite never checked against what the rewriter received. With the key, the
second insert waits for the first and joins it (``monitor.ingest.store.batches``: an upsert).

The upgrade first merges the half-records such a race left behind: the ``ctx_input`` of a ctx-only
record moves to the rewrite-only record of the same request, the ctx-only record is deleted, and the
merged record's skipped check runs are deleted so the next check run judges it whole.

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


def _merge_half_records(conn: sa.Connection) -> int:
    """Merge each (conv_id, request_id) held by a ctx-only and a rewrite-only record; returns how many."""
    pairs = conn.execute(
        sa.text(
            "SELECT c.id, r.id, c.ctx_event_id FROM records c JOIN records r "
            "ON c.conv_id = r.conv_id AND c.request_id = r.request_id AND c.id <> r.id "
            "WHERE c.rewrite_event_id IS NULL AND r.ctx_event_id IS NULL AND r.rewrite_event_id IS NOT NULL"
        )
    ).all()
    for ctx_only, rewrite_only, ctx_event in pairs:
        conn.execute(sa.text("DELETE FROM records WHERE id = :id"), {"id": ctx_only})
        conn.execute(
            sa.text("UPDATE records SET ctx_event_id = :e, join_method = 'request_id' WHERE id = :id"),
            {"e": ctx_event, "id": rewrite_only},
        )
        conn.execute(
            sa.text("DELETE FROM check_runs WHERE record_id = :id AND status = 'skipped'"),
            {"id": rewrite_only},
        )
    return len(pairs)


def upgrade() -> None:
    _merge_half_records(op.get_bind())
    op.drop_index("ix_records_conv_request", table_name="records")
    op.create_index("uq_records_conv_request", "records", ["conv_id", "request_id"], unique=True)


def downgrade() -> None:
    op.drop_index("uq_records_conv_request", table_name="records")
    op.create_index("ix_records_conv_request", "records", ["conv_id", "request_id"])
