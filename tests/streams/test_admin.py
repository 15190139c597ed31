"""Topic creation and publishing against a real Kafka broker (tests/conftest.py)."""

import json
import time
import uuid

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType
from kafka.structs import OffsetAndMetadata

from streams.admin import (GroupProgress, PublishError, StreamError, create_topics, group_progress, producer_timeouts,
                           publish)
from streams.topics import TOPICS

pytestmark = pytest.mark.kafka


def test_topics_are_created_once_with_compaction_for_the_change_log(kafka_bootstrap):
    first = create_topics(kafka_bootstrap, 4, 1)
    second = create_topics(kafka_bootstrap, 4, 1)
    assert set(first) == set(TOPICS) and set(second.values()) == {"exists"}
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    try:
        described = {t["name"]: t for t in admin.describe_topics(list(TOPICS))}
        assert {name: len(t["partitions"]) for name, t in described.items()} == \
            {name: 1 if name == "audit-anchors" else 4 for name in TOPICS}
        config = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "infractions")])
        # the latest status per infraction_id wins
        assert config["topic"]["infractions"]["cleanup.policy"]["value"] == "compact"
    finally:
        admin.close()


def consume_all(bootstrap: str, topic: str, expected: int) -> list:
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=f"test-{uuid.uuid4()}",
                             auto_offset_reset="earliest", consumer_timeout_ms=5000)
    records = []
    try:
        for record in consumer:
            records.append(record)
            if len(records) >= expected:
                break
    finally:
        consumer.close()
    return records


def test_publish_sends_every_line_keyed_by_vehicle(kafka_bootstrap, reset_topics, tmp_path):
    reset_topics(kafka_bootstrap)  # empty: what other tests published is not counted
    lines = [json.dumps({"vehicle_id": f"V{i % 3}", "ts": f"2026-12-01T08:00:{i:02d}-03:00", "counter": i,
                         "seal_intact": True, "status": "ok"}) for i in range(30)] + ["not json"]
    path = tmp_path / "catraca.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = publish(kafka_bootstrap, "catraca", path)
    # 30 keyed lines and one malformed line, sent without a key for the workers to dead-letter
    assert (result.sent, result.unkeyed) == (31, 1)
    records = consume_all(kafka_bootstrap, "catraca", 31)
    assert len(records) == 31
    keys = {r.key for r in records}
    assert keys == {b"V0", b"V1", b"V2", None}
    # one vehicle's messages all land on one partition, in order
    v1 = [r for r in records if r.key == b"V1"]
    assert len({r.partition for r in v1}) == 1
    assert [json.loads(r.value)["counter"] for r in v1] == list(range(1, 30, 3))


def test_publish_at_recorded_pace_waits_the_event_gaps_divided_by_speed(tmp_path, kafka_bootstrap):
    lines = [json.dumps({"vehicle_id": "V", "ts": f"2026-12-01T08:00:{s:02d}-03:00", "lat": 0, "lon": 0,
                         "speed_kmh": 0}) for s in (0, 10, 30)]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    now, sleeps = [0.0], []

    def sleep(seconds):
        sleeps.append(seconds)
        now[0] += seconds

    publish(kafka_bootstrap, "tachograph", path, speed=10, clock=lambda: now[0], sleep=sleep)
    # events at 0, 10, 30 s at 10× speed: wait 1 s, then 2 s more (3 s since the start)
    assert sleeps == pytest.approx([1.0, 2.0])


def test_the_producer_waits_no_longer_than_the_publish_timeout(kafka_bootstrap):
    # left at kafka-python's defaults, a record could wait 60 s in send() and 120 s more for
    # its acknowledgement; kafka-python refuses a delivery timeout under request + linger
    options = producer_timeouts(2.5, linger_ms=20)
    assert (options["delivery_timeout_ms"], options["max_block_ms"], options["bootstrap_timeout_ms"]) == (2500,) * 3
    assert options["request_timeout_ms"] + 20 <= 2500
    KafkaProducer(bootstrap_servers=kafka_bootstrap, linger_ms=20, **options).close()


def test_what_the_brokers_do_not_take_is_counted_not_written_and_the_reason_named(kafka_bootstrap, tmp_path):

    create_topics(kafka_bootstrap, 4, 1)
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    admin.delete_topics(["occurrences"])
    while "occurrences" in admin.list_topics():
        time.sleep(0.2)
    path = tmp_path / "occurrences.jsonl"
    path.write_text('{"id": "o1", "kind": "other", "start": "2026-12-01T08:00:00-03:00"}\n'
                    '{"id": "o2", "kind": "other", "start": "2026-12-01T09:00:00-03:00"}\n')
    try:
        started = time.monotonic()
        with pytest.raises(PublishError, match=r"^0 of 2 messages written to occurrences: 2 not acknowledged within "
                           r"2 s \(KafkaTimeoutError\); the topic occurrences does not exist") as failure:
            publish(kafka_bootstrap, "occurrences", path, ack_timeout_s=2)
        assert (failure.value.written, failure.value.total) == (0, 2)
        assert time.monotonic() - started < 10  # not kafka-python's 60 s wait for the topic's metadata
    finally:
        create_topics(kafka_bootstrap, 4, 1)
        admin.close()


def test_unreachable_broker_is_a_clear_error(tmp_path):
    with pytest.raises(StreamError, match="cannot reach Kafka at 127.0.0.1:1"):
        create_topics("127.0.0.1:1", 1, 1, timeout_s=2)


