"""A vehicle-day's raw input read back from the input topics (streams.readback), for its
re-judgment (engine.late), against a real Kafka broker (tests/conftest.py)."""

import datetime as dt
import json

import pytest

from streams.admin import publish
from streams.readback import KafkaReadBack, ReadBackTimeout

pytestmark = pytest.mark.kafka

MORNING = dt.datetime(2026, 12, 1, 3, 0, tzinfo=dt.timezone(dt.timedelta(hours=-3)))  # the operating day's cutover


def ping(vehicle: str, minutes: float, seq: int) -> str:
    ts = (MORNING + dt.timedelta(minutes=minutes)).isoformat()
    return json.dumps({"vehicle_id": vehicle, "ts": ts, "lat": -19.7574776, "lon": -40.3852385, "speed_kmh": 0.0,
                       "seq": seq})


@pytest.fixture(scope="module")
def published(kafka_bootstrap, reset_topics, tmp_path_factory):
    reset_topics(kafka_bootstrap)
    lines = [ping("JN-1011", -5, 1),  # the day before's operating day
             ping("JN-1011", 60, 2), ping("JN-1013", 61, 1), ping("JN-1011", 90, 4),
             ping("JN-1011", 70, 3),  # late: behind its vehicle's newest by 20 min
             ping("JN-1011", 24 * 60 + 1, 5)]  # the next operating day
    path = tmp_path_factory.mktemp("readback") / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    publish(kafka_bootstrap, "tachograph", path)
    return kafka_bootstrap


def window():
    return MORNING.timestamp(), (MORNING + dt.timedelta(days=1)).timestamp()


def test_one_vehicles_operating_day_is_read_back_with_its_late_message(published):
    read = KafkaReadBack(published, frozenset({"tachograph"}), 65536, backfill=False)
    messages = read("JN-1011", *window())
    assert sorted(m.body.seq for m in messages) == [2, 3, 4]
    # the record's time is the receipt the worker saw; no offset (read in event-time order)
    assert all(m.received_at is not None and m.offset is None for m in messages)
    assert {m.location.split("/")[0] for m in messages} == {"tachograph"}


def test_a_backfill_reads_without_receipts(published):
    read = KafkaReadBack(published, frozenset({"tachograph"}), 65536, backfill=True)
    messages = read("JN-1011", *window())
    assert sorted(m.body.seq for m in messages) == [2, 3, 4] and all(m.received_at is None for m in messages)


def test_an_input_topic_without_the_vehicle_gives_nothing(published):
    read = KafkaReadBack(published, frozenset({"tachograph", "catraca"}), 65536, backfill=False)
    assert [m.body.seq for m in read("JN-1013", *window())] == [1]


def test_a_read_back_past_its_deadline_raises_instead_of_judging_part_of_the_day(published):
    # a deadline already spent before the first poll: the partition holds records to read
    read = KafkaReadBack(published, frozenset({"tachograph"}), 65536, backfill=True, deadline_s=0.0)
    with pytest.raises(ReadBackTimeout, match="read back to offset"):
        read("JN-1011", *window())


def test_no_broker_is_a_timeout_within_the_deadline_not_kafka_pythons_30_s():
    import time

    read = KafkaReadBack("127.0.0.1:1", frozenset({"tachograph"}), 65536, backfill=False, deadline_s=1.0)
    started = time.monotonic()
    with pytest.raises(ReadBackTimeout, match=r"^no broker at 127.0.0.1:1 within 1 s \(KafkaTimeoutError\)$"):
        read("JN-2013", 0.0, 1.0)
    assert time.monotonic() - started < 10
