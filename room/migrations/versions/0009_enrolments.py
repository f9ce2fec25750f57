"""Each table's enrolments of its tile set (`paigow enrol`), and the one its box reads by."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"


def upgrade() -> None:
    op.create_table(
        "enrolments",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("table_id", sa.String(64), nullable=False, index=True),
        sa.Column("at", sa.Float(), nullable=False),
        sa.Column("whole", sa.Boolean(), nullable=False),
        sa.Column("accepted_by", sa.String(64), nullable=True),
        sa.Column("record", sa.JSON(), nullable=False),
        sa.Column("picture_jpeg", sa.LargeBinary(), nullable=True),
        sa.Column("received_at", sa.Float(), nullable=False),
    )
    op.add_column("table_health", sa.Column("enrolment", sa.String(64), nullable=True))


def downgrade() -> None:
    op.drop_column("table_health", "enrolment")
    op.drop_table("enrolments")
