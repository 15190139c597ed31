"""A service day of the tiny fixture feed, for the service-day rule tests.

Shared by test_d12, test_d13, test_d22, test_art45 and test_justification: the feed
(tests/gtfs/fixtures/tiny), the shipped policy, and builders of realized trips and
of the facts of a closed day.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

from geofences import build_geofences
from gtfs import load_feed
from gtfs.schedule import service_day
from kernel.policy import load_policy
from rules.facts import SensorRuns, ServiceDayFacts, TripFacts
from rules.model import InsufficientEvidence
from trips.matching import match_service_day_full
from trips.model import DetectedTrip, Fix
from trips.unfollowed import UnfollowedPass

TINY = Path(__file__).resolve().parents[1] / "gtfs" / "fixtures" / "tiny"
SAO_PAULO = ZoneInfo("America/Sao_Paulo")
TUESDAY = dt.date(2026, 12, 1)
SHAPES = {("T", 0): "L", ("T", 1): "R", ("F", 0): "L", ("E", 1): "R"}
RUN_S = {"T": 1500, "F": 1200, "E": 1200}
FLEET = ("V1", "V2")  # OP1's vehicles


class Tiny:
    """The tiny feed, the shipped policy and its geofences; builds a day's facts."""

    def __init__(self):
        self.feed = load_feed(TINY)
        self.policy = load_policy()
        self.geofences = build_geofences(self.feed, self.policy)

    def facts(self, trips: list[DetectedTrip], *, date: dt.date = TUESDAY,
              reporting: tuple[float, ...] | None = None, occurrences=(), unfollowed=(),
              coverage: dict[str, SensorRuns] | None = None) -> ServiceDayFacts:
        day = service_day(self.feed, date)
        matches = match_service_day_full(trips, day, self.feed.timezone, self.policy.trips)
        if reporting is None:  # OP1 reports every 5 min from 00:00 to 26:00 of the service day
            reporting = pings(day.start_epoch, day.start_epoch + 26 * 3600, 300)
        if coverage is None:  # OP1's two vehicles' tachographs seen throughout, 00:00 to 26:00
            coverage = {v: SensorRuns(tachograph=((day.start_epoch, day.start_epoch + 26 * 3600),)) for v in FLEET}
        return ServiceDayFacts(
            day=day,
            tz=self.feed.timezone,
            trips=tuple(self.trip_facts(m, day) for m in matches),
            operator_of_route={r.route_id: r.agency_id for r in self.feed.routes.values()},
            origin_of={(p.route_id, p.direction_id): (self.feed.stops[p.origin_stop_id].lat,
                                                     self.feed.stops[p.origin_stop_id].lon)
                       for p in self.feed.patterns},
            reporting={"OP1": tuple(sorted(reporting))},
            occurrences=tuple(occurrences),
            unfollowed=tuple(unfollowed),
            fleet={"OP1": FLEET},
            coverage=coverage,
        )

    def trip_facts(self, match, day) -> TripFacts:
        """Minimal pings: in the origin zone 10 s before leaving, 150 m along the shape
        10 s after, and in the destination zone on arrival."""
        d = match.detected
        itinerary = self.geofences.itinerary(d.route_id, d.direction_id, d.shape_id)
        origin, along = itinerary.line.interpolate(0), itinerary.line.interpolate(150)
        end = itinerary.line.interpolate(itinerary.line.length)
        fixes = (
            Fix(d.departed_at - 10, origin.x, origin.y, 0.0, d.route_id, f"{d.vehicle_id}@{d.departed_at - 10:.0f}"),
            Fix(d.departed_at + 10, along.x, along.y, 30.0, d.route_id, f"{d.vehicle_id}@{d.departed_at + 10:.0f}"),
            Fix(d.arrived_at, end.x, end.y, 0.0, d.route_id, f"{d.vehicle_id}@{d.arrived_at:.0f}"),
        )
        return TripFacts(match=match, itinerary=itinerary, operator_id="OP1", fixes=fixes,
                         tz=self.feed.timezone, day_start=day.start_epoch)


def at(hh: int, mm: int, ss: int = 0, date: dt.date = TUESDAY) -> float:
    """Epoch of a local wall-clock time (UTC-3)."""
    return dt.datetime(date.year, date.month, date.day, hh, mm, ss, tzinfo=SAO_PAULO).timestamp()


def pings(start: float, end: float, every: float) -> tuple[float, ...]:
    n = int((end - start) // every) + 1
    return tuple(start + i * every for i in range(n))


def detected(vehicle: str, route: str, direction: int, departed_at: float, gap_s: float = 20.0) -> DetectedTrip:
    return DetectedTrip(
        vehicle_id=vehicle, route_id=route, direction_id=direction, shape_id=SHAPES[(route, direction)],
        departed_at=departed_at, arrived_at=departed_at + RUN_S[route], coverage=0.95,
        first_msg_id=f"{vehicle}@{departed_at - 10:.0f}", last_msg_id=f"{vehicle}@{departed_at + RUN_S[route]:.0f}",
        departure_gap_s=gap_s,
        exit_msg_ids=(f"{vehicle}@{departed_at - 10:.0f}", f"{vehicle}@{departed_at + 10:.0f}"),
    )


def unfollowed(vehicle: str, route: str, direction: int, earliest: float, latest: float) -> UnfollowedPass:
    """A stretch of the route a vehicle was seen on, from 500 m to 2000 m along, with its
    telemetry silent before it (it may have left between `earliest` and `latest`)."""
    return UnfollowedPass(vehicle, route, direction, SHAPES[(route, direction)], latest, latest + 300,
                          f"{vehicle}@{latest:.0f}", f"{vehicle}@{latest + 300:.0f}", 500.0, 2000.0,
                          earliest, latest, ((earliest, latest), (latest + 300, None)))


def insufficient(findings) -> list[InsufficientEvidence]:
    return [f for f in findings if isinstance(f, InsufficientEvidence)]


ALL_RUN = [  # every timetabled trip of 2026-12-01 run on time
    detected("V1", "T", 0, at(6, 0)),
    detected("V1", "T", 1, at(7, 0)),
    detected("V1", "T", 0, at(23, 50)),
    detected("V2", "E", 1, at(10, 0)),
    detected("V2", "E", 1, at(10, 30)),
]
