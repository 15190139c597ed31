"""The speed chart and map the defence picks readings on (web/picking.py): hand-made readings,
their drawing coordinates checked by the arithmetic."""

from __future__ import annotations

import datetime as dt
import math
from zoneinfo import ZoneInfo

from dockets.document import PickableReading, PickableReadings
from web.picking import MAP_HEIGHT, WIDTH, speed_chart, track_map

TZ = ZoneInfo("America/Sao_Paulo")
T0 = dt.datetime(2026, 12, 1, 8, 0, tzinfo=TZ).timestamp()


def _reading(line: int, minutes: float, speed: float, lon: float, lat: float, cited=False) -> PickableReading:
    return PickableReading(f"tachograph:{line}", f"2026-12-01T08:{int(minutes):02d}:00", T0 + minutes * 60, speed,
                           lon, lat, cited)


PICKED = PickableReadings(
    vehicle_id="JN-2011", window=(T0, T0 + 3600), highlight=(T0 + 1200, T0 + 1800),
    readings=(_reading(10, 0, 0.0, -40.40, -19.77), _reading(12, 30, 45.0, -40.39, -19.76, cited=True),
              _reading(11, 60, 90.0, -40.38, -19.77)),
    itinerary=((-40.40, -19.77), (-40.38, -19.77)))


def test_the_speed_chart_puts_each_reading_at_its_time_and_speed():
    chart = speed_chart(PICKED, TZ)
    left, top, right, bottom = chart.plot
    first, middle, last = chart.points
    # the window's ends are the plot's edges; 90 km/h is read on a scale of 0 to 100 in 20s
    assert (first.x, last.x) == (left, right) and math.isclose(middle.x, (left + right) / 2)
    assert first.y == bottom and math.isclose(last.y, bottom - 0.9 * (bottom - top))
    assert math.isclose(middle.y, bottom - 0.45 * (bottom - top))
    assert [p.value for p in chart.points] == ["tachograph:10", "tachograph:12", "tachograph:11"]
    assert middle.cited and not first.cited and middle.local_time == "2026-12-01T08:30:00"
    assert middle.title == "tachograph.jsonl:12 · 08:30:00 · 45 km/h"
    # the interval from 08:20 to 08:30: a third to a half of the plot
    x, width = chart.highlight
    assert math.isclose(x, left + (right - left) / 3) and math.isclose(width, (right - left) / 6)
    assert [t.label for t in chart.times] == ["08:00", "08:10", "08:20", "08:30", "08:40", "08:50", "09:00"]
    assert [t.label for t in chart.speeds] == ["0 km/h", "20 km/h", "40 km/h", "60 km/h", "80 km/h", "100 km/h"]
    assert chart.speeds[-1].at == top


def test_the_map_draws_lon_and_lat_to_one_scale_north_up_framed_on_the_readings():
    drawn = track_map(PICKED)
    west, north, east = drawn.points
    assert (drawn.width, drawn.height) == (WIDTH, MAP_HEIGHT)
    assert west.x < north.x < east.x and north.y < west.y and math.isclose(west.y, east.y)
    # 0.01° of longitude is cos(19.77°) of 0.01° of latitude on the drawing
    dx, dy = north.x - west.x, west.y - north.y
    assert math.isclose(dx / dy, math.cos(math.radians(sum(r.lat for r in PICKED.readings) / 3)), rel_tol=1e-9)
    assert 0 < west.x and east.x < WIDTH and 0 < north.y and west.y < MAP_HEIGHT
    assert drawn.itinerary.split()[0] == f"{west.x:.1f},{west.y:.1f}"