def test_publish_without_any_broker_says_nothing_was_written_within_its_timeout(tmp_path):
    """No broker gives the cluster's metadata (none listens here; a survivor that lost its
    controllers may list no broker): the run counts every line as not written and names the
    broker, within the publish timeout, not kafka-python's 30 s bootstrap wait."""
    path = tmp_path / "occurrences.jsonl"
    path.write_text('{"id": "o1", "kind": "other", "start": "2026-12-01T08:00:00-03:00"}\n'
                    '{"id": "o2", "kind": "other", "start": "2026-12-01T09:00:00-03:00"}\n')
    started = time.monotonic()
    with pytest.raises(PublishError, match=r"^0 of 2 messages written to occurrences: 2 not acknowledged within 2 s "
                       r"\(no broker gave the cluster's metadata: KafkaTimeoutError\); brokers not reached: 127.0.0.1:1$") as failure:
        publish("127.0.0.1:1", "occurrences", path, ack_timeout_s=2)
    assert (failure.value.written, failure.value.total) == (0, 2)
    # 2 s bootstrap + up to 3 s for the diagnosis, not 30 s
    assert time.monotonic() - started < 10


def test_publish_names_only_the_brokers_it_could_not_reach_when_the_one_reached_gives_no_metadata(tmp_path):
    """A survivor that takes connections but gives no metadata (a node that lost its
    controllers) and two brokers down: the two are named, never the one that answered."""
    import socket

    survivor = socket.create_server(("127.0.0.1", 0))  # accepts (the backlog), never answers
    down = []
    for _ in range(2):
        with socket.create_server(("127.0.0.1", 0)) as closed:
            down.append(f"127.0.0.1:{closed.getsockname()[1]}")
    answered = f"127.0.0.1:{survivor.getsockname()[1]}"
    path = tmp_path / "occurrences.jsonl"
    path.write_text('{"id": "o1", "kind": "other", "start": "2026-12-01T08:00:00-03:00"}\n')
    try:
        with pytest.raises(PublishError, match=r"^0 of 1 messages written to occurrences: 1 not acknowledged within "
                           r"2 s \(no broker gave the cluster's metadata: KafkaTimeoutError\); brokers not reached: "
                           + ", ".join(down).replace(".", r"\.") + "$") as failure:
            publish(",".join([answered, *down]), "occurrences", path, ack_timeout_s=2)
        assert answered not in str(failure.value)
    finally:
        survivor.close()


def test_group_progress_without_a_broker_is_a_clear_error_within_its_wait():
    started = time.monotonic()
    with pytest.raises(StreamError, match=r"^cannot reach Kafka at 127.0.0.1:1: KafkaTimeoutError$"):
        group_progress("127.0.0.1:1", "fiscaliza", ["tachograph"], within_s=1)
    assert time.monotonic() - started < 10  # not kafka-python's 30 s


def test_group_progress_counts_what_a_group_committed_against_the_end_offsets(kafka_bootstrap, reset_topics):
    reset_topics(kafka_bootstrap)
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    for i in range(10):
        producer.send("occurrences", key=b"k", value=b"%d" % i, partition=1)
    producer.flush()
    producer.close()
    group = f"progress-{uuid.uuid4().hex[:8]}"
    consumer = KafkaConsumer(bootstrap_servers=kafka_bootstrap, group_id=group, enable_auto_commit=False)
    try:
        consumer.assign([TopicPartition("occurrences", 1)])
        consumer.seek(TopicPartition("occurrences", 1), 0)
        # committed offset 4 = the next to read: 4 of the 10 messages done, 6 behind
        consumer.commit({TopicPartition("occurrences", 1): OffsetAndMetadata(4, "", -1)})
    finally:
        consumer.close()
    progress = group_progress(kafka_bootstrap, group, ["occurrences"])
    assert (progress.committed, progress.end, progress.lag) == (4, 10, 6)
    # a group that never committed has done nothing; a topic not there yet is empty
    assert group_progress(kafka_bootstrap, f"never-{group}", ["occurrences"]).lag == 10
    assert group_progress(kafka_bootstrap, group, ["no-such-topic"]) == GroupProgress(0, 0)


def test_the_tables_changelogs_exist_compacted_before_the_worker_joins(kafka_bootstrap):
    # Faust creates them at start, but the assignor may not see them yet in the metadata:
    # a global table then never got its partitions and the worker waited forever
    from engine.loading import load_context
    from fiscaliza.replay import ReplayInputs
    from kernel.settings import StreamSettings
    from samples import joao_neiva
    from streams.admin import create_changelog_topics
    from streams.app import create_app

    feed, fleet = joao_neiva()
    settings = StreamSettings(bootstrap=kafka_bootstrap, app_id=f"changelogs-{uuid.uuid4().hex[:8]}", partitions=4)
    app = create_app(load_context(ReplayInputs(feed=feed, fleet=fleet, tachograph=None)), settings)
    names = {f"{settings.app_id}-{table}-changelog" for table in ("vehicles", "operators", "partitions",
                                                                   "occurrences-table")}
    assert create_changelog_topics(kafka_bootstrap, app, 1) == dict.fromkeys(names, "created")
    assert create_changelog_topics(kafka_bootstrap, app, 1) == dict.fromkeys(names, "exists")
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    try:
        assert {t["name"]: len(t["partitions"]) for t in admin.describe_topics(sorted(names))} == dict.fromkeys(names, 4)
        vehicles = f"{settings.app_id}-vehicles-changelog"
        config = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, vehicles)])["topic"][vehicles]
        assert config["cleanup.policy"]["value"] == "compact"
        assert config["max.message.bytes"]["value"] == "16777216"  # the state's own limit, as Faust sets it
    finally:
        admin.close()
