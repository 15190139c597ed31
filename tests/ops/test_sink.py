"""The live tables (#14 part 2): the engine's outputs as rows, upserted idempotently into
the real PostgreSQL + PostGIS, and a sink on the real broker that measures the workers'
lag from Kafka's offsets."""

from __future__ import annotations

import datetime as dt
import json

import msgspec
import pytest
import sqlalchemy as sa

from ops.db import migrate
from ops.rows import row_of
from ops.sink import write_batch
from rules.model import infraction_record
from telemetry import Rejection, to_builtins
from trips.model import trip_record


def _records(demo_day):
    encode = msgspec.json.encode
    return {"vehicle-status": [encode(s) for s in demo_day.result.statuses],
            "trips": [encode(trip_record(t)) for t in demo_day.result.trips],
            "infractions": [encode(infraction_record(i)) for i in demo_day.result.infractions],
            "month-efficiency": [encode(m) for m in demo_day.result.months]}


def _operators(demo_day):
    return {r.route_id: r.agency_id for r in demo_day.context.feed.routes.values()}


def test_each_output_record_is_a_row_and_garbage_a_rejection(demo_day):
    records = _records(demo_day)
    status = row_of("vehicle-status", records["vehicle-status"][0], "vehicle-status/0/0", _operators(demo_day))
    assert status["vehicle_id"] == demo_day.result.statuses[0].vehicle_id
    assert status["ts"] == dt.datetime.fromisoformat(demo_day.result.statuses[0].ts)
    trip = row_of("trips", records["trips"][0], "trips/0/0", _operators(demo_day))
    assert trip["operator_id"] == _operators(demo_day)[trip["route_id"]]
    infraction = row_of("infractions", records["infractions"][0], "infractions/0/0", _operators(demo_day))
    assert infraction["record"] == json.loads(records["infractions"][0])
    month = row_of("month-efficiency", records["month-efficiency"][0], "month-efficiency/0/0", {})
    assert month["efficiency_pct"] == demo_day.result.months[0].efficiency_pct and month["as_of"] == dt.date(2026, 12, 1)
    bad = row_of("trips", b'{"vehicle_id": 1}', "trips/2/7", _operators(demo_day))
    assert isinstance(bad, Rejection) and bad.reason == "invalid_record" and bad.location == "trips/2/7"


def _conflicting_duplicate(tmp_path) -> bytes:
    """The engine's own dead letter for a message sent in two versions, as the worker puts
    it on the rejected topic."""
    from fiscaliza.replay import ReplayInputs, replay
    from samples import joao_neiva

    feed, fleet = joao_neiva()
    genuine = {"vehicle_id": "JN-1011", "ts": "2026-12-01T10:00:00-03:00", "lat": -19.7574776,
               "lon": -40.3852385, "speed_kmh": 20.0, "seq": 7}
    tachograph = tmp_path / "t.jsonl"
    tachograph.write_text("".join(json.dumps(line) + "\n" for line in (genuine, {**genuine, "speed_kmh": 60.0})))
    [rejection] = replay(ReplayInputs(feed, fleet, tachograph)).rejected
    assert rejection.reason == "conflicting_duplicate"
    return msgspec.json.encode(to_builtins(rejection))


def test_a_conflicting_duplicate_is_a_row_of_its_vehicle_and_other_dead_letters_none(tmp_path):
    row = row_of("rejected", _conflicting_duplicate(tmp_path), "rejected/0/3", {})
    assert (row["source"], row["vehicle_id"], row["seq"]) == ("tachograph", "JN-1011", 7)
    assert row["ts"] == dt.datetime(2026, 12, 1, 13, tzinfo=dt.UTC) and row["location"] == "t.jsonl:2"
    late = Rejection(source="tachograph", reason="late", detail="x", raw='{"vehicle_id": "JN-1011"}')
    assert row_of("rejected", msgspec.json.encode(to_builtins(late)), "rejected/0/4", {}) is None
    bad = row_of("rejected", b"not json", "rejected/0/5", {})
    assert isinstance(bad, Rejection) and bad.reason == "invalid_record"


