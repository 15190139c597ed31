"""One replay of a network's telemetry, measured from inside its own process (run by
`python -m benchmarks` as a child, so its peak RSS is its own):

    python -m benchmarks.replay_run FEED FLEET TACHOGRAPH CATRACA [BATCH [LIMIT]]
        [--window HH:MM-HH:MM@BATCH ...] [--stop-after-windows] -> one JSON line
    python -m benchmarks.replay_run --decode-only TACHOGRAPH CATRACA -> one JSON line

The replay is `fiscaliza.replay.replay`'s loop (same sorted input, same engine, same
batch size) with the vehicle states' sizes sampled every SAMPLE_EVERY batches, as the
worker would pack them into its table; the sampling time is left out of the rate. BATCH
(messages per engine call, default the replay's) set to about one second of the fleet's
telemetry gives the live worker's granularity: at live pace each take of the vehicle
agent brings about one ping per vehicle, so every message pays a vehicle's whole beat.
LIMIT stops after that many messages (in event-time order), then closes: a shorter run of
the same stream, to compare two commits side by side at the live granularity.
A window (local time of the stream's day) is taken at its own BATCH, each call's CPU time
counted apart: what a time of the day costs with the engine state warmed by the whole
day before it (taken at the run's BATCH, as the replay would). `--stop-after-windows`
ends the run at the last window's end, without closing the day.
The decode-only pass reads the same files and decodes every line with the same decoder,
and reports its CPU time as the replay does (the ratio a shared machine disturbs least).
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

SAMPLE_EVERY = 10  # batches of fiscaliza.replay.BATCH messages


def peak_rss_mb() -> float:
    # VmHWM, not getrusage: ru_maxrss survives exec and could be a parent's
    return int(re.search(r"VmHWM:\s+(\d+) kB", Path("/proc/self/status").read_text()).group(1)) / 1024


@dataclass(frozen=True)
class Window:
    """A stretch of the stream's day, local time [start, end), taken `batch` messages per call."""
    start: dt.time
    end: dt.time
    batch: int

    @classmethod
    def parse(cls, text: str) -> Window:
        """'07:15-07:30@13'."""
        span, _, batch = text.partition("@")
        start, _, end = span.partition("-")
        return cls(dt.time.fromisoformat(start), dt.time.fromisoformat(end), int(batch))

    def label(self) -> str:
        return f"{self.start:%H:%M}-{self.end:%H:%M}@{self.batch}"

    def epochs(self, day: dt.date, tz: dt.tzinfo) -> tuple[float, float]:
        return (dt.datetime.combine(day, self.start, tz).timestamp(), dt.datetime.combine(day, self.end, tz).timestamp())


def next_call(pending: list, stream, batch_size: int, bounds: list[tuple[float, float, int]]) -> tuple[list, int | None]:
    """The next engine call's messages from `pending` + `stream` (`pending` holds at most one
    message read ahead), and the index of the window they fall in (None: outside every
    window). A call never straddles a window's edge: outside, it stops before the next
    window's start; inside, at the window's end, at the window's batch size."""
    def peek():
        if not pending:
            pending.extend(itertools.islice(stream, 1))
        return pending[0] if pending else None

    first = peek()
    if first is None:
        return [], None
    epoch = first.body.epoch
    inside = next((i for i, (start, end, _) in enumerate(bounds) if start <= epoch < end), None)
    if inside is None:
        size, edge = batch_size, min((start for start, _, _ in bounds if start > epoch), default=float("inf"))
        belongs = lambda e: e < edge  # noqa: E731
    else:
        start, end, size = bounds[inside]
        belongs = lambda e: start <= e < end  # noqa: E731
    call = []
    while len(call) < size:
        message = peek()
        if message is None or not belongs(message.body.epoch):
            break
        call.append(pending.pop(0))
    return call, inside


def released_counts(epochs: list[float], released_bounds: list[tuple[float, float]]) -> list[int]:
    """Per window, how many of `epochs` its calls release: those in its bounds less the
    allowed lateness (the watermark trails the newest message by it; in event-time order,
    the messages a window's calls move the watermark past)."""
    return [sum(start <= epoch < end for epoch in epochs) for start, end in released_bounds]


