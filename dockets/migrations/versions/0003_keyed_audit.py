"""The audit log is keyed (HMAC, the key outside the database) and issued PDFs are signed.

The chain's columns are renamed for what they now hold, and each entry names its key.
Entries written before this revision were chained by an unkeyed SHA-256 and do not
verify with a key: a store from before it starts a new one (no store was in production).

Revision ID: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.alter_column("audit_log", "prev_sha256", new_column_name="prev_mac")
    op.alter_column("audit_log", "sha256", new_column_name="mac")
    op.add_column("audit_log", sa.Column("key_id", sa.String(16), nullable=False, server_default=""))
    op.add_column("docket_pdfs", sa.Column("signature", sa.JSON))


def downgrade() -> None:
    op.drop_column("docket_pdfs", "signature")
    op.drop_column("audit_log", "key_id")
    op.alter_column("audit_log", "mac", new_column_name="sha256")
    op.alter_column("audit_log", "prev_mac", new_column_name="prev_sha256")