def test_a_catraca_reading_in_two_versions_is_a_row_of_its_vehicle_as_a_ping_is(tmp_path):
    # the catraca's conflicts reach the operations room the same way (issue #33 item 4):
    # one reading, its seal intact in one version and broken in the other
    from fiscaliza.replay import ReplayInputs, replay
    from samples import joao_neiva

    feed, fleet = joao_neiva()
    ping = {"vehicle_id": "JN-1011", "ts": "2026-12-01T10:00:00-03:00", "lat": -19.7574776, "lon": -40.3852385,
            "speed_kmh": 0.0, "seq": 1}
    genuine = {"vehicle_id": "JN-1011", "ts": "2026-12-01T10:00:00-03:00", "counter": 120, "seal_intact": True,
               "status": "ok", "seq": 8}
    (tmp_path / "t.jsonl").write_text(json.dumps(ping) + "\n")
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(line) + "\n"
                                              for line in (genuine, {**genuine, "seal_intact": False})))
    [rejection] = replay(ReplayInputs(feed, fleet, tmp_path / "t.jsonl", tmp_path / "c.jsonl")).rejected
    row = row_of("rejected", msgspec.json.encode(to_builtins(rejection)), "rejected/0/9", {})
    assert (row["source"], row["vehicle_id"], row["seq"]) == ("catraca", "JN-1011", 8)
    assert row["ts"] == dt.datetime(2026, 12, 1, 13, tzinfo=dt.UTC)


@pytest.mark.postgres
def test_a_message_in_two_versions_is_one_row_however_often_it_is_read(pg_sessions, tmp_path):
    engine = pg_sessions.kw["bind"]
    migrate(engine)
    row = row_of("rejected", _conflicting_duplicate(tmp_path), "rejected/0/3", {})
    for _ in range(2):
        write_batch(engine, {"rejected": [row]})
    with engine.connect() as connection:
        assert connection.execute(sa.text("SELECT vehicle_id, seq FROM live_conflicting_duplicates")).all() == \
            [("JN-1011", 7)]


@pytest.mark.postgres
def test_the_rows_land_in_postgis_and_again_change_nothing(pg_sessions, demo_day):
    engine = pg_sessions.kw["bind"]
    migrate(engine)
    rows = {topic: [row_of(topic, value, f"{topic}/0/{i}", _operators(demo_day)) for i, value in enumerate(values)]
            for topic, values in _records(demo_day).items()}
    for _ in range(2):  # the same batch twice: a sink restarted before committing its offsets
        write_batch(engine, rows)
    with engine.connect() as connection:
        count = {table: connection.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar()
                 for table in ("live_vehicle_status", "live_trips", "live_infractions", "live_month_efficiency")}
        located = connection.execute(sa.text("SELECT count(*) FROM live_vehicle_status "
                                             "WHERE ST_X(location) = lon AND ST_Y(location) = lat")).scalar()
    result = demo_day.result
    assert count == {"live_vehicle_status": len({s.vehicle_id for s in result.statuses}),
                     "live_trips": len(result.trips), "live_infractions": len(result.infractions),
                     "live_month_efficiency": len(result.months)}
    assert located == count["live_vehicle_status"]  # a PostGIS point per bus, for the live map


