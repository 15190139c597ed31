"""The speed chart and the map on which the defence picks the readings it disputes (issue 30):
server-drawn SVG, one circle per reading carrying its bundle line, so that a click marks
what the evidence table's checkbox marks. Pure: readings in, drawing coordinates out; the
template writes the SVG, web/static/contestar.js only toggles the form's fields."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from dockets import ptbr
from dockets.document import PickableReadings

WIDTH = 1000
SPEED_HEIGHT = 320
MAP_HEIGHT = 520
_PAD = 40  # room for the axes' labels
_MAP_PAD = 16


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    value: str  # "tachograph:123", as the marks form takes it
    local_time: str  # ISO, local: what the span form takes
    title: str  # pt-BR: what a pointer or a screen reader is told of it
    cited: bool


@dataclass(frozen=True)
class Tick:
    at: float
    label: str


@dataclass(frozen=True)
class SpeedChart:
    width: int
    height: int
    plot: tuple[float, float, float, float]  # left, top, right, bottom
    points: tuple[Point, ...]
    line: str  # the polyline's points
    highlight: tuple[float, float]  # x and width of the infraction's interval
    times: tuple[Tick, ...]
    speeds: tuple[Tick, ...]
    vehicle_id: str


@dataclass(frozen=True)
class TrackMap:
    width: int
    height: int
    points: tuple[Point, ...]
    line: str
    itinerary: str


def _title(value: str, local_time: str, speed_kmh: float) -> str:
    source, _, number = value.partition(":")
    return f"{source}.jsonl:{number} · {local_time[11:]} · {ptbr.amount(speed_kmh, 1)} km/h"


def _polyline(points) -> str:
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in points)


def speed_chart(picked: PickableReadings, tz: ZoneInfo) -> SpeedChart:
    """Speed × time over the speed chart's window; x from the reading's time, y its speed."""
    left, top, right, bottom = 56.0, 12.0, WIDTH - 12.0, SPEED_HEIGHT - 32.0
    t0, t1 = picked.window
    top_speed = max(10.0, *(r.speed_kmh for r in picked.readings))
    step_kmh = 10 if top_speed <= 50 else 20 if top_speed <= 100 else 50
    ceiling = math.ceil(top_speed / step_kmh) * step_kmh  # the top line is labelled

    def x(epoch: float) -> float:
        return left + (epoch - t0) / (t1 - t0) * (right - left)

    def y(speed: float) -> float:
        return bottom - speed / ceiling * (bottom - top)

    points = tuple(Point(x(r.epoch), y(r.speed_kmh), r.value, r.local_time, _title(r.value, r.local_time, r.speed_kmh),
                         r.cited) for r in picked.readings)
    step = 600 if t1 - t0 <= 7200 else 1800  # a label every 10 or 30 minutes
    first = math.ceil(t0 / step) * step
    times = tuple(Tick(x(t), f"{dt.datetime.fromtimestamp(t, tz):%H:%M}") for t in range(int(first), int(t1) + 1, step))
    speeds = tuple(Tick(y(v), f"{v} km/h") for v in range(0, ceiling + 1, step_kmh))
    h0, h1 = (min(max(x(e), left), right) for e in picked.highlight)
    return SpeedChart(WIDTH, SPEED_HEIGHT, (left, top, right, bottom), points, _polyline((p.x, p.y) for p in points),
                      (h0, max(h1 - h0, 2.0)), times, speeds, picked.vehicle_id)


def track_map(picked: PickableReadings) -> TrackMap:
    """The readings where they were taken, over the itinerary: lon and lat drawn to one
    scale (metres east and north near the readings), north up, framed on the readings."""
    lat0 = sum(r.lat for r in picked.readings) / len(picked.readings)
    east = math.cos(math.radians(lat0))

    def project(lon: float, lat: float) -> tuple[float, float]:
        return lon * east, lat

    xs, ys = zip(*(project(r.lon, r.lat) for r in picked.readings))
    span = max(max(xs) - min(xs), (max(ys) - min(ys)) * WIDTH / MAP_HEIGHT, 1e-4)
    scale = (WIDTH - 2 * _MAP_PAD) / span
    cx, cy = (max(xs) + min(xs)) / 2, (max(ys) + min(ys)) / 2

    def draw(lon: float, lat: float) -> tuple[float, float]:
        px, py = project(lon, lat)
        return WIDTH / 2 + (px - cx) * scale, MAP_HEIGHT / 2 - (py - cy) * scale

    points = []
    for r in picked.readings:
        px, py = draw(r.lon, r.lat)
        points.append(Point(px, py, r.value, r.local_time, _title(r.value, r.local_time, r.speed_kmh), r.cited))
    return TrackMap(WIDTH, MAP_HEIGHT, tuple(points), _polyline((p.x, p.y) for p in points),
                    _polyline(draw(lon, lat) for lon, lat in picked.itinerary))
