"""The city-scale benchmark (#16, #31): one run, each figure next to its baseline.

    python -m benchmarks [--vehicles 150] [--city-vehicles 1500] [--seed 1] [--work DIR]
                         [--bootstrap HOST:PORT] [--skip-whole-peak | --whole-peak-limit N]

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

4. Windows of the day (#31), CPU time per call counted apart, the engine state warmed
   by the day before them (`benchmarks.replay_run --window`): on the `--vehicles`
   network 06:50–07:05 and 08:45–09:00 at about one second of the fleet per call (the
   time of day); 07:00–07:10 at the replay's batch and 07:10–07:20 at one second of the
   fleet per call (the fleet), these two on the `--city-vehicles` network too.
5. The `--city-vehicles` network's whole peak replayed, wall and CPU time, against
   decode-only CPU (`--whole-peak-limit` stops it early: the fraction and a linear
   extrapolation are recorded, marked as such).
6. With the broker, `vehicle-status` wall latency at x1 (`--status-minutes` of the
   network from 07:00, one worker: `benchmarks.live_pace`).

Prints one table and writes `benchmarks/results.json` (the shape #16 fixes, and #31's
targets table under `targets`, `benchmarks.targets`); sections this run did not write
are kept. Figures are only comparable within one run: the ratios are the measure, not
the absolute rates, and CPU time (which a shared machine disturbs least) rather than wall.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks import live_pace
from benchmarks.density import near_pairs_per_fix
from benchmarks.targets import table as targets_table
from benchmarks.targets import targets

HERE = Path(__file__).resolve().parent
BATCH = 2000  # fiscaliza.replay.BATCH: the replay's messages per engine call
# the network's morning is 06:50-09:05, its fleet all out by 07:00; one replay takes its
# windows in turn, so they do not overlap (and the fleet's are early: the 1,500-vehicle
# network's replay up to them is the warm-up)
EARLY, LATE, PEAK, LIVE_PEAK = "06:50-07:05", "08:45-09:00", "07:00-07:10", "07:10-07:20"


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


def _files(work: Path) -> list[str]:
    return [str(work / "telemetry" / "tachograph.jsonl"), str(work / "telemetry" / "catraca.jsonl")]


def _cpu_ms(run: dict) -> float:
    return round(1000 * run["cpu_seconds"] / run["events"], 4)


def live_batch(events: int, span_s: float) -> int:
    """About one second of the fleet's telemetry: what a live take brings."""
    return max(1, round(events / max(span_s, 1.0)))


def window_figures(measured: list[dict], roles: list[str]) -> dict:
    """`replay_run`'s windows by role (early, late, peak_replay, peak_live), with their CPU
    time per event taken, and per message released (the watermark passed it in the window:
    the legal path's share of the cost is paid then, the allowed lateness after it came)."""
    return {role: {**window, "cpu_seconds": round(window["cpu_seconds"], 3),
                   "cpu_ms_per_event": _cpu_ms(window) if window["events"] else None,
                   "cpu_ms_per_released": round(1000 * window["cpu_seconds"] / window["released"], 4)
                   if window.get("released") else None}
            for role, window in zip(roles, measured)}


def windows_run(work: Path, windows: dict[str, str]) -> dict:
    """One replay up to the last window's end, each window at its own batch."""
    args = [a for window in windows.values() for a in ("--window", window)]
    run = _child(str(work / "feed"), str(work / "fleet.csv"), *_files(work), str(BATCH), *args, "--stop-after-windows")
    return window_figures(run["windows"], list(windows))


def replay_figures(work: Path, vehicles: int, live: bool = True) -> tuple[dict, dict, dict]:
    files = _files(work)
    decoded = _child("--decode-only", *files)
    replayed = _child(str(work / "feed"), str(work / "fleet.csv"), *files, str(BATCH))
    rate, decode_rate = replayed["events"] / replayed["seconds"], decoded["events"] / decoded["seconds"]
    sizes = replayed["state_sizes"] or [0]
    replay = {"events": replayed["events"], "events_per_s": round(rate), "decode_events_per_s": round(decode_rate),
              "ratio_to_decode": round(rate / decode_rate, 4), "peak_rss_mb": round(replayed["peak_rss_mb"], 1),
              "batch": BATCH, "cpu_seconds": round(replayed["cpu_seconds"], 2), "cpu_ms_per_event": _cpu_ms(replayed),
              "decode_cpu_seconds": round(decoded["cpu_seconds"], 3), "decode_cpu_ms_per_event": _cpu_ms(decoded),
              "ratio_to_decode_cpu": round(decoded["cpu_seconds"] / decoded["events"]
                                           / (replayed["cpu_seconds"] / replayed["events"]), 4)}
    state = {"max_bytes_per_vehicle": max(sizes), "median_bytes_per_vehicle": round(statistics.median(sizes))}
    if live:
        replay["live"] = live_granularity(work, files, replayed, vehicles)
    batch = live_batch(decoded["events"], decoded["event_span_s"])
    windows = windows_run(work, {"early": f"{EARLY}@{batch}", "peak_replay": f"{PEAK}@{BATCH}",
                                 "peak_live": f"{LIVE_PEAK}@{batch}", "late": f"{LATE}@{batch}"})
    return replay, state, windows


