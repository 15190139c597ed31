"""Benchmark (not a test): the live path as the operations room and a GTFS-Realtime
consumer feel it (#28, #31), on a real broker, at x1.

    scripts/kafka start
    python -m benchmarks.live_run [--minutes 9] [--start 06:40] [--bootstrap 127.0.0.1:19092]

Simulates João Neiva's sample weekday, takes `--minutes` of it from `--start` (local time)
and moves it, and the feed's timetable with it, to "now": each message's `ts` is shifted
so the stretch starts a few seconds after the stack is up, the feed's stop_times and
frequencies by the same time of day, and today runs the weekday service. Then runs, as
separate processes, one `fiscaliza worker` in live mode (no FISCALIZA_BACKFILL), `fiscaliza
ops sink` and `fiscaliza serve` (GTFS-RT max age 90 s) on a throwaway PostgreSQL + PostGIS
cluster, publishes the stretch at x1 (real time, each message when its `ts` comes) and,
meanwhile, fetches VehiclePositions and TripUpdates every `--poll` seconds. Prints:

1. `vehicle-status` wall latency: from publishing a ping to the first status stamped with
   it on the topic (its Kafka timestamp, the worker's send), p50/p95/p99/max and count
   (#31's target: p99 <= 2 s);
2. per fetch: entities in each feed against the buses that reported in the last 90 s, and
   the age of each position by the wall clock (#28: >= 1 entity per reporting bus,
   positions <= 90 s old);
3. headway: for each departure a status shows (vehicle, departed_at), whether a status of
   that departure carries a headway, and how long after the departure's first status.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from pathlib import Path

from benchmarks.live_pace import percentile, read_topic
from kernel.partitioning import partition_of

ROOT = Path(__file__).resolve().parent.parent
DAY = dt.date(2026, 12, 1)
LEAD_S = 5.0  # the first message's ts is this far after publishing starts
PARTITIONS = 4
MAX_AGE_S = 90.0  # GTFS-Realtime Best Practices, #28


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _gtfs_seconds(text: str) -> int:
    h, m, s = (int(x) for x in text.split(":"))
    return h * 3600 + m * 60 + s


def _gtfs_time(seconds: int) -> str:
    if seconds < 0:
        raise SystemExit("the shift moves a scheduled time before midnight: choose a later --start")
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def shifted_feed(source: Path, target: Path, tod_shift_s: int, weekday: int) -> Path:
    """The feed with every scheduled time moved by `tod_shift_s` and its weekday service
    running on `weekday` (0 Monday) too (and the Saturday one not)."""
    import csv
    shutil.copytree(source, target)
    columns = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
    for name, fields in (("stop_times.txt", ("arrival_time", "departure_time")),
                         ("frequencies.txt", ("start_time", "end_time")),
                         ("calendar.txt", ())):
        path = target / name
        with path.open(newline="") as handle:
            rows = list(csv.DictReader(handle))
        for row in rows:
            for f in fields:
                if row.get(f):
                    row[f] = _gtfs_time(_gtfs_seconds(row[f]) + tod_shift_s)
            if name == "calendar.txt":
                weekdays = sum(int(row[c]) for c in columns[:5])
                row[columns[weekday]] = "1" if weekdays == 5 else "0"
        with path.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return target


def shifted_lines(paths: dict[str, Path], start: float, end: float, shift_s: float) -> list[tuple[float, str, str, bytes]]:
    """(shifted epoch, topic, vehicle, raw line) of the messages dated in [start, end), in
    event-time order, each `ts` moved by `shift_s` (written in the line's own offset)."""
    lines = []
    for topic, path in paths.items():
        for n, raw in enumerate(Path(path).read_bytes().splitlines()):
            try:
                body = json.loads(raw)
                ts = dt.datetime.fromisoformat(body["ts"])
            except (ValueError, KeyError, TypeError):
                continue  # a malformed line (input faults): not part of this measure
            if not start <= ts.timestamp() < end:
                continue
            moved = ts + dt.timedelta(seconds=shift_s)
            body["ts"] = moved.isoformat()
            lines.append((moved.timestamp(), topic, n, body["vehicle_id"],
                          json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()))
    lines.sort(key=lambda item: item[:3])
    return [(epoch, topic, vehicle, raw) for epoch, topic, _, vehicle, raw in lines]


def publish_real_time(bootstrap: str, lines, sent: dict, reported: list, done: threading.Event) -> None:
    """Each message when its ts comes by the wall clock; records when each ping was sent."""
    from kafka import KafkaProducer
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=0, client_id="fiscaliza-live-run")
    try:
        for epoch, topic, vehicle, raw in lines:
            delay = epoch - time.time()
            if delay > 0:
                time.sleep(delay)
            producer.send(topic, key=vehicle.encode(), value=raw, partition=partition_of(vehicle, PARTITIONS))
            wall = time.time()
            if topic == "tachograph":
                sent.setdefault((vehicle, round(epoch)), wall)
                reported.append((wall, vehicle))
        producer.flush()
    finally:
        producer.close()
        done.set()


