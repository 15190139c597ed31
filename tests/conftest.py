"""Fixtures: a minimal feed and tachograph file built from the SPTrans sample in ../shared/realdata.

The traces are third-party data: tests read them from ../shared, never copy them.
Columns (../shared/realdata/.../README.md): dt_server, dt_avl, line_id, latitude,
longitude, id_avl, event, id_point, hour_server, hour_avl, hour_diff, region.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
from pathlib import Path

import pytest

REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "sptrans-line-34020-2015-10-02"
SHAPES = {"58290": ("8002-10", 1), "58447": ("119L-10", 1), "58450": ("119L-10", 0)}
SERVICE_DATE = "20151002"
# The timestamps carry no zone; São Paulo was at UTC-3 on 2015-10-02 (DST began 2015-10-18).
OFFSET = "-03:00"


def shape_points(shape_id: str) -> list[tuple[float, float]]:
    with open(REALDATA / f"day_15102_shape_{shape_id}.csv", newline="") as handle:
        rows = sorted(csv.reader(handle), key=lambda r: int(r[3]))
    return [(float(r[1]), float(r[2])) for r in rows]


def write_feed(directory: Path, shape_ids=tuple(SHAPES)) -> None:
    """One route and trip per shape, stops at the shape's ends, scheduled on the sample day."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "agency.txt").write_text(
        "agency_id,agency_name,agency_url,agency_timezone\nSPTRANS,SPTrans,https://example.org,America/Sao_Paulo\n")
    (directory / "calendar.txt").write_text(
        "service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\n"
        f"U,1,1,1,1,1,0,0,{SERVICE_DATE},{SERVICE_DATE}\n")
    routes = sorted({SHAPES[s][0] for s in shape_ids})
    (directory / "routes.txt").write_text(
        "route_id,agency_id,route_short_name,route_type\n" + "".join(f"{r},SPTRANS,{r},3\n" for r in routes))
    shapes, stops, trips, times = [], [], [], []
    for shape_id in shape_ids:
        points = shape_points(shape_id)
        shapes += [f"{shape_id},{lat},{lon},{i}" for i, (lat, lon) in enumerate(points, 1)]
        route, direction = SHAPES[shape_id]
        for end, (lat, lon) in (("a", points[0]), ("b", points[-1])):
            stops.append(f"{shape_id}{end},{shape_id} {end},{lat},{lon}")
        trips.append(f"{route},U,T{shape_id},{direction},{shape_id}")
        times += [f"T{shape_id},12:00:00,12:00:00,{shape_id}a,1", f"T{shape_id},13:00:00,13:00:00,{shape_id}b,2"]
    (directory / "shapes.txt").write_text(
        "shape_id,shape_pt_lat,shape_pt_lon,shape_pt_sequence\n" + "\n".join(shapes) + "\n")
    (directory / "stops.txt").write_text("stop_id,stop_name,stop_lat,stop_lon\n" + "\n".join(stops) + "\n")
    (directory / "trips.txt").write_text(
        "route_id,service_id,trip_id,direction_id,shape_id\n" + "\n".join(trips) + "\n")
    (directory / "stop_times.txt").write_text(
        "trip_id,arrival_time,departure_time,stop_id,stop_sequence\n" + "\n".join(times) + "\n")


def write_telemetry(tachograph: Path, fleet: Path) -> int:
    """The AVL records as tachograph JSON Lines, in the file's own (shuffled) order.

    The records carry no speed and the contract requires one: 0 is written, so the
    speeding rule (which trusts the tachograph's speed, not GPS steps) stays silent.
    """
    with open(REALDATA / "day_15102_line_34020.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    vehicles = sorted({row[5] for row in rows})
    with open(tachograph, "w") as handle:
        for row in rows:
            record = {"vehicle_id": row[5], "ts": row[1].replace(" ", "T") + OFFSET, "lat": float(row[3]),
                      "lon": float(row[4]), "speed_kmh": 0.0}
            handle.write(json.dumps(record) + "\n")
    fleet.write_text("vehicle_id,plate,operator_id\n" + "".join(f"{v},SP{v},SPTRANS\n" for v in vehicles))
    return len(rows)


@pytest.fixture(scope="session")
def sptrans_files(tmp_path_factory):
    """(directory, number of AVL rows, ReplayInputs) for the SPTrans sample day."""
    from fiscaliza.replay import ReplayInputs

    if not REALDATA.is_dir():
        pytest.fail(f"the real traces are missing: {REALDATA}")
    root = tmp_path_factory.mktemp("sptrans")
    write_feed(root / "feed")
    rows = write_telemetry(root / "tachograph.jsonl", root / "fleet.csv")
    return root, rows, ReplayInputs(feed=root / "feed", fleet=root / "fleet.csv", tachograph=root / "tachograph.jsonl")


@pytest.fixture(scope="session")
def kafka_bootstrap():
    """A real Apache Kafka broker (KRaft) on 127.0.0.1, started for the test session
    by scripts/kafka on its own port and stopped afterwards."""
    import os
    import subprocess

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "KAFKA_PORT": os.environ.get("FISCALIZA_TEST_KAFKA_PORT", "19192")}
    started = subprocess.run([str(root / "scripts" / "kafka"), "start"], env=env, capture_output=True, text=True)
    if started.returncode != 0:
        pytest.fail(f"could not start the Kafka broker: {started.stderr.strip()[-2000:]}")
    try:
        yield f"127.0.0.1:{env['KAFKA_PORT']}"
    finally:
        subprocess.run([str(root / "scripts" / "kafka"), "stop"], env=env, capture_output=True)