def city_windows(work: Path) -> dict:
    """The large network's fleet windows, as `replay_figures` takes the small one's."""
    decoded = _child("--decode-only", *_files(work))
    batch = live_batch(decoded["events"], decoded["event_span_s"])
    return windows_run(work, {"peak_replay": f"{PEAK}@{BATCH}", "peak_live": f"{LIVE_PEAK}@{batch}"})


def whole_peak_figures(peak: dict, decoded: dict, source: str = "") -> dict:
    """The whole peak replayed (or the part of it a limit let run, extrapolated linearly
    and marked so) against decode-only CPU over the same files."""
    complete = bool(peak.get("complete"))
    fraction = peak["events"] / decoded["events"]
    figures = {"complete": complete, "events": peak["events"], "fraction": round(fraction, 4),
               "batch": peak.get("batch", BATCH), "seconds": round(peak["seconds"], 1),
               "cpu_seconds": round(peak["cpu_seconds"], 1), "cpu_ms_per_event": _cpu_ms(peak),
               "ratio_to_decode_cpu": round(decoded["cpu_seconds"] / decoded["events"]
                                            / (peak["cpu_seconds"] / peak["events"]), 4),
               "peak_rss_mb": round(peak["peak_rss_mb"], 1) if "peak_rss_mb" in peak else None}
    if not complete:
        figures |= {"extrapolated_seconds": round(peak["seconds"] / fraction),
                    "extrapolated_cpu_seconds": round(peak["cpu_seconds"] / fraction)}
    if source:
        figures["source"] = source
    return figures


def city_figures(work: Path, summary: dict, vehicles: int, whole_peak: bool, limit: int | None,
                 peak_result: Path | None) -> dict:
    """The large network: decode-only CPU and its whole peak replayed (the windows are
    `city_windows`)."""
    files = _files(work)
    decoded = _child("--decode-only", *files)
    batch = live_batch(decoded["events"], decoded["event_span_s"])
    city = {"vehicles": vehicles, "network": summary, "events": decoded["events"], "live_batch": batch,
            "decode_cpu_seconds": round(decoded["cpu_seconds"], 2), "decode_cpu_ms_per_event": _cpu_ms(decoded)}
    peak, source = None, ""
    if peak_result is not None:
        # the child's output (or the progress lines of one stopped early), from a separate process
        lines = [json.loads(line) for line in peak_result.read_text().splitlines() if line.startswith("{")]
        peak, source = lines[-1], f" (measured in a separate process: {peak_result})"
    elif whole_peak:
        peak = _child(str(work / "feed"), str(work / "fleet.csv"), *files, str(BATCH), *([str(limit)] if limit else []))
    city["whole_peak"] = whole_peak_figures(peak, decoded, source) if peak else {"skipped": "--skip-whole-peak"}
    return city


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


def attempt(section):
    """A section's figures, or {"skipped": why} when it failed."""
    try:
        return section()
    except (Exception, SystemExit) as failure:  # live_pace stops with SystemExit when the worker falls behind
        print(f"section failed: {failure!r}", file=sys.stderr, flush=True)
        return {"skipped": f"failed: {failure}"}


def wait_for(path: Path, seconds: float) -> None:
    import time

    deadline = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(5)


