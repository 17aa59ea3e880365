"""The rewriter profile: which lemmas each prompt version adds in which conversations.

One row per (prompt version, lemma, conversation) in which the check found the lemma in the query and
in no received turn. ``added_content_word`` grades a word one step lower when its rewriter adds it in
many other conversations (its style, not this conversation's fact); see ``monitor.checks.profile``.
Rows hold single query words, never transcript text. The table starts empty: on a store with rewrites
already checked, ``rewrite-monitor check --recheck`` learns the profile from them.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "added_lemmas",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("prompt_version", sa.String(length=255), nullable=False),
        sa.Column("lemma", sa.String(length=255), nullable=False),
        sa.Column("conv_id", sa.String(length=255), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_added_lemmas")),
        sa.UniqueConstraint("prompt_version", "lemma", "conv_id", name="uq_added_lemmas"),
    )


def downgrade() -> None:
    op.drop_table("added_lemmas")
