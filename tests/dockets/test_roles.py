"""Least privilege on the real PostgreSQL (#13 item 5): the roles deploy/postgres/roles.sh
creates, with the grants migration 0004 gives them. The web app and sink's role runs the
whole docket workflow and cannot rewrite the record; Grafana's role reads the dashboard
views and nothing else."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from pathlib import Path

import pg_cluster
import pytest
import sqlalchemy as sa
from stores import TEST_AUDIT_KEY, open_test_store

from dockets import workflow
from dockets.audit import verify_record
from dockets.db import make_engine, migrate
from dockets.service import ensure_operators, ingest, perform
from dockets.store import Base
from dockets.users import create_user
from ops.db import migrate as migrate_live_tables

pytestmark = pytest.mark.postgres

ROOT = Path(__file__).resolve().parents[2]
MIGRATIONS = ROOT / "dockets" / "migrations" / "versions"
DATABASE = "fiscaliza_roles"


@pytest.fixture(scope="module")
def urls(postgres_cluster) -> dict[str, str]:
    """A database set up as in production: roles.sh as the superuser, then the
    migrations as the owner. The URL of each role (trust auth in the test cluster)."""
    admin = pg_cluster.create_database(postgres_cluster, DATABASE)
    port = sa.engine.make_url(admin).port
    env = {**os.environ, "PGHOST": "127.0.0.1", "PGPORT": str(port), "POSTGRES_USER": "postgres",
           "POSTGRES_DB": DATABASE, "FISCALIZA_OWNER_PASSWORD": "dono-123", "FISCALIZA_APP_PASSWORD": "app-123",
           "FISCALIZA_READER_PASSWORD": "leitor-123"}
    done = subprocess.run(["sh", str(ROOT / "deploy" / "postgres" / "roles.sh")], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    urls = {role: admin.replace("postgres@", f"{role}@", 1)
            for role in ("fiscaliza_owner", "fiscaliza_app", "fiscaliza_reader")}
    owner = make_engine(urls["fiscaliza_owner"])
    migrate(owner)
    migrate_live_tables(owner)  # as `fiscaliza dockets migrate` does
    owner.dispose()
    return urls


def _record(n: int) -> dict:
    return {"infraction_id": f"{n:032x}", "code": "D-11", "group": "D", "fine_ufir": 200, "status": "confirmed",
            "operator_id": "TRD", "route_id": "201", "direction_id": 1, "trip_id": "201-DU-1-FREQ",
            "vehicle_id": "JN-2014", "service_date": "2026-12-01", "occurred_at": "2026-12-01T13:25:49-03:00",
            "lat": -19.7673062, "lon": -40.4002203, "description": "desvio", "legal_basis": "D-11", "evidence": {}}


def test_every_table_has_its_grants_for_the_app_role():
    # a new table without grants would fail only in production
    # 0004 grants on the tables it found, each later migration on the ones it adds
    source = "".join(path.read_text() for path in sorted(MIGRATIONS.glob("0*.py")))
    for table in [*Base.metadata.tables, "alembic_version"]:
        assert f'"{table}":' in source, f"no migration grants anything on {table}"


def test_the_app_role_runs_the_whole_docket_workflow(urls, jumped_day):
    from dockets import disputes
    from dockets.calendar import BusinessCalendar
    from rules.joao_neiva.anexo_i import LAW

    calendar = BusinessCalendar.for_municipality("ES", law=LAW)
    sessions = open_test_store(urls["fiscaliza_app"])  # checks the schema is at head, as the app does
    try:
        with sessions.begin() as session:
            ensure_operators(session, {"TRD": "Transportes Rio Doce"})
            fiscal = create_user(session, username="fiscal-roles", full_name="F", role="fiscal",
                                 password="uma-senha-longa", registration="1")
            operador = create_user(session, username="trd-roles", full_name="T", role="operador",
                                   password="uma-senha-longa", operator_id="TRD")
            gestor = create_user(session, username="gestor-roles", full_name="G", role="gestor",
                                 password="uma-senha-longa")
            docket_id = ingest(session, [_record(1)], plates={}, ufir_brl=1.0641,
                               bundle_for=lambda r: b"bundle").created[0]
            ingest(session, [{**_record(1), "trip_id": "outra"}], plates={}, ufir_brl=1.0641,
                   bundle_for=lambda r: b"newer bundle")  # a draft's bundle replaced
        from dockets.service import Actor

        with sessions.begin() as session:
            perform(session, Actor.of(fiscal), docket_id, workflow.Lavrar(on=dt.date(2026, 12, 2)), calendar,
                    renderer=lambda d, b, h: b"%PDF-1.4 auto")
            perform(session, Actor.of(fiscal), docket_id, workflow.Notificar(on=dt.date(2026, 12, 3)), calendar)
            perform(session, Actor.of(operador), docket_id, workflow.ApresentarDefesa(on=dt.date(2026, 12, 4)),
                    calendar, attachments=[("d.pdf", "application/pdf", b"%PDF-1.4 d")])
            # the judgment's PDF, kept at the act
            perform(session, Actor.of(gestor), docket_id,
                    workflow.JulgarDefesa(on=dt.date(2026, 12, 7), procedente=True, fundamentacao="subsiste"),
                    calendar, judgment_renderer=lambda d, a, j: b"%PDF-1.4 julgamento")
        # the defence's marks of disputed readings and their re-judgment, on a real bundle
        with sessions.begin() as session:
            jumped = ingest(session, [jumped_day.record], plates={}, ufir_brl=1.0641,
                            bundle_for=lambda r: jumped_day.data).created[0]
            perform(session, Actor.of(fiscal), jumped, workflow.Lavrar(on=dt.date(2026, 12, 2)), calendar,
                    renderer=lambda d, b, h: b"%PDF-1.4 auto")
            perform(session, Actor.of(fiscal), jumped, workflow.Notificar(on=dt.date(2026, 12, 3)), calendar)
        with sessions.begin() as session:
            disputes.mark_readings(session, Actor.of(operador), jumped,
                                   disputes.Marks(jump_lines(jumped_day), reason="salto de GPS"), calendar,
                                   dt.date(2026, 12, 3))
        with sessions() as session:
            report = verify_record(session, {TEST_AUDIT_KEY.key_id: TEST_AUDIT_KEY}, [])
        # 3 users, Registrar and its update, 4 acts; the second auto's Registrar, 2 acts and the marks
        assert report.dockets == 2 and report.entries == 13
    finally:
        sessions.kw["bind"].dispose()


def jump_lines(day) -> tuple[tuple[str, int], ...]:
    """The bundle lines of the jump's three fixes."""
    from dockets.bundle import read_bundle
    from dockets.rejudgment import readings

    lines = {r.msg_id: (r.source, r.number) for r in readings(read_bundle(day.data), "America/Sao_Paulo")}
    return tuple(lines[name] for name in day.jump)


