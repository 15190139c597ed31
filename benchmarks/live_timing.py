"""Benchmark (not a test): how live the engine is, on a simulated day, without Kafka.

    python benchmarks/live_timing.py [--seed 7] [--batch 200]

Simulates a weekday of the sample network with one fault of each detector kind, feeds
it to the engine (the replay's and the workers' core) in batches of `--batch` messages
as a live worker sees them, and prints
1. per code: the delay from when the infraction happened (`occurred_at`) to when the
   record first left the engine, in event time (the stream's newest event then), and
   `detected_at` minus `occurred_at`;
2. the state of the largest vehicle through the day, every 2 h: as msgpack, and as the
   workers store it (`engine.stored`: msgpack, zstd);
3. replay's events/s end to end against decoding alone, in the same run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import msgspec

from engine import Engine
from engine.loading import load_context
from engine.stored import pack
from fiscaliza.replay import ReplayInputs, read_messages, replay
from gtfs import load_feed
from kernel.fleet import load_fleet
from samples import joao_neiva
from simulator import SimulationSettings, simulate
from telemetry import decode

FAULTS = ("detour", "stop_bypass", "late_departure", "en_route_lateness", "suppressed_trip",
          "frequency_shortfall", "broken_seal", "silent_catraca", "speeding")


def hours(seconds: float) -> str:
    return f"{seconds / 3600:5.1f} h" if abs(seconds) >= 3600 else f"{seconds / 60:5.1f} min"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--batch", type=int, default=200)
    args = parser.parse_args(argv)
    feed_path, fleet_path = joao_neiva()
    day = dt.date(2026, 12, 1)
    with tempfile.TemporaryDirectory(prefix="fiscaliza-bench-") as tmp:
        sim = simulate(load_feed(feed_path), load_fleet(fleet_path),
                       SimulationSettings(day, day, seed=args.seed, faults=FAULTS), Path(tmp))
        inputs = ReplayInputs(feed_path, fleet_path, sim.tachograph, sim.catraca)
        context = load_context(inputs)
        messages, _ = read_messages(inputs)

        engine = Engine(context, frozenset({"tachograph", "catraca"}))
        encoder = msgspec.msgpack.Encoder()
        first_out: dict[str, tuple] = {}
        sizes: dict[int, int] = {}
        newest = 0.0
        for start in range(0, len(messages), args.batch):
            batch = messages[start : start + args.batch]
            newest = max(newest, max(m.body.epoch for m in batch))
            for record in engine.ingest(batch).infractions:
                first_out.setdefault(record.infraction_id, (record, newest))
            hour = dt.datetime.fromtimestamp(newest, context.feed.timezone).hour
            if hour % 2 == 0 and hour not in sizes:
                sizes[hour] = (max(len(encoder.encode(s)) for s in engine._vehicles.values()),
                               max(len(pack(s)) for s in engine._vehicles.values()))
        for record in engine.close().infractions:
            first_out.setdefault(record.infraction_id, (record, None))

        print(f"{len(messages):,} messages, {len(first_out)} infractions, batches of {args.batch}\n")
        print("code   first out after it happened (stream time)   detected_at - occurred_at")
        by_code = defaultdict(list)
        for record, at in first_out.values():
            by_code[record.code].append((record, at))
        for code in sorted(by_code):
            delays = [at - r.occurred_at.timestamp() for r, at in by_code[code] if at is not None]
            detected = [(r.detected_at - r.occurred_at).total_seconds() for r, _ in by_code[code]]
            out = (f"median {hours(statistics.median(delays))}, max {hours(max(delays))}"
                   if delays else "at end of input")
            print(f"{code:5}  {out:43}  median {hours(statistics.median(detected))}")
        print("\nlargest vehicle state, by hour of the stream:   msgpack    stored")
        for hour, (plain, stored) in sizes.items():  # in stream order (00:00 is the next midnight)
            print(f"  {hour:02d}:00  {plain / 1024:38.1f} KB {stored / 1024:6.1f} KB")

        started = time.perf_counter()
        for source, path in (("tachograph", sim.tachograph), ("catraca", sim.catraca)):
            with open(path, "rb") as handle:
                for n, line in enumerate(handle):
                    decode(source, line, f"{source}:{n}")
        decode_rate = len(messages) / (time.perf_counter() - started)
        started = time.perf_counter()
        replay(inputs)
        replay_rate = len(messages) / (time.perf_counter() - started)
        print(f"\nreplay {replay_rate:,.0f} events/s; decode only {decode_rate:,.0f} events/s; "
              f"ratio {replay_rate / decode_rate:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
