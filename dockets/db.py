"""Connecting to the docket store and migrating it (alembic, run programmatically)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

DEFAULT_URL = "sqlite:///fiscaliza-dockets.sqlite3"


def make_engine(url: str) -> Engine:
    engine = create_engine(url, future=True)
    if engine.dialect.name == "sqlite":
        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection, _record):  # foreign keys are off by default
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA foreign_keys = ON")
            cursor.execute("PRAGMA busy_timeout = 10000")
            cursor.close()
    return engine


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(Path(str(resources.files("dockets").joinpath("migrations")))))
    return config


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the store's schema up to `revision` (idempotent)."""
    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def open_store(url: str = DEFAULT_URL, *, upgrade: bool = True) -> sessionmaker[Session]:
    engine = make_engine(url)
    if upgrade:
        migrate(engine)
    return sessionmaker(engine, expire_on_commit=False)
