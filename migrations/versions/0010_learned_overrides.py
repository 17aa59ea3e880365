"""Learned-word overrides: an operator's pin or reset of one learned entry (issue 15).

The learned table itself is read from the verdicts each time a check job starts
(``monitor.review.store.learned_table``), so it needs no table. What an operator decides does: ``pinned``
fixes the entry's step (-2..1) whatever the verdicts say, ``reset_at`` makes the verdicts before it
count no more. Unique on ``(kind, rewriter, lemma)``: one row per entry, updated in place.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "learned_overrides",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("rewriter", sa.String(length=255), nullable=False),
        sa.Column("lemma", sa.String(length=255), nullable=False),
        sa.Column("pinned", sa.Integer(), nullable=True),
        sa.Column("reset_at", sa.DateTime(), nullable=True),
        sa.Column("set_by", sa.String(length=255), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_learned_overrides")),
        sa.UniqueConstraint("kind", "rewriter", "lemma", name="uq_learned_overrides_entry"),
    )


def downgrade() -> None:
    op.drop_table("learned_overrides")
