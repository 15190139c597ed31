"""Benchmark (not a test): the CPU cost of judging one vehicle-day again (engine.late).

    python benchmarks/rejudge_cost.py [--interval 10] [--repeat 3]

Simulates the sample network's weekday (a speeding, a stop bypass and a detour; a fix
every `--interval` s), then judges every vehicle's operating day again from its raw input
(`engine.core.judged_again`: a fresh engine over the vehicle's messages of the day, as a
worker does once late messages came for it) and prints the process CPU time per
vehicle-day (best of `--repeat`), with its message count.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import tempfile
import time
from pathlib import Path

from engine.core import judged_again
from engine.loading import load_context
from fiscaliza.replay import ReplayInputs, read_messages
from rules.model import Infraction
from gtfs import load_feed
from kernel.fleet import load_fleet
from samples import joao_neiva
from simulator import SimulationSettings, simulate

DAY = dt.date(2026, 12, 1)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interval", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    feed_path, fleet_path = joao_neiva()
    with tempfile.TemporaryDirectory(prefix="fiscaliza-rejudge-") as tmp:
        sim = simulate(load_feed(feed_path), load_fleet(fleet_path),
                       SimulationSettings(DAY, DAY, seed=7, faults=("speeding", "stop_bypass", "detour"),
                                          ping_interval_s=args.interval), Path(tmp))
        inputs = ReplayInputs(feed_path, fleet_path, sim.tachograph, sim.catraca)
        context = load_context(inputs.static)
        messages, _ = read_messages(inputs)
    by_vehicle: dict[str, list] = {}
    for message in messages:
        vehicle_id = getattr(message.body, "vehicle_id", None)
        if vehicle_id is not None:
            by_vehicle.setdefault(vehicle_id, []).append(message)
    sources = frozenset({"tachograph", "catraca"})
    costs = []
    print("vehicle     messages  records  cpu (s)")
    for vehicle_id, mine in sorted(by_vehicle.items()):
        best = float("inf")
        for _ in range(args.repeat):
            started = time.process_time()
            records, _told = judged_again(context, sources, mine, [])
            best = min(best, time.process_time() - started)
        own = [r for r in records if isinstance(r, Infraction) and r.vehicle_id == vehicle_id]
        costs.append((best, len(mine)))
        print(f"{vehicle_id:10} {len(mine):9d} {len(own):8d}  {best:7.3f}")
    seconds = [c for c, _ in costs]
    per_message = sum(seconds) / sum(n for _, n in costs) * 1e6
    print(f"\n{len(costs)} vehicle-days, a fix every {args.interval} s: median {statistics.median(seconds):.3f} s, "
          f"max {max(seconds):.3f} s CPU per re-judgment; {per_message:.0f} µs per message")
    return 0


if __name__ == "__main__":
    sys.exit(main())