@pytest.mark.parametrize("statement", [
    "UPDATE audit_log SET action = 'x'",
    "DELETE FROM audit_log",
    "TRUNCATE audit_log",
    "DROP TRIGGER audit_log_append_only ON audit_log",
    "ALTER TABLE audit_log DISABLE TRIGGER ALL",
    "DELETE FROM dockets",
    "UPDATE docket_pdfs SET data = ''",
    "UPDATE judgment_pdfs SET data = ''",
    "UPDATE appeal_pdfs SET data = ''",
    "UPDATE attachments SET data = ''",
    "DROP TABLE dockets",
    "CREATE TABLE intrusa (id int)",
])
def test_the_app_role_cannot_rewrite_the_record_or_the_schema(urls, statement):
    engine = sa.create_engine(urls["fiscaliza_app"])
    try:
        with engine.begin() as connection, pytest.raises(sa.exc.ProgrammingError,
                                                         match="permission denied|must be owner"):
            connection.execute(sa.text(statement))
    finally:
        engine.dispose()


@pytest.mark.parametrize("statement", [
    "SELECT * FROM users", "SELECT * FROM web_sessions", "SELECT * FROM audit_log", "SELECT * FROM dockets",
    "SELECT data FROM evidence_bundles", "INSERT INTO operators VALUES ('X', 'X')",
    "UPDATE dockets SET stage = 'pago'",
])
def test_grafanas_role_reads_nothing_but_the_dashboard_views(urls, statement):
    engine = sa.create_engine(urls["fiscaliza_reader"])
    try:
        with engine.begin() as connection:
            assert connection.execute(sa.text("SELECT count(*) FROM dashboard_dockets")).scalar() >= 0
        with engine.begin() as connection, pytest.raises(sa.exc.ProgrammingError, match="permission denied"):
            connection.execute(sa.text(statement))
    finally:
        engine.dispose()


def test_every_dashboard_query_runs_as_grafanas_role(urls):
    import json
    import re

    from dashboards.build import build

    sessions = open_test_store(urls["fiscaliza_app"])
    with sessions.begin() as session:
        ensure_operators(session, {"TRD": "Transportes Rio Doce"})
        ingest(session, [_record(2)], plates={}, ufir_brl=1.0641)
    sessions.kw["bind"].dispose()
    engine = sa.create_engine(urls["fiscaliza_reader"])
    try:
        with engine.connect() as connection:
            for panel in json.loads(build()["fiscaliza-autos.json"])["panels"]:
                sql = re.sub(r"\$__timeFilter\(([\w.]+)\)",
                             r"\1 BETWEEN '2026-11-01T00:00:00Z' AND '2026-12-31T00:00:00Z'",
                             panel["targets"][0]["rawSql"])
                connection.execute(sa.text(sql)).all()
    finally:
        engine.dispose()


def test_the_live_tables_are_written_by_the_app_role_and_read_by_grafanas(urls, demo_day):
    import msgspec

    from ops.rows import row_of
    from ops.sink import write_batch

    status = demo_day.result.statuses[0]
    app = make_engine(urls["fiscaliza_app"])
    reader = sa.create_engine(urls["fiscaliza_reader"])
    try:
        migrate_live_tables(app)  # the ops sink checks it is at head, as the app role
        write_batch(app, {"vehicle-status": [row_of("vehicle-status", msgspec.json.encode(status), "x", {})]})
        with reader.connect() as connection:
            assert connection.execute(sa.text("SELECT vehicle_id FROM live_vehicle_status")).scalars().all() == \
                [status.vehicle_id]
        with reader.begin() as connection, pytest.raises(sa.exc.ProgrammingError, match="permission denied"):
            connection.execute(sa.text("DELETE FROM live_vehicle_status"))
    finally:
        app.dispose()
        reader.dispose()
