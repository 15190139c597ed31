"""The alembic migrations make exactly the schema the SQLAlchemy models describe."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory

from dockets.db import alembic_config, make_engine, migrate
from dockets.store import Base


def test_migrated_schema_matches_the_models(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    migrate(engine)
    with engine.connect() as connection:
        diff = compare_metadata(MigrationContext.configure(connection), Base.metadata)
    assert diff == []


def test_migrating_twice_changes_nothing(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    migrate(engine)
    migrate(engine)
    with engine.connect() as connection:
        head = ScriptDirectory.from_config(alembic_config()).get_current_head()
        assert MigrationContext.configure(connection).get_current_revision() == head
