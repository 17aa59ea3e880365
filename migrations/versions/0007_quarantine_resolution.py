"""Quarantine lifecycle: a rejected line is resolved, not forgotten.

``resolved_at`` and ``resolution`` (``stored``: a later ingest stored that line, e.g. after the file was
fixed, or a truncated last line found complete; ``dismissed``: an operator ran ``rewrite-monitor
quarantine resolve``). Listing shows unresolved rows by default; ``quarantine clear`` deletes resolved
ones. Rows of truncated lines that earlier versions deleted on completion are simply absent.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("quarantine") as batch:
        batch.add_column(sa.Column("resolved_at", sa.DateTime(), nullable=True))
        batch.add_column(sa.Column("resolution", sa.String(length=16), nullable=True))
        batch.create_index("ix_quarantine_resolved_at", ["resolved_at"])


def downgrade() -> None:
    with op.batch_alter_table("quarantine") as batch:
        batch.drop_index("ix_quarantine_resolved_at")
        batch.drop_column("resolution")
        batch.drop_column("resolved_at")
