"""Each alert's one-sentence summary for the surveillance room (the box words it; a gap alert
is worded by ingest)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"


def upgrade() -> None:
    op.add_column("alerts", sa.Column("summary", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("alerts", "summary")
