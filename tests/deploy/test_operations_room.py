"""The operations room against live data (#14 part 6): a morning of the sample network,
with sensor and input faults, runs through a real worker on the real broker; the ops
sink fills the live tables in the real PostgreSQL + PostGIS; a real Prometheus (Debian's
package) scrapes both and loads the alert rules. Then every PromQL expression of every
dashboard panel is evaluated through Prometheus' HTTP API, and every SQL panel of the
live dashboards on the live tables: each must return data.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa
import yaml

from dashboards.build import build
from fiscaliza.demo import DEMO_FAULTS, DEMO_INPUT_FAULTS
from gtfs import load_feed
from kernel.fleet import load_fleet
from samples import joao_neiva
from simulator import SimulationSettings, simulate
from streams.admin import group_progress, publish, publish_end_of_input

pytestmark = [pytest.mark.kafka, pytest.mark.postgres]

ROOT = Path(__file__).resolve().parents[2]
DAY = dt.date(2026, 12, 1)
TZ = dt.timezone(dt.timedelta(hours=-3))
MOMENT = dt.datetime(2026, 12, 1, 10, 0, tzinfo=TZ)  # the scenario stops at 10:00, service running
APP_ID = "fiscaliza-room"
# Panels that show an alarm: empty is their good news. The series they are built on must
# still be there, so for these the expression without its alarm condition is what must
# return data when the scenario raised no alarm.
ALARM_BASES = {
    "Linhas sem ônibus com viagem programada": "max by (route, direction) (fiscaliza_trips_scheduled_now)",
    "Espaçamento observado / programado": "fiscaliza_headway_ratio",
}
SQL_ALARM_CONDITIONS = {"Fora do itinerário agora": "off_route_m IS NOT NULL AND ",
                        "Ônibus agrupados ou com buraco agora": "headway_state IN ('bunched', 'gapped') AND ",
                        "Sem transmitir": "(ts < (SELECT max(ts) FROM live_vehicle_status) - interval '10 minutes' "
                                          "OR catraca_silent_since IS NOT NULL) AND "}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _split(path: Path, instant: dt.datetime, directory: Path) -> tuple[Path, Path]:
    """A time-ordered JSON Lines file cut at `instant` (a malformed line, one of the
    injected input faults, stays where it was)."""
    lines = path.read_bytes().splitlines(keepends=True)
    cut = len(lines)
    for i, line in enumerate(lines):
        try:
            ts = dt.datetime.fromisoformat(json.loads(line)["ts"])
        except (ValueError, KeyError, TypeError):
            continue
        if ts >= instant:
            cut = i
            break
    before, after = directory / f"{path.stem}-before.jsonl", directory / f"{path.stem}-after.jsonl"
    before.write_bytes(b"".join(lines[:cut]))
    after.write_bytes(b"".join(lines[cut:]))
    return before, after


def _query(port: int, expr: str) -> list:
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as response:
        body = json.load(response)
    assert body["status"] == "success", body
    return body["data"]["result"]


def _wait(condition, timeout: float, what: str, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(1)
    tail = "\n".join(log.read_text(errors="replace").splitlines()[-40:]) if log and log.exists() else ""
    pytest.fail(f"{what} after {timeout:.0f} s\n{tail}")


def caught_up(bootstrap: str) -> bool:
    progress = group_progress(bootstrap, APP_ID, ["tachograph", "catraca"])
    return progress.end > 0 and progress.lag == 0


def ops_caught_up(bootstrap: str) -> bool:
    from ops.sink import GROUP, TOPICS

    return group_progress(bootstrap, GROUP, TOPICS).lag == 0


@dataclass
class Room:
    bootstrap: str
    prometheus_port: int
    engine: sa.Engine
    logs: dict[str, Path]
    rest: dict[str, Path]  # the day after 10:00, per input


def _stop(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture
def room(kafka_bootstrap, reset_topics, postgres_cluster, tmp_path):
    import pg_cluster

    from dockets.db import make_engine, migrate
    from ops.db import migrate as migrate_live_tables

    prometheus = shutil.which("prometheus")
    if prometheus is None:
        pytest.fail("prometheus missing: install the Debian package prometheus (scripts/test does)", pytrace=False)
    db = pg_cluster.create_database(postgres_cluster, f"room_{os.getpid()}_{time.monotonic_ns()}")
    engine = make_engine(db)
    migrate(engine)
    migrate_live_tables(engine)

    feed_path, fleet_path = joao_neiva()
    sim = simulate(load_feed(feed_path), load_fleet(fleet_path),
                   SimulationSettings(DAY, DAY, seed=7, faults=DEMO_FAULTS,
                                      # a unit that sends some messages in two versions: the panel that counts them
                                      input_faults=(*DEMO_INPUT_FAULTS, "conflicting_duplicate_after")), tmp_path)
    reset_topics(kafka_bootstrap)
    mornings, rest = {}, {}
    for topic, path in (("tachograph", sim.tachograph), ("catraca", sim.catraca)):
        mornings[topic], rest[topic] = _split(path, MOMENT, tmp_path)

    worker_port, ops_port, prometheus_port = _free_port(), _free_port(), _free_port()
    env = {**os.environ, "FISCALIZA_KAFKA_BOOTSTRAP": kafka_bootstrap, "FISCALIZA_APP_ID": APP_ID,
           "FISCALIZA_PARTITIONS": "4", "FISCALIZA_BACKFILL": "1", "FISCALIZA_DATADIR": str(tmp_path / "faust"),
           "FISCALIZA_WEB_PORT": str(worker_port), "FISCALIZA_DB": db}
    logs = {name: tmp_path / f"{name}.log" for name in ("worker", "ops", "prometheus")}
    config = yaml.safe_load((ROOT / "deploy" / "prometheus" / "prometheus.yml").read_text())
    config["global"] = {"scrape_interval": "1s", "evaluation_interval": "1s"}
    config["rule_files"] = [str(ROOT / "deploy" / "prometheus" / "alerts.yml")]
    config["scrape_configs"] = [
        {"job_name": "fiscaliza-workers", "static_configs": [{"targets": [f"127.0.0.1:{worker_port}"]}]},
        {"job_name": "fiscaliza-ops", "static_configs": [{"targets": [f"127.0.0.1:{ops_port}"]}]}]
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    processes = []
    try:
        processes.append(subprocess.Popen(
            [sys.executable, "-m", "fiscaliza.cli", "worker", "--loglevel", "warning"], env=env,
            stdout=logs["worker"].open("wb"), stderr=subprocess.STDOUT))
        processes.append(subprocess.Popen(
            [sys.executable, "-m", "fiscaliza.cli", "ops", "sink", "--metrics-port", str(ops_port)], env=env,
            stdout=logs["ops"].open("wb"), stderr=subprocess.STDOUT))
        processes.append(subprocess.Popen(
            [prometheus, f"--config.file={tmp_path / 'prometheus.yml'}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{prometheus_port}"],
            stdout=logs["prometheus"].open("wb"), stderr=subprocess.STDOUT))

        # the morning arrives once Prometheus scrapes the idle worker, as live data would: a
        # counter first scraped after the worker had already counted everything shows no
        # increase() (the worker, started faster, once got through the morning before it)
        def worker_scraped() -> bool:
            try:
                return len(_query(prometheus_port, 'up{job="fiscaliza-workers"} == 1')) == 1
            except OSError:  # Prometheus not listening yet
                return False

        _wait(worker_scraped, 120, "Prometheus does not scrape the worker", logs["prometheus"])
        time.sleep(2)  # a scrape or two of the counters at zero
        for topic, morning in mornings.items():
            publish(kafka_bootstrap, topic, morning)
        _wait(lambda: caught_up(kafka_bootstrap), 480, "the worker has not consumed the morning", logs["worker"])

        def live_rows() -> int:
            with engine.connect() as connection:
                return connection.execute(sa.text("SELECT count(*) FROM live_vehicle_status")).scalar()

        _wait(lambda: live_rows() > 0, 120, "the ops sink wrote no vehicle status", logs["ops"])
        _wait(lambda: ops_caught_up(kafka_bootstrap), 120, "the ops sink has not caught up", logs["ops"])
        _wait(lambda: len(_query(prometheus_port, "up == 1")) == 2, 60, "Prometheus does not scrape both",
              logs["prometheus"])
        time.sleep(10)  # a few scrapes after the last batch: rate() over [1m] has its two points
        yield Room(kafka_bootstrap, prometheus_port, engine, logs, rest)
    finally:
        for process in processes:
            _stop(process)
        engine.dispose()


def _sql(room: Room, sql: str, until: dt.datetime) -> list:
    """A SQL panel's query as Grafana runs it at `until` (its time range: the day so far;
    every operator and line)."""
    from grafana import interpolate

    sql = interpolate(sql.replace("now()", f"'{until.isoformat()}'::timestamptz"),
                      time_filter=f"BETWEEN '{DAY}T00:00:00-03:00' AND '{until.isoformat()}'")
    with room.engine.connect() as connection:
        return connection.execute(sa.text(sql)).all()


def test_every_dashboard_expression_returns_data_on_live_data(room):
    from grafana import interpolate

    empty = []
    # At 10:00, the service running: every PromQL panel, and the live dashboard's SQL.
    for name, text in build().items():
        for panel in json.loads(text)["panels"]:
            target = panel["targets"][0]
            if panel["datasource"]["uid"] == "prometheus":
                if not _query(room.prometheus_port, interpolate(target["expr"])):
                    base = ALARM_BASES.get(panel["title"])
                    if base is None or not _query(room.prometheus_port, base):
                        empty.append(f"{name}: {panel['title']}: {target['expr']}")
            elif panel["title"] == "Viagens do último dia fechado":
                closed_day_panel = target["rawSql"]  # the final matching: once the day has closed
            elif name == "fiscaliza-live.json" and not _sql(room, target["rawSql"], MOMENT):
                alarm = SQL_ALARM_CONDITIONS.get(panel["title"])
                if alarm is None or not _sql(room, target["rawSql"].replace(alarm, ""), MOMENT):
                    empty.append(f"{name}: {panel['title']}")
    # The rest of the day and its end: the days and month close, the compliance dashboard fills.
    for topic, path in room.rest.items():
        publish(room.bootstrap, topic, path)
    publish_end_of_input(room.bootstrap)
    _wait(lambda: caught_up(room.bootstrap), 480, "the worker has not consumed the day", room.logs["worker"])

    def d22_closed() -> bool:
        with room.engine.connect() as connection:
            return bool(connection.execute(sa.text(
                "SELECT count(*) FROM live_infractions WHERE code = 'D-22' AND status <> 'provisional'")).scalar())

    _wait(d22_closed, 240, "no D-22 closed by the month in the live tables", room.logs["ops"])
    _wait(lambda: ops_caught_up(room.bootstrap), 120, "the ops sink has not caught up", room.logs["ops"])
    end = dt.datetime(2026, 12, 2, 6, 0, tzinfo=TZ)
    if not _sql(room, closed_day_panel, end):
        empty.append("fiscaliza-live.json: Viagens do último dia fechado")
    for panel in json.loads(build()["fiscaliza-compliance.json"])["panels"]:
        if panel["datasource"]["uid"] == "dockets" and not _sql(room, panel["targets"][0]["rawSql"], end):
            empty.append(f"fiscaliza-compliance.json: {panel['title']}")
    with room.engine.connect() as connection:
        trips = connection.execute(sa.text("SELECT service_date, count(*), min(departed_at), max(arrived_at) "
                                           "FROM live_trips GROUP BY 1")).all()
    assert empty == [], "\n".join(empty) + f"\nlive_trips: {trips}"
