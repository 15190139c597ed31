"""The defence's marks (#30 item 1): the readings of its own evidence an operator disputes,
with the reason, and the auto re-judged without them, cached (item 2). The app role may
insert marks and write the cached re-judgment, which each new mark replaces.

Revision ID: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)
APP = "fiscaliza_app"
APP_GRANTS = {
    "disputed_readings": "SELECT, INSERT, UPDATE (audit_id)",
    "rejudgments": "SELECT, INSERT, UPDATE",
}


def upgrade() -> None:
    op.create_table(
        "disputed_readings",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("docket_id", sa.Integer, sa.ForeignKey("dockets.id"), nullable=False, index=True),
        sa.Column("audit_id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), sa.ForeignKey("audit_log.id")),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("line", sa.Integer),
        sa.Column("vehicle_id", sa.String(64)),
        sa.Column("span_start", TZ),
        sa.Column("span_end", TZ),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("created_by", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
    )
    op.create_table(
        "rejudgments",
        sa.Column("docket_id", sa.Integer, sa.ForeignKey("dockets.id"), primary_key=True),
        sa.Column("bundle_sha256", sa.String(64), nullable=False),
        sa.Column("disputed_sha256", sa.String(64), nullable=False),
        sa.Column("result", sa.JSON, nullable=False),
        sa.Column("computed_at", TZ, nullable=False),
    )
    if op.get_bind().dialect.name == "postgresql" and op.get_bind().exec_driver_sql(
            "SELECT 1 FROM pg_roles WHERE rolname = %(name)s", {"name": APP}).scalar():
        for table, privileges in APP_GRANTS.items():
            op.execute(f"GRANT {privileges} ON {table} TO {APP}")
        op.execute(f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {APP}")


def downgrade() -> None:
    op.drop_table("rejudgments")
    op.drop_table("disputed_readings")
