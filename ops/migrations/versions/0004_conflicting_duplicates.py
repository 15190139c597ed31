"""The messages each vehicle sent in two versions (topic rejected, conflicting_duplicate),
counted per vehicle in the operations room: a tampering signal (#33 item 4).

Revision ID: ops0004
"""

import sqlalchemy as sa
from alembic import op


revision = "ops0004"
down_revision = "ops0003"
branch_labels = None
depends_on = None

APP, READER = "fiscaliza_app", "fiscaliza_reader"


def upgrade() -> None:
    op.create_table(
        "live_conflicting_duplicates",
        sa.Column("source", sa.String(16), primary_key=True),
        sa.Column("vehicle_id", sa.String(64), primary_key=True),
        sa.Column("ts", sa.DateTime(timezone=True), primary_key=True),
        sa.Column("seq", sa.Integer),
        sa.Column("detail", sa.String(500), nullable=False),
        sa.Column("location", sa.String(128)),
    )
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    for role, privileges in ((APP, "SELECT, INSERT, UPDATE"), (READER, "SELECT")):
        if bind.exec_driver_sql("SELECT 1 FROM pg_roles WHERE rolname = %(r)s", {"r": role}).scalar():
            op.execute(f"GRANT {privileges} ON live_conflicting_duplicates TO {role}")


def downgrade() -> None:
    op.drop_table("live_conflicting_duplicates")
