"""One replay of a network's telemetry, measured from inside its own process (run by
`python -m benchmarks` as a child, so its peak RSS is its own):

    python -m benchmarks.replay_run FEED FLEET TACHOGRAPH CATRACA [BATCH [LIMIT]] -> one JSON line
    python -m benchmarks.replay_run --decode-only TACHOGRAPH CATRACA -> one JSON line

The replay is `fiscaliza.replay.replay`'s loop (same sorted input, same engine, same
batch size) with the vehicle states' sizes sampled every SAMPLE_EVERY batches, as the
worker would pack them into its table; the sampling time is left out of the rate. BATCH
(messages per engine call, default the replay's) set to about one second of the fleet's
telemetry gives the live worker's granularity: at live pace each take of the vehicle
agent brings about one ping per vehicle, so every message pays a vehicle's whole beat.
LIMIT stops after that many messages (in event-time order), then closes: a shorter run of
the same stream, to compare two commits side by side at the live granularity.
The decode-only pass reads the same files and decodes every line with the same decoder.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
import time
from pathlib import Path

SAMPLE_EVERY = 10  # batches of fiscaliza.replay.BATCH messages


def peak_rss_mb() -> float:
    # VmHWM, not getrusage: ru_maxrss survives exec and could be a parent's
    return int(re.search(r"VmHWM:\s+(\d+) kB", Path("/proc/self/status").read_text()).group(1)) / 1024


def replay_run(feed: Path, fleet: Path, tachograph: Path, catraca: Path, batch_size: int | None = None,
               limit: int | None = None) -> dict:
    from engine.core import Engine
    from engine.loading import load_context
    from engine.stored import pack
    from fiscaliza.replay import BATCH, RUN, ReplayInputs, SortedInput

    batch_size = batch_size or BATCH
    started = time.perf_counter()
    inputs = ReplayInputs(feed=feed, fleet=fleet, tachograph=tachograph, catraca=catraca)
    context = load_context(inputs)
    loaded = time.perf_counter()
    cpu_loaded = time.process_time()
    engine = Engine(context, frozenset({"tachograph", "catraca"}))
    sizes: list[int] = []
    sampling = 0.0
    first = last = None
    infractions = taken = 0
    with SortedInput(inputs, RUN) as messages:
        stream = iter(messages) if limit is None else itertools.islice(messages, limit)
        for n in itertools.count(1):
            batch = list(itertools.islice(stream, batch_size))
            if not batch:
                break
            first = batch[0].body.epoch if first is None else first
            last = batch[-1].body.epoch
            taken += len(batch)
            infractions += len(engine.ingest(batch).infractions)
            if n % max(1, SAMPLE_EVERY * BATCH // batch_size) == 0:
                before = time.perf_counter()
                sizes += [len(pack(state)) for state in engine.vehicle_states()]
                sampling += time.perf_counter() - before
        events = messages.count + len(messages.rejected) if limit is None else taken
    infractions += len(engine.close().infractions)
    finished = time.perf_counter()
    return {"events": events, "seconds": finished - loaded - sampling, "load_seconds": loaded - started,
            "cpu_seconds": time.process_time() - cpu_loaded - sampling, "batch": batch_size,
            "event_span_s": (last - first) if first is not None else 0.0,
            "peak_rss_mb": peak_rss_mb(), "state_sizes": sizes, "infraction_changes": infractions}


def decode_run(tachograph: Path, catraca: Path) -> dict:
    from telemetry import decode

    started = time.perf_counter()
    events = 0
    for source, path in (("tachograph", tachograph), ("catraca", catraca)):
        with open(path, "rb") as lines:
            for line in lines:
                decode(source, line.rstrip(b"\n"))
                events += 1
    return {"events": events, "seconds": time.perf_counter() - started, "peak_rss_mb": peak_rss_mb()}


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[0] == "--decode-only":
        result = decode_run(*map(Path, args[1:3]))
    else:
        result = replay_run(*map(Path, args[:4]), *(int(a) for a in args[4:6]))
    print(json.dumps(result))
