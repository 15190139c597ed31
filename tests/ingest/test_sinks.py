"""Where ingest writes: Kafka's tachograph topic keyed by vehicle, its rejections on the
workers' dead-letter topic (a real broker), and a file whose rejections cannot overwrite it."""

import json
from pathlib import Path

import pytest
from cli_helpers import assert_bad_input, fiscaliza
from google.transit import gtfs_realtime_pb2

METRO = Path(__file__).resolve().parents[3] / "shared" / "realdata" / "metrotransit-gtfs-rt-2019-05-01"


def consumed(bootstrap: str, topic: str) -> list[tuple[bytes, dict]]:
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=5000, group_id=None)
    records = [(m.key, json.loads(m.value)) for m in consumer]
    consumer.close()
    return records


@pytest.mark.kafka
@pytest.mark.realdata
def test_the_metro_transit_snapshot_is_published_keyed_by_vehicle_its_rejection_dead_lettered(
        tmp_path, kafka_bootstrap, reset_topics):
    reset_topics(kafka_bootstrap)
    feed = gtfs_realtime_pb2.FeedMessage()
    feed.ParseFromString((METRO / "vehicle-positions.pb").read_bytes())
    ids = [e.vehicle.vehicle.id for e in feed.entity]
    (tmp_path / "fleet.csv").write_text("vehicle_id,plate,operator_id\n" + "".join(f"{v},,0\n" for v in ids[1:]))
    try:
        result = fiscaliza("ingest", "gtfs-rt", "--file", METRO / "vehicle-positions.pb", "--fleet",
                           tmp_path / "fleet.csv", "--topic", "tachograph", "--bootstrap", kafka_bootstrap)
        assert result.returncode == 0, result.stderr
        assert "Mensagens enviadas ao tópico tachograph: 10;" in result.stdout
        published = consumed(kafka_bootstrap, "tachograph")
        assert sorted(key.decode() for key, _ in published) == sorted(ids[1:])
        assert all(key.decode() == message["vehicle_id"] for key, message in published)
        dead = consumed(kafka_bootstrap, "rejected")
        assert [(key, record["reason"], record["location"]) for key, record in dead] == [
            (b"tachograph", "unknown_vehicle", f"vehicle-positions.pb#{ids[0]}")]
    finally:
        reset_topics(kafka_bootstrap)


def test_out_cannot_be_the_rejections_file(tmp_path):
    (tmp_path / "fleet.csv").write_text("vehicle_id,plate,operator_id\n101,,OP\n")
    (tmp_path / "avl.csv").write_text("v,t,y,x\n")
    (tmp_path / "map.toml").write_text("[source]\nformat = 'csv'\n[fields]\nvehicle = 'v'\ntime = 't'\n"
                                       "lat = 'y'\nlon = 'x'\n")
    assert_bad_input(fiscaliza("ingest", "avl", "--mapping", tmp_path / "map.toml", tmp_path / "avl.csv",
                               "--fleet", tmp_path / "fleet.csv", "--out", tmp_path / "rejected.jsonl"),
                     "--out cannot be rejected.jsonl")
