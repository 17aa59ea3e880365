"""Alert deliveries: one row per alert and destination besides Sentry (webhook, Slack, PagerDuty).

``status`` is ``pending`` until the destination accepted the alert (a 2xx answer), then ``sent``;
``attempts`` counts the tries, ``next_attempt_at`` is when a pending one is tried again (exponential
backoff), ``last_error`` names what failed (an HTTP status or an error class, never a body). Unique on
``(alert_id, destination)``: a re-run never sends an alert twice to one place.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "alert_deliveries",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("alert_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("destination", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.String(length=200), nullable=True),
        sa.Column("next_attempt_at", sa.DateTime(), nullable=False),
        sa.Column("sent_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["alert_id"], ["alerts.id"], name=op.f("fk_alert_deliveries_alert_id_alerts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_deliveries")),
        sa.UniqueConstraint("alert_id", "destination", name="uq_alert_deliveries_alert_destination"),
    )
    op.create_index("ix_alert_deliveries_status_next", "alert_deliveries", ["status", "next_attempt_at"])


def downgrade() -> None:
    op.drop_index("ix_alert_deliveries_status_next", table_name="alert_deliveries")
    op.drop_table("alert_deliveries")
