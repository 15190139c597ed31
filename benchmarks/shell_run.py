"""The worker's core path without a broker, measured from inside its own process:

    python -m benchmarks.shell_run FEED FLEET TACHOGRAPH CATRACA BATCH [LIMIT] -> one JSON line

The messages in event-time order (the replay's sorted input), BATCH per take, through
the Faust shell's own code (`streams.app.Shell`) over tables that are dicts: each take's
vehicle stage as the worker gets it (`Shell.vehicle_stage`), its vehicle and partition
states packed into the tables after the take and read back when next loaded (a vehicle
state this shell wrote, from its decoded states: streams.decoded), the partition's
heartbeat and the take's operator messages through the operator stage, its state packed
too. What Kafka, Faust and the event loop add is left out: what is left is what the
worker's CPU per event owes to the shell and the core. BATCH about one second of the
fleet's telemetry is the live worker's take. `max_rss_mb`, the process's peak resident
memory, is what the context, the tables and the shell's caches hold. Next to
`benchmarks.replay_run` at the same BATCH, the difference is the shell's (state loaded
and stored per take).
"""

from __future__ import annotations

import itertools
import json
import resource
import sys
import time
from pathlib import Path


class _DictTable(dict):
    """A table without a changelog: what the shell wrote, by key."""

    data = None


def shell_run(feed: Path, fleet: Path, tachograph: Path, catraca: Path, batch: int, limit: int | None = None) -> dict:
    from faust.types import TP

    from engine.loading import load_context
    from engine.routing import operator_step, vehicle_step
    from fiscaliza.replay import RUN, ReplayInputs, SortedInput
    from kernel.settings import StreamSettings
    from streams.app import OWNER_TOPIC, Shell

    inputs = ReplayInputs(feed=feed, fleet=fleet, tachograph=tachograph, catraca=catraca)
    context = load_context(inputs)
    settings = StreamSettings(partitions=1, backfill=True)  # backfill: no wall clock to quarantine against
    shell = Shell(context, settings, *(_DictTable() for _ in range(4)))
    shell.on_assigned({TP(topic, 0) for topic in {*OWNER_TOPIC.values(), "catraca", "day-matched"}})
    operators = sorted(context.feed.agencies)
    events = takes = 0
    started, cpu_started = time.perf_counter(), time.process_time()
    with SortedInput(inputs, RUN) as messages:
        stream = iter(messages) if limit is None else itertools.islice(messages, limit)
        while take := list(itertools.islice(stream, batch)):
            events, takes = events + len(take), takes + 1
            stage = shell.vehicle_stage(0)
            sends = vehicle_step(stage, take, [], settings.inputs)
            shell.write_state("vehicles", "partitions")
            beat = stage.heartbeat(final=False)
            shell.hold_partition(stage.partition)
            shell.write_state("partitions")
            for message in sends.to_operators:
                operator_step(shell.operator_stage, message.operator_id, message, [])
            for operator_id in operators:
                operator_step(shell.operator_stage, operator_id, beat, [])
            shell.write_state("operators")
    cpu_seconds = time.process_time() - cpu_started
    return {"events": events, "takes": takes, "batch": batch, "seconds": round(time.perf_counter() - started, 3),
            "cpu_seconds": round(cpu_seconds, 3), "cpu_ms_per_event": round(1000 * cpu_seconds / max(events, 1), 4),
            # the process's peak resident memory (Linux: KiB): context, tables and the shell's caches
            "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def main(argv: list[str]) -> dict:
    paths = [Path(a) for a in argv[:4]]
    counts = [int(a) for a in argv[4:6]]
    return shell_run(*paths, *counts)


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:])))
