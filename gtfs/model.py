"""The schedule as plain frozen values, in the feed's metric CRS.

Times of day are GTFS seconds: counted from "noon minus 12 h" of the service date,
so they may exceed 24 h (a trip leaving at 24:10:00 belongs to the previous day).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

from shapely import LineString, Point


@dataclass(frozen=True)
class Agency:
    agency_id: str
    name: str


@dataclass(frozen=True)
class Route:
    route_id: str
    agency_id: str
    short_name: str
    long_name: str


@dataclass(frozen=True)
class Stop:
    stop_id: str
    name: str
    lat: float
    lon: float
    point: Point  # metric CRS


@dataclass(frozen=True)
class Shape:
    shape_id: str
    line: LineString  # metric CRS

    @property
    def length_m(self) -> float:
        return float(self.line.length)


@dataclass(frozen=True)
class ScheduledStop:
    stop_id: str
    stop_sequence: int
    arrival_s: int
    departure_s: int
    timepoint: bool
    shape_dist_m: float  # position along the trip's shape, metres


@dataclass(frozen=True)
class TripTemplate:
    """A row of trips.txt with its stop times (relative for frequency templates)."""

    trip_id: str
    route_id: str
    service_id: str
    direction_id: int
    shape_id: str
    block_id: str | None
    headsign: str
    stops: tuple[ScheduledStop, ...]

    @property
    def departure_s(self) -> int:
        return self.stops[0].departure_s

    @property
    def arrival_s(self) -> int:
        return self.stops[-1].arrival_s


@dataclass(frozen=True)
class Frequency:
    trip_id: str
    start_s: int
    end_s: int
    headway_s: int
    exact_times: bool


def pattern_key(route_id: str, direction_id: int, shape_id: str) -> str:
    """The key of the itinerary a trip runs (route, direction and shape), as `Pattern.key`
    and the geofences' itineraries are keyed: built here only, wherever a trip, a log or
    a template names its itinerary by those three fields."""
    return f"{route_id}:{direction_id}:{shape_id}"


@dataclass(frozen=True)
class Pattern:
    """A distinct itinerary: route, direction, shape and its terminals."""

    route_id: str
    direction_id: int
    shape_id: str
    origin_stop_id: str
    destination_stop_id: str

    @property
    def key(self) -> str:
        return pattern_key(self.route_id, self.direction_id, self.shape_id)


@dataclass(frozen=True)
class ScheduledTrip:
    """One trip to be run on one service date.

    For frequency-based trips with exact_times=1 the template's `trip_id` is
    shared by every departure; `key` tells them apart.
    """

    trip_id: str
    route_id: str
    direction_id: int
    service_date: dt.date
    shape_id: str
    block_id: str | None
    departure_s: int
    arrival_s: int
    stops: tuple[ScheduledStop, ...]
    programmed_m: float
    from_frequency: bool = False

    @property
    def key(self) -> str:
        if self.from_frequency:
            return f"{self.trip_id}@{self.departure_s}"
        return self.trip_id


@dataclass(frozen=True)
class FrequencyWindow:
    """A headway-based window [start_s, end_s) of one route, direction and date."""

    trip_id: str
    route_id: str
    direction_id: int
    service_date: dt.date
    shape_id: str
    start_s: int
    end_s: int
    headway_s: int
    exact_times: bool
    programmed_m: float

    @property
    def expected_departures(self) -> int:
        # ceil((end - start) / headway), DESIGN.md D-12
        return -(-(self.end_s - self.start_s) // self.headway_s)


@dataclass(frozen=True)
class Feed:
    timezone: ZoneInfo
    epsg: int
    agencies: dict[str, Agency]
    routes: dict[str, Route]
    stops: dict[str, Stop]
    shapes: dict[str, Shape]
    trips: dict[str, TripTemplate]
    frequencies: tuple[Frequency, ...]
    # service_id -> the dates it runs (calendar.txt and calendar_dates.txt resolved)
    service_days: dict[str, frozenset[dt.date]]
    patterns: tuple[Pattern, ...] = field(default=())

    @property
    def dates(self) -> tuple[dt.date, ...]:
        return tuple(sorted(set().union(*self.service_days.values()))) if self.service_days else ()

    def operator_of(self, route_id: str) -> str:
        return self.routes[route_id].agency_id
