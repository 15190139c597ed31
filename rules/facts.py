"""The facts detectors read: a realized trip, a service day, a vehicle's day.

Plain frozen values assembled by the engine from its state; detectors never reach
beyond them, so a rule can be re-run on the facts alone (the evidence bundle).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from zoneinfo import ZoneInfo

import numpy as np

from geofences.zones import Itinerary
from gtfs.model import ScheduledTrip
from telemetry import CatracaReading, Occurrence
from trips.matching import Match, ServiceDay
from trips.model import Fix


@dataclass(frozen=True)
class TripFacts:
    match: Match
    itinerary: Itinerary
    operator_id: str
    fixes: tuple[Fix, ...]  # from the last ping before the departure to the arrival ping
    tz: ZoneInfo
    day_start: float  # epoch of GTFS time 0 of the trip's service date

    @property
    def realized(self):
        return self.match.realized

    @property
    def scheduled(self) -> ScheduledTrip | None:
        return self.match.scheduled

    @property
    def departed_at(self) -> float:
        return self.match.detected.departed_at

    @property
    def arrived_at(self) -> float:
        return self.match.detected.arrived_at

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = len(self.fixes)
        return (np.fromiter((f.t for f in self.fixes), float, n), np.fromiter((f.x for f in self.fixes), float, n),
                np.fromiter((f.y for f in self.fixes), float, n))


@dataclass(frozen=True)
class ServiceDayFacts:
    day: ServiceDay
    tz: ZoneInfo
    trips: tuple[TripFacts, ...]
    operator_of_route: dict[str, str]
    origin_of: dict[tuple[str, int], tuple[float, float]]  # (route, direction) -> (lat, lon)
    # Times (epoch) at which each operator's fleet reported, to tell absence of
    # service from absence of telemetry.
    reporting: dict[str, tuple[float, ...]]
    occurrences: tuple[Occurrence, ...] = ()

    def reported_between(self, operator_id: str, start: float, end: float, *, include_end: bool = True) -> bool:
        times = self.reporting.get(operator_id, ())
        i = np.searchsorted(times, start)
        return bool(i < len(times) and (times[i] <= end if include_end else times[i] < end))


@dataclass(frozen=True)
class VehicleDayFacts:
    vehicle_id: str
    operator_id: str
    date: dt.date
    tz: ZoneInfo
    fixes: tuple[Fix, ...]
    speed_limits_kmh: tuple[float, ...]  # the limit at each fix's position
    catraca: tuple[CatracaReading, ...]  # in event-time order
    previous_counter: int | None  # the last catraca counter before the day
    trips: tuple[TripFacts, ...]
    in_service: tuple[tuple[float, float], ...]  # epoch intervals


def trip_identity(facts: TripFacts) -> tuple:
    """What identifies a realized trip from the moment it arrives: its service date,
    line and direction, vehicle and departure. Never the scheduled trip it matches, which
    is only final at day close (an infraction's id may hash only facts known when it is
    first emitted)."""
    realized = facts.realized
    return (realized.service_date, f"{realized.route_id}:{realized.direction_id}", realized.vehicle_id,
            round(facts.departed_at))


def local(epoch: float, tz: ZoneInfo) -> dt.datetime:
    return dt.datetime.fromtimestamp(round(epoch, 3), tz)


def iso(epoch: float, tz: ZoneInfo) -> str:
    return local(epoch, tz).isoformat(timespec="seconds")


def in_service_intervals(trips: list[TripFacts] | tuple[TripFacts, ...], fixes: tuple[Fix, ...] | list[Fix],
                         terminal_s: float) -> tuple[tuple[float, float], ...]:
    """When a vehicle is in service (DESIGN.md): while it runs a trip, and while it
    stands in the destination terminal zone less than `terminal_s` after arriving.
    Standing is proven by pings: it ends at the last ping still inside the zone."""
    if not trips:
        return ()
    t = np.fromiter((f.t for f in fixes), float, len(fixes))
    x = np.fromiter((f.x for f in fixes), float, len(fixes))
    y = np.fromiter((f.y for f in fixes), float, len(fixes))
    ordered = sorted(trips, key=lambda tf: tf.departed_at)
    intervals = []
    for k, trip in enumerate(ordered):
        cap = trip.arrived_at + terminal_s
        leaves_again = k + 1 < len(ordered) and ordered[k + 1].departed_at <= cap
        if leaves_again:
            cap = ordered[k + 1].departed_at
        # pings up to the next departure (exclusive: the ping after it is already out)
        after = (t >= trip.arrived_at) & ((t < cap) if leaves_again else (t <= cap))
        inside = trip.itinerary.destination.contains(x[after], y[after])
        run = inside if inside.all() else inside[: int(np.argmin(inside))]
        end = float(t[after][len(run) - 1]) if len(run) else trip.arrived_at
        if leaves_again and len(run) and inside.all():
            end = cap  # never left the zone before the next departure: no hole in service
        intervals.append((trip.departed_at, max(end, trip.arrived_at)))
    merged: list[list[float]] = []
    for start, end in intervals:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return tuple((a, b) for a, b in merged)


def overlaps(intervals, start: float, end: float) -> bool:
    return any(a <= end and start <= b for a, b in intervals)


def within(intervals, t: float) -> bool:
    return any(a <= t <= b for a, b in intervals)
