"""Assembling the facts of a closed service day from the engine's state (pure)."""

from __future__ import annotations

import bisect
import datetime as dt
from collections import defaultdict
from collections.abc import Callable, Sequence

import numpy as np

from engine.messages import MatchRecord
from engine.values import Context
from gtfs.schedule import ServiceDay
from rules.facts import CutShortPass, SensorRuns, ServiceDayFacts, TripFacts
from telemetry import Occurrence
from trips.matching import service_date_for
from trips.memo import Along
from trips.model import Departure, DetectedTrip, Fix, Match, columns
from trips.unfollowed import UnfollowedPass


def rebuild_match(record: MatchRecord, day: ServiceDay) -> Match:
    """The Match a MatchRecord stands for, with the scheduled trip and window of `day`."""
    scheduled = next((t for t in day.trips if t.key == record.scheduled_key), None) \
        if record.scheduled_key is not None else None
    window = next((w for w in day.windows if (w.route_id, w.direction_id, w.start_s)
                   == (record.realized.route_id, record.realized.direction_id, record.window_start_s)), None) \
        if record.window_start_s is not None else None
    return Match(record.detected, record.realized, scheduled, window)


def match_record(match: Match) -> MatchRecord:
    return MatchRecord(match.detected, match.realized, match.scheduled.key if match.scheduled else None,
                       match.window.start_s if match.window else None)


def trip_facts(match: Match, fixes: Sequence[Fix], ctx: Context, day: ServiceDay, stay: bool = True,
               along: Along | None = None) -> TripFacts:
    """The trip's pings: its dwell in the origin terminal zone before leaving, the run,
    and (with `stay`) its stay in the destination zone after arriving (each at most the
    policy's terminal standing time), so terminal stops are part of the evidence.
    Without `stay` they end at the arrival ping: what is known the moment it arrives.
    `along`: `fixes` measured against the trip's itinerary already (trips.memo); the
    facts then carry their own pings' measures instead of measuring them again."""
    d = match.detected
    itinerary = ctx.geofences.itinerary(d.route_id, d.direction_id, d.shape_id)
    standing = ctx.policy.trips.in_service_terminal_s
    times = [f.t for f in fixes]
    lo = bisect.bisect_left(times, d.departed_at - standing)
    hi = bisect.bisect_right(times, d.arrived_at + standing)
    window = fixes[lo:hi]
    t, x, y = columns(window, "t", "x", "y")
    # The exit ping is the last one inside the origin zone at or before the departure,
    # the arrival ping the first inside the destination zone at or after the arrival
    # (found by the zone test: a crossing can round onto a ping's own time), or the ping
    # the trip names where its zone was crossed between two pings outside it
    # (trips.detection.origin_fixes): the trip's pings never reach past its own.
    ids = np.array([f.msg_id for f in window], dtype=object)
    in_origin = itinerary.origin.contains(x, y) | (ids == (d.exit_msg_ids[0] if d.exit_msg_ids else None))
    in_destination = itinerary.destination.contains(x, y) | (ids == d.last_msg_id)
    before = np.flatnonzero(in_origin & (t <= d.departed_at))
    after = np.flatnonzero(in_destination & (t >= d.arrived_at))
    exit_ = int(before[-1]) if len(before) else 0
    arrival = int(after[0]) if len(after) else len(window) - 1
    first = _run_edge(in_origin[: exit_ + 1][::-1])
    last = _run_edge(in_destination[arrival:]) if stay else 0
    begin, end = exit_ - first, arrival + last + 1
    return TripFacts(
        match=match,
        itinerary=itinerary,
        operator_id=ctx.fleet[d.vehicle_id].operator_id,
        fixes=tuple(window[begin:end]),
        tz=ctx.feed.timezone,
        day_start=day.start_epoch,
        measured=along[lo:hi][begin:end] if along is not None else None,
    )


def _run_edge(inside: np.ndarray) -> int:
    """How many pings after the first continue its run inside the zone (0 if none)."""
    outside = np.flatnonzero(~inside)
    return max(int(outside[0]) - 1, 0) if len(outside) else len(inside) - 1


def origins(ctx: Context) -> dict[tuple[str, int], tuple[float, float]]:
    found: dict[tuple[str, int], tuple[float, float]] = {}
    for pattern in ctx.feed.patterns:
        stop = ctx.feed.stops[pattern.origin_stop_id]
        found.setdefault((pattern.route_id, pattern.direction_id), (stop.lat, stop.lon))
    return found


def service_date_of(trip: DetectedTrip | Departure, ctx: Context, day_of: Callable[[dt.date], ServiceDay]) -> dt.date:
    """The service date a detected trip, or a departure, belongs to (the same wherever it is asked)."""
    tz = ctx.feed.timezone
    local = dt.datetime.fromtimestamp(trip.departed_at, tz).date()
    days = {d: day_of(d) for d in (local, local - dt.timedelta(days=1))}
    return service_date_for(trip, days, tz, ctx.policy.trips.match_window_s)


def operator_day(day: ServiceDay, ctx: Context, operator_id: str) -> ServiceDay:
    """The part of a service day's schedule run by one operator."""
    mine = {r.route_id for r in ctx.feed.routes.values() if r.agency_id == operator_id}
    return ServiceDay(day.date, day.start_epoch, tuple(t for t in day.trips if t.route_id in mine),
                      tuple(w for w in day.windows if w.route_id in mine))


