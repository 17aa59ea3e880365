"""Worker, alerts and verdict products: leases, source_cursors, alerts, alias_proposals, regression_cases.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "alerts",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("group_key", sa.String(length=300), nullable=False),
        sa.Column("prompt_version", sa.String(length=255), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("window_start", sa.DateTime(), nullable=False),
        sa.Column("window_end", sa.DateTime(), nullable=False),
        sa.Column("window_rewrites", sa.Integer(), nullable=False),
        sa.Column("window_flagged", sa.Integer(), nullable=False),
        sa.Column("window_rate", sa.Float(), nullable=False),
        sa.Column("baseline_rewrites", sa.Integer(), nullable=False),
        sa.Column("baseline_flagged", sa.Integer(), nullable=False),
        sa.Column("baseline_rate", sa.Float(), nullable=True),
        sa.Column("delivered_to", sa.String(length=16), nullable=False),
        sa.Column("sentry_event_id", sa.String(length=64), nullable=True),
        sa.Column(
            "context",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alerts")),
    )
    with op.batch_alter_table("alerts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_alerts_group_key"), ["group_key"], unique=False)

    op.create_table(
        "leases",
        sa.Column("name", sa.String(length=1100), nullable=False),
        sa.Column("holder", sa.String(length=255), nullable=False),
        sa.Column("acquired_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_leases")),
    )
    op.create_table(
        "source_cursors",
        sa.Column("path", sa.String(length=1024), nullable=False),
        sa.Column("file_id", sa.String(length=128), nullable=False),
        sa.Column("head_sha", sa.String(length=64), nullable=True),
        sa.Column("offset", sa.BigInteger(), nullable=False),
        sa.Column("line_no", sa.Integer(), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("completed", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("path", name=op.f("pk_source_cursors")),
    )
    op.create_table(
        "alias_proposals",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("queue_item_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("request_id", sa.String(length=255), nullable=False),
        sa.Column("proposer", sa.String(length=255), nullable=False),
        sa.Column(
            "members",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["queue_item_id"],
            ["queue_items.id"],
            name=op.f("fk_alias_proposals_queue_item_id_queue_items"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alias_proposals")),
    )
    op.create_table(
        "regression_cases",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("case_key", sa.String(length=64), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("superseded_at", sa.DateTime(), nullable=True),
        sa.Column("verdict_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("record_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("source_request_id", sa.String(length=255), nullable=False),
        sa.Column(
            "messages",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("latest", sa.Text(), nullable=False),
        sa.Column("expected_query", sa.Text(), nullable=True),
        sa.Column(
            "must_include",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column(
            "must_not_include",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("label", sa.String(length=32), nullable=False),
        sa.Column("artifact", sa.String(length=16), nullable=False),
        sa.Column("reviewer", sa.String(length=255), nullable=False),
        sa.Column("verdict_at", sa.DateTime(), nullable=False),
        sa.Column("prompt_version", sa.String(length=255), nullable=True),
        sa.Column("model", sa.String(length=255), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["record_id"],
            ["records.id"],
            name=op.f("fk_regression_cases_record_id_records"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["verdict_id"],
            ["verdicts.id"],
            name=op.f("fk_regression_cases_verdict_id_verdicts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_regression_cases")),
        sa.UniqueConstraint("case_key", "version", name="uq_regression_cases_key_version"),
    )
    with op.batch_alter_table("regression_cases", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_regression_cases_record_id"), ["record_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("regression_cases", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_regression_cases_record_id"))

    op.drop_table("regression_cases")
    op.drop_table("alias_proposals")
    op.drop_table("source_cursors")
    op.drop_table("leases")
    with op.batch_alter_table("alerts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_alerts_group_key"))

    op.drop_table("alerts")
