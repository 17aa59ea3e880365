"""Indexes for admission and time-bounded reads: records by rewrite time, check runs by check time.

Without them, each worker cycle's admission scanned every check run in the store (``days_to_admit``
filters on ``checked_at``; ``day_candidates`` and ``stats --since`` on the record's ``ts``), a cost
that grows with retention rather than with the day being admitted.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-29
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_records_ts", "records", ["ts"])
    op.create_index("ix_check_runs_checked_at", "check_runs", ["checked_at"])


def downgrade() -> None:
    op.drop_index("ix_check_runs_checked_at", table_name="check_runs")
    op.drop_index("ix_records_ts", table_name="records")
