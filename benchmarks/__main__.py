"""The city-scale benchmark (#16): one run, each figure next to its baseline.

    python -m benchmarks [--vehicles 150] [--seed 1] [--work DIR] [--bootstrap HOST:PORT]

1. Builds (or reuses, in `--work`) the metropolitan network of `benchmarks.metro` and
   its simulated morning peak.
2. Replay: events/s through the whole core (`benchmarks.replay_run`, a child process)
   against a decode-only pass over the same files; the replay's peak RSS; the vehicle
   states' packed sizes (largest and median), sampled during the replay.
3. Worker, when a broker answers at `--bootstrap`: events/s of one `fiscaliza worker`
   against a raw aiokafka consume + decode over the same topics and against a trivial
   Faust agent's (`benchmarks.faust_floor`: Faust's own ceiling), then of two workers on
   four partitions; the vehicles changelog's bytes per input event. Then latency per
   code and the changelog's bytes per event at the recorded pace x`--pace`
   (`benchmarks.live_pace`).

Prints one table and writes `benchmarks/results.json` (the shape #16 fixes). Figures are
only comparable within one run: the ratios are the measure, not the absolute rates.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks import live_pace

HERE = Path(__file__).resolve().parent


def _child(*args: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "benchmarks.replay_run", *args], check=True,
                          capture_output=True, text=True, cwd=HERE.parent)
    return json.loads(done.stdout.strip().splitlines()[-1])


def network(work: Path, vehicles: int, seed: int) -> tuple[Path, dict]:
    from benchmarks import metro

    import hashlib
    import shutil

    # reused only if built by this very generator: a changed generator builds anew
    generator = hashlib.sha256(Path(metro.__file__).read_bytes()).hexdigest()[:16]
    summary_path = work / "summary.json"
    if summary_path.exists():
        summary = json.loads(summary_path.read_text())
        if summary.get("generator") == generator:
            return work, summary
        shutil.rmtree(work)
    summary = metro.build(work, vehicles, seed) | {"generator": generator}
    summary_path.write_text(json.dumps(summary))
    return work, summary


def replay_figures(work: Path, vehicles: int, live: bool = True) -> tuple[dict, dict]:
    files = [str(work / "telemetry" / "tachograph.jsonl"), str(work / "telemetry" / "catraca.jsonl")]
    decoded = _child("--decode-only", *files)
    replayed = _child(str(work / "feed"), str(work / "fleet.csv"), *files)
    rate, decode_rate = replayed["events"] / replayed["seconds"], decoded["events"] / decoded["seconds"]
    sizes = replayed["state_sizes"] or [0]
    replay = {"events": replayed["events"], "events_per_s": round(rate), "decode_events_per_s": round(decode_rate),
              "ratio_to_decode": round(rate / decode_rate, 4), "peak_rss_mb": round(replayed["peak_rss_mb"], 1)}
    state = {"max_bytes_per_vehicle": max(sizes), "median_bytes_per_vehicle": round(statistics.median(sizes))}
    if live:
        replay["live"] = live_granularity(work, files, replayed, vehicles)
    return replay, state


def live_granularity(work: Path, files: list[str], replayed: dict, vehicles: int) -> dict:
    """The same replay with about one second of the fleet's telemetry per engine call, as
    the live worker takes it: what one core of the engine carries, in buses sending at
    the network's rate (its CPU time, so a busy machine lowers it less than the wall rate)."""
    batch = max(1, round(replayed["events"] / max(replayed["event_span_s"], 1.0)))
    live = _child(str(work / "feed"), str(work / "fleet.csv"), *files, str(batch))
    events_per_bus_s = live["events"] / vehicles / max(live["event_span_s"], 1.0)
    cpu_per_event = live["cpu_seconds"] / live["events"]
    return {"batch": batch, "events_per_s": round(live["events"] / live["seconds"]),
            "cpu_ms_per_event": round(1000 * cpu_per_event, 3),
            "bus_events_per_s": round(events_per_bus_s, 4),
            "buses_per_core": round(1 / (cpu_per_event * events_per_bus_s))}


def broker_answers(bootstrap: str) -> bool:
    host, _, port = bootstrap.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=2).close()
        return True
    except OSError:
        return False


