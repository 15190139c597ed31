"""`fiscaliza simulate`: write tachograph and catraca JSON Lines for a feed and dates."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import numpy as np

from gtfs.model import Feed
from gtfs.projection import Projector
from gtfs.schedule import frequency_windows, service_dates, service_day_start
from kernel.errors import FiscalizaError
from kernel.fleet import Vehicle
from simulator.faults import (
    DOOR_FAULTS,
    FAULTS,
    INPUT_FAULTS,
    LAW_FAULTS,
    Injection,
    corrupt_lines,
    inject,
    interrupt,
)
from simulator.input_faults import UNIT_FAULTS, stray_minutes
from simulator.input_faults import apply as apply_unit_faults
from simulator.motion import LateralOffset, legs_of, positions, progress_at, progress_turned, pushed_aside
from simulator.plan import Duty, PlanError, plan_day

DEADHEAD_OFFSET_M = 300.0


class SimulationError(FiscalizaError, ValueError):
    """The simulation cannot be made as asked; the message says why."""


@dataclass(frozen=True)
class SimulationSettings:
    start: dt.date
    end: dt.date
    seed: int = 1
    faults: tuple[str, ...] = ()
    input_faults: tuple[str, ...] = ()
    ping_interval_s: int = 10
    gps_noise_m: float = 3.0
    catraca_interval_s: int = 60
    pre_trip_s: int = 600
    post_trip_s: int = 300
    # Door sensors: every ping reports `doors_open` (standing at a stop or a terminal:
    # open; moving: shut). Off, the pings carry no such key, as a fleet without sensors.
    doors: bool = False
    # Receipts: every message carries `received_at`, when the AVL platform received it (its
    # true time + RECEIPT_DELAY_S), stamped before any input fault: a unit's clock fault then
    # shows against it (engine.clocks). Off, no message carries the key.
    receipts: bool = False


RECEIPT_DELAY_S = 2.0


@dataclass
class SimulationResult:
    tachograph: Path
    catraca: Path
    manifest: Path
    pings: int = 0
    catraca_readings: int = 0
    runs: int = 0
    dates: list[dt.date] = field(default_factory=list)
    injected: list[dict] = field(default_factory=list)


def simulate(feed: Feed, fleet: dict[str, Vehicle], settings: SimulationSettings, out: Path,
             progress=None) -> SimulationResult:
    unknown = [f for f in settings.faults if f not in FAULTS and f not in LAW_FAULTS] + [
        f for f in settings.input_faults if f not in INPUT_FAULTS]
    if unknown:
        raise SimulationError(f"unknown fault(s): {', '.join(unknown)}")
    if settings.end < settings.start:
        raise SimulationError("the end date is before the start date")
    needs_doors = [f for f in settings.faults if f in DOOR_FAULTS]
    if needs_doors and not settings.doors:
        # refused, not implied: without door sensors the fault's stop is there but nothing
        # tells it, and a fault meant to be found would silently be a no-op
        raise SimulationError(f"fault(s) {', '.join(needs_doors)} need the door sensors (doors on, --doors)")
    dates = service_dates(feed, settings.start, settings.end)
    if not dates:
        raise SimulationError(f"the feed has no service between {settings.start} and {settings.end}")
    rng = np.random.default_rng(settings.seed)
    projector = Projector(feed.epsg)
    tz = feed.timezone
    ping_rows: list[tuple[float, str, bytes]] = []
    catraca_rows: list[tuple[float, str, bytes]] = []
    manifest: list[dict] = []
    runs = 0
    interrupted = None  # line_interruption: (its manifest entry, the line), from the first day on
    first_duties: list[Duty] = []  # the first day's, faults applied: where the unit faults are put
    for n, date in enumerate(dates):
        skip = _shortfall(feed, date, rng) if n == 0 and "frequency_shortfall" in settings.faults else {}
        try:
            duties = plan_day(feed, date, fleet, skip_departures=frozenset(skip))
        except PlanError as exc:
            raise SimulationError(f"{date}: {exc}") from None
        if skip:
            manifest.extend(skip.values())
        injection = Injection()
        if n == 0:
            kinds = [f for f in settings.faults if f != "frequency_shortfall"]
            if "gps_gap" in settings.input_faults:
                kinds.append("gps_gap")
            duties, injection = inject(kinds, duties, rng, feed.shapes, feed=feed, fleet=fleet,
                                       day_start=service_day_start(date, tz).timestamp(), tz=tz)
            manifest.extend(injection.manifest)
            first_duties = duties
            if injection.interrupted is not None:
                interrupted = (next(f for f in injection.manifest if f["fault"] == "line_interruption"),
                               injection.interrupted[0])
        elif interrupted is not None:  # the line still runs nothing
            duties, parked = interrupt(duties, interrupted[1], -np.inf)
            interrupted[0]["parked_runs"][date.isoformat()] = parked
        for duty in duties:
            runs += sum(not run.idle for run in duty.runs)  # a run standing still is not run
            ping_rows.extend(_tachograph(duty, feed, projector, settings, injection, rng, tz))
            catraca_rows.extend(_catraca(duty, settings, injection, rng, tz))
        if progress:
            progress(n + 1, len(dates))
    ping_rows.sort(key=lambda r: (r[0], r[1]))
    catraca_rows.sort(key=lambda r: (r[0], r[1]))
    if settings.receipts:
        ping_rows, catraca_rows = _with_receipts(ping_rows, tz), _with_receipts(catraca_rows, tz)
    unit_faults = set(settings.input_faults) & set(UNIT_FAULTS)
    if unit_faults:
        ping_rows, catraca_rows, unit_manifest = apply_unit_faults(
            unit_faults, ping_rows, catraca_rows, first_duties, manifest, rng, projector, tz)
        manifest.extend(unit_manifest)
    if "stray_minutes" in settings.input_faults:
        later = service_dates(feed, settings.end + dt.timedelta(days=1), settings.end + dt.timedelta(days=31))
        if later:
            stray, entry = stray_minutes(feed, fleet, later[0], rng, projector,
                                                      interval_s=settings.ping_interval_s,
                                                      noise_m=settings.gps_noise_m)
            ping_rows.extend(stray)  # after the range: at the end of the file, in event-time order
            manifest.append(entry)
    ping_lines, input_manifest = corrupt_lines([r[2] for r in ping_rows], set(settings.input_faults), rng)
    catraca_lines = [r[2] for r in catraca_rows]
    manifest.extend(input_manifest)

    out.mkdir(parents=True, exist_ok=True)
    result = SimulationResult(out / "tachograph.jsonl", out / "catraca.jsonl", out / "manifest.json",
                              pings=len(ping_rows), catraca_readings=len(catraca_rows), runs=runs,
                              dates=dates, injected=manifest)
    result.tachograph.write_bytes(b"\n".join(ping_lines) + b"\n")
    result.catraca.write_bytes(b"\n".join(catraca_lines) + b"\n")
    result.manifest.write_text(json.dumps({
        "seed": settings.seed, "start": settings.start.isoformat(), "end": settings.end.isoformat(),
        "ping_interval_s": settings.ping_interval_s, "gps_noise_m": settings.gps_noise_m,
        **({"doors": True} if settings.doors else {}),
        "faults": manifest}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return result


def _with_receipts(rows: list, tz) -> list:
    """Each row's message with its receipt, `received_at` (rows are (t, vehicle, line))."""
    return [(t, vehicle, _encoder.encode({**msgspec.json.decode(line), "received_at": _iso(t + RECEIPT_DELAY_S, tz)}))
            for t, vehicle, line in rows]


