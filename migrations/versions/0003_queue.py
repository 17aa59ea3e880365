"""Review queue: queue_items, queue_days (per-day stratum sizes), verdicts; records.check_draw.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "queue_days",
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("stratum", sa.String(length=16), nullable=False),
        sa.Column("eligible", sa.Integer(), nullable=False),
        sa.Column("taken", sa.Integer(), nullable=False),
        sa.Column("capped", sa.Integer(), nullable=False),
        sa.Column("subsampled", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("day", "stratum", name=op.f("pk_queue_days")),
    )
    op.create_table(
        "queue_items",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("record_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("request_id", sa.String(length=255), nullable=False),
        sa.Column("conv_id", sa.String(length=255), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("stratum", sa.String(length=16), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("inclusion_prob", sa.Float(), nullable=False),
        sa.Column(
            "kinds",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column(
            "words",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("model", sa.String(length=255), nullable=True),
        sa.Column("prompt_version", sa.String(length=255), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("claimed_by", sa.String(length=255), nullable=True),
        sa.Column("claimed_at", sa.DateTime(), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(), nullable=True),
        sa.Column("due_at", sa.DateTime(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["record_id"], ["records.id"], name=op.f("fk_queue_items_record_id_records"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_queue_items")),
        sa.UniqueConstraint("record_id", name=op.f("uq_queue_items_record_id")),
    )
    with op.batch_alter_table("queue_items", schema=None) as batch_op:
        batch_op.create_index("ix_queue_items_day", ["day", "stratum"], unique=False)
        batch_op.create_index("ix_queue_items_order", ["state", "priority", "created_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_queue_items_request_id"), ["request_id"], unique=False)

    op.create_table(
        "verdicts",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("queue_item_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("record_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("request_id", sa.String(length=255), nullable=False),
        sa.Column("reviewer", sa.String(length=255), nullable=False),
        sa.Column("artifact", sa.String(length=16), nullable=False),
        sa.Column("label", sa.String(length=32), nullable=False),
        sa.Column("corrected_query", sa.Text(), nullable=True),
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
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["queue_item_id"],
            ["queue_items.id"],
            name=op.f("fk_verdicts_queue_item_id_queue_items"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["record_id"], ["records.id"], name=op.f("fk_verdicts_record_id_records"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_verdicts")),
    )
    with op.batch_alter_table("verdicts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_verdicts_queue_item_id"), ["queue_item_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_verdicts_record_id"), ["record_id"], unique=False)

    with op.batch_alter_table("records", schema=None) as batch_op:
        batch_op.add_column(sa.Column("check_draw", sa.Float(), nullable=True))
    _backfill_check_draws()


def _backfill_check_draws() -> None:
    """Give records already stored the draw ingest gives a new one (``monitor.queue.sampling.draw`` of
    the configured ``sample_seed``, ``"check"``, ``conv_id/request_id``): a check rate below 1 compares
    the draw with the rate, so a record left without one (a store older than this revision, or brought
    below it and up again) would never be checked."""
    from monitor.queue.sampling import draw
    from monitor.settings import load_settings

    seed = load_settings().sample_seed
    records = sa.table(
        "records", sa.column("id"), sa.column("conv_id"), sa.column("request_id"), sa.column("check_draw")
    )
    bind = op.get_bind()
    after = 0
    while True:
        rows = bind.execute(
            sa.select(records.c.id, records.c.conv_id, records.c.request_id)
            .where(records.c.check_draw.is_(None), records.c.id > after)
            .order_by(records.c.id)
            .limit(1000)
        ).all()
        if not rows:
            return
        bind.execute(
            records.update()
            .where(records.c.id == sa.bindparam("rid"))
            .values(check_draw=sa.bindparam("draw")),
            [{"rid": r.id, "draw": draw(seed, "check", f"{r.conv_id}/{r.request_id}")} for r in rows],
        )
        after = rows[-1].id


def downgrade() -> None:
    with op.batch_alter_table("records", schema=None) as batch_op:
        batch_op.drop_column("check_draw")

    with op.batch_alter_table("verdicts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_verdicts_record_id"))
        batch_op.drop_index(batch_op.f("ix_verdicts_queue_item_id"))

    op.drop_table("verdicts")
    with op.batch_alter_table("queue_items", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_queue_items_request_id"))
        batch_op.drop_index("ix_queue_items_order")
        batch_op.drop_index("ix_queue_items_day")

    op.drop_table("queue_items")
    op.drop_table("queue_days")
