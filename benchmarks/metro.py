"""A metropolitan network for the city-scale benchmark (development-time code, #16).

    python -m benchmarks.metro --out /tmp/metro [--vehicles 1500] [--seed 1]

Writes a GTFS feed and a fleet list of a fictional São Paulo-sized network, then the
simulator's telemetry of its morning peak. Everything is generated, deterministic for a
seed, and sized by `--vehicles` (about 15 per route, so 1,500 vehicles give 100 routes):

* a street grid of arterials every `GRID_M` metres around the centre of São Paulo
  (SIRGAS 2000 / UTM 23S); each route is a monotone staircase along arterials from one
  terminal to the other, so it has one to four right-angle corners (rounded with a
  `CORNER_RADIUS_M` arc, as a bus turns) and shares corridors with the routes that use
  the same arterials, and it never comes back near itself;
* three operators, routes dealt in turn; half the routes timetabled with explicit blocks
  (trips.txt + stop_times.txt), half headway-based (frequencies.txt, exact_times=0);
* a peak: departures from 07:00 so that every trip ends by 09:00, pings every 10 s;
* the simulator's detector faults at a rate per run (`FAULTS_PER_1000_RUNS`) and its
  input faults (malformed lines, 1 % duplicates, 2 % out of order, a GPS gap).

The fleet lists exactly the vehicles the schedule needs (the simulator's own planner
counts them), with plates and capacities.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import shapely
from pyproj import Transformer
from shapely import LineString

CENTRE_LAT, CENTRE_LON = -23.5505, -46.6333  # Praça da Sé
METRIC_EPSG = 31983  # SIRGAS 2000 / UTM zone 23S
GRID_M = 800.0  # arterial spacing
CITY_HALF_SIZE_M = 12_000.0  # the grid spans 24 km x 24 km
# trunk avenues, in grid steps from the centre (both axes), and how much likelier a route
# turns onto one than onto any other arterial
TRUNK_ARTERIALS = (-6, -3, 0, 3, 6)
TRUNK_WEIGHT = 25.0
CORNER_RADIUS_M = 15.0
MAX_SHAPE_STEP_M = 40.0
STOP_SPACING_M = 400.0
TIMEPOINT_EVERY = 6  # every 6th stop is a timepoint, and the terminals
AVG_SPEED_KMH = 18.0
LAYOVER_S = 6 * 60
PEAK_START_S, PEAK_END_S = 7 * 3600, 9 * 3600
VEHICLES_PER_ROUTE = 15
SERVICE_DATE = dt.date(2026, 12, 1)  # a Tuesday
OPERATORS = (("MTA", "Metropolitana Transportes"), ("VSU", "Viação Sul Urbana"), ("LNT", "Linhas Norte"))
# Detector faults per 1,000 runs: a plausible day of a large network (a few detours and
# skipped stops, late departures the commonest, seals and catracas rare).
FAULTS_PER_1000_RUNS = {
    "detour": 3, "stop_bypass": 3, "late_departure": 10, "en_route_lateness": 5, "suppressed_trip": 2,
    "broken_seal": 1, "silent_catraca": 2, "speeding": 3, "frequency_shortfall": 1,
}
INPUT_FAULTS = ("malformed", "duplicates", "out_of_order", "gps_gap")

_TO_LONLAT = Transformer.from_crs(f"EPSG:{METRIC_EPSG}", "EPSG:4326", always_xy=True)
_TO_XY = Transformer.from_crs("EPSG:4326", f"EPSG:{METRIC_EPSG}", always_xy=True)
CX, CY = _TO_XY.transform(CENTRE_LON, CENTRE_LAT)  # the grid's coordinates are metres from here


@dataclass(frozen=True)
class Route:
    route_id: str
    operator_id: str
    headway_based: bool
    line: LineString  # direction 0, metres
    origin_name: str
    destination_name: str


def _between(a: float, b: float) -> np.ndarray:
    """Arterials (multiples of GRID_M) strictly between a and b, in the order of travel."""
    low, high = sorted((a, b))
    lines = np.arange(math.floor(low / GRID_M) + 1, math.ceil(high / GRID_M)) * GRID_M
    lines = lines[(lines > low) & (lines < high)]
    return lines if b >= a else lines[::-1]


def _arterials(rng: np.random.Generator, lines: np.ndarray, count: int) -> list[int]:
    """`count` of the arterials `lines` (indices, in the order of travel), trunk avenues
    far likelier: many routes crowd onto the same few corridors, as in a real city."""
    if count == 0:
        return []
    weights = np.where(np.isin(np.round(lines / GRID_M), TRUNK_ARTERIALS), TRUNK_WEIGHT, 1.0)
    return sorted(rng.choice(len(lines), size=count, replace=False, p=weights / weights.sum()).tolist())


def _staircase(rng: np.random.Generator, terminals: list[tuple[float, float]]) -> LineString:
    """A monotone path along arterials between two terminals 6 to 14 km apart (Manhattan).

    Terminal A sits mid-block on a north-south arterial, B mid-block on an east-west one,
    both at least 300 m from every other terminal. The path leaves A northward or
    southward, then alternates east-west and north-south legs on arterials chosen at
    random between the two (up to three steps: three to seven corners, or one for an L),
    and reaches B along its arterial."""
    cells = int(CITY_HALF_SIZE_M // GRID_M)
    while True:
        # half the terminals on a trunk avenue (bus corridors start and end there too)
        ax = (rng.choice(TRUNK_ARTERIALS) if rng.random() < 0.5 else rng.integers(-cells, cells + 1)) * GRID_M
        ay = (rng.integers(-cells, cells) + rng.uniform(0.2, 0.8)) * GRID_M
        bx = (rng.integers(-cells, cells) + rng.uniform(0.2, 0.8)) * GRID_M
        by = (rng.choice(TRUNK_ARTERIALS) if rng.random() < 0.5 else rng.integers(-cells, cells + 1)) * GRID_M
        if not 6_000 <= abs(bx - ax) + abs(by - ay) <= 14_000:
            continue
        if any(math.dist(t, p) < 300 for t in terminals for p in ((ax, ay), (bx, by))):
            continue
        rows, columns = _between(ay, by), _between(ax, bx)
        if len(columns) == 0:
            continue
        break
    terminals += [(ax, ay), (bx, by)]
    steps = int(rng.integers(1 if len(rows) else 0, min(3, len(rows), len(columns)) + 1))
    chosen_rows = _arterials(rng, rows, steps)
    chosen_columns = _arterials(rng, columns, steps)
    path, x = [(ax, ay)], ax
    for r, c in zip(chosen_rows, chosen_columns):
        path += [(x, rows[r]), (columns[c], rows[r])]
        x = columns[c]
    path += [(x, by), (bx, by)]
    return _rounded(path)


def _rounded(path: list[tuple[float, float]]) -> LineString:
    """The path with each corner cut by a quarter arc, densified to short steps."""
    out = [path[0]]
    for before, corner, after in zip(path, path[1:], path[2:]):
        v1 = np.subtract(corner, before) / math.dist(corner, before)
        v2 = np.subtract(after, corner) / math.dist(after, corner)
        if abs(v1[0] * v2[1] - v1[1] * v2[0]) < 1e-9:  # straight on: no corner to round
            out.append(corner)
            continue
        entry = np.asarray(corner) - v1 * CORNER_RADIUS_M
        leave = np.asarray(corner) + v2 * CORNER_RADIUS_M
        for k in range(0, 7):
            s = k / 6
            # a quadratic Bézier through the corner: close to an arc, tangent to both streets
            point = (1 - s) ** 2 * entry + 2 * (1 - s) * s * np.asarray(corner) + s ** 2 * leave
            out.append(tuple(point))
    out.append(path[-1])
    line = shapely.segmentize(LineString(out), MAX_SHAPE_STEP_M)
    return LineString(np.round(np.asarray(line.coords), 2))


def _routes(count: int, rng: np.random.Generator) -> list[Route]:
    terminals: list[tuple[float, float]] = []
    routes = []
    for k in range(count):
        operator = OPERATORS[k % len(OPERATORS)][0]
        line = _staircase(rng, terminals)
        number = f"{k + 1:03d}"
        routes.append(Route(number, operator, headway_based=k % 2 == 1, line=line,
                            origin_name=f"Terminal {number}-A", destination_name=f"Terminal {number}-B"))
    return routes


def _lonlat(x, y):
    lon, lat = _TO_LONLAT.transform(np.asarray(x) + CX, np.asarray(y) + CY)
    return np.round(lon, 7), np.round(lat, 7)


def _hms(seconds: float) -> str:
    h, rem = divmod(int(round(seconds)), 3600)
    m, s = divmod(rem, 60)
    return f"{h:02d}:{m:02d}:{s:02d}"


def _write(path: Path, header: list[str], rows) -> None:
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def _chain(departures: list[tuple[int, int]], running_s: int) -> list[list[tuple[int, int]]]:
    """Blocks for a timetabled route: each departure (direction, time) goes to the vehicle
    standing longest at its terminal, else a new one (as the simulator's planner does)."""
    blocks: list[list[tuple[int, int]]] = []
    for direction, start in sorted(departures, key=lambda d: (d[1], d[0])):
        ready = [(b[-1][1] + running_s, i) for i, b in enumerate(blocks)
                 if b[-1][0] != direction and b[-1][1] + running_s + LAYOVER_S <= start]
        if ready:
            blocks[min(ready)[1]].append((direction, start))
        else:
            blocks.append([(direction, start)])
    return blocks


def write_feed(out: Path, vehicles: int, seed: int) -> dict:
    """The GTFS feed of a network sized for about `vehicles` vehicles, in `out`."""
    rng = np.random.default_rng(seed)
    out.mkdir(parents=True, exist_ok=True)
    routes = _routes(max(3, round(vehicles / VEHICLES_PER_ROUTE)), rng)
    day = SERVICE_DATE.strftime("%Y%m%d")
    _write(out / "agency.txt", ["agency_id", "agency_name", "agency_url", "agency_timezone", "agency_lang"],
           [[a, name, "https://example.org/metro", "America/Sao_Paulo", "pt"] for a, name in OPERATORS])
    _write(out / "calendar.txt", ["service_id", "monday", "tuesday", "wednesday", "thursday", "friday",
                                  "saturday", "sunday", "start_date", "end_date"],
           [["PICO", 1, 1, 1, 1, 1, 0, 0, day, day]])
    _write(out / "routes.txt", ["route_id", "agency_id", "route_short_name", "route_long_name", "route_type"],
           [[r.route_id, r.operator_id, r.route_id, f"{r.origin_name} – {r.destination_name}", 3] for r in routes])
    shape_rows, stop_rows, trip_rows, stop_time_rows, frequency_rows = [], [], [], [], []
    for route in routes:
        lines = {0: route.line, 1: route.line.reverse()}
        length = route.line.length
        running_s = int(math.ceil(length / (AVG_SPEED_KMH / 3.6) / 60) * 60)
        # the headway that keeps VEHICLES_PER_ROUTE busy: a cycle is two runs and two layovers
        headway_s = max(120, int(round(2 * (running_s + LAYOVER_S) / VEHICLES_PER_ROUTE / 60)) * 60)
        count = max(2, round(length / STOP_SPACING_M) + 1)
        stop_at = np.linspace(0.0, length, count)
        stop_ids_of: dict[int, list[str]] = {}
        for direction, line in lines.items():
            shape_id = f"{route.route_id}-{direction}"
            x, y = np.asarray(line.coords).T
            lon, lat = _lonlat(x, y)
            travelled = np.concatenate(([0.0], np.cumsum(np.hypot(np.diff(x), np.diff(y)))))
            shape_rows += [[shape_id, la, lo, i + 1, f"{d:.2f}"] for i, (lo, la, d) in
                           enumerate(zip(lon, lat, travelled))]
            points = shapely.line_interpolate_point(line, stop_at)
            sx, sy = shapely.get_x(points), shapely.get_y(points)
            slon, slat = _lonlat(sx, sy)
            stop_ids = []
            for k, (lo, la) in enumerate(zip(slon, slat)):
                if k == 0 or k == count - 1:  # terminals are shared by both directions
                    end = "A" if (k == 0) == (direction == 0) else "B"
                    stop_id = f"T{route.route_id}{end}"
                    if direction == 0:
                        stop_rows.append([stop_id, f"Terminal {route.route_id}-{end}", la, lo])
                else:
                    stop_id = f"{route.route_id}-{direction}-{k:02d}"
                    stop_rows.append([stop_id, f"Parada {route.route_id}.{direction}.{k:02d}", la, lo])
                stop_ids.append(stop_id)
            stop_ids_of[direction] = stop_ids
            headsign = route.destination_name if direction == 0 else route.origin_name

            last_departure = PEAK_END_S - running_s
            if route.headway_based:
                trip_id = f"{route.route_id}-{direction}-FREQ"
                trip_rows.append([route.route_id, "PICO", trip_id, headsign, direction, "", shape_id])
                stop_time_rows += _stop_times(trip_id, PEAK_START_S, stop_ids, stop_at, running_s)
                # the window ends where the next departure would be, as real feeds write it (an
                # end one second after the last departure puts that departure at the window's
                # edge, and its terminal exit, seconds later, outside: a D-12 the data made up)
                departures = (last_departure - PEAK_START_S) // headway_s + 1
                frequency_rows.append([trip_id, _hms(PEAK_START_S), _hms(PEAK_START_S + departures * headway_s),
                                       headway_s, 0])
        if not route.headway_based:
            departures = [(d, t) for d in (0, 1) for t in range(PEAK_START_S, PEAK_END_S - running_s + 1, headway_s)]
            for b, block in enumerate(_chain(departures, running_s)):
                for direction, start in block:
                    trip_id = f"{route.route_id}-{direction}-{_hms(start)[:5].replace(':', '')}"
                    headsign = route.destination_name if direction == 0 else route.origin_name
                    trip_rows.append([route.route_id, "PICO", trip_id, headsign, direction,
                                      f"{route.route_id}-B{b:02d}", f"{route.route_id}-{direction}"])
                    stop_time_rows += _stop_times(trip_id, start, stop_ids_of[direction], stop_at, running_s)
    _write(out / "shapes.txt", ["shape_id", "shape_pt_lat", "shape_pt_lon", "shape_pt_sequence",
                                "shape_dist_traveled"], shape_rows)
    _write(out / "stops.txt", ["stop_id", "stop_name", "stop_lat", "stop_lon"], stop_rows)
    _write(out / "trips.txt", ["route_id", "service_id", "trip_id", "trip_headsign", "direction_id", "block_id",
                               "shape_id"], trip_rows)
    _write(out / "stop_times.txt", ["trip_id", "arrival_time", "departure_time", "stop_id", "stop_sequence",
                                    "shape_dist_traveled", "timepoint"], stop_time_rows)
    _write(out / "frequencies.txt", ["trip_id", "start_time", "end_time", "headway_secs", "exact_times"],
           frequency_rows)
    return {"routes": len(routes), "timetabled": sum(not r.headway_based for r in routes),
            "headway_based": sum(r.headway_based for r in routes), "trips": len(trip_rows)}


def _stop_times(trip_id: str, start_s: int, stop_ids: list[str], stop_at: np.ndarray, running_s: int) -> list[list]:
    """A trip's stop_times at a constant average speed; the terminals and every
    TIMEPOINT_EVERY-th stop are timepoints."""
    last = len(stop_ids) - 1
    return [[trip_id, _hms(start_s + offset), _hms(start_s + offset), stop_id, k + 1, f"{d:.2f}",
             1 if k in (0, last) or k % TIMEPOINT_EVERY == 0 else 0]
            for k, (stop_id, d, offset) in enumerate(zip(stop_ids, stop_at, stop_at / stop_at[-1] * running_s))]


def write_fleet(feed_dir: Path, path: Path) -> dict[str, int]:
    """The vehicles the peak needs, per operator, as the simulator's planner assigns them."""
    from gtfs import load_feed
    from kernel.fleet import Vehicle, load_fleet
    from simulator.plan import plan_day

    feed = load_feed(feed_dir)
    # a fleet far larger than needed, so the planner takes what the schedule asks for
    spare = {f"{a}-{n:05d}": Vehicle(f"{a}-{n:05d}", "", a, 80) for a, _ in OPERATORS for n in range(10_000)}
    used = sorted({duty.vehicle_id for duty in plan_day(feed, SERVICE_DATE, spare)})
    rng = np.random.default_rng(len(used))
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    rows = []
    for vehicle_id in used:
        plate = "".join(rng.choice(list(letters), 3)) + str(rng.integers(0, 10)) + rng.choice(list(letters)) + \
            f"{rng.integers(0, 100):02d}"
        rows.append([vehicle_id, plate, vehicle_id.split("-")[0], int(rng.choice([40, 60, 80, 110]))])
    _write(path, ["vehicle_id", "plate", "operator_id", "capacity"], rows)
    load_fleet(path, operators={a for a, _ in OPERATORS})  # the contract's own check
    return {a: sum(r[2] == a for r in rows) for a, _ in OPERATORS}


def fault_list(runs: int) -> tuple[str, ...]:
    """Detector faults for a day of `runs` runs, at FAULTS_PER_1000_RUNS (at least one each)."""
    return tuple(kind for kind, rate in FAULTS_PER_1000_RUNS.items()
                 for _ in range(1 if kind == "frequency_shortfall" else max(1, round(rate * runs / 1000))))


def build(out: Path, vehicles: int, seed: int, progress=None) -> dict:
    """Feed, fleet and simulated peak telemetry in `out` (feed/, fleet.csv, telemetry/)."""
    from gtfs import load_feed
    from kernel.fleet import load_fleet
    from simulator import SimulationSettings, simulate
    from simulator.plan import plan_day

    summary = write_feed(out / "feed", vehicles, seed)
    summary["vehicles"] = write_fleet(out / "feed", out / "fleet.csv")
    feed = load_feed(out / "feed")
    fleet = load_fleet(out / "fleet.csv", operators=set(feed.agencies))
    runs = sum(len(d.runs) for d in plan_day(feed, SERVICE_DATE, fleet))
    settings = SimulationSettings(SERVICE_DATE, SERVICE_DATE, seed, fault_list(runs), INPUT_FAULTS)
    result = simulate(feed, fleet, settings, out / "telemetry", progress=progress)
    summary.update(runs=result.runs, pings=result.pings, catraca_readings=result.catraca_readings,
                   faults=len(result.injected))
    return summary


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--vehicles", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    summary = build(args.out, args.vehicles, args.seed)
    print(", ".join(f"{k}: {v}" for k, v in summary.items()), file=sys.stdout)


if __name__ == "__main__":
    main()
