"""The audit log refuses INSERT OR REPLACE on SQLite.

REPLACE resolves a primary-key conflict by deleting the old row, and SQLite fires no
DELETE trigger for that (recursive_triggers is off): an entry could be overwritten in
place. An insert whose id is already there is refused before any conflict resolution.
PostgreSQL has no REPLACE; its ON CONFLICT DO UPDATE fires the UPDATE trigger.

Revision ID: 0002
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            "CREATE TRIGGER audit_log_no_replace BEFORE INSERT ON audit_log "
            "WHEN EXISTS (SELECT 1 FROM audit_log WHERE id = NEW.id) "
            "BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER audit_log_no_replace")
