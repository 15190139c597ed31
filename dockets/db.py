"""Connecting to the docket store and migrating it (alembic, run programmatically)."""

from __future__ import annotations

import logging
from importlib import resources
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from dockets import audit
from dockets.anchors import AnchorLog
from dockets.audit import AuditKey
from kernel.settings import DEFAULT_DB_URL

log = logging.getLogger(__name__)

DEFAULT_URL = DEFAULT_DB_URL


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
    _alembic(engine, command.upgrade, revision)


def downgrade(engine: Engine, revision: str) -> None:
    """Take the store's schema back to `revision` (operators only: data may not fit it)."""
    _alembic(engine, command.downgrade, revision)


def _alembic(engine: Engine, run, revision: str) -> None:
    """On SQLite a column changes by copying its table (alembic's batch mode), which the
    other tables' foreign keys would refuse: as SQLite's own procedure for schema changes
    prescribes, they are off for the migration (the pragma only takes effect outside a
    transaction) and every reference is checked before it commits."""
    config = alembic_config()
    sqlite = engine.dialect.name == "sqlite"
    with engine.connect() as connection:
        if sqlite:
            connection.exec_driver_sql("PRAGMA foreign_keys = OFF")
            connection.commit()  # SQLAlchemy began a transaction around the pragma: none is open in SQLite
        try:
            with connection.begin():
                config.attributes["connection"] = connection
                run(config, revision)
                if sqlite and connection.exec_driver_sql("PRAGMA foreign_key_check").first() is not None:
                    raise RuntimeError("the migration left a reference without its row (PRAGMA foreign_key_check)")
        finally:
            if sqlite:
                connection.rollback()  # whatever a failure left open, so that the pragma takes effect
                connection.exec_driver_sql("PRAGMA foreign_keys = ON")
                connection.commit()


def open_store(url: str = DEFAULT_URL, *, upgrade: bool = True, audit_key: AuditKey | None = None,
               anchors: AnchorLog | None = None) -> sessionmaker[Session]:
    """Sessions on the store. Writers pass the audit key (without it, a state change is
    refused) and the anchor log, which receives the chain's head after each commit."""
    engine = make_engine(url)
    if upgrade:
        migrate(engine)
    sessions = sessionmaker(engine, expire_on_commit=False, info={audit.SESSION_KEY: audit_key})
    if anchors is not None:
        _anchor_commits(sessions, anchors)
    return sessions


def _anchor_commits(sessions: sessionmaker[Session], anchors: AnchorLog) -> None:
    @event.listens_for(sessions, "after_commit")
    def _anchor(session: Session) -> None:
        written = session.info.pop(audit.SESSION_HEAD, None)
        if written is None:
            return
        try:
            anchors.append(audit.Anchor.of(written))
        except (audit.AuditError, OSError) as exc:
            # The commit stands: the next anchor covers this head through the chain.
            log.error("audit head %s not anchored in %s: %s", written.entry_id, anchors.describe(), exc)

    @event.listens_for(sessions, "after_rollback")
    def _forget(session: Session) -> None:
        session.info.pop(audit.SESSION_HEAD, None)
