"""The docket store on PostgreSQL + PostGIS, as in production.

A throwaway PostgreSQL 15 cluster (Debian's postgresql-15 and postgresql-15-postgis-3)
is started for the test session in a temporary directory, listening only on 127.0.0.1
(and a unix socket in that directory), and deleted afterwards. Each test gets its own
freshly migrated database, so no test sees another's dockets, audit entries or numbers.

Places: the infraction points are the sample feed's route 101/201 stops in João Neiva
(ES); 0.0089932° of latitude is 1 km (the WGS84 meridian degree at 19.8° S is ~110.8 km,
so this is ~996.5 m: "about 1 km" either way, far beyond the 100 m search radius).
"""

from __future__ import annotations

import datetime as dt
import threading
import time

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker
from stores import verified_entries

from dockets import workflow
from dockets.calendar import BusinessCalendar
from dockets.db import alembic_config, make_engine, migrate
from dockets.service import Actor, NotFound, ensure_operators, get_docket, ingest, perform, visible
from dockets.store import AuditEntry, Docket, YearCounter
from rules.joao_neiva.anexo_i import LAW

pytestmark = pytest.mark.postgres

@pytest.fixture
def sessions(pg_sessions):
    """A database of the test's own, migrated to head (see tests/conftest.py)."""
    return pg_sessions


# --- helpers -------------------------------------------------------------------------------

OPERATORS = {"VNV": "Viação Neivense", "TRD": "Transportes Rio Doce"}
PLATES = {"JN-1011": "RQB4E17", "JN-1012": "RQC1H82", "JN-2012": "RQF8D04", "JN-2014": "RQH2B77"}
UFIR_BRL = 4.5373
CALENDAR = BusinessCalendar.for_municipality("ES", law=LAW)
ONE_KM_LAT = 0.0089932
# Avenida Presidente Vargas – Correios (stop 1001) and a point on route 201 (A-07 above)
CORREIOS = (-19.7574776, -40.3852385)
VILA_NOVA = (-19.7668685, -40.4004194)


def infraction(infraction_id: str, *, operator_id: str = "VNV", at: tuple[float, float] | None = CORREIOS,
               occurred_at: str = "2026-12-01T09:44:21-03:00") -> dict:
    """An infractions.jsonl line as the replay writes it: a confirmed C-01 (speeding)."""
    route, vehicle = ("101", "JN-1011") if operator_id == "VNV" else ("201", "JN-2012")
    lat, lon = at if at is not None else (None, None)
    return {
        "infraction_id": infraction_id, "code": "C-01", "group": "C", "fine_ufir": 150, "status": "confirmed",
        "operator_id": operator_id, "route_id": route, "direction_id": 0, "trip_id": f"{route}-DU-0-0930",
        "vehicle_id": vehicle, "service_date": occurred_at[:10], "occurred_at": occurred_at, "lat": lat, "lon": lon,
        "description": f"Veículo {vehicle} a 80 km/h onde o limite é 60 km/h (tolerância 7 km/h), "
                       "das 09:44:21 às 09:44:41",
        "legal_basis": "Lei Municipal nº 867/1998 (João Neiva), Anexo I – Código Disciplinar, Capítulo II, "
                       "Grupo “C”, C-01; multa conforme art. 3º. Texto legal: “dirigir com excesso de "
                       "velocidade e/ou desobedecendo regras de trânsito.”",
        "evidence": {"tolerance_kmh": 7.0, "max_speed_kmh": 80.0, "limit_kmh": 60.0,
                     "from": occurred_at, "to": occurred_at,
                     "pings": [{"msg_id": f"{vehicle}/{occurred_at}#1406", "speed_kmh": 80.0, "limit_kmh": 60.0}],
                     "policy_version": "jn-2026.1", "engine_version": "0.1.0"},
    }


def store(sessions: sessionmaker[Session], *records: dict) -> list[int]:
    with sessions.begin() as session:
        ensure_operators(session, OPERATORS)
        return ingest(session, records, plates=PLATES, ufir_brl=UFIR_BRL).created


