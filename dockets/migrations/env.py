"""Alembic environment: runs the docket store's migrations on the URL or connection given
by `dockets.db.migrate` (no alembic.ini: the store is configured by the application)."""

from alembic import context

from dockets.store import Base

config = context.config
connection = config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run the migrations through dockets.db.migrate(url)")
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