def status_figures(work: Path, bootstrap: str, minutes: float) -> dict:
    """`vehicle-status` wall latency of one worker fed `minutes` of the network from 07:00
    at x1, as buses send it (the worker starts there: no day before it)."""
    from zoneinfo import ZoneInfo

    from benchmarks.metro import SERVICE_DATE

    tz = ZoneInfo("America/Sao_Paulo")  # metro.py's feed

    start = dt.datetime.combine(SERVICE_DATE, dt.time.fromisoformat(PEAK.split("-")[0]), tz)
    end = start + dt.timedelta(minutes=minutes)
    run = live_pace.measure(work, bootstrap, 1.0, start=start.timestamp(), end=end.timestamp())
    return {"pace": 1.0, "window": f"{start:%H:%M}-{end:%H:%M}", "events": run["events"],
            "published_s": run["published_s"], "effective_pace": run["effective_pace"],
            "vehicle_status": run["vehicle_status"]}


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
    parser.add_argument("--city-vehicles", type=int, default=1500,
                        help="the second network, for the fleet ratio and the whole peak (0: none)")
    parser.add_argument("--city-work", type=Path, help="where the second network is kept")
    peak = parser.add_mutually_exclusive_group()
    peak.add_argument("--skip-whole-peak", action="store_true", help="a quick run: the city's whole peak not replayed")
    peak.add_argument("--whole-peak-limit", type=int, help="replay only the first N messages of the city's peak")
    peak.add_argument("--whole-peak-result", type=Path,
                      help="the city's whole peak as a separate `benchmarks.replay_run` process gave it "
                           "(its output, progress lines included: a run stopped early counts as a fraction)")
    parser.add_argument("--whole-peak-wait", type=float, default=0.0,
                        help="seconds to wait for --whole-peak-result to appear")
    parser.add_argument("--status-minutes", type=float, default=5.0,
                        help="minutes of the network published at x1 for the vehicle-status latency (0: none)")
    args = parser.parse_args(argv)
    work = args.work or Path(f"/tmp/fiscaliza-bench-{args.vehicles}-{args.seed}")
    work, summary = network(work, args.vehicles, args.seed)
    print(f"network: {summary}", flush=True)
    replay, state, small_windows = replay_figures(work, sum(summary["vehicles"].values()), not args.no_live_replay)
    windows = {str(args.vehicles): small_windows | {"density": near_pairs_per_fix(work)}}
    if args.city_vehicles:
        city_work = args.city_work or Path(f"/tmp/fiscaliza-bench-{args.city_vehicles}-{args.seed}")
        city_work, city_summary = network(city_work, args.city_vehicles, args.seed)
        print(f"city network: {city_summary}", flush=True)
        windows[str(args.city_vehicles)] = city_windows(city_work) | {"density": near_pairs_per_fix(city_work)}
    worker: dict = {}
    if broker_answers(args.bootstrap):
        # each broker section on its own: one that fails (a worker behind a loaded machine's
        # pace) is recorded as not measured, and the others still are
        worker = attempt(lambda: worker_figures(work, args.bootstrap))
        if "skipped" not in worker:
            worker, changelog = worker
            state.update(changelog)
        latency = attempt(lambda: live_pace.measure(work, args.bootstrap, args.pace))
        if "skipped" not in latency:
            state["changelog_bytes_per_event_live"] = latency.pop("changelog_bytes_per_event_live")
        status = (attempt(lambda: status_figures(work, args.bootstrap, args.status_minutes)) if args.status_minutes
                  else {"skipped": "--status-minutes 0"})
    else:
        worker = {"skipped": f"no broker at {args.bootstrap} (scripts/kafka start)"}
        latency = {"skipped": worker["skipped"]}
        status = {"skipped": worker["skipped"]}
    city: dict = {"skipped": "--city-vehicles 0"}
    if args.city_vehicles:  # last: a whole peak measured apart has the most time to finish
        if args.whole_peak_result is not None:
            wait_for(args.whole_peak_result, args.whole_peak_wait)
        city = city_figures(city_work, city_summary, args.city_vehicles, not args.skip_whole_peak,
                            args.whole_peak_limit, args.whole_peak_result)
    fresh = {"vehicles": args.vehicles, "network": summary, "replay": replay, "windows": windows, "city": city,
             "worker": worker, "state": state, "latency": latency, "status_x1": status,
             "machine": machine(), "commit": commit(), "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
    fresh["targets"] = targets(fresh)
    # sections this run does not write (a before/after of one change, kept by hand) stay
    results = (json.loads(args.out.read_text()) if args.out.exists() else {}) | fresh
    print(table(results))
    if "d11_target" in latency:
        print(latency["d11_target"])
    print(targets_table(results["targets"]))
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
