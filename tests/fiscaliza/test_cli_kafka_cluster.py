"""`fiscaliza publish` against a cluster of three brokers (replication factor 3,
min.insync.replicas 2) with brokers down: one down, every message is written; two down,
it stops within the publish timeout, names the brokers it could not reach and counts
what was not written, and the topic holds exactly what it says it wrote; one broker back,
the file published again is written."""

from __future__ import annotations

import json
import time

import pytest
from cli_helpers import assert_bad_input, fiscaliza
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType
from kafka.errors import KafkaTimeoutError

from kernel.settings import StreamSettings
from streams.admin import create_topics

pytestmark = pytest.mark.kafka


def tachograph_lines(path, count: int, first_second: int = 0):
    lines = [json.dumps({"vehicle_id": f"JN-20{i % 7:02d}", "ts": f"2026-12-01T06:{(first_second + i) // 60:02d}:"
                         f"{(first_second + i) % 60:02d}-03:00", "lat": -19.76, "lon": -40.39, "speed_kmh": i % 50})
             for i in range(count)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def written(bootstrap: str, topic: str, within_s: float = 30) -> int:
    """The records on the topic: its partitions' end offsets, once every leader gives them
    (a leader just elected answers OFFSET_NOT_AVAILABLE until its high watermark is known)."""
    deadline = time.monotonic() + within_s
    while True:
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, request_timeout_ms=5_000)
        try:
            partitions = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic)]
            return sum(consumer.end_offsets(partitions).values())
        except KafkaTimeoutError:
            assert time.monotonic() < deadline, f"the end offsets of {topic} not known within {within_s} s"
        finally:
            consumer.close()


def topic_config(admin: KafkaAdminClient, topic: str) -> dict:
    """The topic's effective configuration. A broker the new topic has not reached yet
    answers with an error, which kafka-python gives as an empty configuration: ask again."""
    deadline = time.monotonic() + 10
    while not (config := admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic)],
                                                config_filter="all")["topic"][topic]):
        assert time.monotonic() < deadline, f"no broker describes {topic}"
        time.sleep(0.2)
    return config


def test_publish_writes_everything_with_one_broker_down_and_names_the_two_down(kafka_cluster, tmp_path):
    bootstrap = kafka_cluster.bootstrap
    assert create_topics(bootstrap, 4, 3, names=["tachograph"]) == {"tachograph": "created"}
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        assert topic_config(admin, "tachograph")["min.insync.replicas"]["value"] == "2"
        replicas = {len(p["replica_nodes"]) for p in admin.describe_topics(["tachograph"])[0]["partitions"]}
        assert replicas == {3}
    finally:
        admin.close()

    # one of three down: two in-sync replicas remain, min.insync.replicas 2 holds
    kafka_cluster.stop_node(3)
    first = fiscaliza("publish", tachograph_lines(tmp_path / "first.jsonl", 200), "--topic", "tachograph",
                      "--bootstrap", bootstrap)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "200 messages sent to tachograph"
    assert written(bootstrap, "tachograph") == 200

    # two of three down: every partition has one in-sync replica, the survivor refuses the writes
    kafka_cluster.stop_node(2)
    started = time.monotonic()
    second = fiscaliza("publish", tachograph_lines(tmp_path / "second.jsonl", 200, 200), "--topic", "tachograph",
                       "--bootstrap", bootstrap)
    elapsed = time.monotonic() - started
    down = kafka_cluster.addresses[1:]
    assert_bad_input(second, "0 of 200 messages written to tachograph: 200 not acknowledged within 20 s",
                     f"brokers not reached: {', '.join(down)}")
    assert kafka_cluster.addresses[0] not in second.stderr  # the survivor answered
    # the publish timeout (20 s) and the diagnosis, not kafka-python's 60 + 120 s
    assert StreamSettings().publish_timeout_s == 20
    assert elapsed < 30, elapsed

    # one broker back: none of the second file was written, as publish said; published
    # again, all of it is
    kafka_cluster.start_node(2)
    assert written(bootstrap, "tachograph") == 200
    again = fiscaliza("publish", tmp_path / "second.jsonl", "--topic", "tachograph", "--bootstrap", bootstrap)
    assert again.returncode == 0, again.stderr
    assert written(bootstrap, "tachograph") == 400
