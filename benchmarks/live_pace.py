"""The city-scale benchmark's live section (#16): one worker fed at the recorded pace.

    python -m benchmarks.live_pace --work /tmp/fiscaliza-bench-150-1 [--pace 60] [--bootstrap HOST:PORT]

Publishes the network's telemetry to fresh topics, both inputs as one stream in
event-time order at the recorded pace compressed `pace` times (as buses would send
it), with one `fiscaliza worker` (a separate process) consuming it, and measures:

- per infraction code, from each record's first appearance on `infractions`:
  * wall latency: from publishing the input message that completed its evidence to the
    record's Kafka timestamp (CreateTime: stamped by the worker's producer when it sent
    the record; the same machine's clock as the publisher's). The message that completed
    the evidence: for a vehicle's code, the vehicle's first message dated at or after
    `detected_at`; for an operator's code (D-12, D-13, D-22), the first message of the
    stream dated at or after `detected_at` + the allowed lateness (the watermark must
    pass `detected_at`, and it trails the newest event by the lateness);
  * after the watermark: from publishing the message with which the watermark the stage
    waits for passed `detected_at` (the slowest input's newest event less the lateness,
    on the vehicle's partition; over every partition for an operator's code) — the
    engine's own delay, the lateness taken out;
  * event-time latency: `detected_at` minus `occurred_at`;
- trips (the path D-11 and A-07 take, with far more samples than the network has
  infractions): from publishing a trip's arrival ping to its `trip_detected` on
  `operator-events`;
- `vehicle-status`: from publishing each ping to the first status stamped with its time
  (the live view leaves at the ping's arrival, not at the watermark);
- the vehicles changelog's bytes per input event at that pace.

The floor the allowed lateness sets on every wall latency from the evidence: lateness /
pace of wall time (600 s of stream time: 10 s at x60).
"""

from __future__ import annotations

import argparse
import bisect
import datetime as dt
import json
import os
import tempfile
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from kafka import KafkaConsumer, KafkaProducer

from kernel.partitioning import partition_of

INPUTS = ("tachograph", "catraca")
OPERATOR_CODES = frozenset({"D-12", "D-13", "D-22"})  # judged by the operator stage, over all partitions
D11_TARGET_S = 2.0  # #16: D-11 wall latency p99 after the trip's last ping is published


# --- the stream as published -------------------------------------------------------

@dataclass(frozen=True)
class Line:
    epoch: float  # event time (a line that does not decode: its predecessor's in the file)
    topic: str
    key: str | None  # the vehicle (None: a line without one, sent unkeyed as `fiscaliza publish` does)
    raw: bytes
    body: object  # the decoded message, or the Rejection a worker will dead-letter it with


def in_event_order(paths: dict[str, Path], start: float = float("-inf"), end: float = float("inf")) -> list[Line]:
    """Both inputs' lines dated within [start, end), in event-time order (ties: topic,
    then file order); a line that does not decode stays beside its predecessor."""
    import msgspec

    from streams.admin import _key_and_time, _Keyed  # what `fiscaliza publish` keys a line by
    from telemetry import Rejection, decode

    keyed = msgspec.json.Decoder(_Keyed)
    lines = []
    for topic, path in paths.items():
        previous = float("-inf")
        for n, raw in enumerate(Path(path).read_bytes().splitlines()):
            if not raw.strip():
                continue
            body = decode(topic, raw)
            if isinstance(body, Rejection):
                key, epoch = _key_and_time(keyed, raw)
                epoch = previous if epoch is None else epoch
            else:
                key, epoch = body.vehicle_id, body.epoch
            previous = epoch
            if start <= epoch < end:
                lines.append((epoch, topic, n, Line(epoch, topic, key, raw, body)))
    lines.sort(key=lambda item: item[:3])
    return [item[3] for item in lines]


