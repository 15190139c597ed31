"""The docket sink on Kafka: confirmed infractions from the `infractions` topic become draft
autos, each bundled with the raw telemetry read back from the input topics.

At-least-once and idempotent: offsets are committed after the store commits, and an
infraction already stored is skipped, so a restart never makes a second docket.
A record that is not a valid infraction goes to the `rejected` topic with its reason.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from sqlalchemy.orm import Session, sessionmaker

from dockets.bundle import BundleMaker, select_lines
from dockets.occurrences import occurrence_record, pending_publication
from dockets.place import place_finder
from dockets.service import IngestReport, ensure_operators, ingest
from dockets.service import utcnow as service_now
from dockets.signing import SigningKey
from engine import Context
from kernel.inputs import StaticInputs
from kernel.partitioning import partition_of
from telemetry.validation import SOURCES as TELEMETRY_SOURCES

log = logging.getLogger("fiscaliza.dockets")
GROUP = "fiscaliza-dockets"
REQUIRED = ("infraction_id", "code", "group", "fine_ufir", "status", "operator_id", "service_date", "occurred_at",
            "description", "legal_basis", "evidence")
# Record timestamps are publish times, never earlier than the event (a ping is published
# after it is measured): reading from this long before a window's start loses nothing,
# even with clocks a little apart.
_CLOCK_SKEW_S = 3600


class KafkaTelemetry:
    """Raw lines of the input topics, read back for a bundle: only the partitions the
    vehicles' keys hash to, from the first record published after the window opened."""

    def __init__(self, bootstrap: str, inputs: frozenset[str], max_message_bytes: int | None = None):
        self.bootstrap, self.max_message_bytes = bootstrap, max_message_bytes
        self.sources = tuple(s for s in TELEMETRY_SOURCES if s in inputs or s == "occurrences")

    def lines(self, source: str, vehicles: frozenset[str], window: tuple[float, float]) -> tuple[bytes, ...]:
        consumer = KafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False, group_id=None,
                                 client_id="fiscaliza-dockets-evidence")
        try:
            partitions = sorted(consumer.partitions_for_topic(source) or ())
            if not partitions:
                return ()
            if source != "occurrences":
                # the producers' partitioner: where each vehicle's messages are
                partitions = sorted({partitions[partition_of(v, len(partitions))] for v in vehicles})
            assigned = [TopicPartition(source, p) for p in partitions]
            consumer.assign(assigned)
            since = int((window[0] - _CLOCK_SKEW_S) * 1000)
            starts = consumer.offsets_for_times({tp: since for tp in assigned})
            firsts = consumer.beginning_offsets(assigned)
            ends = consumer.end_offsets(assigned)
            for tp in assigned:
                found = starts.get(tp)
                # Nothing published since: every record predates the window by its publish
                # time (a backfill of simulated or future-dated data), so read them all.
                consumer.seek(tp, found.offset if found is not None else firsts[tp])
            raw: list[bytes] = []
            remaining = {tp for tp in assigned if consumer.position(tp) < ends[tp]}
            while remaining:
                for tp, records in consumer.poll(timeout_ms=1000, max_records=5000).items():
                    raw.extend(r.value for r in records if r.offset < ends[tp] and r.value is not None)
                remaining = {tp for tp in remaining if consumer.position(tp) < ends[tp]}
            return select_lines(source, raw, vehicles, window, self.max_message_bytes)
        finally:
            consumer.close()


def parse_infraction(value: bytes | None) -> tuple[dict | None, str | None]:
    """An infraction record, or the reason it is not one."""
    try:
        record = json.loads(value or b"")
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        return None, f"invalid_json: {str(exc)[:200]}"
    if not isinstance(record, dict):
        return None, "invalid_json: not an object"
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        return None, f"missing_field: {', '.join(missing)}"
    return record, None


def run_sink(sessions: sessionmaker[Session], context: Context, maker: BundleMaker, bootstrap: str, *,
             group: str = GROUP, idle_exit_s: float | None = None,
             should_stop: Callable[[], bool] = lambda: False) -> IngestReport:
    """Consume `infractions` until stopped (or idle for `idle_exit_s`, for backfills and tests)."""
    consumer = KafkaConsumer("infractions", bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False,
                             auto_offset_reset="earliest", client_id="fiscaliza-dockets")
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", client_id="fiscaliza-dockets")
    plates = {v.vehicle_id: v.plate for v in context.fleet.values()}
    place = place_finder(context.feed)
    total = IngestReport()
    with sessions.begin() as session:
        ensure_operators(session, {a.agency_id: a.name for a in context.feed.agencies.values()})
    last_record = time.monotonic()
    try:
        while not should_stop():
            publish_occurrences(sessions, producer, context.feed.timezone)
            batch = consumer.poll(timeout_ms=1000, max_records=200)
            if not batch:
                if idle_exit_s is not None and time.monotonic() - last_record > idle_exit_s:
                    break
                continue
            last_record = time.monotonic()
            records = []
            for tp, messages in batch.items():
                for message in messages:
                    record, reason = parse_infraction(message.value)
                    if record is None:
                        producer.send("rejected", key=b"infractions", value=json.dumps({
                            "source": "infractions", "reason": reason.split(":")[0], "detail": reason,
                            "topic": tp.topic, "partition": tp.partition, "offset": message.offset,
                            "raw": (message.value or b"").decode("utf-8", "replace")}).encode())
                    else:
                        records.append(record)
            with sessions.begin() as session:
                report = ingest(session, records, plates=plates, ufir_brl=context.policy.policy.ufir_brl,
                                bundle_for=maker.bundle, place_for=place)
            producer.flush()
            consumer.commit()
            total.created += report.created
            total.already += report.already
            total.noted += report.noted
            total.not_confirmed += report.not_confirmed
            total.without_fine += report.without_fine
            if report.created:
                log.info("autos em rascunho criados", extra={"dockets": report.created})
            if report.noted:
                log.info("novos dados após a lavratura", extra={"dockets": report.noted})
    finally:
        consumer.close()
        producer.close()
    return total


def publish_occurrences(sessions: sessionmaker[Session], producer: KafkaProducer, tz) -> int:
    """The outbox: occurrences the fiscais registered go onto the `occurrences` topic,
    keyed by id, and are marked published once the broker has acknowledged them. A crash
    in between publishes one again: the engine keeps occurrences by id."""
    with sessions.begin() as session:
        pending = pending_publication(session)
        for occurrence in pending:
            record = occurrence_record(occurrence, tz)
            producer.send("occurrences", key=occurrence.id.encode(), value=json.dumps(record).encode())
        if pending:
            producer.flush()
            published = service_now()
            for occurrence in pending:
                occurrence.published_at = published
            log.info("ocorrências publicadas", extra={"occurrences": [o.id for o in pending]})
        return len(pending)


def kafka_bundle_maker(context: Context, inputs: StaticInputs, bootstrap: str, sources: frozenset[str],
                       signer: SigningKey | None = None) -> BundleMaker:
    telemetry = KafkaTelemetry(bootstrap, sources, context.policy.stream.max_message_bytes)
    return BundleMaker(telemetry, feed=inputs.feed, policy=inputs.policy,
                       geofences=inputs.geofences, fleet=context.fleet, timezone=context.policy.policy.timezone,
                       signer=signer)
