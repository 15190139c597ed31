#!/usr/bin/env python3
"""Build the sample GTFS feeds (fictional networks) and fleet lists of samples/.

    python scripts/build_sample_feed.py                # rewrite every city's feed/ and fleet.csv
    python scripts/build_sample_feed.py --city canarana --check   # one city, then validate it

Cities (their data is scripts/sample_cities.py): joao_neiva, conselheiro_lafaiete,
canarana. Deterministic: the same input always yields byte-identical files. Streets are
drawn as waypoints in metres (east, north) from the town centre in the city's SIRGAS
2000 / UTM zone (João Neiva: lat -19.757, lon -40.386, EPSG:31984), densified to one
shape point every 22-45 m, and converted to WGS 84. Distances (shape_dist_traveled) are
metres in that zone, measured on the coordinates as written (7 decimals), so they agree
with what a consumer projecting the feed to the zone measures.

Only the standard library, pyproj, shapely and holidays are needed to build; the --check
option also uses gtfs-kit.
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

from pyproj import Transformer
from sample_cities import CITIES, City, Leg, RouteDef
from shapely import LineString, Point
from shapely.ops import substring

SAMPLES = Path(__file__).resolve().parents[1] / "samples"  # where the built data lives

COORD_DECIMALS = 7
MAX_SHAPE_STEP = 45.0  # m; waypoint legs are >= 25 m, so every step is 22.5-45 m
MIN_LEG = 25.0
AVG_SPEED_KMH = 17.0  # terminal to terminal, dwell included
TIMEPOINT_DWELL = 20  # s, at the two intermediate timepoints
LAYOVER_MIN = 6  # min, minimum at a terminal between two trips of a block
# The current and the next year, so the demo always finds a recent service day to contest.
START_DATE, END_DATE = "20260101", "20271231"

# --------------------------------------------------------------------------------------
# Geometry
# --------------------------------------------------------------------------------------
class Geo:
    """A city's metric frame: its UTM zone and the centre the waypoints are relative to."""

    def __init__(self, city: City):
        self.epsg = city.epsg
        self.to_metric = Transformer.from_crs("EPSG:4326", f"EPSG:{city.epsg}", always_xy=True)
        self.to_wgs84 = Transformer.from_crs(f"EPSG:{city.epsg}", "EPSG:4326", always_xy=True)
        lat, lon = city.centre
        self.cx, self.cy = self.to_metric.transform(lon, lat)

    def to_lonlat(self, x: float, y: float) -> tuple[float, float]:
        lon, lat = self.to_wgs84.transform(x, y)
        return round(lon, COORD_DECIMALS), round(lat, COORD_DECIMALS)

    def to_xy(self, lon: float, lat: float) -> tuple[float, float]:
        return self.to_metric.transform(lon, lat)


def flatten(path: tuple[tuple[float, float], list[Leg]]) -> tuple[list[tuple[float, float]], list[str]]:
    """Waypoints and the street of each waypoint-to-waypoint leg."""
    start, legs = path
    points, streets = [start], []
    for street, waypoints in legs:
        for p in waypoints:
            points.append(p)
            streets.append(street)
    return points, streets


def reverse_path(points, streets):
    return points[::-1], streets[::-1]


@dataclass
class ShapeGeom:
    shape_id: str
    geo: Geo
    lonlat: list[tuple[float, float]]  # as written to shapes.txt
    xy: list[tuple[float, float]]  # the city's UTM zone, of the written coordinates
    dist: list[float]  # cumulative metres
    street_at: list[tuple[float, float, str]]  # (from_m, to_m, street)
    line: LineString = field(init=False)

    def __post_init__(self):
        self.line = LineString(self.xy)

    @property
    def length(self) -> float:
        return self.dist[-1]

    def street(self, d: float) -> str:
        for lo, hi, name in self.street_at:
            if lo - 1e-6 <= d <= hi + 1e-6:
                return name
        raise ValueError(d)

    def point_at(self, d: float) -> tuple[float, float]:
        """(lon, lat) of the point d metres along the shape, rounded as written."""
        if d <= 0:
            return self.lonlat[0]
        if d >= self.length:
            return self.lonlat[-1]
        p = self.line.interpolate(d)
        return self.geo.to_lonlat(p.x, p.y)