@dataclass
class SentLog:
    """What was published, in publish order (= event-time order): each message's event
    time, vehicle, partition, whether it can move a watermark (it decodes), and the wall
    time it was handed to the producer."""
    epochs: list[float] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)
    keys: list[str | None] = field(default_factory=list)
    partitions: list[int | None] = field(default_factory=list)
    valid: list[bool] = field(default_factory=list)
    walls: list[float] = field(default_factory=list)

    def add(self, epoch: float, topic: str, key: str | None, partition: int | None, valid: bool, wall: float) -> None:
        self.epochs.append(epoch)
        self.topics.append(topic)
        self.keys.append(key)
        self.partitions.append(partition)
        self.valid.append(valid)
        self.walls.append(wall)

    def _by_vehicle(self) -> dict[str, tuple[list[float], list[float]]]:
        if not hasattr(self, "_vehicles"):
            index: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
            for epoch, key, valid, wall in zip(self.epochs, self.keys, self.valid, self.walls):
                if key is not None and valid:
                    index[key][0].append(epoch)
                    index[key][1].append(wall)
            self._vehicles = dict(index)
        return self._vehicles

    def vehicle_reached(self, vehicle: str, moment: float) -> float | None:
        """When the vehicle's first message dated at or after `moment` was published."""
        epochs, walls = self._by_vehicle().get(vehicle, ([], []))
        i = bisect.bisect_left(epochs, moment - 1e-3)  # detected_at is written to the millisecond at most
        return walls[i] if i < len(walls) else None

    def stream_reached(self, moment: float) -> float | None:
        """When the stream's first message dated at or after `moment` was published."""
        for epoch, valid, wall in zip(self.epochs, self.valid, self.walls):
            if valid and epoch >= moment - 1e-3:
                return wall
        return None

    def watermark_passed(self, moment: float, lateness: float, partition: int | None = None,
                         sources: tuple[str, ...] = INPUTS) -> float | None:
        """When the message was published with which the watermark reached `moment`: a
        partition's is its slowest input's newest event less the lateness (none until every
        input was heard on it); over all partitions (`partition` None) the slowest of those
        heard from, as the operator stage takes it."""
        newest: dict[int, dict[str, float]] = defaultdict(dict)
        for epoch, topic, p, valid, wall in zip(self.epochs, self.topics, self.partitions, self.valid, self.walls):
            if not valid or p is None or (partition is not None and p != partition):
                continue
            newest[p][topic] = max(epoch, newest[p].get(topic, epoch))
            marks = [min(n[s] for s in sources) - lateness for n in newest.values() if set(sources) <= set(n)]
            if marks and min(marks) >= moment - 1e-3:
                return wall
        return None


def percentile(values: list[float], q: float) -> float:
    """The q-quantile, linear between the closest ranks (numpy's default)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


# --- matching the records to what was published -------------------------------------

def _epoch(iso: str) -> float:
    return dt.datetime.fromisoformat(iso).timestamp()


def first_emissions(records: list[tuple[float, dict]]) -> list[tuple[float, dict]]:
    """Each infraction_id's first record on the topic: (its timestamp in s, the record)."""
    first: dict[str, tuple[float, dict]] = {}
    for at, value in records:
        known = first.get(value["infraction_id"])
        if known is None or at < known[0]:
            first[value["infraction_id"]] = (at, value)
    return sorted(first.values(), key=lambda item: item[0])


def per_code(records: list[tuple[float, dict]], sent: SentLog, lateness: float, partitions: int) -> dict:
    """Per code, over each record's first emission: count, wall latency from the message
    that completed its evidence and from the watermark passing it, event-time latency."""
    wall, release, event = defaultdict(list), defaultdict(list), defaultdict(list)
    for at, value in first_emissions(records):
        code, detected = value["code"], _epoch(value["detected_at"])
        event[code].append(detected - _epoch(value["occurred_at"]))
        if code in OPERATOR_CODES or value.get("vehicle_id") is None:
            evidence = sent.stream_reached(detected + lateness)
            passed = sent.watermark_passed(detected, lateness)
        else:
            evidence = sent.vehicle_reached(value["vehicle_id"], detected)
            passed = sent.watermark_passed(detected, lateness, partition_of(value["vehicle_id"], partitions))
        if evidence is not None:
            wall[code].append(at - evidence)
        if passed is not None:
            release[code].append(at - passed)
    out = {}
    for code in sorted(event):
        out[code] = {"count": len(event[code]), **_quantiles("wall", wall[code]),
                     **_quantiles("event", event[code]), **_quantiles("after_watermark", release[code])}
    return out


def _quantiles(name: str, values: list[float]) -> dict:
    if not values:
        return {f"{name}_p50_s": None, f"{name}_p99_s": None}
    return {f"{name}_p50_s": round(percentile(values, 0.5), 2), f"{name}_p99_s": round(percentile(values, 0.99), 2)}