def service_day_facts(day: ServiceDay, matches: list[Match], ctx: Context,
                      reporting: dict[str, list[float]], occurrences: list[Occurrence],
                      unfollowed: list[UnfollowedPass] | tuple = (),
                      cut_short: list[CutShortPass] | tuple = (),
                      coverage: dict[str, SensorRuns] | None = None) -> ServiceDayFacts:
    """The facts of a closed service day for the service-day rules: the matched trips
    (without their pings, which stay with the vehicle stage), who reported when (the
    operators' fleets, and each vehicle's sensors: `coverage`), and the
    stretches the telemetry could not follow — but for those a realized trip of the same
    vehicle overlaps (it was that trip, seen through the silence) — and the passes a
    track rule found cut short before the terminal."""
    trips = tuple(
        TripFacts(
            match=m,
            itinerary=ctx.geofences.itinerary(m.detected.route_id, m.detected.direction_id, m.detected.shape_id),
            operator_id=ctx.fleet[m.detected.vehicle_id].operator_id,
            fixes=(),
            tz=ctx.feed.timezone,
            day_start=day.start_epoch,
        )
        for m in matches
    )
    return ServiceDayFacts(
        day=day,
        tz=ctx.feed.timezone,
        trips=trips,
        operator_of_route={r.route_id: r.agency_id for r in ctx.feed.routes.values()},
        origin_of=origins(ctx),
        reporting={op: tuple(times) for op, times in reporting.items()},
        occurrences=tuple(occurrences),
        # a clock fault's stretch stays whatever trips the vehicle was seen to run around it
        unfollowed=tuple(p for p in unfollowed if p.clock_offset_s is not None or not any(
            m.detected.vehicle_id == p.vehicle_id and m.detected.departed_at <= p.last_t
            and p.first_t <= m.detected.arrived_at for m in matches)),
        cut_short=tuple(cut_short),
        fleet=fleet_by_operator(ctx),
        coverage=dict(coverage or {}),
    )


def fleet_by_operator(ctx: Context) -> dict[str, tuple[str, ...]]:
    fleet: dict[str, list[str]] = defaultdict(list)
    for vehicle in sorted(ctx.fleet.values(), key=lambda v: v.vehicle_id):
        fleet[vehicle.operator_id].append(vehicle.vehicle_id)
    return {operator: tuple(vehicles) for operator, vehicles in fleet.items()}


def day_km(day: ServiceDay, matches: list[Match], ctx: Context,
           facts: ServiceDayFacts | None = None) -> dict[str, tuple[float, float]]:
    """Per operator: (programmed metres of the day, programmed metres of realized trips).
    With the day's `facts`, a timetabled trip neither realized nor observable (the fleet
    not seen around its departure: `ServiceDayFacts.departure_observable`), that a
    vehicle whose telemetry broke off may have run (`ServiceDayFacts.may_have_run`) or
    that a vehicle which could have run it was not seen throughout its match window
    (`ServiceDayFacts.unobserved`) is left out of the programmed metres: no evidence that
    it ran, none that it did not — what D-22 records as insufficient evidence. So is a headway
    window with no departure and the fleet seen in fewer than `min_reporting_minutes` of it."""
    operator_of = {r.route_id: r.agency_id for r in ctx.feed.routes.values()}
    programmed: dict[str, float] = defaultdict(float)
    realized: dict[str, float] = defaultdict(float)
    matched = {m.scheduled.key for m in matches if m.scheduled is not None}
    for trip in day.trips:
        operator = operator_of[trip.route_id]
        departure = day.departure_epoch(trip)
        if facts is not None and trip.key not in matched \
                and (not facts.departure_observable(operator, departure, ctx.policy)
                     or facts.may_have_run(trip.route_id, trip.direction_id, departure, ctx.policy)
                     or facts.unobserved(trip, ctx.policy)):
            programmed.setdefault(operator, 0.0)
            continue
        programmed[operator] += trip.programmed_m
    per_window: dict[tuple, int] = defaultdict(int)
    for m in matches:
        if m.scheduled is not None:
            realized[operator_of[m.scheduled.route_id]] += m.scheduled.programmed_m
        elif m.window is not None:
            per_window[(m.window.route_id, m.window.direction_id, m.window.start_s)] += 1
    for window in day.windows:
        operator = operator_of[window.route_id]
        start, end = day.start_epoch + window.start_s, day.start_epoch + window.end_s
        if facts is not None and not per_window.get((window.route_id, window.direction_id, window.start_s)) \
                and facts.reported_minutes(operator, start, end) < ctx.policy.trips.min_reporting_minutes:
            programmed.setdefault(operator, 0.0)
            continue  # a headway window with neither a departure nor a fleet seen during it
        programmed[operator] += window.expected_departures * window.programmed_m
    for window in day.windows:
        count = per_window.get((window.route_id, window.direction_id, window.start_s), 0)
        # departures beyond those scheduled add no programmed km
        realized[operator_of[window.route_id]] += min(count, window.expected_departures) * window.programmed_m
    return {op: (programmed[op], realized.get(op, 0.0)) for op in programmed}


def month_of(date: dt.date) -> str:
    return f"{date.year:04d}-{date.month:02d}"
