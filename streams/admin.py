"""Kafka tooling with kafka-python: creating the topics and publishing JSON Lines."""

from __future__ import annotations

import datetime as dt
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import msgspec
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import KafkaError, TopicAlreadyExistsError, UnknownBrokerIdError

from kernel.errors import FiscalizaError
from kernel.settings import StreamSettings
from streams.topics import END_OF_INPUT_KEY, TOPICS, Topic


class StreamError(FiscalizaError, RuntimeError):
    """The broker cannot be reached or refused an operation; the message says which."""


def topic_configs(topic: Topic) -> dict[str, str]:
    receipt = {"message.timestamp.type": "LogAppendTime"} if topic.stamped_on_receipt else {}
    if topic.kept_forever:
        return {"cleanup.policy": "delete", "retention.ms": "-1", "retention.bytes": "-1", **receipt}
    if topic.compacted:
        # a change log: the latest record per key is kept forever
        return {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.1", **receipt}
    return {"cleanup.policy": "delete", "retention.ms": str(7 * 24 * 3600 * 1000), **receipt}


def create_topics(bootstrap: str, partitions: int, replication: int,
                  names: Iterable[str] | None = None, timeout_s: float = 15.0) -> dict[str, str]:
    """Create the topics that do not exist yet; returns name -> 'created' | 'exists'."""
    specs = [NewTopic(name, 1 if TOPICS[name].single_partition else partitions, replication,
                      topic_configs=topic_configs(TOPICS[name])) for name in names or TOPICS]
    return _create_missing(bootstrap, specs, timeout_s)


def create_changelog_topics(bootstrap: str, app, replication: int, timeout_s: float = 15.0) -> dict[str, str]:
    """Create the app's table changelogs before the worker joins its group, with the
    configuration Faust would give them (compacted, the table's partitions and extra
    configs). Faust creates them itself at start, but a topic just created may be missing
    from the metadata the partition assignor reads ("Ignoring missing topic"): a global
    table then never gets its partitions and the worker waits for its recovery forever
    (seen in the worker tests, idle for 300 s). Created here, they are in the metadata
    before the group is joined. Returns name -> 'created' | 'exists'."""
    specs = [NewTopic(table.changelog_topic.get_topic_name(), table.changelog_topic.partitions, replication,
                      topic_configs={"cleanup.policy": "compact", **(table.changelog_topic.config or {})})
             for table in app.tables.values()]
    return _create_missing(bootstrap, specs, timeout_s)


def _create_missing(bootstrap: str, specs: list[NewTopic], timeout_s: float) -> dict[str, str]:
    """Create each topic of `specs` that does not exist yet (another process may create
    it at the same moment: that is 'exists' too), and wait until all show partitions.

    A cluster still forming may name as its controller a node the client's first metadata
    did not list yet (UnknownBrokerIdError, seen in CI right after a 3-node cluster
    started): the client is made again, with fresh metadata, until `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return _create_missing_once(bootstrap, specs, timeout_s)
        except UnknownBrokerIdError as exc:
            if time.monotonic() > deadline:
                raise StreamError(f"Kafka at {bootstrap} refused: {exc!r} (the cluster did not settle "
                                  f"within {timeout_s:.0f} s)") from None
            time.sleep(0.5)


def _create_missing_once(bootstrap: str, specs: list[NewTopic], timeout_s: float) -> dict[str, str]:
    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="fiscaliza-admin",
                                 request_timeout_ms=int(timeout_s * 1000),
                                 bootstrap_timeout_ms=int(timeout_s * 1000))
    except KafkaError as exc:
        raise StreamError(f"cannot reach Kafka at {bootstrap}: {exc}") from None
    try:
        existing = set(admin.list_topics())
        outcome = {}
        for spec in specs:
            if spec.name in existing:
                outcome[spec.name] = "exists"
                continue
            try:
                admin.create_topics([spec])
                outcome[spec.name] = "created"
            except TopicAlreadyExistsError:
                outcome[spec.name] = "exists"
        _await_partitions(admin, [n for n, o in outcome.items() if o == "created"], timeout_s)
        return outcome
    except UnknownBrokerIdError:
        raise
    except KafkaError as exc:
        raise StreamError(f"Kafka at {bootstrap} refused: {exc}") from None
    finally:
        admin.close()


def _await_partitions(admin: KafkaAdminClient, names: list[str], timeout_s: float) -> None:
    """Creation is asynchronous: a topic may be listed with no partitions yet for a
    moment (seen once in the tests), and a worker started then would not find them."""
    deadline = time.monotonic() + timeout_s
    while names:
        names = [t["name"] for t in admin.describe_topics(names)
                 if not t["partitions"]]
        if names and time.monotonic() > deadline:
            raise StreamError(f"Kafka created {', '.join(names)} but shows no partitions after {timeout_s:.0f} s")
        if names:
            time.sleep(0.1)


def delete_topics(bootstrap: str, timeout_s: float = 60.0) -> list[str]:
    """Delete fiscaliza's topics that exist and wait until they are gone (for tests and
    benchmarks that start from empty topics); returns the names deleted."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="fiscaliza-admin")
    try:
        existing = [name for name in admin.list_topics() if name in TOPICS]
        if existing:
            admin.delete_topics(existing)
        # deletion is asynchronous: publishing before it is done would go to the old topics
        # (deleted under the publisher's feet, or kept with their records when re-created early)
        deadline = time.monotonic() + timeout_s
        while set(existing) & set(admin.list_topics()):
            if time.monotonic() > deadline:
                raise StreamError(f"topics not deleted within {timeout_s:.0f} s: {sorted(existing)}")
            time.sleep(0.2)
        return existing
    finally:
        admin.close()


