"""Initial store: events (raw, unique event key), records (ctx_input + rewrite join), quarantine.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "events",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("event_key", sa.String(length=64), nullable=False),
        sa.Column("content_sha", sa.String(length=64), nullable=False),
        sa.Column("conv_id", sa.String(length=255), nullable=True),
        sa.Column("request_id", sa.String(length=255), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=True),
        sa.Column("ts", sa.DateTime(), nullable=True),
        sa.Column("source", sa.String(length=128), nullable=False),
        sa.Column("origin", sa.String(length=1024), nullable=False),
        sa.Column("line_no", sa.Integer(), nullable=False),
        sa.Column(
            "raw",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("ingested_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_events")),
        sa.UniqueConstraint("event_key", name=op.f("uq_events_event_key")),
    )
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.create_index("ix_events_conv_turn", ["conv_id", "turn"], unique=False)
        batch_op.create_index("ix_events_kind_request", ["kind", "request_id"], unique=False)

    op.create_table(
        "quarantine",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("source", sa.String(length=128), nullable=False),
        sa.Column("origin", sa.String(length=1024), nullable=False),
        sa.Column("line_no", sa.Integer(), nullable=False),
        sa.Column("reason", sa.String(length=32), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("raw_excerpt", sa.Text(), nullable=False),
        sa.Column("raw_sha", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_quarantine")),
        sa.UniqueConstraint("origin", "line_no", "raw_sha", name="uq_quarantine_line"),
    )
    with op.batch_alter_table("quarantine", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_quarantine_reason"), ["reason"], unique=False)

    op.create_table(
        "records",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("conv_id", sa.String(length=255), nullable=False),
        sa.Column("request_id", sa.String(length=255), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("ts", sa.DateTime(), nullable=True),
        sa.Column("ctx_event_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("rewrite_event_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("join_method", sa.String(length=16), nullable=True),
        sa.Column("model", sa.String(length=255), nullable=True),
        sa.Column("prompt_version", sa.String(length=255), nullable=True),
        sa.ForeignKeyConstraint(["ctx_event_id"], ["events.id"], name=op.f("fk_records_ctx_event_id_events")),
        sa.ForeignKeyConstraint(
            ["rewrite_event_id"], ["events.id"], name=op.f("fk_records_rewrite_event_id_events")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_records")),
        sa.UniqueConstraint("ctx_event_id", name=op.f("uq_records_ctx_event_id")),
        sa.UniqueConstraint("rewrite_event_id", name=op.f("uq_records_rewrite_event_id")),
    )
    with op.batch_alter_table("records", schema=None) as batch_op:
        batch_op.create_index("ix_records_conv_request", ["conv_id", "request_id"], unique=False)
        batch_op.create_index("ix_records_conv_turn", ["conv_id", "turn"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("records", schema=None) as batch_op:
        batch_op.drop_index("ix_records_conv_turn")
        batch_op.drop_index("ix_records_conv_request")

    op.drop_table("records")
    with op.batch_alter_table("quarantine", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_quarantine_reason"))

    op.drop_table("quarantine")
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_index("ix_events_kind_request")
        batch_op.drop_index("ix_events_conv_turn")

    op.drop_table("events")
