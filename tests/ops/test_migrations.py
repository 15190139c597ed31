"""The live tables' migrations make exactly the schema their models describe, under their
own version table beside the docket store's."""

from __future__ import annotations

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory

from dockets.db import alembic_config, make_engine, migrate as migrate_dockets
from ops.db import migrate
from ops.store import Base


def test_migrated_live_tables_match_the_models_beside_the_docket_store(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    migrate_dockets(engine)
    migrate(engine)
    migrate(engine)  # twice: nothing more
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"version_table": "ops_alembic_version"})
        def about_live_tables(diff) -> bool:
            table = diff[1] if diff[0].endswith("_table") else getattr(diff[1], "table", None)
            return table is None or table.name in Base.metadata.tables

        ours = [diff for diff in compare_metadata(context, Base.metadata) if about_live_tables(diff)]
        assert ours == []  # the docket store's tables are not the live tables' business
        assert context.get_current_revision() == "ops0007"
        assert connection.execute(sa.text("SELECT version_num FROM alembic_version")).scalar() == \
            ScriptDirectory.from_config(alembic_config()).get_current_head()  # the docket store's, untouched