def build_shape(geo: Geo, shape_id: str, points, streets) -> ShapeGeom:
    local = [(geo.cx + e, geo.cy + n) for e, n in points]
    dense: list[tuple[float, float]] = [local[0]]
    dense_street_idx: list[int] = []  # street index of each dense step
    for i, ((x0, y0), (x1, y1)) in enumerate(zip(local, local[1:])):
        leg = math.hypot(x1 - x0, y1 - y0)
        if leg < MIN_LEG:
            raise ValueError(f"{shape_id}: leg {i} is only {leg:.1f} m")
        k = math.ceil(leg / MAX_SHAPE_STEP)
        for j in range(1, k + 1):
            dense.append((x0 + (x1 - x0) * j / k, y0 + (y1 - y0) * j / k))
            dense_street_idx.append(i)
    lonlat = [geo.to_lonlat(x, y) for x, y in dense]
    xy = [geo.to_xy(lon, lat) for lon, lat in lonlat]
    dist = [0.0]
    for (x0, y0), (x1, y1) in zip(xy, xy[1:]):
        dist.append(dist[-1] + math.hypot(x1 - x0, y1 - y0))
    street_at: list[tuple[float, float, str]] = []
    for step, leg_idx in enumerate(dense_street_idx):
        name = streets[leg_idx]
        lo, hi = dist[step], dist[step + 1]
        if street_at and street_at[-1][2] == name:
            street_at[-1] = (street_at[-1][0], hi, name)
        else:
            street_at.append((lo, hi, name))
    return ShapeGeom(shape_id, geo, lonlat, xy, dist, street_at)


def check_shape(shape: ShapeGeom) -> None:
    """Sanity of a shape for linear referencing; raises AssertionError."""
    sid, line = shape.shape_id, shape.line
    steps = [b - a for a, b in zip(shape.dist, shape.dist[1:])]
    assert 20.0 <= min(steps) and max(steps) <= 60.0, (sid, min(steps), max(steps))
    assert line.is_simple, f"{sid} crosses itself"
    first, last = Point(shape.xy[0]), Point(shape.xy[-1])
    assert first.distance(last) >= 1500.0, (sid, first.distance(last))
    centre = Point(shape.geo.cx, shape.geo.cy)
    assert max(Point(p).distance(centre) for p in shape.xy) <= 4000.0, sid
    # No part of the shape comes back near another part (a GPS fix must project
    # unambiguously): points more than 300 m apart along the shape are >= 80 m apart.
    d = 0.0
    while d <= shape.length:
        p = line.interpolate(d)
        for lo, hi in ((0.0, d - 300.0), (d + 300.0, shape.length)):
            if hi - lo > 1.0:
                gap = substring(line, lo, hi).distance(p)
                assert gap >= 80.0, f"{sid}: {d:.0f} m comes within {gap:.0f} m of [{lo:.0f}, {hi:.0f}]"
        d += 10.0


# --------------------------------------------------------------------------------------
# Stops
# --------------------------------------------------------------------------------------
STOP_GAP_RANGE = (350.0, 450.0)


@dataclass
class StopDef:
    stop_id: str
    name: str
    lon: float
    lat: float


@dataclass
class PlacedStop:
    stop: StopDef
    dist: float  # metres along the shape


def outbound_positions(length: float, seed: str) -> list[float]:
    """Stop positions 0..length with jittered gaps in 370-430 m."""
    n = round(length / 400.0)
    rng = random.Random(seed)
    while True:
        gaps = [1.0 + rng.uniform(-0.07, 0.07) for _ in range(n)]
        scale = length / sum(gaps)
        gaps = [g * scale for g in gaps]
        if all(370.0 <= g <= 430.0 for g in gaps):
            break
    pos, acc = [0.0], 0.0
    for g in gaps[:-1]:
        acc += g
        pos.append(round(acc, 2))
    pos.append(length)
    return pos


