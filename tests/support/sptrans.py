"""The SPTrans sample in ../shared/realdata as a minimal feed and tachograph file.

The traces are third-party data: tests read them from ../shared, never copy them.
Columns (../shared/realdata/.../README.md): dt_server, dt_avl, line_id, latitude,
longitude, id_avl, event, id_point, hour_server, hour_avl, hour_diff, region.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

REALDATA = Path(__file__).resolve().parents[3] / "shared" / "realdata" / "sptrans-line-34020-2015-10-02"
SHAPES = {"58290": ("8002-10", 1), "58447": ("119L-10", 1), "58450": ("119L-10", 0)}
SERVICE_DATE = "20151002"
# The timestamps carry no zone; São Paulo was at UTC-3 on 2015-10-02 (DST began 2015-10-18).
OFFSET = "-03:00"


def shape_points(shape_id: str) -> list[tuple[float, float]]:
    with open(REALDATA / f"day_15102_shape_{shape_id}.csv", newline="") as handle:
        rows = sorted(csv.reader(handle), key=lambda r: int(r[3]))
    return [(float(r[1]), float(r[2])) for r in rows]


def _along_m(points: list[tuple[float, float]]) -> list[float]:
    """Metres along a polyline of (lat, lon) (equirectangular: ample for picking stops)."""
    import math

    out, total = [0.0], 0.0
    for (lat0, lon0), (lat1, lon1) in zip(points, points[1:]):
        dx = math.radians(lon1 - lon0) * math.cos(math.radians((lat0 + lat1) / 2)) * 6_371_000
        dy = math.radians(lat1 - lat0) * 6_371_000
        total += math.hypot(dx, dy)
        out.append(total)
    return out


def _turn_deg(points: list[tuple[float, float]], i: int) -> float:
    import math

    (a0, o0), (a1, o1), (a2, o2) = points[i - 1], points[i], points[i + 1]
    h1, h2 = math.atan2(a1 - a0, o1 - o0), math.atan2(a2 - a1, o2 - o1)
    return abs(math.degrees((h2 - h1 + math.pi) % (2 * math.pi) - math.pi))


def intermediate_stops(points: list[tuple[float, float]], every_m: float) -> list[int]:
    """Vertices for stops along a shape: the one nearest each multiple of `every_m`, and
    the sharpest corner (a stop at a vertex where pings 45 s apart cut across)."""
    along = _along_m(points)
    chosen = {min(range(1, len(points) - 1), key=lambda i: abs(along[i] - k * every_m))
              for k in range(1, int(along[-1] // every_m))}
    chosen.add(max(range(1, len(points) - 1), key=lambda i: _turn_deg(points, i)))
    return sorted(chosen)


def write_feed(directory: Path, shape_ids=tuple(SHAPES), stops_every_m: dict[str, float] | None = None) -> None:
    """One route and trip per shape, stops at the shape's ends (and, for the shapes in
    `stops_every_m`, at `intermediate_stops`), scheduled on the sample day."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "agency.txt").write_text(
        "agency_id,agency_name,agency_url,agency_timezone\nSPTRANS,SPTrans,https://example.org,America/Sao_Paulo\n")
    (directory / "calendar.txt").write_text(
        "service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\n"
        f"U,1,1,1,1,1,0,0,{SERVICE_DATE},{SERVICE_DATE}\n")
    routes = sorted({SHAPES[s][0] for s in shape_ids})
    (directory / "routes.txt").write_text(
        "route_id,agency_id,route_short_name,route_type\n" + "".join(f"{r},SPTRANS,{r},3\n" for r in routes))
    shapes, stops, trips, times = [], [], [], []
    for shape_id in shape_ids:
        points = shape_points(shape_id)
        shapes += [f"{shape_id},{lat},{lon},{i}" for i, (lat, lon) in enumerate(points, 1)]
        route, direction = SHAPES[shape_id]
        middle = intermediate_stops(points, stops_every_m[shape_id]) if shape_id in (stops_every_m or {}) else []
        for end, (lat, lon) in (("a", points[0]), ("b", points[-1])):
            stops.append(f"{shape_id}{end},{shape_id} {end},{lat},{lon}")
        for i in middle:
            stops.append(f"{shape_id}v{i},{shape_id} vertex {i},{points[i][0]},{points[i][1]}")
        trips.append(f"{route},U,T{shape_id},{direction},{shape_id}")
        minute = [12 * 60 + round(60 * k / (len(middle) + 1)) for k in range(1, len(middle) + 1)]
        times += ([f"T{shape_id},12:00:00,12:00:00,{shape_id}a,1"]
                  + [f"T{shape_id},{m // 60:02d}:{m % 60:02d}:00,{m // 60:02d}:{m % 60:02d}:00,{shape_id}v{i},{k + 2}"
                     for k, (i, m) in enumerate(zip(middle, minute))]
                  + [f"T{shape_id},13:00:00,13:00:00,{shape_id}b,{len(middle) + 2}"])
    (directory / "shapes.txt").write_text(
        "shape_id,shape_pt_lat,shape_pt_lon,shape_pt_sequence\n" + "\n".join(shapes) + "\n")
    (directory / "stops.txt").write_text("stop_id,stop_name,stop_lat,stop_lon\n" + "\n".join(stops) + "\n")
    (directory / "trips.txt").write_text(
        "route_id,service_id,trip_id,direction_id,shape_id\n" + "\n".join(trips) + "\n")
    (directory / "stop_times.txt").write_text(
        "trip_id,arrival_time,departure_time,stop_id,stop_sequence\n" + "\n".join(times) + "\n")


def write_telemetry(tachograph: Path, fleet: Path) -> int:
    """The AVL records as tachograph JSON Lines, in the file's own (shuffled) order.

    The records carry no speed and the contract requires one: 0 is written, so the
    speeding rule (which trusts the tachograph's speed, not GPS steps) stays silent.
    """
    with open(REALDATA / "day_15102_line_34020.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    vehicles = sorted({row[5] for row in rows})
    with open(tachograph, "w") as handle:
        for row in rows:
            record = {"vehicle_id": row[5], "ts": row[1].replace(" ", "T") + OFFSET, "lat": float(row[3]),
                      "lon": float(row[4]), "speed_kmh": 0.0}
            handle.write(json.dumps(record) + "\n")
    fleet.write_text("vehicle_id,plate,operator_id\n" + "".join(f"{v},SP{v},SPTRANS\n" for v in vehicles))
    return len(rows)
