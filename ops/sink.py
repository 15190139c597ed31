"""`fiscaliza ops sink`: the engine's outputs (vehicle-status, trips, infractions, the
month's efficiency, and the dead letters that are conflicting duplicates) into the live tables, and the workers' consumer lag measured from Kafka's own offsets.

At least once and idempotent: a batch is upserted and committed to the database before
its offsets are committed to Kafka; read again after a crash, it writes the same rows.
A vehicle's status is only replaced by a newer one. The lag is measured here, not by
the workers, so it keeps growing on the dashboard while every worker is down.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from kafka import KafkaConsumer, KafkaProducer
from kafka.errors import KafkaError
from prometheus_client import CollectorRegistry, Counter, Gauge
from sqlalchemy import Engine
from sqlalchemy.dialects import postgresql, sqlite

from ops.rows import row_of
from ops.store import (
    FEED_ROW,
    LiveConflictingDuplicate,
    LiveFeed,
    LiveInfraction,
    LiveMonthEfficiency,
    LiveTrip,
    LiveVehicle,
)
from streams.admin import StreamError, group_progress
from telemetry import Rejection, to_builtins

log = logging.getLogger("fiscaliza.ops")

GROUP = "fiscaliza-ops"
TOPICS = ("vehicle-status", "trips", "infractions", "month-efficiency", "rejected")
MODELS = {"vehicle-status": LiveVehicle, "trips": LiveTrip, "infractions": LiveInfraction,
          "month-efficiency": LiveMonthEfficiency, "rejected": LiveConflictingDuplicate}
INPUTS = ("tachograph", "catraca")  # the workers' input topics, whose lag is measured here
LAG_EVERY_S = 15.0


@dataclass
class SinkReport:
    rows: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOPICS, 0))
    rejected: int = 0


class SinkMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.lag = Gauge("fiscaliza_consumer_lag_messages",
                         "Messages on the input topics the workers have not committed yet (from Kafka's offsets)",
                         ["topic"], registry=registry)
        self.rows = Counter("fiscaliza_ops_rows_written", "Rows upserted into the live tables", ["table"],
                            registry=registry)
        self.sink_lag = Gauge("fiscaliza_ops_sink_lag_messages", "Records of the output topics not yet in the live "
                              "tables", registry=registry)
        for topic in INPUTS:
            self.lag.labels(topic)
        for topic in TOPICS:
            self.rows.labels(MODELS[topic].__tablename__)


def _upsert(engine: Engine, model, rows: list[dict]) -> None:
    if not rows:
        return
    dialect = postgresql if engine.dialect.name == "postgresql" else sqlite
    table = model.__table__
    keys = [c.name for c in table.primary_key.columns]
    statement = dialect.insert(table).values(rows)
    update = {c.name: statement.excluded[c.name] for c in table.columns if c.name not in keys and not c.computed}
    where = None
    if model is LiveVehicle:
        where = table.c.ts <= statement.excluded.ts  # a late record never replaces a newer status
    with engine.begin() as connection:
        connection.execute(statement.on_conflict_do_update(index_elements=keys, set_=update, where=where))


def write_batch(engine: Engine, rows_by_topic: Mapping[str, list[dict]]) -> None:
    """Upsert each topic's rows, the last one of a key winning within the batch; a trip
    withdrawn (a day judged again no longer finds it) is deleted."""
    for topic, rows in rows_by_topic.items():
        model = MODELS[topic]
        keys = [c.name for c in model.__table__.primary_key.columns]
        latest = {}
        for row in rows:
            key = tuple(row[k] for k in keys)
            if model is LiveVehicle and key in latest and latest[key]["ts"] > row["ts"]:
                continue
            latest[key] = row
        withdrawn = {key for key, row in latest.items() if row.pop("withdrawn", False)}
        _delete(engine, model, keys, sorted(withdrawn))
        _upsert(engine, model, [row for key, row in latest.items() if key not in withdrawn])


def _delete(engine: Engine, model, keys: list[str], withdrawn: list[tuple]) -> None:
    if not withdrawn:
        return
    table = model.__table__
    with engine.begin() as connection:
        for key in withdrawn:
            connection.execute(table.delete().where(*(table.c[k] == v for k, v in zip(keys, key))))


def record_feed(engine: Engine, timezone: str) -> None:
    """Name the feed's timezone (agency_timezone) in the live tables: the panels bucket
    their days in it, as the engine dates everything (DESIGN.md: event times in the
    feed's timezone), not in the database session's UTC."""
    _upsert(engine, LiveFeed, [{"id": FEED_ROW, "timezone": timezone}])


def worker_lag(bootstrap: str, group: str) -> dict[str, int]:
    """Per input topic: what the workers' group has not committed yet (streams.admin)."""
    return {topic: group_progress(bootstrap, group, [topic]).lag for topic in INPUTS}


def run_ops_sink(engine: Engine, bootstrap: str, operator_of_route: Mapping[str, str], *, timezone: str,
                 workers_group: str, registry: CollectorRegistry, idle_exit_s: float | None = None,
                 should_stop: Callable[[], bool] = lambda: False) -> SinkReport:
    metrics = SinkMetrics(registry)
    record_feed(engine, timezone)
    consumer = KafkaConsumer(*TOPICS, bootstrap_servers=bootstrap, group_id=GROUP, enable_auto_commit=False,
                             auto_offset_reset="earliest", client_id="fiscaliza-ops")
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", client_id="fiscaliza-ops")
    report = SinkReport()
    last_record = last_lag = time.monotonic()
    try:
        while not should_stop():
            if time.monotonic() - last_lag >= LAG_EVERY_S:
                _measure_lag(metrics, bootstrap, consumer, workers_group)
                last_lag = time.monotonic()
            batch = consumer.poll(timeout_ms=1000, max_records=2000)
            if not batch:
                if idle_exit_s is not None and time.monotonic() - last_record > idle_exit_s:
                    break
                continue
            last_record = time.monotonic()
            rows_by_topic: dict[str, list[dict]] = {}
            for tp, messages in batch.items():
                for message in messages:
                    row = row_of(tp.topic, message.value or b"", f"{tp.topic}/{tp.partition}/{message.offset}",
                                 operator_of_route)
                    if row is None:  # a dead letter of another reason: the topic keeps it
                        continue
                    if isinstance(row, Rejection):
                        producer.send("rejected", key=tp.topic.encode(), value=json.dumps(to_builtins(row)).encode())
                        report.rejected += 1
                    else:
                        rows_by_topic.setdefault(tp.topic, []).append(row)
            write_batch(engine, rows_by_topic)
            producer.flush()
            consumer.commit()
            for topic, rows in rows_by_topic.items():
                report.rows[topic] += len(rows)
                metrics.rows.labels(MODELS[topic].__tablename__).inc(len(rows))
        _measure_lag(metrics, bootstrap, consumer, workers_group)
    finally:
        consumer.close()
        producer.close()
    return report


def _measure_lag(metrics: SinkMetrics, bootstrap: str, consumer: KafkaConsumer, workers_group: str) -> None:
    try:
        for topic, lag in worker_lag(bootstrap, workers_group).items():
            metrics.lag.labels(topic).set(lag)
        assigned = list(consumer.assignment())
        if assigned:
            ends = consumer.end_offsets(assigned)
            metrics.sink_lag.set(sum(ends[tp] - consumer.position(tp) for tp in assigned))
    except (KafkaError, StreamError) as exc:  # a broker hiccup must not stop the sink: the next round measures
        log.warning("consumer lag not measured: %s", exc)