def fetch(url: str):
    from google.transit import gtfs_realtime_pb2
    with urllib.request.urlopen(url, timeout=10) as answer:
        message = gtfs_realtime_pb2.FeedMessage()
        message.ParseFromString(answer.read())
    return message


def poll_feeds(web: str, reported: list, done: threading.Event, every: float) -> list[dict]:
    polls = []
    while not done.is_set():
        now = time.time()
        reporting = {vehicle for wall, vehicle in list(reported) if wall >= now - MAX_AGE_S}
        try:
            positions = fetch(f"{web}/gtfs-rt/vehicle-positions.pb")
            updates = fetch(f"{web}/gtfs-rt/trip-updates.pb")
        except OSError as exc:
            polls.append({"at": now, "error": str(exc)})
        else:
            vehicles = [e.vehicle for e in positions.entity if e.HasField("vehicle")]
            polls.append({
                "at": now, "reporting": len(reporting),
                "positions": len(vehicles),
                "covered": len(reporting & {v.vehicle.id for v in vehicles}),
                "with_trip": sum(1 for v in vehicles if v.trip.trip_id or v.trip.route_id),
                "ages": [now - v.timestamp for v in vehicles],
                "trip_updates": sum(1 for e in updates.entity if e.HasField("trip_update")),
                "stop_time_updates": sum(len(e.trip_update.stop_time_update) for e in updates.entity)})
        done.wait(every)
    return polls


