"""The incident store: tables, messages, missing sequence numbers, rounds, hands, alerts,
evidence, users, audit."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None

APPEND_ONLY = {
    "sqlite": [
        "CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit "
        "BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END",
        "CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit "
        "BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END",
    ],
    "postgresql": [
        "CREATE FUNCTION audit_append_only() RETURNS trigger AS $$ BEGIN "
        "RAISE EXCEPTION 'the audit log is append-only'; END $$ LANGUAGE plpgsql",
        "CREATE TRIGGER audit_no_change BEFORE UPDATE OR DELETE ON audit "
        "FOR EACH ROW EXECUTE FUNCTION audit_append_only()",
    ],
}


def upgrade() -> None:
    op.create_table(
        "tables",
        sa.Column("table_id", sa.String(64), primary_key=True),
        sa.Column("site", sa.String(64), nullable=False, server_default=""),
        sa.Column("last_seq", sa.Integer, nullable=False, server_default="0"),
    )
    op.create_table(
        "messages",
        sa.Column("message_id", sa.String(64), primary_key=True),
        sa.Column("table_id", sa.String(64), nullable=False, index=True),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("received_at", sa.Float, nullable=False),
    )
    op.create_table(
        "missing",
        sa.Column("table_id", sa.String(64), primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True),
        sa.Column("noticed_at", sa.Float, nullable=False),
        sa.Column("raised", sa.Boolean, nullable=False, server_default=sa.false()),
    )
    op.create_table(
        "rounds",
        sa.Column("round_id", sa.String(128), primary_key=True),
        sa.Column("table_id", sa.String(64), nullable=False, index=True),
        sa.Column("rules", sa.String(16), nullable=False),
        sa.Column("banker", sa.Integer, nullable=False),
        sa.Column("complete", sa.Boolean, nullable=False),
        sa.Column("dice", sa.JSON, nullable=False),
        sa.Column("cut", sa.String(64), nullable=False),
        sa.Column("first_position", sa.Integer, nullable=True),
        sa.Column("required_first_position", sa.Integer, nullable=True),
        sa.Column("received_at", sa.Float, nullable=False, index=True),
        sa.Column("record", sa.JSON, nullable=False),
    )
    op.create_table(
        "hands",
        sa.Column("round_id", sa.String(128), sa.ForeignKey("rounds.round_id"), primary_key=True),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("tiles", sa.JSON, nullable=False),
        sa.Column("high", sa.JSON, nullable=False),
        sa.Column("low", sa.JSON, nullable=False),
        sa.Column("house_way", sa.Boolean, nullable=True),
        sa.Column("outcome", sa.String(8), nullable=True),
    )
    op.create_table(
        "alerts",
        sa.Column("serial", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(64), nullable=False, unique=True),
        sa.Column("table_id", sa.String(64), nullable=False, index=True),
        sa.Column("round_id", sa.String(128), nullable=False, index=True),
        sa.Column("kind", sa.String(32), nullable=False, index=True),
        sa.Column("severity", sa.String(16), nullable=False),
        sa.Column("position", sa.Integer, nullable=True),
        sa.Column("rules", sa.String(16), nullable=False),
        sa.Column("clause", sa.Text, nullable=False),
        sa.Column("expected", sa.Text, nullable=True),
        sa.Column("observed", sa.Text, nullable=True),
        sa.Column("confidence", sa.Float, nullable=False),
        sa.Column("evidence_time_s", sa.Float, nullable=False),
        sa.Column("received_at", sa.Float, nullable=False, index=True),
        sa.Column("status", sa.String(16), nullable=False, index=True),
    )
    op.create_table(
        "evidence",
        sa.Column("alert_id", sa.String(64), sa.ForeignKey("alerts.id"), primary_key=True),
        sa.Column("jpeg", sa.LargeBinary, nullable=False),
        sa.Column("stored_at", sa.Float, nullable=False, index=True),
    )
    op.create_table(
        "users",
        sa.Column("username", sa.String(64), primary_key=True),
        sa.Column("password_hash", sa.String(256), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
    )
    op.create_table(
        "audit",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("at", sa.Float, nullable=False),
        sa.Column("username", sa.String(64), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("alert_id", sa.String(64), nullable=True, index=True),
        sa.Column("note", sa.Text, nullable=False),
    )
    for statement in APPEND_ONLY.get(op.get_bind().dialect.name, []):
        op.execute(statement)


def downgrade() -> None:
    for table in (
        "audit",
        "users",
        "evidence",
        "alerts",
        "hands",
        "rounds",
        "missing",
        "messages",
        "tables",
    ):
        op.drop_table(table)