def fresh_topics(bootstrap: str) -> None:
    """Delete fiscaliza's topics on the test broker and create them again, empty."""
    from streams.admin import create_topics, delete_topics

    delete_topics(bootstrap)
    create_topics(bootstrap, 4, 1)


@pytest.fixture(scope="session")
def reset_topics():
    """`fresh_topics`, for fixtures of any scope."""
    return fresh_topics


# --- a simulated demo day, replayed once per test session (the dockets' and web app's data) ---

class DemoDay:
    """The demo day of `fiscaliza demo` (seed 7): its input files, context and replay."""

    def __init__(self, root: Path):
        from fiscaliza.demo import DEMO_FAULTS, DEMO_INPUT_FAULTS, simulate_files
        from fiscaliza.replay import ReplayInputs, load_context, replay
        from fiscaliza.samples import joao_neiva
        from simulator import SimulationSettings

        self.date = dt.date(2026, 12, 1)
        settings = SimulationSettings(self.date, self.date, 7, DEMO_FAULTS, DEMO_INPUT_FAULTS)
        simulated = simulate_files(None, None, settings, root / "telemetry")
        feed, fleet = joao_neiva()
        self.inputs = ReplayInputs(feed=feed, fleet=fleet, tachograph=simulated.tachograph,
                                   catraca=simulated.catraca)
        self.context = load_context(self.inputs)
        self.result = replay(self.inputs)

    def records(self) -> list[dict]:
        from fiscaliza.replay import infraction_record

        return [infraction_record(i) for i in self.result.infractions]

    def record(self, code: str) -> dict:
        return next(r for r in self.records() if r["code"] == code)


@pytest.fixture(scope="session")
def demo_day(tmp_path_factory) -> DemoDay:
    return DemoDay(tmp_path_factory.mktemp("demo-day"))


# --- a throwaway PostgreSQL + PostGIS cluster (tests/support/pg_cluster.py) ---

@pytest.fixture(scope="session")
def postgres_cluster():
    import pg_cluster

    with pg_cluster.throwaway_postgres() as cluster:
        yield cluster


@pytest.fixture(scope="session")
def postgres_url(postgres_cluster) -> str:
    """postgresql+psycopg://postgres@127.0.0.1:PORT/fiscaliza_test: an empty database in
    the session's throwaway cluster (trust auth, superuser)."""
    import pg_cluster

    return pg_cluster.create_database(postgres_cluster, pg_cluster.DATABASE)


@pytest.fixture(scope="session")
def pg_migrated_template(postgres_cluster) -> str:
    """A database migrated to head once, copied (CREATE DATABASE ... TEMPLATE) for each test."""
    import pg_cluster
    from dockets.db import open_store

    name = f"{pg_cluster.DATABASE}_template"
    open_store(pg_cluster.create_database(postgres_cluster, name)).kw["bind"].dispose()
    return name


_pg_databases = iter(range(1, 1_000_000))


@pytest.fixture
def pg_sessions(postgres_cluster, pg_migrated_template):
    """A PostgreSQL database of the test's own, at head, opened by the application's `open_store`."""
    import pg_cluster
    from dockets.db import open_store

    name = f"{pg_cluster.DATABASE}_{next(_pg_databases)}"
    maker = open_store(pg_cluster.create_database(postgres_cluster, name, template=pg_migrated_template))
    try:
        yield maker
    finally:
        maker.kw["bind"].dispose()