class _Keyed(msgspec.Struct):
    """Just enough of a message to find its key and event time."""

    vehicle_id: str | None = None
    id: str | None = None
    ts: str | None = None
    start: str | None = None


@dataclass
class PublishResult:
    sent: int = 0  # acknowledged by the brokers (acks=all: by min.insync.replicas replicas)
    unkeyed: int = 0  # lines without a key (malformed): sent anyway, the workers dead-letter them


class PublishError(StreamError):
    """The brokers did not acknowledge every message: how many were written is in the
    message (and in `written`), the rest were not, and it names the brokers not reached."""

    def __init__(self, message: str, written: int, total: int):
        super().__init__(message)
        self.written, self.total = written, total


def producer_timeouts(ack_timeout_s: float, linger_ms: int = 0) -> dict[str, int]:
    """kafka-python's waits, all bounded by the longest a message may wait for its
    acknowledgement (the setting stream.publish_timeout_s). Left at their defaults they add
    up: send() blocks up to max_block_ms (60 s) for metadata or buffer space, each request
    waits request_timeout_ms (30 s) and is retried (NotEnoughReplicas, a leader that moved)
    until delivery_timeout_ms (120 s) after send(), and the producer then fails the record's
    future, which nobody read: with 2 of 3 brokers down, 200 "sent" after 2 minutes and none
    written."""
    delivery_ms = int(ack_timeout_s * 1000)
    return {
        "delivery_timeout_ms": delivery_ms,
        # at least one retry of a request that got no answer fits in the delivery timeout
        # (kafka-python requires delivery >= request + linger)
        "request_timeout_ms": max(1, min(30_000, (delivery_ms - linger_ms) // 2)),
        "max_block_ms": delivery_ms,
        # the constructor's wait for a first broker's metadata (kafka-python 3: 30 s)
        "bootstrap_timeout_ms": delivery_ms,
    }


class _Acknowledgements:
    """The brokers' answers to the records sent, as the producer's sender thread reports them."""

    def __init__(self):
        self._answered = threading.Condition()
        self.tracked = 0
        self.written = 0
        self.failed = 0
        self.first_error: BaseException | None = None
        self.last_sent = 0.0  # time.monotonic() of the last record tracked

    def track(self, future) -> None:
        self.tracked += 1
        self.last_sent = time.monotonic()
        future.add_callback(self._written).add_errback(self._failed)

    def _written(self, _metadata) -> None:
        with self._answered:
            self.written += 1
            self._answered.notify_all()

    def _failed(self, error: BaseException) -> None:
        with self._answered:
            self.failed += 1
            self.first_error = self.first_error or error
            self._answered.notify_all()

    def await_all(self, ack_timeout_s: float) -> None:
        """Until every record tracked is answered, or `ack_timeout_s` (and a little more
        for the sender thread to report its expiry) after the last was sent: our own bound,
        whatever state the producer is in; what is unanswered then counts as not written."""
        deadline = self.last_sent + ack_timeout_s + _CLOSE_S
        with self._answered:
            self._answered.wait_for(lambda: self.written + self.failed >= self.tracked,
                                    timeout=max(deadline - time.monotonic(), 0))


def publish(bootstrap: str, topic: str, path: Path, speed: float | None = None,
            progress: Callable[[int, int], None] | None = None,
            clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
            ack_timeout_s: float = StreamSettings.publish_timeout_s) -> PublishResult:
    """Send every line of a JSON Lines file to `topic`, keyed as the topic says, and
    return once the brokers acknowledged each. A message not acknowledged within
    `ack_timeout_s` of its sending stops the run: PublishError says how many were written.

    speed None: as fast as possible. speed F: at the recorded pace (from `ts`, or an
    occurrence's `start`) compressed F times.
    """
    if topic not in TOPICS:
        raise StreamError(f"unknown topic {topic!r}; the topics are {', '.join(TOPICS)}")
    try:
        lines = [line for line in Path(path).read_bytes().splitlines() if line.strip()]
    except OSError as exc:
        raise StreamError(f"cannot read {path}: {exc.strerror}") from None
    decoder = msgspec.json.Decoder(_Keyed)
    try:
        producer = _producer(bootstrap, ack_timeout_s, linger_ms=20, batch_size=256 * 1024)
    except _NoMetadata as exc:
        # no broker gave the cluster's metadata in time (a node that lost its controllers
        # may list no broker at all): nothing was sent, which is what the user must read
        raise PublishError(f"0 of {len(lines)} messages written to {topic}: {len(lines)} not acknowledged within "
                           f"{ack_timeout_s:g} s (no broker gave the cluster's metadata: {exc.reason}); "
                           f"{_unreached(bootstrap, topic)}", 0, len(lines)) from None
    result, acks = PublishResult(), _Acknowledgements()
    started_wall, started_event = clock(), None
    try:
        for n, line in enumerate(lines, start=1):
            if acks.first_error is not None:
                break  # the brokers refuse: what follows would wait as long, and fail the same
            key, event = _key_and_time(decoder, line)
            if key is None:
                result.unkeyed += 1
            if speed and event is not None:
                started_event = started_event if started_event is not None else event
                delay = (event - started_event) / speed - (clock() - started_wall)
                if delay > 0:
                    sleep(delay)
            acks.track(producer.send(topic, value=line, key=key.encode() if key else None))
            if progress and (n % 2000 == 0 or n == len(lines)):
                progress(n, len(lines))
    except KafkaError as exc:
        # send() found no metadata or buffer space within the timeout: the line was not sent
        acks.first_error = acks.first_error or exc
    finally:
        acks.await_all(ack_timeout_s)
        _close(producer)
    result.sent = acks.written
    if acks.written < len(lines):
        raise PublishError(_not_written(bootstrap, topic, acks, len(lines), ack_timeout_s), acks.written, len(lines))
    return result


_CLOSE_S = 5.0  # beyond the delivery timeout, for the sender thread to report or close


def _close(producer: KafkaProducer) -> None:
    """Close, never raising: kafka-python's close() first flushes and raises if a record is
    still pending; such a record was counted not written already."""
    try:
        producer.close(timeout=_CLOSE_S)
    except KafkaError:
        pass


def _not_written(bootstrap: str, topic: str, acks: _Acknowledgements, total: int, ack_timeout_s: float) -> str:
    reason = type(acks.first_error).__name__ if acks.first_error is not None else "no answer"
    return (f"{acks.written} of {total} messages written to {topic}: {total - acks.written} not acknowledged "
            f"within {ack_timeout_s:g} s ({reason}); {_unreached(bootstrap, topic)}")


def _unreached(bootstrap: str, topic: str, within_s: float = 3.0) -> str:
    """Which brokers the publisher could not reach: the addresses (bootstrap, and the
    brokers the cluster lists) that refuse a connection, and the ids of brokers holding
    replicas of `topic` that the cluster shows offline (a broker gone from the cluster
    is listed by no live one: its address is known only if the bootstrap names it)."""
    addresses = [a.strip().removeprefix("kafka://") for a in bootstrap.split(",") if a.strip()]
    offline: set[int] = set()
    missing = False
    try:
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="fiscaliza-admin",
                                 request_timeout_ms=int(within_s * 1000), bootstrap_timeout_ms=int(within_s * 1000))
    except KafkaError:
        admin = None
    if admin is not None:
        try:
            listed = [f"{b['host']}:{b['port']}" for b in admin.describe_cluster()["brokers"]]
            addresses += [a for a in listed if a not in addresses]
            missing = topic not in admin.list_topics()
            for described in [] if missing else admin.describe_topics([topic]):
                for partition in described["partitions"]:
                    offline.update(partition["offline_replicas"])
        except KafkaError:
            pass
        finally:
            admin.close()
    unreached = [a for a in addresses if not _answers(a, within_s / max(len(addresses), 1))]
    if missing:
        return f"the topic {topic} does not exist (fiscaliza topics create)"
    if not unreached and not offline:
        return "every broker answers (see the brokers' logs)"
    parts = [f"brokers not reached: {', '.join(unreached)}"] if unreached else []
    if offline:
        ids = ", ".join(map(str, sorted(offline)))
        parts.append(f"offline: broker{'s' if len(offline) > 1 else ''} {ids}, replicas of {topic}")
    return "; ".join(parts)


def _answers(address: str, timeout_s: float) -> bool:
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=max(timeout_s, 0.1)):
            return True
    except (OSError, ValueError):
        return False