def inbound_positions(outbound: ShapeGeom, out_pos: list[float], inbound: ShapeGeom) -> tuple[list[float], dict[int, int]]:
    """Inbound stops paired with the outbound ones where the streets are shared.

    A paired stop is put 20 m further along (or before, to keep the gap in range)
    the inbound shape than its outbound partner, i.e. across the street, slightly
    staggered. Stretches with no partner (the one-way street) are filled evenly.
    Returns positions and {inbound index: outbound index} for the pairs.
    """
    paired: list[tuple[float, int]] = []
    for j, d in enumerate(out_pos[1:-1], start=1):
        p = outbound.line.interpolate(d)
        if inbound.line.distance(p) < 0.5:
            paired.append((inbound.line.project(p), j))
    paired.sort()
    first_gap = paired[0][0]
    shift = 20.0 if first_gap + 20.0 <= STOP_GAP_RANGE[1] else -20.0
    pos = [0.0]
    pairs: dict[int, int] = {}
    for s, j in paired:
        s2 = s + shift
        q = inbound.line.interpolate(s2)
        assert outbound.line.distance(q) < 0.5, "shifted pair left the shared street"
        pairs[len(pos)] = j
        pos.append(round(s2, 2))
    # fill from the last paired stop to the end
    rest = inbound.length - pos[-1]
    k = max(1, round(rest / 400.0))
    base = pos[-1]
    for i in range(1, k):
        pos.append(round(base + rest * i / k, 2))
    pos.append(inbound.length)
    return pos, pairs


def stop_defs_for(shape: ShapeGeom, positions: list[float], ids: list[str], names: list[str]) -> list[PlacedStop]:
    placed = []
    for d, sid, name in zip(positions, ids, names):
        lon, lat = shape.point_at(d)
        placed.append(PlacedStop(StopDef(sid, name, lon, lat), d))
    return placed


def landmark_names(landmarks: dict[str, list[str]], shape: ShapeGeom, positions: list[float],
                   used: dict[str, int]) -> list[str]:
    names = []
    for d in positions:
        street = shape.street(d)
        k = used.get(street, 0)
        used[street] = k + 1
        names.append(f"{street} – {landmarks[street][k]}")
    return names


def check_gaps(label: str, positions: list[float]) -> None:
    gaps = [b - a for a, b in zip(positions, positions[1:])]
    lo, hi = STOP_GAP_RANGE
    assert all(lo <= g <= hi for g in gaps), (label, [round(g) for g in gaps])


# --------------------------------------------------------------------------------------
# Times
# --------------------------------------------------------------------------------------
def hms(seconds: int) -> str:
    h, rem = divmod(int(seconds), 3600)
    m, s = divmod(rem, 60)
    return f"{h:02d}:{m:02d}:{s:02d}"


def parse_hm(text: str) -> int:
    h, m = text.split(":")
    return int(h) * 3600 + int(m) * 60


@dataclass
class Profile:
    """Per-stop (arrival, departure) offsets in seconds from the trip start, timepoints."""

    running_min: int
    arr: list[int]
    dep: list[int]
    timepoint: list[int]


