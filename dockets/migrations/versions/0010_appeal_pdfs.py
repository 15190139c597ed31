"""The judgment of the recurso as a document of record (#30, left over): its PDF rendered
once when the titular records the judgment, signed, and kept; the app role may insert it,
never change it (as the judgment of the defence's, judgment_pdfs).

Revision ID: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

APP = "fiscaliza_app"
APP_GRANTS = {
    "appeal_pdfs": "SELECT, INSERT",
}


def upgrade() -> None:
    op.create_table(
        "appeal_pdfs",
        sa.Column("docket_id", sa.Integer, sa.ForeignKey("dockets.id"), primary_key=True),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.Column("rendered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("signature", sa.JSON),
    )
    if op.get_bind().dialect.name == "postgresql" and op.get_bind().exec_driver_sql(
            "SELECT 1 FROM pg_roles WHERE rolname = %(name)s", {"name": APP}).scalar():
        for table, privileges in APP_GRANTS.items():
            op.execute(f"GRANT {privileges} ON {table} TO {APP}")


def downgrade() -> None:
    op.drop_table("appeal_pdfs")
