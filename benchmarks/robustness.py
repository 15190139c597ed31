"""Benchmark (not a test): does a sensor fault ever become an accusation?

    python benchmarks/robustness.py [--seed 7] [--quick]

Simulates a weekday of the sample network seen through AVL units of every quality —
a fix every 10, 30, 45 or 60 s; GPS noise of 3, 12 or 25 m (sigma); 0 or 3 multipath
jumps of 350-600 m per vehicle-day — twice per setting: fault-free, and with one fault
of each detector kind injected. Each day is replayed (the workers' core) and compared
with what was injected. Printed per setting:

- false: records that accuse (confirmed, provisional, exempt) and no injected fault
  explains (its code on its vehicle, or on its route for the route-day codes), by code;
- found: injected faults whose code came out, of 9;
- insufficient: insufficient-evidence records (the engine saying it cannot tell).

Target: zero false accusations at every setting. Detections may fall to insufficient
evidence as fixes thin out, never to a wrong verdict.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from fiscaliza.replay import ReplayInputs, replay
from gtfs import load_feed
from kernel.fleet import load_fleet
from samples import joao_neiva
from simulator import SimulationSettings, simulate

DAY = dt.date(2026, 12, 1)
# what each injected fault must produce, and whether it is judged per vehicle or per route
EXPECTED = {
    "detour": ({"D-11", "A-07"}, "vehicle"),
    "stop_bypass": ({"A-07"}, "vehicle"),
    "late_departure": ({"D-13"}, "route"),
    "en_route_lateness": ({"B-04"}, "vehicle"),
    "suppressed_trip": ({"D-22"}, "route"),
    "frequency_shortfall": ({"D-12"}, "route"),
    "broken_seal": ({"D-21"}, "vehicle"),
    "silent_catraca": ({"D-19"}, "vehicle"),
    "speeding": ({"C-01"}, "vehicle"),
}
ACCUSING = ("confirmed", "provisional", "exempt_art45")
METRES_PER_DEGREE = 111_320


def add_jumps(tachograph: Path, per_vehicle: int, rng: random.Random) -> None:
    """Move `per_vehicle` fixes of each vehicle's day 350-600 m in a random direction
    (multipath), away from the day's first and last tenth."""
    lines = tachograph.read_text().splitlines()
    by_vehicle: dict[str, list[int]] = {}
    for k, line in enumerate(lines):
        by_vehicle.setdefault(json.loads(line)["vehicle_id"], []).append(k)
    for indices in by_vehicle.values():
        tenth = len(indices) // 10
        for k in rng.sample(indices[tenth: len(indices) - tenth], per_vehicle):
            record = json.loads(lines[k])
            metres, bearing = rng.uniform(350, 600), rng.uniform(0, 2 * math.pi)
            record["lat"] += metres * math.cos(bearing) / METRES_PER_DEGREE
            record["lon"] += metres * math.sin(bearing) / (METRES_PER_DEGREE * math.cos(math.radians(record["lat"])))
            lines[k] = json.dumps(record)
    tachograph.write_text("\n".join(lines) + "\n")


def explained(record, injected: list[dict]) -> bool:
    for fault in injected:
        codes, scope = EXPECTED[fault["fault"]]
        if record.code in codes and (record.vehicle_id == fault.get("vehicle_id") if scope == "vehicle"
                                     else record.route_id == fault["route_id"]):
            return True
    return False


def found(fault: dict, records) -> bool:
    codes, scope = EXPECTED[fault["fault"]]
    return any(r.code in codes and (r.vehicle_id == fault.get("vehicle_id") if scope == "vehicle"
                                    else r.route_id == fault["route_id"]) for r in records)


def run_day(feed, fleet, feed_path, fleet_path, interval: int, noise: float, jumps: int, faults: tuple,
            seed: int, out: Path):
    sim = simulate(feed, fleet, SimulationSettings(DAY, DAY, seed=seed, faults=faults, ping_interval_s=interval,
                                                   gps_noise_m=noise), out)
    if jumps:
        add_jumps(sim.tachograph, jumps, random.Random(seed * 1000 + interval))
    injected = json.loads(sim.manifest.read_text())["faults"]
    result = replay(ReplayInputs(feed_path, fleet_path, sim.tachograph, sim.catraca))
    accusing = [r for r in result.infractions if r.status in ACCUSING]
    false = Counter(r.code for r in accusing if not explained(r, injected))
    hits = sum(found(f, accusing) for f in injected)
    return false, hits, len(injected), Counter(r.code for r in result.insufficient)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="10 and 60 s, 3 and 25 m only")
    args = parser.parse_args(argv)
    feed_path, fleet_path = joao_neiva()
    feed, fleet = load_feed(feed_path), load_fleet(fleet_path)
    intervals = (10, 60) if args.quick else (10, 30, 45, 60)
    noises = (3.0, 25.0) if args.quick else (3.0, 12.0, 25.0)
    started = time.perf_counter()
    total_false = Counter()
    print("fix   noise  jumps | fault-free: false      insufficient | 9 faults: found  false      insufficient")
    with tempfile.TemporaryDirectory(prefix="fiscaliza-robust-") as tmp:
        for interval in intervals:
            for noise in noises:
                for jumps in (0, 3):
                    name = f"{interval}-{noise:g}-{jumps}"
                    clean = run_day(feed, fleet, feed_path, fleet_path, interval, noise, jumps, (), args.seed,
                                    Path(tmp) / f"clean-{name}")
                    faulty = run_day(feed, fleet, feed_path, fleet_path, interval, noise, jumps,
                                     tuple(EXPECTED), args.seed, Path(tmp) / f"faults-{name}")
                    total_false += clean[0] + faulty[0]
                    print(f"{interval:3d} s {noise:4g} m {jumps:5d}  | {_codes(clean[0]):22} {_codes(clean[3]):12} "
                          f"| {faulty[1]}/{faulty[2]:<6} {_codes(faulty[0]):10} {_codes(faulty[3])}")
    print(f"\nfalse accusations over every setting: {sum(total_false.values())} {_codes(total_false)}; "
          f"{time.perf_counter() - started:.0f} s")
    return 0


def _codes(counter: Counter) -> str:
    return " ".join(f"{code}×{n}" for code, n in sorted(counter.items())) or "0"


if __name__ == "__main__":
    sys.exit(main())
