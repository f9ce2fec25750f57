"""Missing sequence numbers kept as runs (first..last), not a row per number: a table whose
`seq` jumps by 300,000 (a restored store, a forged message) costs one row, not 300,000."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"


def upgrade() -> None:
    op.create_table(
        "missing_runs",
        sa.Column("table_id", sa.String(64), primary_key=True),
        sa.Column("first", sa.BigInteger, primary_key=True),
        sa.Column("last", sa.BigInteger, nullable=False),
        sa.Column("noticed_at", sa.Float, nullable=False),
        sa.Column("raised", sa.Boolean, nullable=False, default=False),
    )
    connection = op.get_bind()
    rows = connection.execute(
        sa.text("SELECT table_id, seq, noticed_at, raised FROM missing ORDER BY table_id, seq")
    ).all()
    runs: list[dict[str, object]] = []
    for table_id, seq, noticed_at, raised in rows:
        run = runs[-1] if runs else None
        if (
            run
            and run["table_id"] == table_id
            and run["last"] == seq - 1
            and run["raised"] == bool(raised)
        ):
            run["last"] = seq
        else:
            runs.append({"table_id": table_id, "first": seq, "last": seq,
                         "noticed_at": noticed_at, "raised": bool(raised)})  # fmt: skip
    if runs:
        connection.execute(
            sa.text(
                "INSERT INTO missing_runs (table_id, first, last, noticed_at, raised) "
                "VALUES (:table_id, :first, :last, :noticed_at, :raised)"
            ),
            runs,
        )
    op.drop_table("missing")


def downgrade() -> None:
    raise NotImplementedError("missing runs are not expanded back into a row per number")
