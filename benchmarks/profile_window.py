"""Where a window of a benchmark network's day spends its CPU: the replay runs the day up
to the window at the replay's batch (the engine state warmed as it is at that hour) and
profiles only the engine calls inside the window, at the window's own batch:

    python -m benchmarks.profile_window NETWORK HH:MM-HH:MM@BATCH OUT.prof [TOP]

It prints the window's events and CPU time (profiled: cProfile roughly doubles it) and the
TOP (default 45) functions by cumulative time; OUT.prof is for `pstats` (callers,
callees). `python -m benchmarks` times the same windows unprofiled (its early, late and
live rows); this says why they cost what they do.
"""

from __future__ import annotations

import cProfile
import datetime as dt
import itertools
import pstats
import sys
import time
from pathlib import Path

from benchmarks.equivalence import checked, count, network_files
from benchmarks.replay_run import Window, next_call

WARM_BATCH = 2000  # the replay's messages per call before the window (fiscaliza.replay.BATCH)


def profile_window(network: Path, window: Window, out: Path) -> tuple[int, float]:
    """The window's events and CPU seconds, its calls' profile written to `out`."""
    from engine.core import Engine
    from engine.loading import load_context
    from fiscaliza.replay import RUN, ReplayInputs, SortedInput

    inputs = ReplayInputs(*network_files(network))
    context = load_context(inputs)
    engine = Engine(context, frozenset({"tachograph", "catraca"}))
    profiler = cProfile.Profile()
    cpu, events = 0.0, 0
    with SortedInput(inputs, RUN) as messages:
        stream = iter(messages)
        pending = list(itertools.islice(stream, 1))
        if pending:
            day = dt.datetime.fromtimestamp(pending[0].body.epoch, context.feed.timezone).date()
            start, end = window.epochs(day, context.feed.timezone)
            while True:
                batch, inside = next_call(pending, stream, WARM_BATCH, [(start, end, window.batch)])
                if not batch or batch[0].body.epoch >= end:
                    break
                if inside is None:
                    engine.ingest(batch)
                    continue
                began = time.process_time()
                profiler.enable()
                engine.ingest(batch)
                profiler.disable()
                cpu += time.process_time() - began
                events += len(batch)
    profiler.dump_stats(out)
    return events, cpu


def main(argv: list[str]) -> int:
    """A bad argument or input file is one line on stderr and exit code 2, found before
    the profile's minutes are spent where it can be."""
    usage = "usage: python -m benchmarks.profile_window NETWORK HH:MM-HH:MM@BATCH OUT.prof [TOP]"
    top = count(argv[3]) if len(argv) == 4 else 45
    if len(argv) not in (3, 4) or top is None:
        print(usage, file=sys.stderr)
        return 2
    try:
        window = Window.parse(argv[1])
    except ValueError:
        window = None
    if window is None or window.batch < 1:
        print(f"{argv[1]!r}: not a window ({usage})", file=sys.stderr)
        return 2
    network, out = Path(argv[0]), Path(argv[2])
    done = checked(network, out, lambda: profile_window(network, window, out))
    if done is None:
        return 2
    events, cpu = done
    print(f"window {window.label()}: {events} events, {cpu:.2f} s CPU, "
          f"{1000 * cpu / max(events, 1):.3f} ms per event (profiled)")
    if events:
        pstats.Stats(str(out)).sort_stats("cumulative").print_stats(top)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
