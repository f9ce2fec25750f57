"""Failed logins are counted by the address they came from too (`note` "from ADDRESS"): an
index on the audit log's action and time keeps that count to the last few minutes' rows."""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision = "0005"


def upgrade() -> None:
    op.create_index("ix_audit_action_at", "audit", ["action", "at"])


def downgrade() -> None:
    op.drop_index("ix_audit_action_at", "audit")
