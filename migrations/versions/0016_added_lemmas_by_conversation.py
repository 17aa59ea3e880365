"""The rewriter profile's lemmas found by conversation (issue 36).

Each check batch and each page of queue admission asks which lemmas were added in its conversations
(``monitor.checks.store.findings.ProfileReader``). ``uq_added_lemmas`` leads with the prompt version and
the lemma, so that question scanned every row of the batch's prompt versions: 15.5 ms a batch on a store
of 200,000 rewrites (98,527 rows), growing with the store. ``ix_added_lemmas_conv`` finds the
conversations' own rows: on SQLite it covers the lemma, so the table is not read; PostgreSQL reads only
those rows (an index-only scan once the table is vacuumed).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-07
"""

from __future__ import annotations

from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_added_lemmas_conv", "added_lemmas", ["conv_id", "prompt_version", "lemma"])


def downgrade() -> None:
    op.drop_index("ix_added_lemmas_conv", table_name="added_lemmas")
