"""Checks: check_runs (one per record, check id and version) and findings.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "check_runs",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("record_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("check_id", sa.String(length=64), nullable=False),
        sa.Column("check_version", sa.Integer(), nullable=False),
        sa.Column("rules_hash", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("skip_reason", sa.Text(), nullable=True),
        sa.Column("n_findings", sa.Integer(), nullable=False),
        sa.Column("checked_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["record_id"], ["records.id"], name=op.f("fk_check_runs_record_id_records"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_check_runs")),
        sa.UniqueConstraint("record_id", "check_id", "check_version", name="uq_check_runs_record_check"),
    )
    with op.batch_alter_table("check_runs", schema=None) as batch_op:
        batch_op.create_index("ix_check_runs_check", ["check_id", "check_version", "status"], unique=False)

    op.create_table(
        "findings",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("check_run_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("record_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("request_id", sa.String(length=255), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("severity", sa.String(length=8), nullable=False),
        sa.Column("severity_rank", sa.Integer(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column(
            "words",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column(
            "evidence",
            sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql"),
            nullable=False,
        ),
        sa.Column("check_id", sa.String(length=64), nullable=False),
        sa.Column("check_version", sa.Integer(), nullable=False),
        sa.Column("rules_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["check_run_id"],
            ["check_runs.id"],
            name=op.f("fk_findings_check_run_id_check_runs"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["record_id"], ["records.id"], name=op.f("fk_findings_record_id_records"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_findings")),
        sa.UniqueConstraint("check_run_id", "ordinal", name="uq_findings_run_ordinal"),
    )
    with op.batch_alter_table("findings", schema=None) as batch_op:
        batch_op.create_index("ix_findings_kind_severity", ["kind", "severity_rank"], unique=False)
        batch_op.create_index(batch_op.f("ix_findings_record_id"), ["record_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_findings_request_id"), ["request_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("findings", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_findings_request_id"))
        batch_op.drop_index(batch_op.f("ix_findings_record_id"))
        batch_op.drop_index("ix_findings_kind_severity")

    op.drop_table("findings")
    with op.batch_alter_table("check_runs", schema=None) as batch_op:
        batch_op.drop_index("ix_check_runs_check")

    op.drop_table("check_runs")