def quantiles(values: list[float]) -> str:
    if not values:
        return "n=0"
    return (f"n={len(values)}  p50 {statistics.median(values):.3f} s  p95 {percentile(values, 0.95):.3f} s  "
            f"p99 {percentile(values, 0.99):.3f} s  max {max(values):.3f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=9.0, help="wall minutes published at x1")
    parser.add_argument("--start", default="06:40", help="local time of the sample day the stretch starts at")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--poll", type=float, default=20.0, help="seconds between GTFS-RT fetches")
    parser.add_argument("--bootstrap", default=os.environ.get("FISCALIZA_KAFKA_BOOTSTRAP", "127.0.0.1:19092"))
    parser.add_argument("--keep", action="store_true", help="keep the logs and the shifted inputs")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT / "tests" / "support"))
    import pg_cluster
    from dockets.db import make_engine, migrate
    from gtfs import load_feed
    from kernel.fleet import load_fleet
    from ops.db import migrate as migrate_live_tables
    from samples import joao_neiva
    from simulator import SimulationSettings, simulate
    from streams.admin import create_topics, delete_topics

    work = Path(tempfile.mkdtemp(prefix="fiscaliza-live-run-"))
    feed_path, fleet_path = joao_neiva()
    feed = load_feed(feed_path)
    sim = simulate(feed, load_fleet(fleet_path), SimulationSettings(DAY, DAY, seed=args.seed), work / "sim")
    tz = feed.timezone
    hour, minute = (int(x) for x in args.start.split(":"))
    start = dt.datetime.combine(DAY, dt.time(hour, minute), tz)
    stack_up_s = 40.0  # worker, sink and web started and the worker assigned its partitions
    first = dt.datetime.fromtimestamp(time.time() + stack_up_s + LEAD_S, tz)
    shift_s = (first - start).total_seconds()
    midnight = dt.datetime.combine(first.date(), dt.time(0), tz)
    tod_shift = round((first - midnight).total_seconds() - (start - dt.datetime.combine(DAY, dt.time(0), tz)).total_seconds())
    moved_feed = shifted_feed(feed_path, work / "feed", tod_shift, first.weekday())
    lines = shifted_lines({"tachograph": sim.tachograph, "catraca": sim.catraca},
                          start.timestamp(), start.timestamp() + args.minutes * 60, shift_s)
    print(f"stretch {start:%H:%M}-{start + dt.timedelta(minutes=args.minutes):%H:%M} of {DAY} -> "
          f"{first:%Y-%m-%d %H:%M:%S %Z} ({len(lines)} messages, {len({v for _, _, v, _ in lines})} vehicles); "
          f"timetable moved {tod_shift:+d} s, weekday service on {first:%A}", flush=True)

    delete_topics(args.bootstrap)
    create_topics(args.bootstrap, PARTITIONS, 1)
    app_id = f"liverun-{uuid.uuid4().hex[:8]}"
    web_port, ops_port, worker_port = free_port(), free_port(), free_port()
    processes, logs = [], {}
    with pg_cluster.throwaway_postgres() as cluster:
        db = pg_cluster.create_database(cluster, "live_run")
        engine = make_engine(db)
        migrate(engine)
        migrate_live_tables(engine)
        engine.dispose()
        env = {**os.environ, "FISCALIZA_KAFKA_BOOTSTRAP": args.bootstrap, "FISCALIZA_APP_ID": app_id,
               "FISCALIZA_PARTITIONS": str(PARTITIONS), "FISCALIZA_DATADIR": str(work / "faust"),
               "FISCALIZA_WEB_PORT": str(worker_port), "FISCALIZA_DB": db, "FISCALIZA_FEED": str(moved_feed)}
        for command, name in ((["keys", "init"], "signing.pem"), (["keys", "audit-init"], "audit.key")):
            subprocess.run([sys.executable, "-m", "fiscaliza.cli", *command, "--out", str(work / name)], check=True,
                           capture_output=True)
        env.update({"FISCALIZA_SIGNING_KEY": str(work / "signing.pem"), "FISCALIZA_AUDIT_KEY": str(work / "audit.key"),
                    "FISCALIZA_AUDIT_ANCHORS": str(work / "anchors.jsonl")})  # serve's, as a city's would have
        env.pop("FISCALIZA_BACKFILL", None)  # live: received_at and the wall clock are the broker's and ours
        commands = {
            "worker": ["worker", "--loglevel", "warning"],
            "ops": ["ops", "sink", "--metrics-port", str(ops_port)],
            "web": ["serve", "--port", str(web_port), "--no-secure-cookies", "--gtfs-rt-max-age", str(MAX_AGE_S)]}
        try:
            for name, command in commands.items():
                logs[name] = work / f"{name}.log"
                processes.append(subprocess.Popen([sys.executable, "-m", "fiscaliza.cli", *command], env=env,
                                                  stdout=logs[name].open("wb"), stderr=subprocess.STDOUT))
            wait_until = lines[0][0] - LEAD_S
            while time.time() < wait_until:
                for process, name in zip(processes, commands):
                    if process.poll() is not None:
                        raise SystemExit(f"{name} stopped: see {logs[name]}")
                time.sleep(1)
            if lines[0][0] < time.time():
                print(f"warning: the stack took longer than {stack_up_s:.0f} s; the first messages are late", flush=True)
            sent: dict = {}
            reported: list = []
            done = threading.Event()
            publisher = threading.Thread(target=publish_real_time, args=(args.bootstrap, lines, sent, reported, done))
            publisher.start()
            polls = poll_feeds(f"http://127.0.0.1:{web_port}", reported, done, args.poll)
            publisher.join()
            time.sleep(10)
            statuses = read_topic(args.bootstrap, "vehicle-status")
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                try:
                    process.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    process.kill()

    # 1. vehicle-status wall latency
    first_seen: dict = {}
    unmatched = 0
    departures: dict = {}
    for record in statuses:
        status = json.loads(record.value)
        at = record.timestamp / 1000
        key = (status["vehicle_id"], round(dt.datetime.fromisoformat(status["ts"]).timestamp()))
        if key not in sent:
            unmatched += 1
        elif key not in first_seen:
            first_seen[key] = at - sent[key]
        if status.get("departed_at"):
            departure = departures.setdefault((status["vehicle_id"], status["departed_at"]),
                                              {"route": status.get("route_id"), "first": at, "headway": None,
                                               "scheduled": status.get("scheduled_headway_s")})
            if departure["headway"] is None and status.get("headway_s") is not None:
                departure["headway"] = at
    latencies = list(first_seen.values())
    print(f"\n1. vehicle-status wall latency, publish -> record on the topic (first status per ping): {quantiles(latencies)}")
    print(f"   statuses on the topic {len(statuses)}, pings published {len(sent)}, pings with a status "
          f"{len(first_seen)}, statuses of no published ping {unmatched}")

    # 2. GTFS-Realtime
    print(f"\n2. GTFS-Realtime, every {args.poll:g} s ({len(polls)} fetches):")
    all_ages = []
    for poll in polls:
        if "error" in poll:
            print(f"   {poll['at'] - polls[0]['at']:5.0f} s  error: {poll['error']}")
            continue
        all_ages += poll["ages"]
        oldest = f"{max(poll['ages']):.1f}" if poll["ages"] else "-"
        print(f"   {poll['at'] - polls[0]['at']:5.0f} s  reporting {poll['reporting']}  positions {poll['positions']} "
              f"(of the reporting {poll['covered']}, with a trip {poll['with_trip']})  oldest {oldest} s  "
              f"trip updates {poll['trip_updates']} ({poll['stop_time_updates']} stop time updates)")
    fetched = [p for p in polls if "error" not in p]
    short = sum(1 for p in fetched if p["covered"] < p["reporting"])
    print(f"   fetches with a reporting bus missing: {short} of {len(fetched)}; position age: {quantiles(all_ages)}; "
          f"older than {MAX_AGE_S:g} s: {sum(1 for a in all_ages if a > MAX_AGE_S)}")

    # 3. headway
    print("\n3. departures in the statuses (vehicle, departed_at): headway shown after the departure's first status")
    for (vehicle, departed), d in sorted(departures.items(), key=lambda item: item[0][1]):
        shown = f"{d['headway'] - d['first']:.1f} s" if d["headway"] is not None else "never"
        print(f"   {vehicle} route {d['route']} departed {departed}: headway {shown}")
    print(f"\nlogs and inputs in {work}" if args.keep else "")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
