"""How dense a benchmark network's itineraries are where its buses run: per tachograph fix,
the itineraries whose corridor it lies in (the engine's per-fix work is per such pair: each
is located, tracked and judged). A city network is not a small one with more buses: it has
more routes over the same streets, so its fixes lie near more itineraries, and its cost per
event grows with that as well as with the fleet:

    python -m benchmarks.density NETWORK [NETWORK ...]
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import numpy as np

SAMPLE_EVERY = 50  # every 50th line of the tachograph file
SAMPLE_AT_MOST = 4000


def near_pairs_per_fix(network: Path) -> dict:
    """The mean number of (fix, itinerary) pairs with the fix inside the itinerary's
    corridor, over a sample of the network's tachograph fixes."""
    from benchmarks.equivalence import network_files
    from engine.loading import load_context
    from fiscaliza.replay import ReplayInputs
    from gtfs.projection import Projector
    from telemetry import Rejection, decode

    inputs = ReplayInputs(*network_files(network))
    context = load_context(inputs)
    with open(inputs.tachograph, "rb") as lines:
        sample = itertools.islice(itertools.islice(lines, 0, None, SAMPLE_EVERY), SAMPLE_AT_MOST)
        pings = [body for body in (decode("tachograph", line.rstrip(b"\n")) for line in sample)
                 if not isinstance(body, Rejection)]
    if not pings:
        return {"fixes": 0, "itineraries": len(context.geofences.itineraries), "near_pairs_per_fix": None}
    x, y = Projector(context.feed.epsg).to_xy(np.array([p.lon for p in pings]), np.array([p.lat for p in pings]))
    _, _, _, inside, _ = context.geofences.near_corridors(x, y)
    return {"fixes": len(pings), "itineraries": len(context.geofences.itineraries),
            "near_pairs_per_fix": round(int(inside.sum()) / len(pings), 3)}


if __name__ == "__main__":
    for argument in sys.argv[1:]:
        print(json.dumps({"network": argument, **near_pairs_per_fix(Path(argument))}))
