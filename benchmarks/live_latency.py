"""Benchmark (not a test): a live worker on a real broker, fed at the recorded pace.

    scripts/kafka start
    python benchmarks/live_latency.py [--pace 60] [--bootstrap 127.0.0.1:19092]

Simulates a weekday of the sample network with a detour, a bypassed stop and
speeding, starts a worker (`fiscaliza worker`, a separate process) on fresh topics,
and publishes the stretch of the day around those faults (both telemetry topics, one
stream in event-time order) at its recorded pace compressed `--pace` times, as
buses would send it. Then prints, from the same run:
1. wall-clock latency from publishing a trip's arrival ping to the trip reaching the
   operator stage (`operator-events`), and to each record judged at that ping (D-11,
   A-07, B-04) on `infractions`: p50 and p99 — next to the floor the allowed lateness
   sets (the watermark trails the newest event by 600 s of stream time: 600 / pace);
2. the vehicles changelog: bytes per input event, and its largest record (the largest
   serialized vehicle state written).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from kafka import KafkaConsumer, KafkaProducer

from engine.vehicle import message_id
from fiscaliza.fleet import load_fleet
from fiscaliza.samples import joao_neiva
from gtfs import load_feed
from simulator import SimulationSettings, simulate
from streams.admin import create_topics, delete_topics, group_progress
from telemetry import TachographPing, decode

FAULTS = ("detour", "stop_bypass", "speeding")
INPUTS = ("tachograph", "catraca")


def stream(sim, start: float, end: float) -> list[tuple[float, str, bytes, object]]:
    """Both inputs' lines within [start, end), in event-time order: (epoch, topic, line, body)."""
    lines = []
    for topic, path in (("tachograph", sim.tachograph), ("catraca", sim.catraca)):
        for line in Path(path).read_bytes().splitlines():
            body = decode(topic, line)
            if start <= body.epoch < end:
                lines.append((body.epoch, topic, line, body))
    lines.sort(key=lambda item: (item[0], item[1]))
    return lines


def read_topic(bootstrap: str, topic: str) -> list:
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                             enable_auto_commit=False, consumer_timeout_ms=5000)
    try:
        return list(consumer)
    finally:
        consumer.close()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def describe(name: str, values: list[float], floor: float) -> str:
    if not values:
        return f"{name:34s} none"
    return (f"{name:34s} n={len(values):3d}  p50 {statistics.median(values):6.1f} s  p99 {percentile(values, 0.99):6.1f} s"
            f"  (floor {floor:.1f} s: p50 {statistics.median(values) / floor:4.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pace", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--bootstrap", default=os.environ.get("FISCALIZA_KAFKA_BOOTSTRAP", "127.0.0.1:19092"))
    args = parser.parse_args()
    feed_path, fleet_path = joao_neiva()
    day = dt.date(2026, 12, 1)
    tmp = tempfile.TemporaryDirectory()
    sim = simulate(load_feed(feed_path), load_fleet(fleet_path),
                   SimulationSettings(day, day, seed=args.seed, faults=FAULTS), Path(tmp.name))
    departures = [f["scheduled_departure"] for f in json.loads(sim.manifest.read_text())["faults"]]
    start, end = min(departures) - 2700, max(departures) + 5400
    lines = stream(sim, start, end)
    delete_topics(args.bootstrap)
    create_topics(args.bootstrap, 4, 1)

    app_id = f"live-{uuid.uuid4().hex[:8]}"
    datadir = tempfile.TemporaryDirectory(prefix=f"{app_id}-data-")
    env = {**os.environ, "FISCALIZA_KAFKA_BOOTSTRAP": args.bootstrap, "FISCALIZA_APP_ID": app_id,
           "FISCALIZA_DATADIR": datadir.name,
           "FISCALIZA_BACKFILL": "1"}  # a simulated day, dated as simulated, not by today's clock
    log = open(tempfile.mktemp(suffix=".log"), "w")
    worker = subprocess.Popen([sys.executable, "-m", "fiscaliza.cli", "worker", "--loglevel", "warning"],
                              env=env, stdout=log, stderr=subprocess.STDOUT)
    producer = KafkaProducer(bootstrap_servers=args.bootstrap, linger_ms=5)
    sent_at: dict[str, float] = {}  # tachograph message id -> wall time it was published
    try:
        time.sleep(25)  # the worker joins its group and is assigned the partitions
        if worker.poll() is not None:
            raise SystemExit(f"the worker stopped; see {log.name}")
        wall0, event0 = time.time(), lines[0][0]
        for epoch, topic, line, body in lines:
            delay = (epoch - event0) / args.pace - (time.time() - wall0)
            if delay > 0:
                time.sleep(delay)
            producer.send(topic, key=body.vehicle_id.encode(), value=line)
            if isinstance(body, TachographPing):
                sent_at[message_id(body)] = time.time()
        producer.flush()
        wall = time.time() - wall0
        time.sleep(max(15.0, 1200 / args.pace))  # the last trips' watermark
        while group_progress(args.bootstrap, app_id, INPUTS).committed < len(lines):
            time.sleep(1)
        operator_events = read_topic(args.bootstrap, "operator-events")
        infractions = read_topic(args.bootstrap, "infractions")
        changelog = read_topic(args.bootstrap, f"{app_id}-vehicles-changelog")
    finally:
        producer.close()
        worker.terminate()
        worker.wait(timeout=60)
        log.close()
        datadir.cleanup()
        tmp.cleanup()

    to_trip = []
    for record in operator_events:
        message = json.loads(record.value)
        if message.get("type") == "trip_detected" and message["trip"]["last_msg_id"] in sent_at:
            to_trip.append(record.timestamp / 1000 - sent_at[message["trip"]["last_msg_id"]])
    by_ping = {}
    for msg_id, at in sent_at.items():
        vehicle, rest = msg_id.split("/", 1)
        by_ping[(vehicle, round(dt.datetime.fromisoformat(rest.split("#")[0]).timestamp()))] = at
    to_record: dict[str, list[float]] = {}
    first_seen: set[str] = set()
    for record in infractions:
        value = json.loads(record.value)
        if value["infraction_id"] in first_seen or value["code"] not in ("D-11", "A-07", "B-04"):
            continue
        first_seen.add(value["infraction_id"])
        ping = (value["vehicle_id"], round(dt.datetime.fromisoformat(value["detected_at"]).timestamp()))
        if ping in by_ping:
            to_record.setdefault(value["code"], []).append(record.timestamp / 1000 - by_ping[ping])
    size = sum(len(r.value or b"") for r in changelog)
    floor = 600 / args.pace
    hours = (end - start) / 3600
    print(f"{len(lines):,} input events ({hours:.1f} h of a simulated day published at x{args.pace:g}: {wall:.0f} s)")
    print("wall-clock latency from publishing the arrival ping:")
    print(describe("  trip to the operator stage", to_trip, floor))
    for code, values in sorted(to_record.items()):
        print(describe(f"  {code} on infractions", values, floor))
    print(f"vehicles changelog: {len(changelog):,} records, {size / len(lines):,.0f} bytes per input event, "
          f"largest record (vehicle state) {max((len(r.value or b'') for r in changelog), default=0) / 1024:.1f} KB")


if __name__ == "__main__":
    main()