@pytest.mark.postgres
def test_a_trip_withdrawn_by_a_day_judged_again_leaves_the_live_table(pg_sessions, demo_day):
    # late data read a trip's departure anew: the trip as first read is withdrawn, the trip
    # as read again is a new row (its key is the vehicle and its departure)
    engine = pg_sessions.kw["bind"]
    migrate(engine)
    first = demo_day.result.trips[0]
    again = msgspec.structs.replace(first, departed_at=first.departed_at + dt.timedelta(seconds=40))

    def row(trip, **extra):
        return row_of("trips", msgspec.json.encode({**trip_record(trip), **extra}), "trips/0/0", _operators(demo_day))

    write_batch(engine, {"trips": [row(first)]})
    write_batch(engine, {"trips": [row(again), row(first, withdrawn=True)]})
    with engine.connect() as connection:
        departures = connection.execute(sa.text("SELECT departed_at FROM live_trips WHERE vehicle_id = :v"),
                                        {"v": first.vehicle_id}).scalars().all()
    assert departures == [again.departed_at.replace(microsecond=0)]


@pytest.mark.postgres
def test_an_older_status_never_replaces_a_newer_one(pg_sessions, demo_day):
    engine = pg_sessions.kw["bind"]
    migrate(engine)
    newest = demo_day.result.statuses[0]
    older = msgspec.structs.replace(newest, ts=(dt.datetime.fromisoformat(newest.ts)
                                                - dt.timedelta(minutes=5)).isoformat(), lat=0.0, lon=0.0)
    for status in (newest, older):  # the older one read after (a late record)
        write_batch(engine, {"vehicle-status": [row_of("vehicle-status", msgspec.json.encode(status), "x", {})]})
    with engine.connect() as connection:
        lat = connection.execute(sa.text("SELECT lat FROM live_vehicle_status WHERE vehicle_id = :v"),
                                 {"v": newest.vehicle_id}).scalar()
    assert lat == newest.lat


@pytest.mark.postgres
def test_the_sink_fills_the_live_tables_from_kafka_and_measures_the_workers_lag(kafka_bootstrap, reset_topics,
                                                                                pg_sessions, demo_day, tmp_path):
    from kafka import KafkaProducer
    from prometheus_client import CollectorRegistry

    from ops.sink import run_ops_sink

    reset_topics(kafka_bootstrap)
    engine = pg_sessions.kw["bind"]
    migrate(engine)
    records = _records(demo_day)
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all")
    for topic, values in records.items():
        for value in values:
            record = json.loads(value)
            producer.send(topic, key=(record.get("vehicle_id") or record.get("operator_id") or "x").encode(),
                          value=value)
    producer.send("trips", key=b"x", value=b"not json")
    producer.send("rejected", key=b"tachograph", value=_conflicting_duplicate(tmp_path))
    for i in range(25):  # telemetry no worker has read
        producer.send("tachograph", key=b"JN-1011", value=b'{"i": %d}' % i)
    producer.flush()
    producer.close()
    registry = CollectorRegistry()
    report = run_ops_sink(engine, kafka_bootstrap, _operators(demo_day),
                          timezone=demo_day.context.feed.timezone.key, workers_group="fiscaliza-nobody",
                          registry=registry, idle_exit_s=5)
    # the trips record that is not JSON goes to the rejected topic and, read back, is no row
    assert report.rows == {**{topic: len(values) for topic, values in records.items()}, "rejected": 1}
    assert report.rejected == 1
    with engine.connect() as connection:
        assert connection.execute(sa.text("SELECT count(*) FROM live_infractions")).scalar() == \
            len(records["infractions"])
    # measured from Kafka: the workers' group never committed, so all 25 are behind
    assert registry.get_sample_value("fiscaliza_consumer_lag_messages", {"topic": "tachograph"}) == 25
    again = run_ops_sink(engine, kafka_bootstrap, _operators(demo_day),
                         timezone=demo_day.context.feed.timezone.key, workers_group="fiscaliza-nobody",
                         registry=CollectorRegistry(), idle_exit_s=3)
    assert sum(again.rows.values()) == 0  # its offsets were committed after the rows
    with engine.connect() as connection:  # the feed's timezone, for the panels' days
        assert connection.execute(sa.text("SELECT timezone FROM live_feed")).scalar() == "America/Sao_Paulo"
