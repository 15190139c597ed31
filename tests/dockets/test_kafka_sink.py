"""The docket sink on a real Kafka broker: the same autos, with byte-identical evidence
bundles, as the sink over the replay's files; idempotent; bad records dead-lettered."""

from __future__ import annotations

import hashlib
import json
import uuid

import pytest
from kafka import KafkaConsumer, KafkaProducer
from sqlalchemy import select
from stores import open_test_store

from dockets.bundle import BundleMaker
from dockets.kafka_sink import kafka_bundle_maker, run_sink
from dockets.store import Docket
from streams.admin import publish

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def published(kafka_bootstrap, reset_topics, demo_day):
    """The demo day's telemetry and infractions, alone on fiscaliza's topics."""
    reset_topics(kafka_bootstrap)
    publish(kafka_bootstrap, "tachograph", demo_day.inputs.tachograph)
    publish(kafka_bootstrap, "catraca", demo_day.inputs.catraca)
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all")
    for record in demo_day.records():
        producer.send("infractions", key=record["infraction_id"].encode(), value=json.dumps(record).encode())
    producer.send("infractions", key=b"broken", value=b"{not json")
    producer.flush()
    producer.close()
    yield kafka_bootstrap
    reset_topics(kafka_bootstrap)  # leave the broker's topics empty for the other tests


def test_the_kafka_sink_makes_the_same_autos_with_the_same_bundles_as_the_files(published, demo_day, tmp_path):
    sessions = open_test_store(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    group = f"dockets-{uuid.uuid4().hex[:8]}"
    maker = kafka_bundle_maker(demo_day.context, demo_day.inputs, published, frozenset({"tachograph", "catraca"}))
    report = run_sink(sessions, demo_day.context, maker, published, group=group, idle_exit_s=5)
    # 6 infraction records: 5 confirmed become autos, the exempt D-22 does not
    assert (len(report.created), report.not_confirmed) == (5, 1)
    files = BundleMaker.for_files(demo_day.inputs.static, demo_day.inputs.telemetry, demo_day.context.fleet, "America/Sao_Paulo")
    expected = {r["infraction_id"]: files.bundle(r) for r in demo_day.records() if r["status"] == "confirmed"}
    with sessions() as session:
        stored = {d.infraction_id: d.bundle_sha256 for d in session.scalars(select(Docket))}
    assert stored == {i: hashlib.sha256(b).hexdigest() for i, b in expected.items()}

    again = run_sink(sessions, demo_day.context, maker, published, group=f"{group}-again", idle_exit_s=5)
    assert (again.created, again.already) == ([], 5)


def test_a_record_that_is_not_an_infraction_is_dead_lettered(published, demo_day, tmp_path):
    sessions = open_test_store(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    maker = kafka_bundle_maker(demo_day.context, demo_day.inputs, published, frozenset({"tachograph", "catraca"}))
    run_sink(sessions, demo_day.context, maker, published, group=f"dl-{uuid.uuid4().hex[:8]}", idle_exit_s=5)
    consumer = KafkaConsumer("rejected", bootstrap_servers=published, auto_offset_reset="earliest",
                             consumer_timeout_ms=5000, group_id=None)
    reasons = [json.loads(m.value) for m in consumer if m.key == b"infractions"]
    consumer.close()
    assert any(r["reason"] == "invalid_json" and r["raw"] == "{not json" and r["topic"] == "infractions"
               for r in reasons)


def test_registered_occurrences_are_published_once_by_the_sink(published, demo_day, tmp_path):
    import datetime as dt

    from dockets.occurrences import register_occurrence
    from dockets.service import Actor, ensure_operators
    from dockets.store import Occurrence
    from dockets.users import create_user

    sessions = open_test_store(f"sqlite:///{tmp_path / 'store.sqlite3'}")
    with sessions.begin() as session:
        ensure_operators(session, {"TRD": "Transportes Rio Doce"})
        fiscal = Actor.of(create_user(session, username="f", full_name="F", role="fiscal", password="x" * 12))
        register_occurrence(session, fiscal, occurrence_id=f"oc-{uuid.uuid4().hex[:6]}", kind="road_closure",
                            start=dt.datetime(2026, 12, 2, 8, tzinfo=dt.timezone.utc),
                            end=dt.datetime(2026, 12, 2, 9, tzinfo=dt.timezone.utc), route_id="101")
    maker = kafka_bundle_maker(demo_day.context, demo_day.inputs, published, frozenset({"tachograph", "catraca"}))
    for _ in range(2):  # the second run publishes nothing again
        run_sink(sessions, demo_day.context, maker, published, group=f"oc-{uuid.uuid4().hex[:8]}", idle_exit_s=3)
    with sessions() as session:
        occurrence = session.scalars(select(Occurrence)).one()
        assert occurrence.published_at is not None
    consumer = KafkaConsumer("occurrences", bootstrap_servers=published, auto_offset_reset="earliest",
                             consumer_timeout_ms=5000, group_id=None)
    mine = [json.loads(m.value) for m in consumer if m.key == occurrence.id.encode()]
    consumer.close()
    assert mine == [{"id": occurrence.id, "kind": "road_closure", "start": "2026-12-02T05:00:00-03:00",
                     "end": "2026-12-02T06:00:00-03:00", "route_id": "101"}]
