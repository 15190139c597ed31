"""Values of trip detection. msgspec Structs so that state can live in a Faust table."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter

import msgspec
import numpy as np

from gtfs.model import FrequencyWindow, Pattern, ScheduledTrip


class Fix(msgspec.Struct, frozen=True, array_like=True):
    """A tachograph ping reduced to what trip detection needs, in the metric CRS."""

    t: float  # epoch seconds
    x: float
    y: float
    speed_kmh: float
    route_id: str | None
    msg_id: str  # identifies the telemetry message (evidence)
    lat: float = float("nan")  # as reported, for the records; NaN in metric-only tests
    lon: float = float("nan")
    doors_open: bool | None = None  # the tachograph's optional door sensor; None: not reported
    speed_derived: bool = False  # speed_kmh computed from displacement (speed_source derived): no C-01 proof


def columns(fixes: Sequence[Fix], *names: str) -> tuple[np.ndarray, ...]:
    """The named fields of the fixes as float arrays, in order (e.g. "t", "x", "y")."""
    n = len(fixes)
    return tuple(np.fromiter(map(attrgetter(name), fixes), float, n) for name in names)


class Track(msgspec.Struct, frozen=True):
    """A vehicle's recent pings in event-time order, since its last realized trip."""

    vehicle_id: str
    fixes: tuple[Fix, ...] = ()
    last_arrival: float | None = None


class DetectedTrip(msgspec.Struct, frozen=True):
    """A realized trip as seen in the telemetry, before matching to the schedule."""

    vehicle_id: str
    route_id: str
    direction_id: int
    shape_id: str
    departed_at: float  # epoch: the vehicle left the origin terminal zone
    arrived_at: float  # epoch: it entered the destination terminal zone
    coverage: float  # fraction of the shape covered in order
    first_msg_id: str
    last_msg_id: str
    departure_gap_s: float = 0.0  # time between the pings around the zone exit
    exit_msg_ids: tuple[str, ...] = ()  # those two pings (the departure's evidence)
    left_at: float | None = None  # the first ping outside the origin zone: the departure is proven then
    # the vehicle was seen outside the origin zone after its previous arrival: the first
    # ping of the run inside it that ended at the departure (it stood there from then on).
    # None: not seen outside since that arrival (or there was none)
    at_origin_since: float | None = None


class Departure(msgspec.Struct, frozen=True):
    """A vehicle left an origin terminal zone on a pattern at an instant: a departure seen
    before its trip arrives, or a pass along an itinerary that is no realized trip. It
    dates a service day like a trip departing then (`trips.matching.service_date_for`);
    `trip` is the trip as far as it is known, for what reads trips (live matching, the
    messages between the stages)."""

    vehicle_id: str
    route_id: str
    direction_id: int
    shape_id: str
    departed_at: float  # epoch: the vehicle left the origin terminal zone
    departure_gap_s: float = 0.0  # as DetectedTrip's: the zone exit's evidence, when known
    exit_msg_ids: tuple[str, ...] = ()
    left_at: float | None = None

    @classmethod
    def of(cls, vehicle_id: str, pattern: Pattern, departed_at: float, *, departure_gap_s: float = 0.0,
           exit_msg_ids: tuple[str, ...] = (), left_at: float | None = None) -> Departure:
        """The vehicle's departure on `pattern` at `departed_at`."""
        return cls(vehicle_id, pattern.route_id, pattern.direction_id, pattern.shape_id, departed_at,
                   departure_gap_s, exit_msg_ids, left_at)

    def trip(self, arrived_at: float | None = None) -> DetectedTrip:
        """The trip of this departure as far as it is known: arrived at `arrived_at` (None:
        not yet, so at its departure), with no coverage measured and no pings of its own."""
        return DetectedTrip(self.vehicle_id, self.route_id, self.direction_id, self.shape_id, self.departed_at,
                            self.departed_at if arrived_at is None else arrived_at, 0.0, "", "",
                            departure_gap_s=self.departure_gap_s, exit_msg_ids=self.exit_msg_ids,
                            left_at=self.left_at)


class RealizedTrip(msgspec.Struct, frozen=True):
    """A detected trip with its service date and matched scheduled trip (trips.jsonl)."""

    vehicle_id: str
    route_id: str
    direction_id: int
    trip_id: str | None
    service_date: dt.date
    departed_at: dt.datetime
    arrived_at: dt.datetime
    departure_deviation_s: float | None
    coverage: float
    shape_id: str
    scheduled_key: str | None = None  # which scheduled departure (exact_times=1 share trip_ids)


def trip_key(trip: RealizedTrip) -> tuple[str, dt.datetime]:
    """A realized trip's identity in the outputs: its vehicle and its departure to the
    second, as `trip_record` writes it (and the live table keys it)."""
    return trip.vehicle_id, trip.departed_at.replace(microsecond=0)


def trip_record(trip: RealizedTrip) -> dict:
    """A trips.jsonl line, exactly the fields of the contract."""
    return {
        "vehicle_id": trip.vehicle_id,
        "route_id": trip.route_id,
        "direction_id": trip.direction_id,
        "trip_id": trip.trip_id,
        "service_date": trip.service_date.isoformat(),
        "departed_at": trip.departed_at.isoformat(timespec="seconds"),
        "arrived_at": trip.arrived_at.isoformat(timespec="seconds"),
        "departure_deviation_s": trip.departure_deviation_s,
        "coverage": trip.coverage,
    }


@dataclass(frozen=True)
class Match:
    """A realized trip with what it was matched to (the facts the rules read)."""

    detected: DetectedTrip
    realized: RealizedTrip
    scheduled: ScheduledTrip | None
    window: FrequencyWindow | None