def build_profile(stops: list[PlacedStop], length: float) -> Profile:
    n = len(stops)
    running = math.ceil(length / (AVG_SPEED_KMH / 3.6) / 60.0)
    total = running * 60
    # two intermediate timepoints, near one third and two thirds of the way
    dists = [s.dist for s in stops]
    tps = [0, n - 1]
    for frac in (1 / 3, 2 / 3):
        target = frac * length
        tps.append(min(range(1, n - 1), key=lambda i: abs(dists[i] - target)))
    tps = sorted(set(tps))
    assert len(tps) == 4
    # timepoints: departure on the whole minute, proportional to distance
    tp_dep = {i: round(total * dists[i] / length / 60.0) * 60 for i in tps}
    tp_dep[0], tp_dep[n - 1] = 0, total
    dwell = [0] * n
    for i in range(1, n - 1):
        if i in tp_dep:
            dwell[i] = TIMEPOINT_DWELL
        else:
            dwell[i] = random.Random(stops[i].stop.stop_id).choice([0, 5, 10, 10, 15, 15, 20])
    arr, dep = [0] * n, [0] * n
    for a, b in zip(tps, tps[1:]):
        t_a = tp_dep[a]
        t_b_arr = tp_dep[b] - dwell[b]
        moving = t_b_arr - t_a - sum(dwell[a + 1 : b])
        span = dists[b] - dists[a]
        assert moving > 0
        done = 0.0
        for i in range(a + 1, b):
            done += dists[i] - dists[i - 1]
            t_arr = t_a + moving * done / span + sum(dwell[a + 1 : i])
            arr[i] = round(t_arr)
            dep[i] = arr[i] + dwell[i]
        arr[b] = t_b_arr
        dep[b] = tp_dep[b]
    dep[n - 1] = arr[n - 1] = total
    for i in range(1, n):
        assert dep[i - 1] <= arr[i] <= dep[i], (i, arr, dep)
    timepoint = [1 if i in tps else 0 for i in range(n)]
    return Profile(running, arr, dep, timepoint)


# --------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------
def holidays_on_weekdays(city: City) -> dict[str, str]:
    """Weekday holidays of the sample's years, YYYYMMDD -> name: the national and state
    public holidays (the `holidays` library, as the docket calendar uses) and the
    municipal ones. On them the buses run the Saturday timetable."""
    import datetime as dt

    import holidays

    first, last = dt.date.fromisoformat(START_DATE), dt.date.fromisoformat(END_DATE)
    official = holidays.country_holidays("BR", subdiv=city.state, years=range(first.year, last.year + 1),
                                         categories=(holidays.PUBLIC,), language="pt_BR")
    named = {day.strftime("%Y%m%d"): name for day, name in official.items()} | city.municipal_holidays
    return {day: name for day, name in named.items()
            if START_DATE <= day <= END_DATE and dt.datetime.strptime(day, "%Y%m%d").weekday() < 5}


def write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if v is None else v for v in row])
    path.write_text(buf.getvalue(), encoding="utf-8", newline="")


def fmt_m(d: float) -> str:
    return f"{d:.2f}"


def route_shapes(geo: Geo, route: RouteDef) -> tuple[ShapeGeom, ShapeGeom]:
    """Outbound and inbound shapes: the inbound is the outbound's streets reversed, but
    for the legs it takes from `inbound_via`'s waypoint on (a one-way street)."""
    p_out, s_out = flatten(route.outbound)
    if route.inbound_via is None:
        p_in, s_in = reverse_path(p_out, s_out)
    else:
        split, legs = route.inbound_via
        i = p_out.index(split)
        shared_back_p, shared_back_s = reverse_path(p_out[i:], s_out[i:])
        p_in = shared_back_p + [p for _, wps in legs for p in wps]
        s_in = shared_back_s + [street for street, wps in legs for _ in wps]
    r = route.route_id
    return build_shape(geo, f"{r}-0", p_out, s_out), build_shape(geo, f"{r}-1", p_in, s_in)


