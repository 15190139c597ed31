"""Benchmark (not a test): a live worker on a real broker, fed at the recorded pace.

    scripts/kafka start
    python -m benchmarks.live_latency [--pace 60] [--bootstrap 127.0.0.1:19092]

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
import tempfile
import time
import uuid
from pathlib import Path

from benchmarks.live_pace import (
    INPUTS,
    first_emissions,
    in_event_order,
    percentile,
    publish_paced,
    read_topic,
    trip_latencies,
)
from benchmarks.worker_throughput import start_worker
from gtfs import load_feed
from kernel.fleet import load_fleet
from samples import joao_neiva
from simulator import SimulationSettings, simulate
from streams.admin import create_topics, delete_topics, group_progress

FAULTS = ("detour", "stop_bypass", "speeding")


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
    lines = in_event_order({"tachograph": sim.tachograph, "catraca": sim.catraca}, start, end)
    delete_topics(args.bootstrap)
    create_topics(args.bootstrap, 4, 1)

    app_id = f"live-{uuid.uuid4().hex[:8]}"
    datadir = tempfile.TemporaryDirectory(prefix=f"{app_id}-data-")
    worker, log = start_worker(args.bootstrap, app_id, datadir.name)
    try:
        time.sleep(25)  # the worker joins its group and is assigned the partitions
        if worker.poll() is not None:
            raise SystemExit(f"the worker stopped; see {log.name}")
        wall0 = time.time()
        sent = publish_paced(args.bootstrap, lines, args.pace, 4)
        wall = time.time() - wall0
        time.sleep(max(15.0, 1200 / args.pace))  # the last trips' watermark
        while group_progress(args.bootstrap, app_id, INPUTS).committed < len(lines):
            time.sleep(1)
        operator_events = read_topic(args.bootstrap, "operator-events")
        infractions = read_topic(args.bootstrap, "infractions")
        changelog = read_topic(args.bootstrap, f"{app_id}-vehicles-changelog")
    finally:
        worker.terminate()
        worker.wait(timeout=60)
        log.close()
        datadir.cleanup()
        tmp.cleanup()

    to_trip = trip_latencies([(r.timestamp / 1000, json.loads(r.value)) for r in operator_events], sent)
    to_record: dict[str, list[float]] = {}
    for at, value in first_emissions([(r.timestamp / 1000, json.loads(r.value)) for r in infractions]):
        if value["code"] not in ("D-11", "A-07", "B-04"):
            continue
        published = sent.vehicle_reached(value["vehicle_id"], dt.datetime.fromisoformat(value["detected_at"]).timestamp())
        if published is not None:
            to_record.setdefault(value["code"], []).append(at - published)
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
