"""Faust's own ceiling on this machine (#16): a Faust app whose agent does the least any
worker must do (take each input event and decode it with msgspec), next to the worker.

    python -m benchmarks.faust_floor [--bootstrap HOST:PORT] [VARIANT ...]  -> one JSON line
    python -m benchmarks.faust_floor --child VARIANT --total N --out FILE  (one run, internal)

The app is built like `streams.app.create_app` (its App with the project's consumer and
producer, raw key and value serializers, the same consumer settings) but has one agent
on the input topics and no tables. Each variant runs in its own child process started
as `fiscaliza worker` is (`streams.worker.worker_for(...).execute_from_commandline()`), consumes the
input topics from the start under a fresh group and stops once it has seen every message:

- `events`: `async for event in stream.events()`, one decode per event;
- `take_N`: `stream.take_events(N, within=1.0)`, the batch decoded event by event (the
  worker takes 10,000);
- `noack_take_N`: `stream.noack().noack_take(N, within=1.0)`, the batch decoded, then
  every event of it acked at once, synchronously (`Event.ack`, no await per event);
- any of them with `_direct`: the consumer hands each fetched message to its topic
  directly, not through `Service.wait_first` (which races the hand-over against a flow
  suspension, the service's stop and its crash: four tasks and an `asyncio.wait` per
  message). A measure of what that costs, not a fix: a hand-over blocked on a full
  stream buffer is then not interrupted by a rebalance.

The rate is sustained events/s: from the first batch the agent got to the last one, or to
the one before when the last was partial (startup, the first batch's filling and the last
partial batch's `within` wait excluded).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
INPUTS = ("tachograph", "catraca")
VARIANTS = ("events", "take_100", "take_1000", "take_10000", "noack_take_10000", "take_10000_direct")
WITHIN_S = 1.0


def batch_size(variant: str) -> int:
    """Events per batch the variant asks Faust for (1: event by event)."""
    variant = variant.removesuffix("_direct")
    if variant == "events":
        return 1
    kind, _, size = variant.rpartition("_")
    if kind not in ("take", "noack_take") or not size.isdigit() or int(size) < 1:
        raise ValueError(f"unknown variant {variant!r}: events, take_N or noack_take_N")
    return int(size)


def sustained_rate(marks: list[tuple[int, float]], size: int) -> float:
    """Events/s from the batches an agent got, `marks` = (events seen so far, time) at
    each batch: from the first batch to the last full one (the first batch filled before
    the clock started; a last partial batch came after `within` of waiting for more)."""
    if len(marks) > 2 and marks[-1][0] - marks[-2][0] < size:
        marks = marks[:-1]
    if len(marks) < 2:
        raise ValueError("fewer than two batches: too little input to measure a rate")
    (first_seen, first_time), (last_seen, last_time) = marks[0], marks[-1]
    return (last_seen - first_seen) / (last_time - first_time)


# --- the child: one variant in a Faust worker -----------------------------------------

def run_child(variant: str, bootstrap: str, total: int, out: Path, datadir: str) -> None:
    from kernel.settings import StreamSettings
    from streams.app import STATE_MAX_BYTES, App
    from streams.consumer import Consumer, Transport
    from streams.worker import worker_for
    from telemetry import decode

    class DirectConsumer(Consumer):
        async def wait_first(self, *coros, timeout=None):
            # only Consumer._drain_messages calls it: (callback(message), suspend_flow.wait())
            if len(coros) == 2 and not self.suspend_flow.is_set() and not self.should_stop:
                handover, suspended = coros
                suspended.close()
                await handover
                return None
            return await super().wait_first(*coros, timeout=timeout)

    class DirectApp(App):
        def _new_transport(self):
            return type("DirectTransport", (Transport,), {"Consumer": DirectConsumer})(self.conf.broker_consumer, self)

    size = batch_size(variant)
    direct = variant.endswith("_direct")
    variant_kind = variant.removesuffix("_direct")
    settings = StreamSettings(bootstrap=bootstrap)
    app = (DirectApp if direct else App)(
        f"faust-floor-{variant}-{uuid.uuid4().hex[:8]}",  # a fresh group: from the start
        broker=f"kafka://{settings.bootstrap}",
        store="memory://",
        topic_partitions=settings.partitions,
        topic_replication_factor=settings.replication,
        key_serializer="raw",
        value_serializer="raw",
        web_enabled=False,
        stream_wait_empty=True,
        processing_guarantee=settings.processing_guarantee,
        producer_max_request_size=STATE_MAX_BYTES,
        broker_session_timeout=settings.session_timeout_s,
        broker_heartbeat_interval=min(3.0, settings.session_timeout_s / 3),
        datadir=datadir,
    )
    topics = app.topic(*INPUTS, key_type=bytes, value_type=bytes)
    marks: list[tuple[int, float]] = []
    seen = 0

    def batch_done(n: int) -> None:
        nonlocal seen
        seen += n
        marks.append((seen, time.perf_counter()))
        if seen != total:  # (nothing comes after: the input was published before)
            return
        out.write_text(json.dumps({"variant": variant, "events": seen, "batches": len(marks),
                                   "events_per_s": sustained_rate(marks, size)}))
        os.kill(os.getpid(), signal.SIGTERM)  # the worker stops as on `kill`

    if variant_kind == "events":
        @app.agent(topics)
        async def floor(stream):
            async for event in stream.events():
                message = event.message
                decode(message.topic, message.value)
                batch_done(1)
    elif variant_kind.startswith("take_"):
        @app.agent(topics)
        async def floor(stream):
            async for events in stream.take_events(size, within=WITHIN_S):
                for event in events:
                    message = event.message
                    decode(message.topic, message.value)
                batch_done(len(events))
    else:
        @app.agent(topics)
        async def floor(stream):
            async for events in stream.noack().noack_take(size, within=WITHIN_S):
                for event in events:
                    message = event.message
                    decode(message.topic, message.value)
                for event in events:
                    event.ack()
                batch_done(len(events))

    worker_for(app, "warning").execute_from_commandline()  # as `fiscaliza worker` runs


# --- the parent: every variant, one child each ------------------------------------------

def variant_rate(bootstrap: str, total: int, variant: str, timeout_s: float = 300.0) -> float:
    """Sustained events/s of one variant, in a child process stopped once it saw `total`."""
    batch_size(variant)  # an unknown variant fails here, not in the child
    with tempfile.TemporaryDirectory(prefix="faust-floor-") as tmp:
        out, log_path = Path(tmp) / "result.json", Path(tmp) / "worker.log"
        with open(log_path, "w") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "benchmarks.faust_floor", "--child", variant, "--bootstrap", bootstrap,
                 "--total", str(total), "--out", str(out), "--datadir", str(Path(tmp) / "data")],
                cwd=HERE.parent, stdout=log, stderr=subprocess.STDOUT)
            try:
                process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                pass
            finally:
                if process.poll() is None:
                    process.terminate()
                    process.wait(timeout=60)
        if not out.exists():
            raise SystemExit(f"faust floor {variant}: no result (exit {process.returncode}); its log:\n"
                             + log_path.read_text()[-3000:])
        return json.loads(out.read_text())["events_per_s"]


def floor_rates(bootstrap: str, total: int, variants=VARIANTS) -> dict[str, int]:
    """{variant: sustained events/s} over the input topics already published."""
    return {variant: round(variant_rate(bootstrap, total, variant)) for variant in variants}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variants", nargs="*", default=list(VARIANTS))
    parser.add_argument("--bootstrap", default=os.environ.get("FISCALIZA_KAFKA_BOOTSTRAP", "127.0.0.1:19092"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--total", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--datadir", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        run_child(args.child, args.bootstrap, args.total, args.out, args.datadir)
        return 0
    from streams.admin import group_progress

    total = group_progress(args.bootstrap, "nobody", INPUTS).end
    print(json.dumps({"total": total, "events_per_s": floor_rates(args.bootstrap, total, args.variants)}))
    return 0


if __name__ == "__main__":
    from fiscaliza.process import tune_garbage_collector

    tune_garbage_collector()  # as the command line whose run it times
    sys.exit(main())