def trip_latencies(events: list[tuple[float, dict]], sent: SentLog) -> list[float]:
    """From publishing each detected trip's arrival ping (its `last_msg_id`) to its
    `trip_detected` on `operator-events`."""
    out = []
    for at, message in events:
        if message.get("type") != "trip_detected":
            continue
        vehicle, rest = message["trip"]["last_msg_id"].split("/", 1)
        published = sent.vehicle_reached(vehicle, _epoch(rest.split("#")[0]))
        if published is not None:
            out.append(at - published)
    return out


def status_latencies(statuses: list[tuple[float, dict]], sent: SentLog) -> list[float]:
    """From publishing each ping to the first `vehicle-status` stamped with its time (the
    record's Kafka timestamp): how old the operations room's view of the bus is."""
    first: dict[tuple[str, float], float] = {}
    for at, status in statuses:
        key = (status["vehicle_id"], _epoch(status["ts"]))
        first[key] = min(at, first.get(key, at))
    out = []
    for (vehicle, moment), at in first.items():
        published = sent.vehicle_reached(vehicle, moment)
        if published is not None:
            out.append(at - published)
    return out


def d11_verdict(latency: dict) -> str:
    """Whether #16's D-11 target holds, and whether the lateness leaves it possible."""
    floor, pace = latency["lateness_floor_s"], latency["pace"]
    d11 = latency["per_code"].get("D-11")
    p99 = d11["wall_p99_s"] if d11 and d11["wall_p99_s"] is not None else None
    measured = "no D-11 record" if p99 is None else f"p99 {p99:.1f} s (n={d11['count']})"
    verdict = "met" if p99 is not None and p99 <= D11_TARGET_S else "missed" if p99 is not None else "not measured"
    text = f"D-11 wall latency {measured}: target <= {D11_TARGET_S:g} s {verdict}"
    if floor > D11_TARGET_S:
        text += (f"; impossible at pace x{pace:g}: the allowed lateness alone holds every record "
                 f"{latency['lateness_s']:.0f} s of stream time = {floor:.1f} s of wall time")
    return text


# --- the run ------------------------------------------------------------------------

def read_topic(bootstrap: str, topic: str) -> list:
    """Every record of a topic, from the start."""
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                             enable_auto_commit=False, consumer_timeout_ms=5000)
    try:
        return list(consumer)
    finally:
        consumer.close()


def publish_paced(bootstrap: str, lines: list[Line], pace: float, partitions: int) -> SentLog:
    """Send the lines at their recorded pace compressed `pace` times, each keyed by its
    vehicle on the partition Kafka's default partitioner gives it."""
    from telemetry import Rejection

    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, client_id="fiscaliza-paced")
    sent = SentLog()
    cache: dict[str, int] = {}
    try:
        wall0, event0 = time.time(), next(line.epoch for line in lines if line.epoch > float("-inf"))
        for line in lines:
            delay = (line.epoch - event0) / pace - (time.time() - wall0)
            if delay > 0:
                time.sleep(delay)
            partition = None
            if line.key is not None:
                partition = cache.get(line.key)
                if partition is None:
                    partition = cache[line.key] = partition_of(line.key, partitions)
            producer.send(line.topic, key=line.key.encode() if line.key else None, value=line.raw, partition=partition)
            sent.add(line.epoch, line.topic, line.key, partition, not isinstance(line.body, Rejection), time.time())
        producer.flush()
    finally:
        producer.close()
    return sent