def _shortfall(feed: Feed, date: dt.date, rng) -> dict:
    windows = frequency_windows(feed, date)
    if not windows:
        return {}
    window = windows[int(rng.integers(len(windows)))]
    departures = list(range(window.start_s, window.end_s, window.headway_s))
    departure = departures[int(rng.integers(len(departures)))]
    epoch = service_day_start(date, feed.timezone).timestamp() + departure
    return {(window.trip_id, epoch): {
        "fault": "frequency_shortfall", "route_id": window.route_id, "direction_id": window.direction_id,
        "trip_id": window.trip_id, "service_date": date.isoformat(), "window_start_s": window.start_s,
        "window_end_s": window.end_s, "headway_s": window.headway_s, "skipped_departure": epoch}}


_encoder = msgspec.json.Encoder()


def _iso(t: float, tz) -> str:
    return dt.datetime.fromtimestamp(t, tz).isoformat(timespec="seconds")


def _tachograph(duty: Duty, feed: Feed, projector: Projector, settings: SimulationSettings,
                injection: Injection, rng, tz):
    runs = duty.runs
    if not runs:
        return []
    start = runs[0].departure - settings.pre_trip_s
    end = _end(duty, settings, injection)
    interval = settings.ping_interval_s
    t = np.arange(start + int(rng.integers(interval)), end, interval, dtype=float)
    x, y = np.empty(len(t)), np.empty(len(t))
    speed = np.zeros(len(t))
    route = np.empty(len(t), dtype=object)
    shut = np.zeros(len(t), bool)  # standing, but not where passengers board (doors)
    # Standing at the terminal before, between and after runs.
    departures = np.array([r.departure for r in runs])
    current = np.clip(np.searchsorted(departures, t, side="right") - 1, 0, len(runs) - 1)
    for i, run in enumerate(runs):
        mine = current == i
        turn = injection.turn_backs.get((duty.vehicle_id, i))
        arrival = run.arrival if turn is None else turn.back_at  # turned back: back at its origin
        before = mine & (t < run.departure)  # only before the first run
        moving = mine & (t >= run.departure) & (t <= arrival)
        after = mine & (t > arrival)
        origin, destination = feed.stops[run.origin].point, feed.stops[run.destination].point
        if turn is not None:
            destination = origin
        x[before], y[before] = origin.x, origin.y
        x[after], y[after] = destination.x, destination.y
        route[before | moving] = None if run.deadhead else run.route_id
        next_route = runs[i + 1].route_id if i + 1 < len(runs) and not runs[i + 1].idle else None
        route[after] = next_route
        if moving.any() and run.idle:  # standing where it is, powered on, out of service
            x[moving], y[moving] = origin.x, origin.y
        elif moving.any():
            legs = legs_of(run.stops, injection.fast.get((duty.vehicle_id, i)))
            progress, v = progress_at(legs, t[moving]) if turn is None else progress_turned(legs, t[moving], turn)
            line = feed.shapes[run.shape_id].line
            offsets = injection.offsets.get((duty.vehicle_id, i), ())
            if run.deadhead:  # by other streets, well away from the itinerary
                offsets = (LateralOffset(0.0, line.length, DEADHEAD_OFFSET_M, DEADHEAD_OFFSET_M),)
            x[moving], y[moving] = positions(line, progress, offsets)
            speed[moving] = v * 3.6
            shut[moving] = run.deadhead or pushed_aside(progress, offsets)
    steps = np.hypot(np.diff(x, prepend=x[0]), np.diff(y, prepend=y[0]))
    odometer = 10_000 + np.cumsum(steps) / 1000
    gap = injection.gps_gaps.get(duty.vehicle_id)
    keep = np.ones(len(t), bool) if gap is None else ~((t >= gap[0]) & (t < gap[1]))
    x = x + rng.normal(0, settings.gps_noise_m, len(x))
    y = y + rng.normal(0, settings.gps_noise_m, len(y))
    lon, lat = projector.to_lonlat(x, y)
    rows = []
    for k in np.flatnonzero(keep):
        record = {
            "vehicle_id": duty.vehicle_id, "ts": _iso(t[k], tz), "lat": round(float(lat[k]), 7),
            "lon": round(float(lon[k]), 7), "speed_kmh": round(float(speed[k]), 1),
            "odometer_km": round(float(odometer[k]), 3), "route_id": route[k], "seq": int(k),
        }
        if settings.doors:  # open while standing at a stop or a terminal, shut while moving
            record["doors_open"] = bool(speed[k] == 0 and not shut[k])
        rows.append((float(t[k]), duty.vehicle_id, _encoder.encode(record)))
    return rows


