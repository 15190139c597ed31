"""Benchmark (not a test): the Faust worker's sustained events/s on a real broker,
next to a raw aiokafka consume-and-decode loop over the same topics, in one run.

    scripts/kafka start
    python benchmarks/worker_throughput.py [--days 3] [--bootstrap 127.0.0.1:19092]

Simulates days of the sample network, publishes them to fresh topics, then
1. baseline: aiokafka consumes both input topics from the start and decodes every
   message with msgspec (the least any worker must do), and
2. the worker (`fiscaliza worker`, a separate process): the time from its first
   committed input offset to the last (startup and recovery excluded),
and prints both rates and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from aiokafka import AIOKafkaConsumer
from kafka import KafkaAdminClient, TopicPartition
from kafka.consumer.group import KafkaConsumer

from fiscaliza.fleet import load_fleet
from fiscaliza.samples import joao_neiva
from gtfs import load_feed
from simulator import SimulationSettings, simulate
from streams.admin import create_topics, publish, publish_end_of_input
from streams.topics import TOPICS
from telemetry import decode

INPUTS = ("tachograph", "catraca")


def end_offsets(bootstrap: str) -> dict[TopicPartition, int]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        tps = [TopicPartition(t, p) for t in INPUTS for p in consumer.partitions_for_topic(t)]
        return consumer.end_offsets(tps)
    finally:
        consumer.close()


async def baseline(bootstrap: str, total: int) -> float:
    consumer = AIOKafkaConsumer(*INPUTS, bootstrap_servers=bootstrap, group_id=f"bench-{uuid.uuid4()}",
                                auto_offset_reset="earliest", enable_auto_commit=False, max_poll_records=2000)
    await consumer.start()
    try:
        seen, started = 0, None
        while seen < total:
            batches = await consumer.getmany(timeout_ms=1000, max_records=5000)
            for tp, records in batches.items():
                if started is None:
                    started = time.perf_counter()
                for record in records:
                    decode(tp.topic, record.value)
                seen += len(records)
        return seen / (time.perf_counter() - started)
    finally:
        await consumer.stop()


def worker_rate(bootstrap: str, ends: dict[TopicPartition, int]) -> float:
    app_id = f"bench-{uuid.uuid4().hex[:8]}"
    datadir = tempfile.TemporaryDirectory(prefix=f"{app_id}-data-")  # the worker's Faust data directory
    env = {**os.environ, "FISCALIZA_KAFKA_BOOTSTRAP": bootstrap, "FISCALIZA_APP_ID": app_id,
           "FISCALIZA_DATADIR": datadir.name}
    log = open(tempfile.mktemp(suffix=".log"), "w")
    worker = subprocess.Popen([sys.executable, "-m", "fiscaliza.cli", "worker", "--loglevel", "warning"],
                              env=env, stdout=log, stderr=subprocess.STDOUT)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    total = sum(ends.values())
    try:
        first_time, first_done = None, 0
        while True:
            committed = _committed(admin.list_group_offsets({app_id: list(ends)}), app_id)
            done = sum(min(committed.get(tp, 0), ends[tp]) for tp in ends)
            now = time.perf_counter()
            if first_time is None and done > 0:
                first_time, first_done = now, done
            if done >= total:
                return (done - first_done) / (now - first_time)
            if worker.poll() is not None:
                raise SystemExit(f"the worker stopped; see {log.name}")
            time.sleep(0.2)
    finally:
        worker.terminate()
        worker.wait(timeout=60)
        admin.close()
        log.close()
        datadir.cleanup()


def _committed(answer, app_id: str) -> dict[TopicPartition, int]:
    """Committed offsets from list_group_offsets, whatever nesting this kafka-python uses."""
    offsets = answer.get(app_id, answer) if isinstance(answer, dict) else answer
    result = {}
    for tp, meta in dict(offsets).items():
        offset = getattr(meta, "offset", meta)
        if isinstance(offset, int) and offset >= 0:
            result[TopicPartition(tp.topic, tp.partition)] = offset
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=3)
    parser.add_argument("--bootstrap", default=os.environ.get("FISCALIZA_KAFKA_BOOTSTRAP", "127.0.0.1:19092"))
    args = parser.parse_args()
    feed_path, fleet_path = joao_neiva()
    start = dt.date(2026, 12, 1)
    with tempfile.TemporaryDirectory() as tmp:
        sim = simulate(load_feed(feed_path), load_fleet(fleet_path),
                       SimulationSettings(start, start + dt.timedelta(days=args.days - 1), seed=1), Path(tmp))
        admin = KafkaAdminClient(bootstrap_servers=args.bootstrap)
        stale = [t for t in admin.list_topics() if t in TOPICS]
        if stale:
            admin.delete_topics(stale)
            time.sleep(3)
        admin.close()
        create_topics(args.bootstrap, 4, 1)
        publish(args.bootstrap, "tachograph", sim.tachograph)
        publish(args.bootstrap, "catraca", sim.catraca)
        publish_end_of_input(args.bootstrap)
    ends = end_offsets(args.bootstrap)
    total = sum(ends.values())
    raw = asyncio.run(baseline(args.bootstrap, total))
    rate = worker_rate(args.bootstrap, ends)
    print(f"{total} input messages ({args.days} simulated days, 4 partitions)")
    print(f"baseline aiokafka consume + msgspec decode: {raw:10.0f} events/s")
    print(f"fiscaliza worker (sustained):              {rate:10.0f} events/s")
    print(f"ratio worker / baseline:                   {rate / raw:10.3f}")


if __name__ == "__main__":
    main()
