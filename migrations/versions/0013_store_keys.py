"""Keys the store generates for itself (issue 38, part 2).

``store_keys``: one row per named key, written once on first use and never changed. The first is
``outbound_ids``, the HMAC key that turns a request or conversation id holding personal data into the
stable ``pid_...`` form every external payload carries (``monitor.privacy.outbound_id``), made by this
migration. It lives in the store, not in a setting, so the worker that sends an alert and the engineer
who runs ``show`` on its id anywhere else read the same key with no configuration.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06
"""

from __future__ import annotations

import secrets

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    table = op.create_table(
        "store_keys",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("value", sa.String(length=128), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_store_keys"),
    )
    # made here, once, so that sending an alert or writing findings --otlp only reads it: no write
    # lock to wait for, no race between processes, and a read-only role can still hash
    op.bulk_insert(table, [{"name": "outbound_ids", "value": secrets.token_hex(32)}])


def downgrade() -> None:
    # the key goes with the table: the pid_ ids of alerts sent before cannot be resolved after an upgrade
    op.drop_table("store_keys")
