"""An infraction's code as any municipality's law writes it (#18): up to 32 characters
("art. 19 § único"; was 8, enough for João Neiva's "D-11").

Revision ID: ops0003
"""

import sqlalchemy as sa
from alembic import op

revision = "ops0003"
down_revision = "ops0002"
branch_labels = None
depends_on = None


def _code_length(length: int) -> None:
    # batch mode: SQLite changes a column by copying the table; PostgreSQL alters it in place
    with op.batch_alter_table("live_infractions") as batch:
        batch.alter_column("code", type_=sa.String(length), existing_nullable=False)


def upgrade() -> None:
    _code_length(32)


def downgrade() -> None:
    _code_length(8)