def replay_run(feed: Path, fleet: Path, tachograph: Path, catraca: Path, batch_size: int | None = None,
               limit: int | None = None, windows: tuple[Window, ...] = (), stop_after_windows: bool = False) -> dict:
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
    sampling_cpu = 0.0
    first = last = None
    infractions = taken = 0
    bounds: list[tuple[float, float, int]] = []
    measured = [{"window": w.label(), "events": 0, "calls": 0, "cpu_seconds": 0.0, "released": 0} for w in windows]
    # the legal path runs a message when the watermark passes it, the allowed lateness after
    # the newest one: a window's calls release the messages of [start, end) less the lateness
    lateness = context.policy.stream.allowed_lateness_s
    released_bounds: list[tuple[float, float]] = []
    pending: list = []
    with SortedInput(inputs, RUN) as messages:
        stream = iter(messages) if limit is None else itertools.islice(messages, limit)
        pending.extend(itertools.islice(stream, 1))  # the stream's day places the windows
        if pending:
            day = dt.datetime.fromtimestamp(pending[0].body.epoch, context.feed.timezone).date()
            bounds = [(*w.epochs(day, context.feed.timezone), w.batch) for w in windows]
            released_bounds = [(start - lateness, end - lateness) for start, end, _ in bounds]
        for n in itertools.count(1):
            batch, inside = next_call(pending, stream, batch_size, bounds)
            if not batch:
                break
            first = batch[0].body.epoch if first is None else first
            if stop_after_windows and bounds and batch[0].body.epoch >= max(end for _, end, _ in bounds):
                break
            last = batch[-1].body.epoch
            taken += len(batch)
            for window, count in zip(measured, released_counts([m.body.epoch for m in batch], released_bounds)):
                window["released"] += count
            cpu = time.process_time()
            infractions += len(engine.ingest(batch).infractions)
            if inside is not None:
                measured[inside]["events"] += len(batch)
                measured[inside]["calls"] += 1
                measured[inside]["cpu_seconds"] += time.process_time() - cpu
            if n % max(1, SAMPLE_EVERY * BATCH // batch_size) == 0:
                # progress on stderr: a run stopped before its end still tells its fraction
                print(json.dumps({"events": taken, "seconds": round(time.perf_counter() - loaded - sampling, 1),
                                  "cpu_seconds": round(time.process_time() - cpu_loaded - sampling_cpu, 1),
                                  "epoch": last}), file=sys.stderr, flush=True)
                before, before_cpu = time.perf_counter(), time.process_time()
                sizes += [len(pack(state)) for state in engine.vehicle_states()]
                sampling += time.perf_counter() - before
                sampling_cpu += time.process_time() - before_cpu
        complete = limit is None and not stop_after_windows
        events = messages.count + len(messages.rejected) if complete else taken
    if not stop_after_windows:
        infractions += len(engine.close().infractions)
    finished = time.perf_counter()
    return {"events": events, "seconds": finished - loaded - sampling, "load_seconds": loaded - started,
            "cpu_seconds": time.process_time() - cpu_loaded - sampling_cpu, "batch": batch_size,
            "event_span_s": (last - first) if first is not None else 0.0,
            "peak_rss_mb": peak_rss_mb(), "state_sizes": sizes, "infraction_changes": infractions,
            "windows": measured, "complete": complete}


def decode_run(tachograph: Path, catraca: Path) -> dict:
    from telemetry import Rejection, decode

    started, cpu = time.perf_counter(), time.process_time()
    events = 0
    for source, path in (("tachograph", tachograph), ("catraca", catraca)):
        with open(path, "rb") as lines:
            for line in lines:
                decode(source, line.rstrip(b"\n"))
                events += 1
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
    epochs = [body.epoch for source, path in (("tachograph", tachograph), ("catraca", catraca))  # untimed
              for body in (decode(source, line.rstrip(b"\n")) for line in open(path, "rb"))
              if not isinstance(body, Rejection)]
    return {"events": events, "seconds": seconds, "cpu_seconds": cpu_seconds,
            "event_span_s": max(epochs) - min(epochs) if epochs else 0.0, "peak_rss_mb": peak_rss_mb()}


def main(argv: list[str]) -> dict:
    if argv[0] == "--decode-only":
        return decode_run(*map(Path, argv[1:3]))
    parser = argparse.ArgumentParser(prog="python -m benchmarks.replay_run")
    parser.add_argument("paths", type=Path, nargs=4, metavar="FEED FLEET TACHOGRAPH CATRACA")
    parser.add_argument("counts", type=int, nargs="*", metavar="BATCH [LIMIT]")
    parser.add_argument("--window", type=Window.parse, action="append", default=[])
    parser.add_argument("--stop-after-windows", action="store_true")
    args = parser.parse_args(argv)
    return replay_run(*args.paths, *args.counts, windows=tuple(args.window), stop_after_windows=args.stop_after_windows)


if __name__ == "__main__":
    from fiscaliza.process import tune_garbage_collector

    tune_garbage_collector()  # as the command line whose run it times
    print(json.dumps(main(sys.argv[1:])))
