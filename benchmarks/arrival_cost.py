"""What a trip's arrival and the engine's geometry cost (#31), measured from inside one replay:

    python -m benchmarks.arrival_cost NETWORK [BATCH [LIMIT]] [--count-pairs] -> one JSON line

NETWORK is a folder `python -m benchmarks` builds (feed/, fleet.csv, telemetry/). The replay
is `benchmarks.replay_run`'s (BATCH messages per engine call, the first LIMIT messages),
with `Arrivals.judge` timed around each call (CPU: `time.process_time`), and
with `--count-pairs` the (point, shape) pairs handed to shapely's `line_locate_point` and
`distance` counted (counting slows the run: time without it).
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import shapely

from benchmarks.replay_run import replay_run
from engine.arrival import Arrivals


def _timed(method, spent: list[float]):
    def wrapper(*args, **kwargs):
        before = time.process_time()
        try:
            return method(*args, **kwargs)
        finally:
            spent.append(time.process_time() - before)
    return wrapper


def _counted(function, pairs: Counter, name: str):
    def wrapper(a, b, *args, **kwargs):
        pairs[name] += int(np.broadcast(np.asarray(a, dtype=object), np.asarray(b, dtype=object)).size)
        return function(a, b, *args, **kwargs)
    return wrapper


def arrival_cost(network: Path, batch: int | None = None, limit: int | None = None, count_pairs: bool = False) -> dict:
    spent: list[float] = []
    pairs: Counter = Counter()
    judge = Arrivals.judge
    functions = shapely.line_locate_point, shapely.distance
    Arrivals.judge = _timed(judge, spent)
    if count_pairs:  # the modules call them as shapely.<name>: replaced there for this run
        shapely.line_locate_point = _counted(functions[0], pairs, "locate")
        shapely.distance = _counted(functions[1], pairs, "distance")
    try:
        run = replay_run(network / "feed", network / "fleet.csv", network / "telemetry" / "tachograph.jsonl",
                         network / "telemetry" / "catraca.jsonl", batch, limit)
    finally:
        Arrivals.judge = judge
        shapely.line_locate_point, shapely.distance = functions
    run.pop("state_sizes")
    result = run | {"cpu_ms_per_event": round(1000 * run["cpu_seconds"] / run["events"], 4),
                    "judge_arrival_calls": len(spent),
                    "judge_arrival_ms_per_trip": round(1000 * sum(spent) / max(len(spent), 1), 3)}
    if count_pairs:
        result |= {"locate_pairs": pairs["locate"], "distance_pairs": pairs["distance"]}
    return result


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--count-pairs"]
    print(json.dumps(arrival_cost(Path(args[0]), *(int(a) for a in args[1:3]),
                                  count_pairs="--count-pairs" in sys.argv)))
