"""Bunching and gaps on every line, timetabled ones too (#28 item 2):
live_vehicle_status.headway_state, the engine's reading of the headway against the
scheduled one with the policy's [headway] bounds.

Revision ID: ops0007
"""

import sqlalchemy as sa
from alembic import op

revision = "ops0007"
down_revision = "ops0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("live_vehicle_status") as batch:
        batch.add_column(sa.Column("headway_state", sa.String(16)))


def downgrade() -> None:
    with op.batch_alter_table("live_vehicle_status") as batch:
        batch.drop_column("headway_state")