class _NoMetadata(StreamError):
    def __init__(self, bootstrap: str, reason: str):
        super().__init__(f"cannot reach Kafka at {bootstrap}: {reason}")
        self.reason = reason


def _producer(bootstrap: str, ack_timeout_s: float, **options) -> KafkaProducer:
    """acks=all, not idempotent: an idempotent producer first asks a broker for a producer
    id, which a cluster that lost its controller quorum (2 of 3 nodes down) cannot give,
    and kafka-python then retries forever without expiring a record. A retry may write a
    message twice, which the workers take as the same message (same content); one request
    in flight per broker keeps a vehicle's messages in order across retries."""
    try:
        return KafkaProducer(bootstrap_servers=bootstrap, acks="all", client_id="fiscaliza-publish",
                             enable_idempotence=False, max_in_flight_requests_per_connection=1,
                             **producer_timeouts(ack_timeout_s, options.get("linger_ms", 0)), **options)
    except KafkaError as exc:
        # the exception's name, not its text: kafka-python's names every bootstrap address,
        # the ones that answered too, where the diagnosis after it names those that did not
        raise _NoMetadata(bootstrap, type(exc).__name__) from None


def _key_and_time(decoder, line: bytes) -> tuple[str | None, float | None]:
    try:
        message = decoder.decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None, None
    key = message.vehicle_id or message.id
    stamp = message.ts or message.start
    try:
        event = dt.datetime.fromisoformat(stamp).timestamp() if stamp else None
    except ValueError:
        event = None
    return key, event