def measure(work: Path, bootstrap: str, pace: float = 60.0, partitions: int = 4, startup_s: float = 25.0,
            start: float = float("-inf"), end: float = float("inf")) -> dict:
    """The live section of results.json (`latency`, with `changelog_bytes_per_event_live`
    for `state`): a worker on fresh topics fed the network's telemetry dated in [start,
    end) (default all of it) at `pace`."""
    from benchmarks.worker_throughput import changelog_bytes, start_worker
    from kernel.policy import load_policy
    from streams.admin import create_topics, delete_topics, group_progress

    lateness = load_policy().stream.allowed_lateness_s  # the worker runs the default policy
    lines = in_event_order({topic: work / "telemetry" / f"{topic}.jsonl" for topic in INPUTS}, start, end)
    delete_topics(bootstrap)
    create_topics(bootstrap, partitions, 1)
    app_id = f"live-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory(prefix=f"{app_id}-data-") as datadir:
        worker, log = start_worker(bootstrap, app_id, datadir,
                                   ["--feed", str(work / "feed"), "--fleet", str(work / "fleet.csv")])
        try:
            time.sleep(startup_s)  # the worker joins its group and is assigned the partitions
            if worker.poll() is not None:
                raise SystemExit(f"the worker stopped; see {log.name}")
            started = time.time()
            sent = publish_paced(bootstrap, lines, pace, partitions)
            published_s = time.time() - started
            deadline = time.time() + max(120.0, 2 * published_s)
            while group_progress(bootstrap, app_id, INPUTS).committed < len(lines):
                if worker.poll() is not None or time.time() > deadline:
                    raise SystemExit(f"the worker stopped or fell behind; see {log.name}")
                time.sleep(1)
            time.sleep(5)  # its last outputs flushed
            infractions = [(r.timestamp / 1000, json.loads(r.value)) for r in read_topic(bootstrap, "infractions")]
            events = [(r.timestamp / 1000, json.loads(r.value)) for r in read_topic(bootstrap, "operator-events")]
            statuses = [(r.timestamp / 1000, json.loads(r.value)) for r in read_topic(bootstrap, "vehicle-status")]
            records, size = changelog_bytes(bootstrap, f"{app_id}-vehicles-changelog")
        finally:
            worker.terminate()
            worker.wait(timeout=60)
            log.close()
    trips = trip_latencies(events, sent)
    status = status_latencies(statuses, sent)
    latency = {"pace": pace, "lateness_s": lateness, "lateness_floor_s": round(lateness / pace, 2),
               "events": len(lines), "published_s": round(published_s, 1),
               # a publisher that could not keep the pace (a loaded machine) published slower
               "effective_pace": round((sent.epochs[-1] - sent.epochs[0]) / published_s, 1),
               "wall_clock": "published (producer send) to the record's Kafka timestamp (CreateTime, the worker's send)",
               "per_code": per_code(infractions, sent, lateness, partitions),
               "trips": {"count": len(trips), **_quantiles("wall", trips)},
               "vehicle_status": {"count": len(status), **_quantiles("wall", status)},
               "changelog_bytes_per_event_live": round(size / len(lines), 1), "changelog_records_live": records}
    latency["d11_target"] = d11_verdict(latency)
    return latency


def rows(results: dict) -> list[tuple]:
    """The table rows of the live section (benchmarks/__main__.py)."""
    latency = results.get("latency", {})
    if "per_code" not in latency:
        return []
    floor = latency["lateness_floor_s"]
    out = [("changelog bytes / event, live", results["state"].get("changelog_bytes_per_event_live"),
            "at full speed", results["state"].get("changelog_bytes_per_event", ""), "", "≤ 1,024"),
           (f"trips to operator stage p50/p99 (s), x{latency['pace']:g}",
            f"{latency['trips']['wall_p50_s']} / {latency['trips']['wall_p99_s']}", "lateness floor", floor,
            "", f"n={latency['trips']['count']}"),
           ("published events in s (effective pace)", latency["published_s"], "at the pace", latency["pace"],
            latency.get("effective_pace", ""), "")]
    for code, q in latency["per_code"].items():
        target = "≤ 2 s p99" if code == "D-11" else ""
        out.append((f"{code} wall p50/p99 (s), n={q['count']}", f"{q['wall_p50_s']} / {q['wall_p99_s']}",
                    "after watermark", f"{q['after_watermark_p50_s']} / {q['after_watermark_p99_s']}", "", target))
        out.append((f"{code} event p50/p99 (s)", f"{q['event_p50_s']} / {q['event_p99_s']}", "", "", "", ""))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True, help="a network built by python -m benchmarks")
    parser.add_argument("--pace", type=float, default=60.0)
    parser.add_argument("--bootstrap", default=os.environ.get("FISCALIZA_KAFKA_BOOTSTRAP", "127.0.0.1:19092"))
    args = parser.parse_args(argv)
    latency = measure(args.work, args.bootstrap, args.pace)
    print(json.dumps(latency, indent=2))
    print(latency["d11_target"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
