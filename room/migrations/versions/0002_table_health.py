"""Each table's last word on its own health: the retained `…/status` (online, or offline as the
box's last will) and the newest periodic `…/health` report."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    op.create_table(
        "table_health",
        sa.Column("table_id", sa.String(64), primary_key=True),
        sa.Column("site", sa.String(64), nullable=False, server_default=""),
        sa.Column("state", sa.String(16), nullable=True),
        sa.Column("state_at", sa.Float, nullable=True),
        sa.Column("reported_at", sa.Float, nullable=True),
        sa.Column("received_at", sa.Float, nullable=True),
        sa.Column("camera", sa.String(16), nullable=True),
        sa.Column("broker_connected", sa.Boolean, nullable=True),
        sa.Column("outbox_depth", sa.Integer, nullable=True),
        sa.Column("analysis_fps", sa.Float, nullable=True),
        sa.Column("alarms", sa.JSON, nullable=False, server_default="[]"),
    )


def downgrade() -> None:
    op.drop_table("table_health")
