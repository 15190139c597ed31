"""The shapes' geometry for a whole take at once, against one itinerary at a time (#31 item 3):

    python -m benchmarks.segment_query NETWORK [LIMIT [REPEAT]] -> one JSON line

NETWORK is a folder `python -m benchmarks` builds (feed/, fleet.csv, telemetry/). Its
first LIMIT messages (default 30,000) are replayed as `benchmarks.replay_run` does, one
take per engine call of as many messages as the network has vehicles (about one ping
per vehicle, as a live take brings), and the positions and (position, itinerary) pairs
the live view measures in each call are recorded. On those takes, CPU time
(`time.process_time`), each way run in turn REPEAT times (default 5), the best of each:

* `live`: the live view's pairs (`engine.live.measure`) measured one itinerary at a
  time, `Itinerary.distance` and `Itinerary.locate` over its positions (as before the
  segment index), against `Geofences.measure_pairs` (one segment-index query);
* `corridors`: every (position, itinerary) pair within the widest corridor, located:
  an STRtree over whole shapes queried `dwithin`, then `shapely.line_locate_point` on
  the pairs' ~250-vertex lines (the track memo's corridors before the segment index),
  against `geofences.segments.within` (one query over the segments).

Each pair of ways is checked to give the same numbers, to the bit, before it is timed.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import shapely

from benchmarks.replay_run import replay_run
from geofences.segments import within
from geofences.zones import Geofences


def _recorded(network: Path, limit: int) -> tuple[Geofences, list[tuple[np.ndarray, ...]], int]:
    """The geofences and each engine call's (x, y, position, which), from a replay."""
    takes = []
    geofences = []
    measure_pairs = Geofences.measure_pairs

    def recording(self, x, y, position, which):
        geofences[:] = [self]
        takes.append((np.array(x), np.array(y), np.array(position), np.array(which)))
        return measure_pairs(self, x, y, position, which)

    vehicles = sum(1 for _ in open(network / "fleet.csv")) - 1
    Geofences.measure_pairs = recording
    try:
        replay_run(network / "feed", network / "fleet.csv", network / "telemetry" / "tachograph.jsonl",
                   network / "telemetry" / "catraca.jsonl", vehicles, limit)
    finally:
        Geofences.measure_pairs = measure_pairs
    return geofences[0], takes, vehicles


def _per_itinerary(geofences: Geofences, x, y, position, which) -> tuple[np.ndarray, np.ndarray]:
    itineraries = tuple(geofences.itineraries.values())
    distance, progress = np.empty(len(position)), np.empty(len(position))
    for index in np.unique(which).tolist():
        pairs = np.flatnonzero(which == index)
        at = position[pairs]
        distance[pairs] = itineraries[index].distance(x[at], y[at])
        progress[pairs] = itineraries[index].locate(x[at], y[at])
    return distance, progress


def _by_shapes(lines: np.ndarray, tree: shapely.STRtree, widest: float, x, y):
    points = shapely.points(x, y)
    position, which = tree.query(points, predicate="dwithin", distance=widest)
    return position, which, np.asarray(shapely.line_locate_point(lines[which], points[position]))


def _by_segments(geofences: Geofences, widest: float, x, y):
    position, which, _, progress = within(geofences.segments, x, y, widest)
    return position, which, progress


def _best_cpu(ways: dict, takes, repeat: int) -> dict[str, float]:
    """Each way over every take, in turn, `repeat` times: the least CPU seconds of each."""
    best = dict.fromkeys(ways, float("inf"))
    for _ in range(repeat):
        for name, way in ways.items():
            before = time.process_time()
            for take in takes:
                way(*take)
            best[name] = min(best[name], time.process_time() - before)
    return best


def _same_pairs(a, b) -> bool:
    order_a, order_b = np.lexsort(a[1::-1]), np.lexsort(b[1::-1])
    return all(np.array_equal(x[order_a], y[order_b]) for x, y in zip(a, b))


def segment_query(network: Path, limit: int = 30_000, repeat: int = 5) -> dict:
    geofences, takes, vehicles = _recorded(network, limit)
    geofences.segments  # built once per feed, as the stage does: not timed
    live = {"per_itinerary": lambda x, y, p, w: _per_itinerary(geofences, x, y, p, w),
            "segment_index": lambda x, y, p, w: geofences.measure_pairs(x, y, p, w)}
    positions = [(x, y) for x, y, _, _ in takes]
    lines = geofences.segments.lines
    tree, widest = shapely.STRtree(lines), max(i.corridor_m for i in geofences.itineraries.values())
    corridors = {"shapes_index": lambda x, y: _by_shapes(lines, tree, widest, x, y),
                 "segment_index": lambda x, y: _by_segments(geofences, widest, x, y)}
    for take in takes:
        old, new = (way(*take) for way in live.values())
        assert all(np.array_equal(a, b) for a, b in zip(old, new)), "the live view's pairs differ"
    for take in positions:
        assert _same_pairs(*(way(*take) for way in corridors.values())), "the corridor pairs differ"
    live_cpu = _best_cpu(live, takes, repeat)
    corridor_cpu = _best_cpu(corridors, positions, repeat)
    pairs = sum(len(p) for _, _, p, _ in takes)
    # the live view's pairs no segment of their itinerary is within the widest corridor of:
    # measured by shapely on whole lines in both ways
    beyond = sum(int((live["per_itinerary"](x, y, p, w)[0] > widest).sum()) for x, y, p, w in takes)
    points = sum(len(x) for x, _ in positions)
    corridor_pairs = sum(len(_by_segments(geofences, widest, x, y)[0]) for x, y in positions)
    return {
        "network": network.name, "vehicles": vehicles, "itineraries": len(geofences.itineraries),
        "segments": len(geofences.segments.ax), "messages": limit, "takes": len(takes),
        "positions_per_take": round(points / len(takes), 1),
        "live": {"pairs_per_take": round(pairs / len(takes), 1),
                 "pairs_beyond_the_widest_corridor_per_take": round(beyond / len(takes), 1),
                 "us_per_take_per_itinerary": round(1e6 * live_cpu["per_itinerary"] / len(takes), 1),
                 "us_per_take_segment_index": round(1e6 * live_cpu["segment_index"] / len(takes), 1),
                 "ratio": round(live_cpu["segment_index"] / live_cpu["per_itinerary"], 3)},
        "corridors": {"pairs_per_take": round(corridor_pairs / len(takes), 1),
                      "us_per_take_shapes_index": round(1e6 * corridor_cpu["shapes_index"] / len(takes), 1),
                      "us_per_take_segment_index": round(1e6 * corridor_cpu["segment_index"] / len(takes), 1),
                      "ratio": round(corridor_cpu["segment_index"] / corridor_cpu["shapes_index"], 3)},
    }


if __name__ == "__main__":
    print(json.dumps(segment_query(Path(sys.argv[1]), *(int(a) for a in sys.argv[2:4]))))