def publish_end_of_input(bootstrap: str, topics: Iterable[str] = ("tachograph", "catraca"),
                         ack_timeout_s: float = StreamSettings.publish_timeout_s) -> int:
    """Mark the end of a finite input (a backfill) on every partition of the input
    topics: the workers then close every period the input covered, as the replay does.
    Returns the partitions marked; a mark not acknowledged within `ack_timeout_s` is a
    PublishError."""
    topics = list(topics)
    producer = _producer(bootstrap, ack_timeout_s)
    acks, marks = _Acknowledgements(), 0
    try:
        for topic in topics:
            for partition in sorted(producer.partitions_for(topic) or ()):
                acks.track(producer.send(topic, key=END_OF_INPUT_KEY, value=b'{"control": "end_of_input"}',
                                         partition=partition))
                marks += 1
    except KafkaError as exc:
        raise StreamError(f"marking the end of input at {bootstrap} failed: {exc}") from None
    finally:
        acks.await_all(ack_timeout_s)
        _close(producer)
    if acks.written < marks:
        raise PublishError(f"the end of input was marked on {acks.written} of {marks} partitions "
                           f"(not acknowledged within {ack_timeout_s:g} s); {_unreached(bootstrap, topics[0])}",
                           acks.written, marks)
    return marks


@dataclass(frozen=True)
class GroupProgress:
    """How far a consumer group (the workers' app id) got through some topics."""

    committed: int  # messages before the group's committed offsets (or deleted by retention), summed
    end: int  # messages on the partitions (their end offsets), summed

    @property
    def lag(self) -> int:
        return self.end - self.committed


