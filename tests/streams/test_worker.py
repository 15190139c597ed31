"""The Faust worker on a real Kafka broker gives the replay's answers.

A simulated day with faults is published to Kafka, a worker (`fiscaliza worker`, a
separate process) runs the engine on it, and the infractions topic — a change log,
the latest record per id — must hold exactly the infraction_ids and statuses that
`fiscaliza replay` writes for the same files, and the trips topic the same trips.
"""

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest
from kafka import KafkaAdminClient, KafkaConsumer

from fiscaliza.fleet import load_fleet
from fiscaliza.replay import ReplayInputs, infraction_record, replay, trip_record
from fiscaliza.samples import joao_neiva
from gtfs import load_feed
from simulator import SimulationSettings, simulate
from streams.admin import create_topics, publish, publish_end_of_input
from streams.topics import TOPICS

pytestmark = pytest.mark.kafka

FEED_PATH, FLEET_PATH = joao_neiva()
DAY = dt.date(2026, 12, 1)
FAULTS = ("detour", "late_departure", "suppressed_trip", "speeding", "broken_seal", "frequency_shortfall")


def fresh_topics(bootstrap: str) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        existing = [t for t in admin.list_topics() if t in TOPICS]
        if existing:
            admin.delete_topics(existing)
        for _ in range(50):  # deletion is asynchronous
            if not set(existing) & set(admin.list_topics()):
                break
            time.sleep(0.2)
    finally:
        admin.close()
    create_topics(bootstrap, 4, 1)


def read_topic(bootstrap: str, topic: str) -> list:
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=f"read-{uuid.uuid4()}",
                             auto_offset_reset="earliest", consumer_timeout_ms=2000)
    try:
        return list(consumer)
    finally:
        consumer.close()


def latest_by_key(records) -> dict[str, dict]:
    return {r.key.decode(): json.loads(r.value) for r in records}


@pytest.fixture
def published(kafka_bootstrap, tmp_path_factory):
    out = tmp_path_factory.mktemp("worker")
    sim = simulate(load_feed(FEED_PATH), load_fleet(FLEET_PATH),
                   SimulationSettings(DAY, DAY, seed=3, faults=FAULTS), out)
    reference = replay(ReplayInputs(FEED_PATH, FLEET_PATH, sim.tachograph, sim.catraca))
    fresh_topics(kafka_bootstrap)
    publish(kafka_bootstrap, "tachograph", sim.tachograph)
    publish(kafka_bootstrap, "catraca", sim.catraca)
    publish_end_of_input(kafka_bootstrap)
    return reference


def start_worker(bootstrap: str, app_id: str, log) -> subprocess.Popen:
    env = {**os.environ, "FISCALIZA_KAFKA_BOOTSTRAP": bootstrap, "FISCALIZA_APP_ID": app_id,
           "FISCALIZA_PARTITIONS": "4"}
    return subprocess.Popen([sys.executable, "-m", "fiscaliza.cli", "worker", "--loglevel", "warning"],
                            env=env, stdout=log, stderr=subprocess.STDOUT)


def wait_for(condition, timeout: float = 180.0, every: float = 2.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(every)
    return False


def test_worker_gives_the_replays_infractions_and_trips(kafka_bootstrap, published, tmp_path):
    reference = published
    expected = {i.infraction_id: i.status for i in reference.infractions}
    assert {i.code for i in reference.infractions} >= {"C-01", "D-11", "D-12", "D-13", "D-21", "D-22"}
    log = open(tmp_path / "worker.log", "w")
    worker = start_worker(kafka_bootstrap, f"e2e-{uuid.uuid4().hex[:8]}", log)
    try:
        def infractions():
            return {k: v["status"] for k, v in latest_by_key(read_topic(kafka_bootstrap, "infractions")).items()}

        settled = wait_for(lambda: infractions() == expected)
        log.flush()
        assert settled, f"worker log:\n{(tmp_path / 'worker.log').read_text()[-3000:]}\ngot {infractions()}"
        trips = sorted(r.value for r in read_topic(kafka_bootstrap, "trips"))
        assert trips == sorted(json.dumps(trip_record(t), separators=(",", ":")).encode() for t in reference.trips)
        records = latest_by_key(read_topic(kafka_bootstrap, "infractions"))
        for infraction in reference.infractions:  # the whole record, not just the status
            assert records[infraction.infraction_id] == json.loads(json.dumps(infraction_record(infraction),
                                                                              default=str))
        assert read_topic(kafka_bootstrap, "rejected") == []
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            code = worker.wait(timeout=60)
        except subprocess.TimeoutExpired:
            worker.kill()
            code = None
        log.close()
    assert code == 0, "the worker did not stop cleanly on SIGTERM"


def test_worker_killed_mid_stream_and_restarted_loses_and_repeats_nothing(kafka_bootstrap, published, tmp_path):
    reference = published
    expected = {i.infraction_id: i.status for i in reference.infractions}
    app_id = f"crash-{uuid.uuid4().hex[:8]}"
    env_timeout = {"FISCALIZA_SESSION_TIMEOUT_S": "10"}
    log = open(tmp_path / "worker.log", "w")
    os.environ.update(env_timeout)
    try:
        first = start_worker(kafka_bootstrap, app_id, log)
        # kill it (no goodbye) once it has produced part of its state, mid-stream
        assert wait_for(lambda: len(read_topic(kafka_bootstrap, f"{app_id}-vehicles-changelog")) > 20, 120, 1)
        first.kill()
        first.wait()
        second = start_worker(kafka_bootstrap, app_id, log)
        try:
            def infractions():
                return {k: v["status"] for k, v in latest_by_key(read_topic(kafka_bootstrap, "infractions")).items()}

            assert wait_for(lambda: infractions() == expected, 240), infractions()
            trips = [r.value for r in read_topic(kafka_bootstrap, "trips")]
            # every trip once: the restarted worker recovered its state from the changelogs
            assert sorted(trips) == sorted(json.dumps(trip_record(t), separators=(",", ":")).encode()
                                           for t in reference.trips)
            # what the crash made Kafka deliver again is recognized as already processed
            reasons = {json.loads(r.value)["reason"] for r in read_topic(kafka_bootstrap, "rejected")}
            assert reasons <= {"duplicate"}
        finally:
            second.send_signal(signal.SIGTERM)
            second.wait(timeout=60)
    finally:
        for key in env_timeout:
            os.environ.pop(key, None)
        log.close()

