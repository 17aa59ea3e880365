"""Which assertion terms the reviewer accepted from the suggestions (issue 35, part 4).

``verdicts.accepted_terms`` and ``regression_cases.accepted_terms``: ``{"must_include": [...],
"must_not_include": [...]}``, the terms of ``must_include`` / ``must_not_include`` the reviewer accepted
from the ones the findings suggested; the rest of those lists the reviewer typed. Nullable: verdicts and
cases stored before this revision do not say (the forms then stored prefilled terms unreviewed).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")


def upgrade() -> None:
    for table in ("verdicts", "regression_cases"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("accepted_terms", _JSON, nullable=True))


def downgrade() -> None:
    for table in ("verdicts", "regression_cases"):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("accepted_terms")
