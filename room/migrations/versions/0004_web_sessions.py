"""Review UI sessions kept on the server: logging out ends a session everywhere its cookie was
copied, and a user's role is read from `users` on each request, not from the cookie."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    op.create_table(
        "web_sessions",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("username", sa.String(64), nullable=False, index=True),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("ix_audit_username_action_at", "audit", ["username", "action", "at"])


def downgrade() -> None:
    op.drop_index("ix_audit_username_action_at", "audit")
    op.drop_table("web_sessions")
