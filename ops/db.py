"""Creating and migrating the live tables (alembic, run programmatically)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the live tables up to `revision` (idempotent)."""
    config = Config()
    config.set_main_option("script_location", str(Path(str(resources.files("ops").joinpath("migrations")))))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)
