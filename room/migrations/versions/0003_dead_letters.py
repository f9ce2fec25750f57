"""Dead letters: messages ingest refused, with why, the topic and a bounded copy of the payload."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    op.create_table(
        "dead_letters",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("received_at", sa.Float, nullable=False, index=True),
        sa.Column("topic", sa.String(256), nullable=False),
        sa.Column("reason", sa.String(512), nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("payload", sa.LargeBinary, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("dead_letters")
