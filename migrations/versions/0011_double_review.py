"""Several reviewers per item (issue 16, part 6).

``queue_items.reviews_needed``: how many reviewers must give a verdict before the item is done (1 for
most; 2 for the share of the daily sample drawn for a blind second review, ``double_review_share``).
``verdicts.adjudication``: the verdict settles a disagreement between an item's reviewers; it is the one
that makes the regression case, and agreement figures leave it out.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("queue_items") as batch:
        batch.add_column(sa.Column("reviews_needed", sa.Integer(), nullable=False, server_default="1"))
    with op.batch_alter_table("verdicts") as batch:
        batch.add_column(sa.Column("adjudication", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch.create_index("ix_verdicts_queue_item_reviewer", ["queue_item_id", "reviewer"])


def downgrade() -> None:
    with op.batch_alter_table("verdicts") as batch:
        batch.drop_index("ix_verdicts_queue_item_reviewer")
        batch.drop_column("adjudication")
    with op.batch_alter_table("queue_items") as batch:
        batch.drop_column("reviews_needed")