# --- the schema ----------------------------------------------------------------------------

def test_migrations_reach_head_on_postgres_and_are_idempotent(postgres_url):
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    engine = make_engine(postgres_url)
    try:
        migrate(engine)
        migrate(engine)  # a second run (a restart) changes nothing and does not fail
        with engine.connect() as connection:
            assert connection.scalar(sa.text("SELECT version_num FROM alembic_version")) == head
            assert connection.scalar(sa.text("SELECT count(*) FROM alembic_version")) == 1
            tables = set(sa.inspect(connection).get_table_names())
            assert {"operators", "users", "web_sessions", "year_counters", "audit_log", "dockets",
                    "evidence_bundles", "docket_pdfs", "attachments", "occurrences"} <= tables
            assert connection.scalar(sa.text("SELECT extversion FROM pg_extension WHERE extname = 'postgis'"))
            assert "audit_log_append_only" in connection.scalars(sa.text(
                "SELECT tgname FROM pg_trigger WHERE tgrelid = 'audit_log'::regclass AND NOT tgisinternal")).all()
    finally:
        engine.dispose()


@pytest.mark.filterwarnings("ignore:Did not recognize type 'geometry':sqlalchemy.exc.SAWarning")
def test_the_models_match_the_postgres_schema(sessions):
    """What alembic's autogenerate would change: nothing, but for the PostGIS column (and
    its index) that only the migration knows about, and PostGIS's own table."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from dockets.store import Base

    def ours(obj, name, type_, reflected, compare_to):
        return not (name in ("location", "ix_dockets_location", "spatial_ref_sys") and reflected)

    with sessions.kw["bind"].connect() as connection:
        context = MigrationContext.configure(connection, opts={"include_object": ours})
        assert compare_metadata(context, Base.metadata) == []


def test_location_is_a_postgis_point_generated_from_lon_lat(sessions):
    [docket_id] = store(sessions, infraction("loc-1"))
    [no_point] = store(sessions, infraction("loc-2", at=None))
    with sessions() as session:
        column = session.execute(sa.text(
            "SELECT type, srid, coord_dimension FROM geometry_columns "
            "WHERE f_table_name = 'dockets' AND f_geometry_column = 'location'")).one()
        assert tuple(column) == ("POINT", 4326, 2)
        assert session.scalar(sa.text(
            "SELECT attgenerated FROM pg_attribute WHERE attrelid = 'dockets'::regclass "
            "AND attname = 'location'")) == "s"
        row = session.execute(sa.text(
            "SELECT ST_X(location), ST_Y(location), ST_SRID(location), GeometryType(location) "
            "FROM dockets WHERE id = :id"), {"id": docket_id}).one()
        assert row == (CORREIOS[1], CORREIOS[0], 4326, "POINT")
        assert session.scalar(sa.text("SELECT location IS NULL FROM dockets WHERE id = :id"), {"id": no_point})
        # nobody writes it: it is computed
        with pytest.raises(sa.exc.DBAPIError, match="generated"):
            session.execute(sa.text("UPDATE dockets SET location = NULL WHERE id = :id"), {"id": docket_id})


def test_a_spatial_query_finds_the_docket_at_its_point_and_not_one_a_kilometre_away(sessions):
    lat, lon = CORREIOS
    [here] = store(sessions, infraction("near-1"))
    [north] = store(sessions, infraction("near-2", at=(lat + ONE_KM_LAT, lon)))
    [elsewhere] = store(sessions, infraction("near-3", operator_id="TRD", at=VILA_NOVA))
    near = sa.text(
        "SELECT id FROM dockets WHERE ST_DWithin(location::geography, "
        "ST_SetSRID(ST_MakePoint(:lon, :lat), 4326)::geography, :metres) ORDER BY id")
    with sessions() as session:
        # 5 m from the Correios stop, 100 m around
        assert session.scalars(near, {"lat": lat + 0.000045, "lon": lon, "metres": 100}).all() == [here]
        assert session.scalars(near, {"lat": lat, "lon": lon, "metres": 1100}).all() == [here, north]
        metres = session.scalar(sa.text(
            "SELECT ST_Distance(a.location::geography, b.location::geography) FROM dockets a, dockets b "
            "WHERE a.id = :a AND b.id = :b"), {"a": here, "b": north})
        assert 990 < metres < 1005
        # the GiST index is what a map query over a box uses
        box = session.scalars(sa.text(
            "SELECT id FROM dockets WHERE location && ST_MakeEnvelope(:w, :s, :e, :n, 4326) ORDER BY id"),
            {"w": VILA_NOVA[1] - 0.001, "s": VILA_NOVA[0] - 0.001, "e": VILA_NOVA[1] + 0.001,
             "n": VILA_NOVA[0] + 0.001}).all()
        assert box == [elsewhere]


# --- ingestion and the audit log -------------------------------------------------------------

def test_ingesting_the_same_infraction_twice_makes_one_docket(sessions):
    record = infraction("dup-1")
    assert len(store(sessions, record)) == 1
    with sessions.begin() as session:
        report = ingest(session, [record, dict(record)], plates=PLATES, ufir_brl=UFIR_BRL)
        assert (report.created, report.already) == ([], 2)
    with sessions() as session:
        docket = session.scalars(sa.select(Docket).where(Docket.infraction_id == "dup-1")).one()
        assert session.scalar(sa.select(sa.func.count(Docket.id))) == 1
        assert docket.stage == workflow.Stage.RASCUNHO.value
        assert docket.plate == "RQB4E17"
        assert docket.occurred_at == dt.datetime(2026, 12, 1, 12, 44, 21, tzinfo=dt.UTC)
        assert docket.infraction["evidence"]["max_speed_kmh"] == 80.0
        assert session.scalar(sa.select(sa.func.count(AuditEntry.id))) == 1


def test_the_audit_log_refuses_update_and_delete(sessions):
    store(sessions, infraction("aud-1"), infraction("aud-2", operator_id="TRD", at=VILA_NOVA))
    with sessions() as session:
        assert verified_entries(session) == 2
    for statement in ("UPDATE audit_log SET action = 'Apagar'",
                      "UPDATE audit_log SET payload = '{}' WHERE id = (SELECT max(id) FROM audit_log)",
                      "DELETE FROM audit_log",
                      "DELETE FROM audit_log WHERE id = (SELECT max(id) FROM audit_log)"):
        with sessions() as session, pytest.raises(sa.exc.DBAPIError, match="audit_log is append-only"):
            session.execute(sa.text(statement))
            session.commit()
    with sessions() as session:
        assert verified_entries(session) == 2
        assert session.scalars(sa.select(AuditEntry.action).order_by(AuditEntry.id)).all() == ["Registrar"] * 2


def test_the_audit_log_refuses_truncate(sessions):
    store(sessions, infraction("trunc-1"))
    with sessions() as session, pytest.raises(sa.exc.DBAPIError, match="audit_log is append-only"):
        # CASCADE: attachments.audit_id references the log, so a plain TRUNCATE is refused anyway
        session.execute(sa.text("TRUNCATE audit_log CASCADE"))
        session.commit()


# --- lavratura numbering under concurrency --------------------------------------------------

SISTEMA = Actor(None, "sistema")
MONDAY = dt.date(2026, 12, 7)


def lavrar(sessions: sessionmaker[Session], docket_id: int, on: dt.date = MONDAY) -> None:
    with sessions.begin() as session:
        perform(session, SISTEMA, docket_id, workflow.Lavrar(on=on), CALENDAR, renderer=None)


def in_threads(*jobs) -> list[Exception]:
    """Run each job in its own thread, all released at once; the exceptions they raised."""
    barrier = threading.Barrier(len(jobs))
    failures: list[Exception] = []

    def run(job) -> None:
        try:
            barrier.wait(timeout=30)
            job()
        except Exception as exc:  # noqa: BLE001 -- reported by the caller
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a lavratura thread hangs"
    return failures


def test_lavrar_numbers_are_sequential_per_year_under_concurrency(sessions):
    """Two fiscais lavram different drafts at the same moment, each with their own
    sessions: the numbers of the year are 1..N, unique, without gaps."""
    per_thread = 10
    first, *ids = store(sessions, *(infraction(f"lav-{i}", operator_id=("VNV", "TRD")[i % 2])
                                     for i in range(2 * per_thread + 1)))
    lavrar(sessions, first)  # the year's counter exists (see the test below for the first auto)
    batches = [ids[0::2], ids[1::2]]
    failures = in_threads(*(lambda batch=batch: [lavrar(sessions, i) for i in batch] for batch in batches))
    assert not failures, failures
    total = 2 * per_thread + 1
    with sessions() as session:
        numbers = session.execute(sa.select(Docket.year, Docket.number, Docket.stage).order_by(Docket.number)).all()
        assert [n for _, n, _ in numbers] == list(range(1, total + 1))
        assert {(y, s) for y, _, s in numbers} == {(2026, workflow.Stage.LAVRADO.value)}
        assert session.get(YearCounter, 2026).last_number == total
        assert verified_entries(session) == 2 * total
        labels = session.scalars(sa.select(AuditEntry.payload).where(AuditEntry.action == "Lavrar")).all()
        assert sorted(p["number"] for p in labels) == [f"{n:04d}/2026" for n in range(1, total + 1)]


def test_the_years_first_two_lavraturas_at_once_both_get_numbers(sessions):
    """The year's first auto, lavrado in two sessions at once (no counter row yet): made
    deterministic by holding the first transaction open until the second waits on it."""
    a, b = store(sessions, infraction("first-1"), infraction("first-2", operator_id="TRD", at=VILA_NOVA))
    failures: list[Exception] = []
    with sessions.begin() as session:
        perform(session, SISTEMA, a, workflow.Lavrar(on=MONDAY), CALENDAR, renderer=None)
        other = threading.Thread(target=lambda: failures.extend(in_threads(lambda: lavrar(sessions, b))))
        other.start()
        _wait_until_blocked(session)
    other.join(timeout=60)
    assert not other.is_alive()
    if failures:
        raise failures[0]
    with sessions() as session:
        assert sorted(session.scalars(sa.select(Docket.number))) == [1, 2]


def _wait_until_blocked(session: Session, timeout: float = 30) -> None:
    """Until another backend of this database waits on a lock (held by `session`)."""
    deadline = time.monotonic() + timeout
    query = sa.text("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'")
    with session.get_bind().connect() as watcher:
        while not watcher.scalar(query):
            assert time.monotonic() < deadline, "the second lavratura never waited on the first"
            time.sleep(0.02)
            watcher.rollback()


def test_lavrar_numbers_restart_each_year(sessions):
    ids = store(sessions, infraction("ano-1"), infraction("ano-2"), infraction("ano-3"))
    for docket_id, on in zip(ids, (dt.date(2026, 12, 30), dt.date(2027, 1, 4), dt.date(2027, 1, 5))):
        lavrar(sessions, docket_id, on)
    with sessions() as session:
        assert [d.label for d in session.scalars(sa.select(Docket).order_by(Docket.id))] == [
            "0001/2026", "0001/2027", "0002/2027"]


# --- operator isolation ----------------------------------------------------------------------

def test_an_operator_never_sees_another_operators_dockets(sessions):
    vnv = store(sessions, infraction("iso-1"), infraction("iso-2", at=None))
    trd = store(sessions, infraction("iso-3", operator_id="TRD", at=VILA_NOVA))
    draft = store(sessions, infraction("iso-4"))  # not lavrado: stays inside the Órgão (art. 5 § 3º)
    for docket_id in vnv + trd:
        lavrar(sessions, docket_id)
    operador_vnv = Actor(5, "operador", "VNV")
    with sessions() as session:
        with pytest.raises(NotFound):
            get_docket(session, operador_vnv, draft[0])
        seen = session.scalars(visible(operador_vnv).order_by(Docket.id)).all()
        assert [d.id for d in seen] == vnv
        assert {d.operator_id for d in seen} == {"VNV"}
        assert [d.id for d in session.scalars(visible(Actor(6, "operador", "TRD")))] == trd
        assert len(session.scalars(visible(Actor(1, "fiscal"))).all()) == 4
        assert session.scalars(visible(Actor(7, "desconhecido"))).all() == []
        with pytest.raises(NotFound):
            get_docket(session, operador_vnv, trd[0])
        # and the spatial query, filtered through `visible`, keeps the isolation
        near = visible(operador_vnv).where(sa.text(
            "ST_DWithin(dockets.location::geography, ST_SetSRID(ST_MakePoint(:lon, :lat), 4326)::geography, 5000)"))
        assert [d.id for d in session.scalars(near, {"lat": VILA_NOVA[0], "lon": VILA_NOVA[1]})] == [vnv[0]]


def test_an_auto_of_another_law_stores_its_code_and_group_as_the_law_writes_them(sessions):
    # Conselheiro Lafaiete's art. 19 § único (15 characters) and Canarana's group "multa":
    # longer than João Neiva's "D-11" / "D" the first schema was sized for (0006 widens them)
    record = {**infraction("b" * 32), "code": "art. 19 § único", "group": "multa"}
    (docket_id,) = store(sessions, record)
    lavrar(sessions, docket_id)
    with sessions() as session:
        docket = session.get(Docket, docket_id)
        assert (docket.code, docket.group) == ("art. 19 § único", "multa")
        assert session.execute(sa.text("SELECT code, \"group\" FROM dashboard_dockets WHERE id = :id"),
                               {"id": docket_id}).one() == ("art. 19 § único", "multa")


def _of_one_drive(infraction_id: str, code: str) -> dict:
    """A D-11 or A-07 of vehicle JN-2012 on one trip (their intervals overlap): one drive."""
    record = infraction(infraction_id, operator_id="TRD", at=VILA_NOVA)
    interval = [1764590400.0, 1764590530.0] if code == "D-11" else [1764590000.0, 1764591200.0]
    return {**record, "code": code, "group": code[0], "fine_ufir": 200 if code == "D-11" else 50,
            "evidence": {**record["evidence"], "interval_epoch": interval}}


def test_a_second_fiscal_lavrando_the_other_auto_of_the_drive_waits_and_is_refused_in_words(sessions):
    """The first lavra both autos of the drive, holding both; the second, which began on
    the other auto, waits for it and is told it is lavrado (both lock the drive in id order
    before anything else, so that two at once cannot deadlock: not forced here)."""
    d11, a07 = store(sessions, _of_one_drive("drive-d11", "D-11"), _of_one_drive("drive-a07", "A-07"))
    failures: list[Exception] = []
    with sessions.begin() as session:
        perform(session, SISTEMA, d11, workflow.Lavrar(on=MONDAY), CALENDAR, renderer=None)
        other = threading.Thread(target=lambda: failures.extend(in_threads(lambda: lavrar(sessions, a07))))
        other.start()
        _wait_until_blocked(session)
    other.join(timeout=60)
    assert not other.is_alive()
    assert [str(f) for f in failures] == ["O auto já foi lavrado. Etapa atual: Lavrado."]
    with sessions() as session:
        numbers = dict(session.execute(sa.select(Docket.code, Docket.number)).all())
        a07_description = session.get(Docket, a07).description
    assert numbers == {"D-11": 1, "A-07": 2}
    assert "resulta também o auto nº 0001/2026 (D-11)" in a07_description
