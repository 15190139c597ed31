"""Each operator's art. 45 month as its days close (topic month-efficiency).

Revision ID: ops0002
"""

import sqlalchemy as sa
from alembic import op

revision = "ops0002"
down_revision = "ops0001"
branch_labels = None
depends_on = None

APP, READER = "fiscaliza_app", "fiscaliza_reader"


def upgrade() -> None:
    op.create_table(
        "live_month_efficiency",
        sa.Column("operator_id", sa.String(64), primary_key=True),
        sa.Column("month", sa.String(7), primary_key=True),
        sa.Column("programmed_km", sa.Float, nullable=False),
        sa.Column("realized_km", sa.Float, nullable=False),
        sa.Column("efficiency_pct", sa.Float, nullable=False),
        sa.Column("min_efficiency_pct", sa.Float, nullable=False),
        sa.Column("days_closed", sa.Integer, nullable=False),
        sa.Column("days_without_telemetry", sa.Integer, nullable=False),
        sa.Column("as_of", sa.Date, nullable=False),
        sa.Column("month_closed", sa.Boolean, nullable=False),
    )
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    for role, privileges in ((APP, "SELECT, INSERT, UPDATE"), (READER, "SELECT")):
        if bind.exec_driver_sql("SELECT 1 FROM pg_roles WHERE rolname = %(r)s", {"r": role}).scalar():
            op.execute(f"GRANT {privileges} ON live_month_efficiency TO {role}")


def downgrade() -> None:
    op.drop_table("live_month_efficiency")
