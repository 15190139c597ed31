"""Alembic environment of the live tables (`ops.db.migrate`): their own version table, so
they migrate independently of the docket store in the same database."""

from alembic import context

from ops.store import Base

VERSION_TABLE = "ops_alembic_version"

config = context.config
connection = config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run the migrations through ops.db.migrate(engine)")
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True,
                  version_table=VERSION_TABLE)
with context.begin_transaction():
    context.run_migrations()
