"""What the two stages of the engine tell each other (Kafka topics in the workers).

The vehicle stage (partitioned by vehicle) detects trips and tells the operator
stage (partitioned by operator) about them, about departures as they are seen (at release, and live, for the bus
ahead only), and about its event-time progress; the
operator stage closes service days, matches trips to the schedule, and sends each
vehicle its day's matches so the vehicle stage can judge the trips it holds the
evidence of, and each running vehicle the bus it follows.
"""

from __future__ import annotations

import datetime as dt

import msgspec

from rules.facts import CutShortPass, SensorRuns
from trips.model import DetectedTrip, RealizedTrip
from trips.unfollowed import UnfollowedPass


class TripDetected(msgspec.Struct, frozen=True, tag="trip_detected"):
    operator_id: str
    trip: DetectedTrip
    # its departure's pings that came in two versions (`conflicting_duplicate`): what the
    # operator stage accuses with them (D-13) is at most provisional
    conflicted: tuple[str, ...] = ()


class TripDeparted(msgspec.Struct, frozen=True, tag="trip_departed"):
    """A vehicle left an origin terminal zone on an itinerary and runs it: a departure
    seen live, before the trip arrives (and is a realized trip). `trip` is the trip as
    far as known (arrived_at = departed_at). The operator stage counts it as a departure
    while the day runs (D-12, D-13, D-22), until the vehicle's trip arrives or it
    departs again."""

    operator_id: str
    trip: DetectedTrip
    conflicted: tuple[str, ...] = ()  # as TripDetected's


class LiveDeparture(msgspec.Struct, frozen=True, tag="live_departure"):
    """Live information, never evidence: a departure the vehicle's live view saw at a
    ping's arrival (engine.live), before the watermark reaches it. The operator stage
    answers it at once with the bus ahead (`VehicleAhead`), for the live status only
    (DESIGN.md: the live view does not wait for the watermark); no rule reads it. The
    legal departure is still `TripDeparted`, told at release. `trip` as TripDeparted's:
    as far as known (arrived_at = departed_at)."""

    operator_id: str
    trip: DetectedTrip


class TripUnfollowed(msgspec.Struct, frozen=True, tag="trip_unfollowed"):
    """A vehicle ran an itinerary its telemetry could not follow (trips.unfollowed): the
    scheduled trips it may have been are insufficient evidence, not D-22 nor a missing
    departure for D-12 — unless a realized trip of the same vehicle overlaps it. Sent
    again, same key, if the stretch grows."""

    operator_id: str
    passage: UnfollowedPass


class TripCutShort(msgspec.Struct, frozen=True, tag="trip_cut_short"):
    """A pass a track rule found cut short before the terminal (a turn back), told once,
    with its record (at the beat whose batch holds the reversal's last fix): the
    service-day rules read it (rules.facts.ServiceDayFacts.cut_short), so the scheduled
    trip it was running is not accused again as a trip not run."""

    operator_id: str
    passage: CutShortPass


class Heartbeat(msgspec.Struct, frozen=True, tag="heartbeat"):
    """A vehicle-stage partition's progress: its watermark, the first event it saw, the
    minutes in which each operator's fleet reported since its last heartbeat, and when each
    vehicle's sensors were heard in what it released since then (`coverage`: D-22 judges
    per vehicle, rules.facts.SensorRuns). Released messages are behind the watermark it
    carries, so an operator stage that closes a day has every vehicle's runs up to it."""

    source: int
    watermark: float | None
    first_event: float | None
    max_event: float | None
    reporting: dict[str, list[int]]  # operator -> epoch minutes
    final: bool = False  # end of input (replay): everything has been released
    coverage: dict[str, SensorRuns] = {}  # vehicle -> its sensors' runs released since the last heartbeat


class VehicleDayRevised(msgspec.Struct, frozen=True, tag="vehicle_day_revised"):
    """A vehicle's operating day [start, end) judged again from its raw input because late
    messages came for it (engine.late): what the operator stage hears of a vehicle-day, as
    the re-judgment found it — its trips, the passes its telemetry could not follow or a
    track rule cut short, when its sensors were heard, the minutes it reported, and its
    departure pings that came in two versions. These replace what the live stream told of
    that vehicle in [start, end); the service days they touch are judged again (D-12, D-13,
    D-22, art. 45), so a trip the backlog proves is a trip run, whatever order the
    messages came in."""

    operator_id: str
    vehicle_id: str
    start: float
    end: float
    trips: list[DetectedTrip]
    unfollowed: list[UnfollowedPass]
    cut_short: list[CutShortPass]
    coverage: SensorRuns
    reporting: list[int]  # epoch minutes
    conflicted: list[str] = []


class MatchRecord(msgspec.Struct, frozen=True):
    detected: DetectedTrip
    realized: RealizedTrip
    scheduled_key: str | None
    window_start_s: int | None


class DayMatched(msgspec.Struct, frozen=True, tag="day_matched"):
    """A closed service day of an operator, as it concerns one vehicle."""

    vehicle_id: str
    operator_id: str
    service_date: dt.date
    matches: list[MatchRecord]
    closed_at: float = 0.0  # event time at which the watermark closed the day (detected_at of what it settles)
    # the vehicle's passes a track rule found cut short (a turn back), each with the
    # scheduled trip the day's close paired it with (ServiceDayFacts.cut_short_trips): its
    # trip_id and scheduled departure (epoch). The record of that rule names the trip it
    # cut short
    cut_short: list[tuple[CutShortPass, str, float]] = []


class VehicleAhead(msgspec.Struct, frozen=True, tag="vehicle_ahead"):
    """To a running vehicle: the departure ahead of its own on the same line and direction,
    by any other vehicle of the operator — the bus it follows — for the live vehicle
    status, with the headway scheduled there (trips.headways.scheduled_headway). The
    answer to its departure, seen live (LiveDeparture) and again at release
    (TripDeparted); sent again if a departure seen later falls between them."""

    vehicle_id: str
    departed_at: float  # the vehicle's own departure (LiveDeparture's or TripDeparted's)
    ahead_vehicle_id: str | None  # None: the first departure of the day on the line
    ahead_departed_at: float | None
    scheduled_headway_s: int  # the frequency window's headway_secs, or the timetable's gap


OperatorInput = (TripDetected | TripDeparted | LiveDeparture | TripUnfollowed | TripCutShort | Heartbeat
                 | VehicleDayRevised)
ToVehicle = DayMatched | VehicleAhead  # the operator stage to the vehicle stage (day-matched topic)
