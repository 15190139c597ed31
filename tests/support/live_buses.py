"""Buses of the João Neiva sample network as the live table has them at one moment
(Tuesday 1 Dec 2026, 08:10:30 in João Neiva), each placed on its itinerary's shape:
what the GTFS-Realtime tests publish and validate."""

from __future__ import annotations

import datetime as dt

from gtfs import Feed
from gtfs.projection import Projector
from gtfs.schedule import service_day_start

DATE = dt.date(2026, 12, 1)
LOCAL_NOW = dt.time(8, 10, 30)


def now(feed: Feed) -> dt.datetime:
    return dt.datetime.combine(DATE, LOCAL_NOW, tzinfo=feed.timezone).astimezone(dt.UTC)


def at(feed: Feed, hhmmss: str) -> dt.datetime:
    h, m, s = (int(p) for p in hhmmss.split(":"))
    return service_day_start(DATE, feed.timezone) + dt.timedelta(hours=h, minutes=m, seconds=s)


def on_shape(feed: Feed, shape_id: str, metres: float) -> tuple[float, float]:
    point = feed.shapes[shape_id].line.interpolate(metres)
    lon, lat = Projector(feed.epsg).to_lonlat([point.x], [point.y])
    return float(lat[0]), float(lon[0])


def statuses(feed: Feed) -> dict[str, dict]:
    """vehicle_id -> the live_vehicle_status columns the feed reads, and what each bus is:
    - JN-1011 runs the timetabled 101-DU-0-0800 (departed 2 min late), between its 6th
      and 7th stops;
    - JN-2011 runs line 201 (frequency-based, exact_times=0) with no trip_id, as the
      engine's live match leaves headway lines: departed 08:01:00, 40 % along;
    - JN-1012 has arrived at the end of line 101 (progress 1, standing: layover);
    - JN-1013 has arrived too but its row still names the trip it finished;
    - JN-2012 is not in service;
    - JN-2013 names a trip the static feed does not have;
    - JN-2014 last reported 11 minutes ago."""
    current = now(feed)
    trip = feed.trips["101-DU-0-0800"]
    length = feed.shapes[trip.shape_id].length_m
    sixth, seventh = trip.stops[5].shape_dist_m, trip.stops[6].shape_dist_m
    midway = (sixth + seventh) / 2
    frequency = feed.trips["201-DU-0-FREQ"]
    frequency_length = feed.shapes[frequency.shape_id].length_m
    back = feed.trips["101-DU-1-0730"]
    back_length = feed.shapes[back.shape_id].length_m

    def row(vehicle_id, metres_on, ts, **columns):
        lat, lon = on_shape(feed, *metres_on)
        base = dict(vehicle_id=vehicle_id, ts=ts, lat=lat, lon=lon, speed_kmh=0.0, in_service=False, route_id=None,
                    direction_id=None, trip_id=None, progress=None, departed_at=None, schedule_deviation_s=None)
        return {**base, **columns}

    rows = [
        row("JN-1011", (trip.shape_id, midway), current - dt.timedelta(seconds=20), speed_kmh=28.0, in_service=True,
            route_id="101", direction_id=0, trip_id=trip.trip_id, progress=round(midway / length, 4),
            departed_at=at(feed, "08:02:00"), schedule_deviation_s=120.0),
        row("JN-2011", (frequency.shape_id, 0.4 * frequency_length), current - dt.timedelta(seconds=10),
            speed_kmh=31.0, in_service=True, route_id="201", direction_id=0, progress=0.4,
            departed_at=at(feed, "08:01:00")),
        row("JN-1012", (back.shape_id, back_length), current - dt.timedelta(seconds=15), in_service=True,
            route_id="101", direction_id=1, progress=1.0, departed_at=at(feed, "07:31:00")),
        row("JN-1013", (back.shape_id, back_length), current - dt.timedelta(seconds=25), in_service=True,
            route_id="101", direction_id=1, trip_id=back.trip_id, progress=1.0, departed_at=at(feed, "07:30:30"),
            schedule_deviation_s=30.0),
        row("JN-2012", (frequency.shape_id, 0.0), current - dt.timedelta(seconds=30)),
        row("JN-2013", (trip.shape_id, 0.5 * length), current - dt.timedelta(seconds=5), speed_kmh=20.0,
            in_service=True, route_id="101", direction_id=0, trip_id="NAO-EXISTE", progress=0.5,
            departed_at=at(feed, "08:00:00"), schedule_deviation_s=0.0),
        row("JN-2014", (trip.shape_id, 0.2 * length), current - dt.timedelta(minutes=11), speed_kmh=20.0),
    ]
    return {r["vehicle_id"]: r for r in rows}