def build(city: City) -> dict:
    here = SAMPLES / city.key
    feed_dir = here / "feed"
    feed_dir.mkdir(parents=True, exist_ok=True)
    geo = Geo(city)
    timed, freq = city.timetabled, city.headway
    t_id, h_id = timed.route_id, freq.route_id

    # ---- shapes ------------------------------------------------------------------
    shapes: dict[str, ShapeGeom] = {}
    for route in (timed, freq):
        out, inn = route_shapes(geo, route)
        shapes[out.shape_id], shapes[inn.shape_id] = out, inn
    for shape in shapes.values():
        check_shape(shape)
    for route in (timed, freq):
        lo, hi = route.length_m
        lengths = [shapes[f"{route.route_id}-{d}"].length for d in (0, 1)]
        assert all(lo <= x <= hi for x in lengths), (route.route_id, "length", lengths)

    # ---- stops -------------------------------------------------------------------
    terminals = {
        "9001": timed.terminals[0],
        "9002": timed.terminals[1],
        "9003": freq.terminals[0],
        "9004": freq.terminals[1],
    }
    placed: dict[str, list[PlacedStop]] = {}
    for route, (t_first, t_last), base_out, base_in in (
        (t_id, ("9001", "9002"), 1000, 1100),
        (h_id, ("9003", "9004"), 2000, 2100),
    ):
        out, inn = shapes[f"{route}-0"], shapes[f"{route}-1"]
        pos_out = outbound_positions(out.length, seed=f"stops-{route}")
        check_gaps(f"{route}-0", pos_out)
        pos_in, pairs = inbound_positions(out, pos_out, inn)
        check_gaps(f"{route}-1", pos_in)
        used: dict[str, int] = {}
        names_out = landmark_names(city.landmarks, out, pos_out, used)
        names_out[0], names_out[-1] = terminals[t_first], terminals[t_last]
        ids_out = [t_first] + [str(base_out + k) for k in range(1, len(pos_out) - 1)] + [t_last]
        # inbound: paired stops take their partner's name; the others get the next
        # landmark of their street
        names_in = []
        for k, d in enumerate(pos_in):
            if k in pairs:
                names_in.append(names_out[pairs[k]])
            elif 0 < k < len(pos_in) - 1:
                names_in.append(landmark_names(city.landmarks, inn, [d], used)[0])
            else:
                names_in.append("")
        names_in[0], names_in[-1] = terminals[t_last], terminals[t_first]
        ids_in = [t_last] + [str(base_in + k) for k in range(1, len(pos_in) - 1)] + [t_first]
        placed[f"{route}-0"] = stop_defs_for(out, pos_out, ids_out, names_out)
        placed[f"{route}-1"] = stop_defs_for(inn, pos_in, ids_in, names_in)
    # terminals are exactly the shape ends, and shared between directions
    for route in (t_id, h_id):
        a, b = placed[f"{route}-0"], placed[f"{route}-1"]
        assert (a[0].stop.lon, a[0].stop.lat) == (b[-1].stop.lon, b[-1].stop.lat)
        assert (a[-1].stop.lon, a[-1].stop.lat) == (b[0].stop.lon, b[0].stop.lat)

    stops: dict[str, StopDef] = {}
    for lst in placed.values():
        for ps in lst:
            stops.setdefault(ps.stop.stop_id, ps.stop)
    write_csv(
        feed_dir / "stops.txt",
        ["stop_id", "stop_code", "stop_name", "stop_lat", "stop_lon", "location_type", "wheelchair_boarding"],
        [
            [s.stop_id, s.stop_id, s.name, f"{s.lat:.7f}", f"{s.lon:.7f}", 0, 1 if s.stop_id.startswith("9") else 0]
            for s in sorted(stops.values(), key=lambda s: s.stop_id)
        ],
    )

    write_csv(
        feed_dir / "shapes.txt",
        ["shape_id", "shape_pt_lat", "shape_pt_lon", "shape_pt_sequence", "shape_dist_traveled"],
        [
            [sh.shape_id, f"{lat:.7f}", f"{lon:.7f}", seq, fmt_m(d)]
            for sh in shapes.values()
            for seq, ((lon, lat), d) in enumerate(zip(sh.lonlat, sh.dist), start=1)
        ],
    )

    # ---- static tables -----------------------------------------------------------
    write_csv(
        feed_dir / "agency.txt",
        ["agency_id", "agency_name", "agency_url", "agency_timezone", "agency_lang", "agency_phone"],
        [[agency_id, name, url, city.timezone, "pt", ""] for agency_id, name, url in city.agencies],
    )
    write_csv(
        feed_dir / "routes.txt",
        ["route_id", "agency_id", "route_short_name", "route_long_name", "route_desc", "route_type",
         "route_color", "route_text_color"],
        [[r.route_id, r.agency_id, r.route_id, r.long_name, r.desc, 3, r.color, "FFFFFF"] for r in (timed, freq)],
    )
    write_csv(
        feed_dir / "calendar.txt",
        ["service_id", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
         "start_date", "end_date"],
        [
            ["DU", 1, 1, 1, 1, 1, 0, 0, START_DATE, END_DATE],
            ["SAB", 0, 0, 0, 0, 0, 1, 0, START_DATE, END_DATE],
        ],
    )
    write_csv(
        feed_dir / "calendar_dates.txt",
        ["service_id", "date", "exception_type"],
        [[service, day, exception] for day in sorted(holidays_on_weekdays(city))
         for service, exception in (("DU", 2), ("SAB", 1))],
    )
    write_csv(
        feed_dir / "feed_info.txt",
        ["feed_publisher_name", "feed_publisher_url", "feed_lang", "feed_start_date", "feed_end_date",
         "feed_version"],
        [["Fiscaliza – dados de exemplo (fictícios)", "https://example.org/fiscaliza", "pt",
          START_DATE, END_DATE, city.feed_version]],
    )

    # ---- trips & stop_times ------------------------------------------------------
    profiles = {sid: build_profile(placed[sid], shapes[sid].length) for sid in shapes}
    headsigns = {f"{r.route_id}-{d}": r.headsigns[d] for r in (timed, freq) for d in (0, 1)}
    trips: list[dict] = []

    def add_trip(route, service, direction, start_s, block):
        shape_id = f"{route}-{direction}"
        hhmm = hms(start_s)[:5].replace(":", "")
        trip_id = f"{route}-{service}-{direction}-{hhmm}"
        trips.append(dict(route_id=route, service_id=service, trip_id=trip_id,
                          headsign=headsigns[shape_id], direction_id=direction, block_id=block,
                          shape_id=shape_id, start=start_s))
        return trip_id

    # the timetabled route: same clock departures at both terminals. With a 30-min headway each vehicle
    # leaves one terminal at :00 and the other at :30, so two vehicles alternate
    # directions (running time + layover <= 30 min). Block A starts from Terminal
    # Centro (direction 0), block B from Terminal Santo Antônio (direction 1).
    blocks: dict[str, list[tuple[int, int]]] = {}  # block -> [(direction, start_s)]
    for service, first, last, headway in (("DU", "05:30", "22:00", 30), ("SAB", "06:00", "21:00", 60)):
        deps = list(range(parse_hm(first), parse_hm(last) + 1, headway * 60))
        a, b = f"{service}-{t_id}-A", f"{service}-{t_id}-B"
        blocks[a], blocks[b] = [], []
        for k, t in enumerate(deps):
            # at each departure time one vehicle leaves each terminal; they swap ends,
            # so each block alternates directions
            blocks[a if k % 2 == 0 else b].append((0, t))
            blocks[b if k % 2 == 0 else a].append((1, t))
        for blk in (a, b):
            blocks[blk].sort(key=lambda x: x[1])
    # late DU trip past midnight, run by the vehicle that ends its day at Terminal Centro
    late = parse_hm("23:50")
    for blk in (f"DU-{t_id}-A", f"DU-{t_id}-B"):
        if blocks[blk][-1][0] == 1:
            blocks[blk].append((0, late))
            break
    for blk, legs in blocks.items():
        service = blk.split("-")[0]
        for direction, t in legs:
            add_trip(t_id, service, direction, t, blk)
    # the headway route: one template per direction and service, starting at 06:00:00
    for service in ("DU", "SAB"):
        for direction in (0, 1):
            trips.append(dict(route_id=h_id, service_id=service, trip_id=f"{h_id}-{service}-{direction}-FREQ",
                              headsign=headsigns[f"{h_id}-{direction}"], direction_id=direction, block_id=None,
                              shape_id=f"{h_id}-{direction}", start=parse_hm("06:00")))

    # block consistency: alternating directions, layover respected
    for blk, legs in blocks.items():
        for (d0, t0), (d1, t1) in zip(legs, legs[1:]):
            end0 = t0 + profiles[f"{t_id}-{d0}"].running_min * 60
            assert d1 != d0, (blk, t0, t1)
            assert t1 >= end0 + LAYOVER_MIN * 60, (blk, hms(t0), hms(t1))

    trips.sort(key=lambda t: (t["route_id"], t["service_id"], t["direction_id"], t["start"]))
    write_csv(
        feed_dir / "trips.txt",
        ["route_id", "service_id", "trip_id", "trip_headsign", "direction_id", "block_id", "shape_id"],
        [[t["route_id"], t["service_id"], t["trip_id"], t["headsign"], t["direction_id"], t["block_id"],
          t["shape_id"]] for t in trips],
    )
    st_rows = []
    for t in trips:
        prof, stops_seq = profiles[t["shape_id"]], placed[t["shape_id"]]
        for seq, (ps, a, d, tp) in enumerate(zip(stops_seq, prof.arr, prof.dep, prof.timepoint), start=1):
            st_rows.append([t["trip_id"], hms(t["start"] + a), hms(t["start"] + d), ps.stop.stop_id, seq,
                            fmt_m(ps.dist), tp])
    write_csv(
        feed_dir / "stop_times.txt",
        ["trip_id", "arrival_time", "departure_time", "stop_id", "stop_sequence", "shape_dist_traveled",
         "timepoint"],
        st_rows,
    )
    freq_rows = []
    for direction in (0, 1):
        for start, end, headway in (("06:00", "09:00", 900), ("09:00", "16:00", 1200), ("16:00", "19:00", 900)):
            freq_rows.append([f"{h_id}-DU-{direction}-FREQ", f"{start}:00", f"{end}:00", headway, 0])
        freq_rows.append([f"{h_id}-SAB-{direction}-FREQ", "07:00:00", "13:00:00", 1800, 0])
    write_csv(feed_dir / "frequencies.txt", ["trip_id", "start_time", "end_time", "headway_secs", "exact_times"],
              freq_rows)

    # ---- fleet -------------------------------------------------------------------
    header, rows = ["vehicle_id", "plate", "operator_id", "capacity"], [list(v) for v in city.fleet]
    if city.fleet_lines:  # the optional `lines` column only where the city sets it
        lines = dict(city.fleet_lines)
        header, rows = header + ["lines"], [row + [lines.get(row[0], "")] for row in rows]
    write_csv(here / "fleet.csv", header, rows)
    return dict(city=city, geo=geo, feed_dir=feed_dir, shapes=shapes, placed=placed, profiles=profiles,
                trips=trips, blocks=blocks)


