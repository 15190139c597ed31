"""A vehicle-day's raw input read back from the input topics, for its re-judgment
(engine.late): the raw telemetry, which is the evidence, stays in the topics."""

from __future__ import annotations

import time
from dataclasses import dataclass

from kafka import KafkaConsumer, TopicPartition
from kafka.errors import KafkaError

from engine.values import Message
from kernel.partitioning import partition_of
from telemetry import Rejection, decode

# Record timestamps are publish (or append) times, never earlier than the event: reading
# from this long before the window's start loses nothing, even with clocks a little apart.
_CLOCK_SKEW_S = 3600


class ReadBackTimeout(TimeoutError):
    """The input topics did not give a vehicle-day back in time: its re-judgment is not
    run on part of its input (the day stands as judged; the vehicle stage logs it)."""


class KafkaReadBack:
    """`engine.core.ReadBack` over the input topics: one vehicle's messages dated in a
    window, from the partition its key hashes to, from the first record published after
    the window opened (a backfill's records were all published later than their events:
    read from the start) up to the partition's end when called."""

    def __init__(self, bootstrap: str, inputs: frozenset[str], max_message_bytes: int, backfill: bool,
                 deadline_s: float = 60.0):
        self.bootstrap, self.inputs, self.max_message_bytes, self.backfill = \
            bootstrap, inputs, max_message_bytes, backfill
        # a broker that stops answering must not hold the vehicle agent for ever
        self.deadline_s = deadline_s

    def __call__(self, vehicle_id: str, start: float, end: float) -> list[Message]:
        # the deadline counts from here: kafka-python's consumer otherwise waits 30 s for a
        # first broker before the reading starts, on the thread that runs the vehicle stage
        # (a connection gets at least a second, whatever is left of the deadline)
        deadline = time.monotonic() + self.deadline_s
        consumer = _connect(self.bootstrap, self.deadline_s)
        key = vehicle_id.encode()
        found: list[Message] = []
        try:
            for topic in sorted(self.inputs):
                partitions = sorted(consumer.partitions_for_topic(topic) or ())
                if not partitions:
                    continue
                tp = TopicPartition(topic, partitions[partition_of(vehicle_id, len(partitions))])
                consumer.assign([tp])
                last = consumer.end_offsets([tp])[tp]
                since = None if self.backfill else \
                    consumer.offsets_for_times({tp: int((start - _CLOCK_SKEW_S) * 1000)})[tp]
                consumer.seek(tp, since.offset if since is not None else consumer.beginning_offsets([tp])[tp])
                for record in _records_before(consumer, tp, last, deadline, self.deadline_s):
                    if record.key != key or record.value is None:
                        continue
                    location = f"{topic}/{tp.partition}/{record.offset}"
                    body = decode(topic, record.value, location, self.max_message_bytes)
                    if isinstance(body, Rejection) or not start <= body.epoch < end:
                        continue
                    # no offset: the re-judgment reads them in event-time order, not the
                    # partition's, and the record's time is the receipt the worker saw
                    receipt = None if self.backfill or record.timestamp <= 0 else record.timestamp / 1000
                    found.append(Message(body, location, record.value.decode("utf-8", "replace"),
                                         received_at=receipt))
        finally:
            consumer.close()
        return found


@dataclass(frozen=True)
class InputRecord:
    """A record read back from an input topic, with the attributes the agents read of
    Faust's messages (`timestamp` in seconds, as Faust gives it)."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: float | None


def read_offsets(bootstrap: str, topic: str, partition: int, start: int, end: int,
                 deadline_s: float = 60.0) -> list[InputRecord]:
    """The records of `topic`/`partition` at offsets [start, end), in offset order (those
    that exist: a range may hold none, e.g. deleted by retention). For what the consumer
    passed over (streams.ledger)."""
    deadline = time.monotonic() + deadline_s
    consumer = _connect(bootstrap, deadline_s)
    tp = TopicPartition(topic, partition)
    try:
        consumer.assign([tp])
        last = min(end, consumer.end_offsets([tp])[tp])
        consumer.seek(tp, max(start, consumer.beginning_offsets([tp])[tp]))
        return [InputRecord(record.topic, record.partition, record.offset, record.key, record.value,
                            record.timestamp / 1000 if record.timestamp >= 0 else None)
                for record in _records_before(consumer, tp, last, deadline, deadline_s) if record.offset >= start]
    finally:
        consumer.close()


def _connect(bootstrap: str, deadline_s: float) -> KafkaConsumer:
    """A consumer outside any group, or ReadBackTimeout: kafka-python's otherwise waits 30 s
    for a first broker before the reading starts, on the thread that runs the stages (a
    connection gets at least a second, whatever is left of the deadline)."""
    try:
        return KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, group_id=None,
                             client_id="fiscaliza-readback", bootstrap_timeout_ms=max(int(deadline_s * 1000), 1000))
    except KafkaError as exc:
        raise ReadBackTimeout(f"no broker at {bootstrap} within {max(deadline_s, 1.0):.0f} s "
                              f"({type(exc).__name__})") from None


def _records_before(consumer: KafkaConsumer, tp: TopicPartition, last: int, deadline: float, deadline_s: float):
    """The records of `tp` from the consumer's position up to offset `last` (excluded), or
    ReadBackTimeout once the monotonic `deadline` passes."""
    while consumer.position(tp) < last:
        if time.monotonic() >= deadline:
            raise ReadBackTimeout(f"{tp.topic}/{tp.partition}: read back to offset {consumer.position(tp)} "
                                  f"of {last} in {deadline_s:.0f} s")
        for records in consumer.poll(timeout_ms=1000, max_records=5000).values():
            yield from (record for record in records if record.offset < last)
