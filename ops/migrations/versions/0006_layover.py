"""A bus that arrived and stands in the terminal between trips is in layover, not "em
viagem" (#28 item 2): live_vehicle_status.layover_since, the arrival it stands after.

Revision ID: ops0006
"""

import sqlalchemy as sa
from alembic import op

revision = "ops0006"
down_revision = "ops0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("live_vehicle_status") as batch:
        batch.add_column(sa.Column("layover_since", sa.DateTime(timezone=True)))


def downgrade() -> None:
    with op.batch_alter_table("live_vehicle_status") as batch:
        batch.drop_column("layover_since")