# --------------------------------------------------------------------------------------
# Checks (gtfs-kit + shapely), run with --check
# --------------------------------------------------------------------------------------
def check(result: dict) -> None:
    import gtfs_kit as gk
    import shapely

    city, geo = result["city"], result["geo"]
    feed = gk.read_feed(result["feed_dir"], dist_units="m")
    problems: list[str] = []
    quality = gk.assess_quality(feed)
    print(quality.to_string(index=False))

    # trips per date
    for date, expect in city.expected_services:
        tr = feed.get_trips(date)
        services = set(tr["service_id"]) if tr is not None else set()
        want = {expect} if expect else set()
        if services != want:
            problems.append(f"{date}: services {services}, expected {want}")
        print(f"{date}: {len(tr) if tr is not None else 0} trip rows, services {sorted(services)}")

    # geometry in the city's UTM zone
    x, y = geo.to_metric.transform(feed.shapes["shape_pt_lon"].to_numpy(), feed.shapes["shape_pt_lat"].to_numpy())
    shp = feed.shapes.assign(x=x, y=y).sort_values(["shape_id", "shape_pt_sequence"])
    lines = {sid: LineString(list(zip(g["x"], g["y"]))) for sid, g in shp.groupby("shape_id")}
    for sid, g in shp.groupby("shape_id"):
        written = float(g["shape_dist_traveled"].iloc[-1])
        if abs(lines[sid].length - written) > 0.05:
            problems.append(f"shape {sid}: length {lines[sid].length:.2f} != {written}")
        print(f"shape {sid}: {lines[sid].length:.1f} m, {len(g)} points, simple={lines[sid].is_simple}, "
              f"ends {Point(lines[sid].coords[0]).distance(Point(lines[sid].coords[-1])):.0f} m apart")
    sx, sy = geo.to_metric.transform(feed.stops["stop_lon"].to_numpy(), feed.stops["stop_lat"].to_numpy())
    stop_pt = {sid: Point(a, b) for sid, a, b in zip(feed.stops["stop_id"], sx, sy)}
    st = feed.stop_times.merge(feed.trips[["trip_id", "shape_id"]], on="trip_id")
    worst_off, worst_lr = 0.0, 0.0
    for (shape_id, stop_id, dist) in st[["shape_id", "stop_id", "shape_dist_traveled"]].drop_duplicates().itertuples(index=False):
        line, pt = lines[shape_id], stop_pt[stop_id]
        off = line.distance(pt)
        lr = abs(shapely.line_locate_point(line, pt) - dist)
        worst_off, worst_lr = max(worst_off, off), max(worst_lr, lr)
        if off > 3.0:
            problems.append(f"stop {stop_id} is {off:.1f} m off shape {shape_id}")
        if lr > 1.0:
            problems.append(f"stop {stop_id} on {shape_id}: projected {lr:.1f} m from shape_dist_traveled")
    print(f"worst stop offset from its shape: {worst_off:.3f} m; worst |locate - shape_dist_traveled|: {worst_lr:.3f} m")
    for shape_id, grp in st.groupby("shape_id"):
        first = grp.sort_values("stop_sequence").groupby("trip_id").first()["stop_id"].unique()
        last = grp.sort_values("stop_sequence").groupby("trip_id").last()["stop_id"].unique()
        line = lines[shape_id]
        for sid in first:
            if stop_pt[sid].distance(Point(line.coords[0])) > 0.05:
                problems.append(f"{shape_id}: first stop {sid} not at first point")
        for sid in last:
            if stop_pt[sid].distance(Point(line.coords[-1])) > 0.05:
                problems.append(f"{shape_id}: last stop {sid} not at last point")
    if problems:
        print("PROBLEMS:\n  " + "\n  ".join(problems))
        sys.exit(1)
    print("checks OK")


