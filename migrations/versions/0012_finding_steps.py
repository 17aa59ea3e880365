"""The grading step of every finding (issue 31, part 1).

``findings.step``: the id of the step of its check's step table (``monitor.checks.steps``) that set the
finding's severity, so ``evaluate --by step`` and the review queue can say which rule graded an item.
Nullable: findings stored before this revision name no step (a ``check --recheck`` at the current
versions gives them one). Indexed with ``check_id`` for the per-step figures.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("findings") as batch:
        batch.add_column(sa.Column("step", sa.String(length=64), nullable=True))
        batch.create_index("ix_findings_check_step", ["check_id", "step"])


def downgrade() -> None:
    with op.batch_alter_table("findings") as batch:
        batch.drop_index("ix_findings_check_step")
        batch.drop_column("step")
