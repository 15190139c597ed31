"""Benchmark (not a test): replay's peak memory as the input grows, in one run.

    python benchmarks/replay_memory.py [--days 7]

Simulates 1 and `--days` days of the sample network, replays each in a fresh process
(`fiscaliza replay`, the external sort and the engine) and prints their peak RSS and
the ratio. Replay used to hold every message in memory to sort them; the target is
≤ 1.5× the one-day peak for 7 days.
"""

from __future__ import annotations

import argparse
import datetime as dt
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gtfs import load_feed
from kernel.fleet import load_fleet
from samples import joao_neiva
from simulator import SimulationSettings, simulate

# The child's peak RSS is read from /proc (VmHWM): getrusage's ru_maxrss survives exec on
# Linux and would report the parent's peak (its simulation) instead.
CHILD = """
import re, sys
from pathlib import Path
from fiscaliza.replay import ReplayInputs, replay
feed, fleet, tachograph, catraca = map(Path, sys.argv[1:5])
result = replay(ReplayInputs(feed, fleet, tachograph, catraca))
peak_kb = int(re.search(r"VmHWM:\\s+(\\d+) kB", Path("/proc/self/status").read_text()).group(1))
print(result.messages, peak_kb)
"""


def peak(feed: Path, fleet: Path, sim) -> tuple[int, float, float]:
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, str(feed), str(fleet), str(sim.tachograph), str(sim.catraca)],
                         check=True, capture_output=True, text=True).stdout.split()
    return int(out[0]), int(out[1]) / 1024, time.perf_counter() - started


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=7)
    args = parser.parse_args(argv)
    feed_path, fleet_path = joao_neiva()
    feed, fleet = load_feed(feed_path), load_fleet(fleet_path)
    start = dt.date(2026, 12, 1)
    rows = []
    with tempfile.TemporaryDirectory(prefix="fiscaliza-bench-") as tmp:
        for days in (1, args.days):
            sim = simulate(feed, fleet, SimulationSettings(start, start + dt.timedelta(days=days - 1), seed=2),
                           Path(tmp) / f"d{days}")
            rows.append((days, *peak(feed_path, fleet_path, sim)))
    for days, messages, rss, seconds in rows:
        print(f"{days} day(s): {messages:,} messages, peak RSS {rss:,.0f} MB, {messages / seconds:,.0f} messages/s")
    print(f"ratio {args.days} days / 1 day: {rows[1][2] / rows[0][2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