def summary(result: dict) -> None:
    shapes, placed, profiles, trips = result["shapes"], result["placed"], result["profiles"], result["trips"]
    for sid, sh in shapes.items():
        gaps = [b.dist - a.dist for a, b in zip(placed[sid], placed[sid][1:])]
        print(f"{sid}: {sh.length:.1f} m, {len(sh.xy)} pts, {len(placed[sid])} stops, "
              f"gaps {min(gaps):.0f}-{max(gaps):.0f} m, running {profiles[sid].running_min} min")
    counts: dict[tuple, int] = {}
    for t in trips:
        key = (t["route_id"], t["service_id"], t["direction_id"])
        counts[key] = counts.get(key, 0) + 1
    for key in sorted(counts):
        print("trips", key, counts[key])
    for blk, legs in result["blocks"].items():
        print(f"block {blk}: {len(legs)} trips, {hms(legs[0][1])}..{hms(legs[-1][1])}, "
              f"first direction {legs[0][0]}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--city", choices=sorted(CITIES), action="append",
                        help="build only this city (repeatable; default: every city)")
    parser.add_argument("--check", action="store_true", help="validate the written feed with gtfs-kit/shapely")
    parser.add_argument("-q", "--quiet", action="store_true", help="no summary")
    args = parser.parse_args(argv)
    for key in args.city or sorted(CITIES):
        print(f"== {key}")
        result = build(CITIES[key])
        if not args.quiet:
            summary(result)
        if args.check:
            check(result)


if __name__ == "__main__":
    main()
