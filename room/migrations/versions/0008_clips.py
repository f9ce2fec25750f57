"""Each alert's clip and annotated whole frame (`edge/clips.py`), sent after the alert."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"


def upgrade() -> None:
    op.create_table(
        "clips",
        sa.Column("alert_id", sa.String(64), primary_key=True),
        sa.Column("frame_jpeg", sa.LargeBinary(), nullable=False),
        sa.Column("clip_webm", sa.LargeBinary(), nullable=False),
        sa.Column("evidence_time_s", sa.Float(), nullable=False),
        sa.Column("from_s", sa.Float(), nullable=False),
        sa.Column("to_s", sa.Float(), nullable=False),
        sa.Column("stored_at", sa.Float(), nullable=False),
    )
    op.create_index("ix_clips_stored_at", "clips", ["stored_at"])


def downgrade() -> None:
    op.drop_index("ix_clips_stored_at", "clips")
    op.drop_table("clips")