def worker_figures(work: Path, bootstrap: str) -> tuple[dict, dict]:
    import asyncio

    from benchmarks.faust_floor import floor_rates
    from benchmarks.worker_throughput import INPUTS, baseline, worker_rate
    from streams.admin import create_topics, delete_topics, group_progress, publish, publish_end_of_input

    delete_topics(bootstrap)
    create_topics(bootstrap, 4, 1)
    for topic in INPUTS:
        publish(bootstrap, topic, work / "telemetry" / f"{topic}.jsonl")
    publish_end_of_input(bootstrap)
    total = group_progress(bootstrap, "nobody", INPUTS).end
    raw = asyncio.run(baseline(bootstrap, total))
    floor = floor_rates(bootstrap, total)
    feed_args = ["--feed", str(work / "feed"), "--fleet", str(work / "fleet.csv")]
    one, (records, size) = worker_rate(bootstrap, total, extra_args=feed_args)
    two, _ = worker_rate(bootstrap, total, extra_args=feed_args, workers=2)
    worker = {"events_per_s": round(one), "raw_events_per_s": round(raw), "ratio_to_raw": round(one / raw, 4),
              "two_workers_events_per_s": round(two), "two_workers_ratio": round(two / one, 2),
              "faust_floor_events_per_s": floor, "ratio_to_faust_floor": round(one / max(floor.values()), 4)}
    return worker, {"changelog_bytes_per_event": round(size / total, 1), "changelog_records": records}


def machine() -> dict:
    return {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}


def commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE.parent)
    dirty = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True, cwd=HERE.parent).stdout
    return done.stdout.strip() + ("+changes" if dirty.strip() else "")


def table(results: dict) -> str:
    rows = [("replay events/s", results["replay"]["events_per_s"], "decode only",
             results["replay"]["decode_events_per_s"], results["replay"]["ratio_to_decode"], "≥ 100,000 and ≥ 0.10"),
            ("replay peak RSS (MB)", results["replay"]["peak_rss_mb"], "", "", "", ""),
            *([("replay, 1 s of fleet per call: events/s", results["replay"]["live"]["events_per_s"], "batch",
                results["replay"]["live"]["batch"], "", ""),
               ("  buses one core carries live", results["replay"]["live"]["buses_per_core"], "ms CPU per event",
                results["replay"]["live"]["cpu_ms_per_event"], "", "13,000 buses in all")]
              if "live" in results["replay"] else []),
            ("state per vehicle, largest (B)", results["state"]["max_bytes_per_vehicle"], "", "", "", "≤ 65,536"),
            ("state per vehicle, median (B)", results["state"]["median_bytes_per_vehicle"], "", "", "", "")]
    if "events_per_s" in results["worker"]:
        w = results["worker"]
        best = max(w["faust_floor_events_per_s"].items(), key=lambda item: item[1])
        rows += [("worker events/s", w["events_per_s"], "raw aiokafka", w["raw_events_per_s"], w["ratio_to_raw"],
                  "≥ 20,000 and ≥ 0.15"),
                 ("worker events/s", w["events_per_s"], f"trivial Faust agent (best variant: {best[0]})", best[1],
                  w["ratio_to_faust_floor"], ""),
                 ("2 workers events/s", w["two_workers_events_per_s"], "1 worker", w["events_per_s"],
                  w["two_workers_ratio"], "≥ 1.6"),
                 ("changelog bytes / event", results["state"]["changelog_bytes_per_event"], "", "", "", "≤ 1,024")]
    rows += live_pace.rows(results)
    header = ("measure", "value", "baseline", "baseline value", "ratio", "target")
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(header, widths))]
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)) for row in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vehicles", type=int, default=150, help="about 15 per route; 1500 for the full city")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work", type=Path, help="where the network and its telemetry are kept between runs")
    parser.add_argument("--bootstrap", default=os.environ.get("FISCALIZA_KAFKA_BOOTSTRAP", "127.0.0.1:19092"))
    parser.add_argument("--out", type=Path, default=HERE / "results.json")
    parser.add_argument("--no-live-replay", action="store_true",
                        help="skip the replay at the live worker's granularity (long on the full city)")
    parser.add_argument("--pace", type=float, default=60.0, help="the live section's recorded pace, compressed")
    args = parser.parse_args(argv)
    work = args.work or Path(f"/tmp/fiscaliza-bench-{args.vehicles}-{args.seed}")
    work, summary = network(work, args.vehicles, args.seed)
    print(f"network: {summary}", flush=True)
    replay, state = replay_figures(work, sum(summary["vehicles"].values()), not args.no_live_replay)
    worker: dict = {}
    if broker_answers(args.bootstrap):
        worker, changelog = worker_figures(work, args.bootstrap)
        state.update(changelog)
        latency = live_pace.measure(work, args.bootstrap, args.pace)
        state["changelog_bytes_per_event_live"] = latency.pop("changelog_bytes_per_event_live")
    else:
        worker = {"skipped": f"no broker at {args.bootstrap} (scripts/kafka start)"}
        latency = {"skipped": worker["skipped"]}
    results = {"network": summary, "replay": replay, "worker": worker, "state": state,
               "latency": latency,
               "machine": machine(), "commit": commit()}
    print(table(results))
    if "d11_target" in latency:
        print(latency["d11_target"])
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