def group_progress(bootstrap: str, group: str, topics: Iterable[str], within_s: float = 10.0) -> GroupProgress:
    """The group's committed offsets against the topics' end offsets (a topic that does
    not exist yet counts as empty, a partition without a commit as nothing consumed but
    what retention already deleted: that can never be pending). `within_s`: how long each
    client waits for a first broker (kafka-python's 30 s each would stall the ops sink's
    loop, which asks every 15 s, for a minute per topic while Kafka is down)."""
    waits = {"bootstrap_timeout_ms": int(within_s * 1000)}
    consumer = admin = None
    try:
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, client_id="fiscaliza-admin", **waits)
        admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="fiscaliza-admin", **waits)
    except KafkaError as exc:
        if consumer is not None:
            consumer.close()
        raise StreamError(f"cannot reach Kafka at {bootstrap}: {type(exc).__name__}") from None
    try:
        partitions = [TopicPartition(topic, p) for topic in topics
                      for p in sorted(consumer.partitions_for_topic(topic) or ())]
        if not partitions:
            return GroupProgress(0, 0)
        ends = consumer.end_offsets(partitions)
        starts = consumer.beginning_offsets(partitions)
        committed = _retrying(lambda: admin.list_group_offsets({group: partitions}).get(group, {}))
    except KafkaError as exc:
        raise StreamError(f"reading the offsets of group {group} at {bootstrap} failed: {exc}") from None
    finally:
        consumer.close()
        admin.close()
    done = 0
    for tp in partitions:
        meta = committed.get(tp)
        offset = meta.offset if meta is not None else -1
        done += min(max(offset, starts[tp]), ends[tp])
    return GroupProgress(done, sum(ends.values()))


def _retrying(call, timeout_s: float = 15.0):
    """`call()`, again while the broker answers with a retriable error (a new broker
    has no group coordinator until its offsets topic exists)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return call()
        except KafkaError as exc:
            if not exc.retriable or time.monotonic() > deadline:
                raise
            time.sleep(0.5)
