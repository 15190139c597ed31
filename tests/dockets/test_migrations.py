"""The alembic migrations make exactly the schema the SQLAlchemy models describe, and carry
the rows (and the audit record certifying them) across."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory

from dockets.db import alembic_config, downgrade, make_engine, migrate
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


# --- 0005: legal_basis and legal_text in two columns ------------------------------------

C01_BASIS = ("Lei Municipal nº 867/1998 (João Neiva), Anexo I – Código Disciplinar, Capítulo II, Grupo “C”, "
             "C-01; multa conforme art. 3º")
C01_TEXT = "dirigir com excesso de velocidade e/ou desobedecendo regras de trânsito."


def _record(n: int, code: str, legal_basis: str) -> dict:
    return {"infraction_id": f"{n:032x}", "code": code, "group": code[0], "fine_ufir": 150, "status": "confirmed",
            "operator_id": "VNV", "route_id": "101", "direction_id": 0, "trip_id": "101-DU-0-0930",
            "vehicle_id": "JN-1011", "service_date": "2026-12-01", "occurred_at": "2026-12-01T09:44:21-03:00",
            "lat": -19.7574776, "lon": -40.3852385, "description": "infração", "legal_basis": legal_basis,
            "evidence": {}}


# as the records have always written it, and one that quotes no law
LEGACY = [_record(1, "C-01", f"{C01_BASIS}. Texto legal: “{C01_TEXT}”"),
          _record(2, "C-01", f"{C01_BASIS}. Texto legal: ““motivo” entre aspas”"),
          _record(3, "D-11", "D-11")]


def _legacy_store(url: str) -> None:
    """A store at 0004 written as the code before 0005 wrote it: each docket's legal_basis
    the record's whole string, certified whole by its audit entry."""
    from sqlalchemy import insert
    from sqlalchemy.orm import sessionmaker

    from dockets.audit import SESSION_KEY
    from dockets.service import SYSTEM, _docket_from_record, audit_docket, ensure_operators
    from dockets.store import Docket
    from stores import TEST_AUDIT_KEY

    engine = make_engine(url)
    migrate(engine, "0004")
    sessions = sessionmaker(engine, info={SESSION_KEY: TEST_AUDIT_KEY})
    with sessions.begin() as session:
        ensure_operators(session, {"VNV": "Viação Neivense"})
        for record in LEGACY:
            fresh = _docket_from_record(record, {}, 4.5373, None)
            row = {c.key: getattr(fresh, c.key) for c in Docket.__table__.columns if c.key not in ("id", "legal_text")}
            row["legal_basis"] = record["legal_basis"]  # whole: the one column there was
            docket_id = session.execute(insert(Docket.__table__).values(row)).inserted_primary_key[0]
            entry = audit_docket(session, SYSTEM, Docket(id=docket_id, **row), "Registrar",
                                 {"infraction_id": record["infraction_id"]})
            assert entry.payload["state"]["legal_basis"] == record["legal_basis"]
    engine.dispose()


def _rows(url: str) -> list[tuple]:
    engine = make_engine(url)
    with engine.connect() as connection:
        rows = connection.execute(sa.text("SELECT * FROM dockets ORDER BY id")).mappings().all()
    engine.dispose()
    return [(row["legal_basis"], row.get("legal_text")) for row in rows]


def _entries_written_before_the_split_still_verify_after_it(url: str, calendar) -> None:
    from dockets import workflow
    from dockets.service import Actor, perform
    from dockets.users import create_user
    from stores import open_test_store, verified_entries

    _legacy_store(url)
    assert _rows(url) == [(r["legal_basis"], None) for r in LEGACY]
    sessions = open_test_store(url)  # migrates to head, as every command does on start
    try:
        assert _rows(url) == [(C01_BASIS, C01_TEXT), (C01_BASIS, "“motivo” entre aspas"), ("D-11", None)]
        with sessions() as session:
            assert verified_entries(session) == 3
        # the chain goes on: an act on a split docket is certified and verifies with the old entries
        with sessions.begin() as session:
            fiscal = create_user(session, username="fiscal", full_name="F", role="fiscal",
                                 password="uma-senha-longa", registration="1")
            perform(session, Actor.of(fiscal), 1, workflow.Lavrar(on=dt.date(2026, 12, 2)), calendar,
                    renderer=lambda d, b, h: b"%PDF-1.4 auto")
        with sessions() as session:
            assert verified_entries(session) == 5
    finally:
        sessions.kw["bind"].dispose()
    # downgrade joins the columns back into the records' strings, byte for byte
    engine = make_engine(url)
    downgrade(engine, "0004")
    engine.dispose()
    assert _rows(url) == [(r["legal_basis"], None) for r in LEGACY]


def test_entries_written_before_the_split_still_verify_after_it(tmp_path, calendar):
    _entries_written_before_the_split_still_verify_after_it(f"sqlite:///{tmp_path / 'store.sqlite3'}", calendar)


@pytest.mark.postgres
def test_entries_written_before_the_split_still_verify_after_it_on_postgres(postgres_cluster, calendar):
    import pg_cluster

    url = pg_cluster.create_database(postgres_cluster, "fiscaliza_legal_text")
    _entries_written_before_the_split_still_verify_after_it(url, calendar)
