"""Fixtures: a minimal feed and tachograph file built from the SPTrans sample in
../shared/realdata (tests/support/sptrans.py), a real Kafka broker, PostgreSQL."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from sptrans import REALDATA, write_feed, write_telemetry


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
def signing_key(tmp_path_factory):
    """The Órgão's key for the tests' stores (bundles and PDFs are signed, as in production)."""
    from dockets.signing import create_key

    return create_key(tmp_path_factory.mktemp("keys") / "orgao.pem")


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


class KafkaCluster:
    """Three KRaft nodes (each broker and controller) on 127.0.0.1, started by
    `KAFKA_NODES=3 scripts/kafka` with replication factor 3 and min.insync.replicas 2."""

    NODES = 3

    def __init__(self, root: Path, port: int):
        self._script = root / "scripts" / "kafka"
        self._env = {"KAFKA_PORT": str(port), "KAFKA_NODES": str(self.NODES)}
        self.addresses = [f"127.0.0.1:{port + 2 * n}" for n in range(self.NODES)]
        self.bootstrap = ",".join(self.addresses)

    def _run(self, *args: str):
        import os
        import subprocess

        return subprocess.run([str(self._script), *args], env={**os.environ, **self._env},
                              capture_output=True, text=True, timeout=120)

    def start(self) -> None:
        import time

        from kafka import KafkaAdminClient

        started = self._run("start")
        if started.returncode != 0:
            pytest.fail(f"could not start the Kafka cluster: {started.stderr.strip()[-2000:]}")
        # a node serves its port before it registered with the controllers, and each node
        # learns of the others on its own: a topic of replication factor 3 needs every node
        # to list all three (a client asking one that does not fails, UnknownBrokerIdError)
        deadline = time.monotonic() + 30
        for address in self.addresses:
            admin = KafkaAdminClient(bootstrap_servers=address)
            try:
                while len(admin.describe_cluster()["brokers"]) < self.NODES:
                    if time.monotonic() > deadline:
                        pytest.fail(f"the Kafka node at {address} did not list all {self.NODES} within 30 s")
                    time.sleep(0.2)
            finally:
                admin.close()

    def stop_node(self, node: int) -> None:
        """Stop node 1..3 cleanly (SIGTERM: its partitions' leadership moves first)."""
        stopped = self._run("stop-node", str(node))
        assert stopped.returncode == 0, stopped.stderr

    def start_node(self, node: int) -> None:
        """Start a stopped node again: it rejoins with its data."""
        started = self._run("start-node", str(node))
        assert started.returncode == 0, started.stderr

    def stop(self) -> None:
        self._run("stop")


@pytest.fixture
def kafka_cluster():
    """A `KafkaCluster` of the test's own (it stops nodes), on FISCALIZA_TEST_KAFKA_CLUSTER_PORT
    .. +5 (default 19292), torn down after the test whatever its outcome."""
    import os

    root = Path(__file__).resolve().parents[1]
    cluster = KafkaCluster(root, int(os.environ.get("FISCALIZA_TEST_KAFKA_CLUSTER_PORT", "19292")))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


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
        from engine.loading import load_context
        from fiscaliza.demo import DEMO_FAULTS, DEMO_INPUT_FAULTS, simulate_files
        from fiscaliza.replay import ReplayInputs, replay
        from samples import joao_neiva
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
        from rules.model import infraction_record

        return [infraction_record(i) for i in self.result.infractions]

    def record(self, code: str) -> dict:
        return next(r for r in self.records() if r["code"] == code)


@pytest.fixture(scope="session")
def demo_day(tmp_path_factory) -> DemoDay:
    return DemoDay(tmp_path_factory.mktemp("demo-day"))


class JumpedDay:
    """The demo day with a multipath jump inside its D-11 episode (issue 30's experiment):
    three consecutive fixes of the episode's fourteen (the 6th to the 8th, 10 s apart)
    thrown 0,0015° (~167 m) south, which carries them farther from the itinerary (246 m
    instead of 155 m), the vehicle driving on. Its D-11's evidence bundle, signed, as bytes
    and as a file."""

    JUMP_DEGREES = -0.0015

    def __init__(self, demo_day: DemoDay, root: Path, signer):
        import json

        from dockets.bundle import BundleMaker
        from fiscaliza.replay import ReplayInputs, replay
        from rules.model import infraction_record
        from telemetry import decode
        from telemetry.contracts import message_id

        self.episode = tuple(demo_day.record("D-11")["evidence"]["episodes"][0]["pings"])
        self.jump = self.episode[5:8]
        lines = []
        for line in demo_day.inputs.tachograph.read_bytes().splitlines():
            body = decode("tachograph", line)
            if getattr(body, "vehicle_id", None) and message_id(body) in self.jump:
                moved = json.loads(line)
                moved["lat"] += self.JUMP_DEGREES
                line = json.dumps(moved).encode()
            lines.append(line)
        tachograph = root / "tachograph.jsonl"
        tachograph.write_bytes(b"\n".join(lines) + b"\n")
        inputs = ReplayInputs(demo_day.inputs.feed, demo_day.inputs.fleet, tachograph, demo_day.inputs.catraca)
        self.record = next(infraction_record(i) for i in replay(inputs).infractions if i.code == "D-11")
        maker = BundleMaker.for_files(inputs.static, inputs.telemetry, demo_day.context.fleet, "America/Sao_Paulo",
                                      signer=signer)
        self.data = maker.bundle(self.record)
        self.path = root / "auto-D-11-evidencias.zip"
        self.path.write_bytes(self.data)


@pytest.fixture(scope="session")
def jumped_day(demo_day, tmp_path_factory, signing_key) -> JumpedDay:
    return JumpedDay(demo_day, tmp_path_factory.mktemp("jumped-day"), signing_key)


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
    from stores import open_test_store

    name = f"{pg_cluster.DATABASE}_template"
    open_test_store(pg_cluster.create_database(postgres_cluster, name)).kw["bind"].dispose()
    return name


_pg_databases = iter(range(1, 1_000_000))


@pytest.fixture
def pg_sessions(postgres_cluster, pg_migrated_template):
    """A PostgreSQL database of the test's own, at head, opened by the application's `open_store`."""
    import pg_cluster
    from stores import open_test_store

    name = f"{pg_cluster.DATABASE}_{next(_pg_databases)}"
    maker = open_test_store(pg_cluster.create_database(postgres_cluster, name, template=pg_migrated_template))
    try:
        yield maker
    finally:
        maker.kw["bind"].dispose()