def _end(duty: Duty, settings: SimulationSettings, injection: Injection) -> float:
    """When a vehicle's telemetry ends: some time after its last run, or after it got back
    from a run turned back (which may take longer than the run was to)."""
    end = duty.runs[-1].arrival
    turn = injection.turn_backs.get((duty.vehicle_id, len(duty.runs) - 1))
    return (end if turn is None else max(end, turn.back_at)) + settings.post_trip_s


def _catraca(duty: Duty, settings: SimulationSettings, injection: Injection, rng, tz):
    runs = duty.runs
    if not runs:
        return []
    start = runs[0].departure - settings.pre_trip_s
    end = _end(duty, settings, injection)
    t = np.arange(start + int(rng.integers(settings.catraca_interval_s)), end, settings.catraca_interval_s,
                  dtype=float)
    in_run = np.zeros(len(t), bool)
    for i, run in enumerate(runs):
        if not run.deadhead:
            turn = injection.turn_backs.get((duty.vehicle_id, i))  # counting on the way back too
            in_run |= (t >= run.departure) & (t <= (run.arrival if turn is None else turn.back_at))
    counter = 5_000 + np.cumsum(np.where(in_run, rng.poisson(1.0, len(t)), 0))
    silent = injection.catraca_silent.get(duty.vehicle_id)
    broken = injection.seal_broken_from.get(duty.vehicle_id, np.inf)
    rows = []
    for k in range(len(t)):
        if silent and silent[0] <= t[k] < silent[1]:
            continue
        record = {"vehicle_id": duty.vehicle_id, "ts": _iso(t[k], tz), "counter": int(counter[k]),
                  "seal_intact": bool(t[k] < broken), "status": "ok", "seq": k}
        rows.append((float(t[k]), duty.vehicle_id, _encoder.encode(record)))
    return rows
