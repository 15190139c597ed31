"""The feed the live tables are read against: its timezone, in which the panels bucket
days (#28 item 2: date_trunc in UTC put 1 Dec's 22:07 on 2 Dec).

Revision ID: ops0005
"""

import sqlalchemy as sa
from alembic import op

revision = "ops0005"
down_revision = "ops0004"
branch_labels = None
depends_on = None

APP, READER = "fiscaliza_app", "fiscaliza_reader"


def upgrade() -> None:
    op.create_table(
        "live_feed",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("timezone", sa.String(64), nullable=False),
    )
    bind = op.get_bind()
    if bind.dialect.name != "postgresql":
        return
    for role, privileges in ((APP, "SELECT, INSERT, UPDATE"), (READER, "SELECT")):
        if bind.exec_driver_sql("SELECT 1 FROM pg_roles WHERE rolname = %(r)s", {"r": role}).scalar():
            op.execute(f"GRANT {privileges} ON live_feed TO {role}")


def downgrade() -> None:
    op.drop_table("live_feed")
