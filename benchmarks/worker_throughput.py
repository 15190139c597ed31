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
from typing import IO

from aiokafka import AIOKafkaConsumer
from kafka import KafkaConsumer

from gtfs import load_feed
from kernel.fleet import load_fleet
from samples import joao_neiva
from simulator import SimulationSettings, simulate
from streams.admin import create_topics, delete_topics, group_progress, publish, publish_end_of_input
from telemetry import decode

INPUTS = ("tachograph", "catraca")


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


def changelog_bytes(bootstrap: str, topic: str) -> tuple[int, int]:
    """(records, bytes of their values) written to a table's changelog."""
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                             enable_auto_commit=False, consumer_timeout_ms=5000)
    records = size = 0
    try:
        for record in consumer:
            records += 1
            size += len(record.value or b"")
    finally:
        consumer.close()
    return records, size


def start_worker(bootstrap: str, app_id: str, datadir: str, extra_args=(), name: str = "-worker"
                 ) -> tuple[subprocess.Popen, IO[str]]:
    """A `fiscaliza worker` process of app `app_id` and its log file (stdout and stderr)."""
    env = {**os.environ, "FISCALIZA_KAFKA_BOOTSTRAP": bootstrap, "FISCALIZA_APP_ID": app_id,
           "FISCALIZA_DATADIR": datadir,  # each worker's own Faust data directory
           "FISCALIZA_BACKFILL": "1"}  # simulated days, dated as simulated, not by today's clock
    log = open(tempfile.mktemp(suffix=f"{name}.log"), "w")
    process = subprocess.Popen([sys.executable, "-m", "fiscaliza.cli", "worker", "--loglevel", "warning", *extra_args],
                               env=env, stdout=log, stderr=subprocess.STDOUT)
    return process, log


def worker_rate(bootstrap: str, total: int, extra_args: list[str] = (), workers: int = 1
                ) -> tuple[float, tuple[int, int]]:
    """Sustained events/s of `workers` worker processes of one app (from the first
    committed input offset to the last: startup and recovery excluded) and what their
    vehicles changelog holds then."""
    app_id = f"bench-{uuid.uuid4().hex[:8]}"
    datadirs = [tempfile.TemporaryDirectory(prefix=f"{app_id}-data-") for _ in range(workers)]
    logs, processes = [], []
    for n, datadir in enumerate(datadirs):
        process, log = start_worker(bootstrap, app_id, datadir.name, extra_args, f"-worker{n}")
        logs.append(log)
        processes.append(process)
    try:
        first_time, first_done = None, 0
        while True:
            done = group_progress(bootstrap, app_id, INPUTS).committed
            now = time.perf_counter()
            if first_time is None and done > 0:
                first_time, first_done = now, done
            if done >= total:
                rate = (done - first_done) / (now - first_time)
                return rate, changelog_bytes(bootstrap, f"{app_id}-vehicles-changelog")
            if any(p.poll() is not None for p in processes):
                raise SystemExit(f"a worker stopped; see {', '.join(log.name for log in logs)}")
            time.sleep(0.2)
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=60)
        for log in logs:
            log.close()
        for datadir in datadirs:
            datadir.cleanup()


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
        delete_topics(args.bootstrap)
        create_topics(args.bootstrap, 4, 1)
        publish(args.bootstrap, "tachograph", sim.tachograph)
        publish(args.bootstrap, "catraca", sim.catraca)
        publish_end_of_input(args.bootstrap)
    total = group_progress(args.bootstrap, "nobody", INPUTS).end
    raw = asyncio.run(baseline(args.bootstrap, total))
    rate, (records, size) = worker_rate(args.bootstrap, total)
    print(f"{total} input messages ({args.days} simulated days, 4 partitions)")
    print(f"vehicles changelog: {records} records, {size / 1e6:.1f} MB, {size / total:,.0f} bytes per input event "
          f"({size / max(records, 1) / 1024:,.1f} KB per record)")
    print(f"baseline aiokafka consume + msgspec decode: {raw:10.0f} events/s")
    print(f"fiscaliza worker (sustained):              {rate:10.0f} events/s")
    print(f"ratio worker / baseline:                   {rate / raw:10.3f}")


if __name__ == "__main__":
    main()
